package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// jsonErrors makes every error reply JSON. The routes write their own
// (errorBody), but the mux (405 for a route's other methods, 404 for an
// unknown path), the viewer's file server and the MCP handler write plain
// text: their status is kept and their text becomes the JSON error's
// message; on /mcp it becomes a JSON-RPC error object, which is what an
// MCP client parses, with the request's id when it had one.
func jsonErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var seen *bytes.Buffer
		if r.URL.Path == "/mcp" && r.Body != nil {
			// What the MCP handler reads of the body, for the id of a
			// request it refuses (bounded: MaxBody caps the body anyway).
			seen = &bytes.Buffer{}
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(r.Body, &limitedWriter{seen, maxSeen}), r.Body}
		}
		jw := &jsonErrorWriter{ResponseWriter: w}
		h.ServeHTTP(jw, r)
		if !jw.rewrite {
			return
		}
		msg := strings.TrimSpace(jw.text.String())
		hdr := w.Header()
		hdr.Del("Content-Length")
		hdr.Del("X-Content-Type-Options")
		if seen != nil {
			writeRPCError(w, jw.status, msg, seen.Bytes())
			return
		}
		code := strings.ReplaceAll(strings.ToLower(http.StatusText(jw.status)), " ", "_")
		switch jw.status {
		case http.StatusNotFound:
			msg = fmt.Sprintf("no route %s %s: %s", r.Method, r.URL.Path, apiRoutes)
		case http.StatusMethodNotAllowed:
			if !apiRoute(r.URL.Path) {
				// Only the viewer's file server matched, by GET: to any
				// other method the path is no route at all.
				hdr.Del("Allow")
				writeJSON(w, http.StatusNotFound, errorBody{Error: fmt.Sprintf("no route %s %s: %s", r.Method, r.URL.Path, apiRoutes), Code: "not_found"})
				return
			}
			if m, ok := postOnly[r.URL.Path]; ok {
				// The mux's Allow counts GET, which is there only to
				// answer this error.
				hdr.Set("Allow", m)
			}
			msg = fmt.Sprintf("%s %s: this route takes %s", r.Method, r.URL.Path, hdr.Get("Allow"))
		}
		if code == "" {
			code = fmt.Sprintf("http_%d", jw.status)
		}
		writeJSON(w, jw.status, errorBody{Error: msg, Code: code})
	})
}

// apiRoutes lists the API for an error about a route that is not one.
const apiRoutes = "the API is POST /v1/ask, GET /v1/entities?q=TEXT, GET /v1/entities/NAME/neighbours and POST /mcp"

// apiRoute says whether path is a route of the API or of the server
// itself, rather than a file the viewer may have.
func apiRoute(path string) bool {
	switch path {
	case "/v1/ask", "/v1/entities", "/mcp", "/healthz", "/readyz", "/metrics":
		return true
	}
	return strings.HasPrefix(path, "/v1/entities/")
}

// postOnly are the routes that take POST alone though a GET handler is
// registered, to answer it with 405.
var postOnly = map[string]string{"/v1/ask": "POST"}

// maxSeen bounds the bytes of an MCP request kept to find its id.
const maxSeen = 64 << 10

// jsonErrorWriter holds back an error reply that is not JSON, to be
// written again as JSON once the handler returns.
type jsonErrorWriter struct {
	http.ResponseWriter
	wroteHeader bool
	rewrite     bool
	status      int
	text        bytes.Buffer
}

func (w *jsonErrorWriter) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if status >= 400 && !isJSON(w.Header().Get("Content-Type")) {
		w.rewrite, w.status = true, status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.rewrite {
		if n := 4096 - w.text.Len(); n > 0 {
			w.text.Write(b[:min(len(b), n)])
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes flushes on, for streamed replies.
func (w *jsonErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.rewrite {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *jsonErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// limitedWriter keeps the first max bytes written to it.
type limitedWriter struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if n := l.max - l.b.Len(); n > 0 {
		l.b.Write(p[:min(len(p), n)])
	}
	return len(p), nil
}

// rpcErrorReply is a JSON-RPC 2.0 error response.
type rpcErrorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// writeRPCError answers an MCP request the MCP handler refused in plain
// text: a parse error (-32700) for a body that is not JSON, method not
// found (-32601, with the request's id and status 200, as for any
// JSON-RPC error to a call) for a method it does not handle, else an
// invalid request (-32600).
func writeRPCError(w http.ResponseWriter, status int, msg string, body []byte) {
	id := json.RawMessage("null")
	code := int64(jsonrpc.CodeInvalidRequest)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	switch {
	case !json.Valid(body):
		code = jsonrpc.CodeParseError
		msg = "parse error: the body is not JSON: " + msg
	case json.Unmarshal(body, &req) == nil && len(req.ID) > 0:
		id = req.ID
		if strings.Contains(msg, "not handled") || strings.Contains(msg, "unsupported") {
			code, status = jsonrpc.CodeMethodNotFound, http.StatusOK
			msg = fmt.Sprintf("method %q not found: %s", req.Method, msg)
		}
	}
	writeJSON(w, status, rpcErrorReply{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: msg}})
}
