// A SPARQL 1.1 endpoint over Oxigraph's in-memory store (the oxigraph npm
// package, pinned in package.json and package-lock.json), for stem's tests:
// a second engine beside Virtuoso, so that "any SPARQL 1.1 endpoint" is
// tested. internal/oxigraph starts it; it is no server for real use (one
// thread, everything in memory, no authentication).
//
//   node server.mjs [--host 127.0.0.1] [--port 0]
//
// It prints "listening URL" on standard output once it accepts requests
// (port 0 picks a free one), and serves:
//
//   /sparql  the SPARQL 1.1 Protocol's query operation: GET with ?query=,
//            POST form-encoded (query=) or POST application/sparql-query;
//            default-graph-uri and named-graph-uri choose the dataset.
//            Without them the default graph is the union of every graph,
//            as Virtuoso's is. SELECT and ASK answer
//            application/sparql-results+json, CONSTRUCT and DESCRIBE
//            application/n-triples. A query that does not parse is a 400,
//            with Oxigraph's message.
//   /store   the SPARQL 1.1 Graph Store Protocol's POST: the body (N-Triples,
//            N-Quads or Turtle, by Content-Type) is added to the graph
//            named by ?graph=IRI, or to the default graph with ?default.
//
// SIGTERM and SIGINT end it at once: nothing is kept.
import http from "node:http";
import oxigraph from "oxigraph";

const args = process.argv.slice(2);
let host = "127.0.0.1";
let port = 0;
for (let i = 0; i < args.length; i++) {
	const a = args[i];
	if (a === "--host" && i + 1 < args.length) {
		host = args[++i];
	} else if (a === "--port" && i + 1 < args.length) {
		port = Number(args[++i]);
		if (!Number.isInteger(port) || port < 0 || port > 65535) {
			die(`--port ${args[i]}: want a port number`);
		}
	} else {
		die(`unknown argument ${a}; usage: node server.mjs [--host HOST] [--port PORT]`);
	}
}

function die(msg) {
	process.stderr.write(`oxigraph server: ${msg}\n`);
	process.exit(2);
}

const store = new oxigraph.Store();

// The largest body read: a test KG as N-Triples is tens of MB.
const maxBody = 1 << 30;

const rdfFormats = {
	"application/n-triples": "application/n-triples",
	"text/plain": "application/n-triples",
	"application/n-quads": "application/n-quads",
	"text/turtle": "text/turtle",
};

function reply(res, status, type, body) {
	res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
	res.end(body);
}

function fail(res, status, msg) {
	reply(res, status, "text/plain; charset=utf-8", msg + "\n");
}

// readBody collects the request body as a list of chunks, or null (having
// answered 413) when it is too large.
async function readBody(req, res) {
	const chunks = [];
	let n = 0;
	for await (const c of req) {
		n += c.length;
		if (n > maxBody) {
			fail(res, 413, `body over ${maxBody} bytes`);
			return null;
		}
		chunks.push(c);
	}
	return chunks;
}

// Oxigraph's parse errors name a position ("error at 1:8: expected ..."):
// the query is the client's fault. Any other failure is the server's.
function status(e) {
	return /^error at \d+:\d+/.test(String(e && e.message)) ? 400 : 500;
}

async function sparql(req, url, res) {
	let params = url.searchParams;
	let query = params.get("query");
	if (req.method === "POST") {
		const chunks = await readBody(req, res);
		if (chunks === null) return;
		const body = Buffer.concat(chunks).toString("utf8");
		const type = (req.headers["content-type"] || "").split(";")[0].trim().toLowerCase();
		if (type === "application/x-www-form-urlencoded") {
			params = new URLSearchParams(body);
			query = params.get("query");
		} else if (type === "application/sparql-query") {
			query = body;
		} else {
			return fail(res, 415, `Content-Type ${type || "(none)"}: want application/x-www-form-urlencoded or application/sparql-query`);
		}
	} else if (req.method !== "GET") {
		res.setHeader("Allow", "GET, POST");
		return fail(res, 405, `method ${req.method}: want GET or POST`);
	}
	if (query === null || query === "") {
		return fail(res, 400, "no query");
	}
	const opts = {};
	const defaults = params.getAll("default-graph-uri");
	const named = params.getAll("named-graph-uri");
	if (defaults.length > 0 || named.length > 0) {
		opts.default_graph = defaults.map((g) => oxigraph.namedNode(g));
		opts.named_graphs = named.map((g) => oxigraph.namedNode(g));
	} else {
		opts.use_default_graph_as_union = true;
	}
	// SELECT and ASK as JSON results; CONSTRUCT and DESCRIBE, which
	// Oxigraph refuses to write so, as N-Triples.
	let body, type;
	try {
		try {
			type = "application/sparql-results+json";
			body = store.query(query, { ...opts, results_format: type });
		} catch (e) {
			if (!/^Not supported RDF format/.test(String(e && e.message))) throw e;
			type = "application/n-triples";
			body = store.query(query, { ...opts, results_format: type });
		}
	} catch (e) {
		return fail(res, status(e), String(e && e.message));
	}
	reply(res, 200, type + "; charset=utf-8", body);
}

async function graphStore(req, url, res) {
	if (req.method !== "POST") {
		res.setHeader("Allow", "POST");
		return fail(res, 405, `method ${req.method}: only POST (add triples) is served`);
	}
	const type = (req.headers["content-type"] || "").split(";")[0].trim().toLowerCase();
	const format = rdfFormats[type];
	if (!format) {
		return fail(res, 415, `Content-Type ${type || "(none)"}: want one of ${Object.keys(rdfFormats).join(", ")}`);
	}
	const graph = url.searchParams.get("graph");
	if (graph === null && !url.searchParams.has("default")) {
		return fail(res, 400, "want ?graph=IRI or ?default");
	}
	const chunks = await readBody(req, res);
	if (chunks === null) return;
	const before = store.size;
	try {
		const opts = { format };
		if (graph !== null && format !== "application/n-quads") {
			opts.to_graph_name = oxigraph.namedNode(graph);
		}
		store.load(chunks, opts);
	} catch (e) {
		return fail(res, 400, String(e && e.message));
	}
	reply(res, 204, "text/plain", "");
	process.stderr.write(`oxigraph server: loaded ${store.size - before} quads into ${graph === null ? "the default graph" : "<" + graph + ">"}\n`);
}

const server = http.createServer(async (req, res) => {
	try {
		const url = new URL(req.url, "http://localhost");
		switch (url.pathname) {
			case "/sparql":
				return await sparql(req, url, res);
			case "/store":
				return await graphStore(req, url, res);
			default:
				return fail(res, 404, `no ${url.pathname}: the endpoint is /sparql, the graph store /store`);
		}
	} catch (e) {
		if (!res.headersSent) fail(res, 500, String(e && e.stack));
	}
});
server.keepAliveTimeout = 10000;
server.on("error", (e) => die(`listen on ${host}:${port}: ${e.message}`));
server.listen(port, host, () => {
	const a = server.address();
	process.stdout.write(`listening http://${host}:${a.port}/sparql\n`);
});
for (const sig of ["SIGTERM", "SIGINT"]) {
	process.on(sig, () => process.exit(0));
}
