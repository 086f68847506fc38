package serve

// The hostile-input suite: what a careless or malicious client can send
// the server, over loopback, with the invariants that must hold whatever
// it sends. No input gives a 5xx, an error that is not JSON, a crash (a
// connection closed without a reply) or a lost reply; and once the
// inputs are done, goroutines and the live heap are back where they
// started. The reproductions of issue 36 are cases of the table (issue
// 42's have tests of their own below); a seeded generator adds a few
// hundred random bodies, MCP messages and batches on every run (bounded
// in count, so CI's time is bounded), and the fuzz targets FuzzAsk and
// FuzzMCP explore further with go test -fuzz (CI runs each for a few
// seconds).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// checkReply checks the invariants of one HTTP reply: no 5xx but the
// server's own bounds (503 busy, 504 deadline), and JSON, with an error
// and a code when it is an error. mcp says the reply is to /mcp, whose
// errors are JSON-RPC error objects.
func checkReply(status int, ctype, body string, mcp bool) error {
	if mcp && status == http.StatusAccepted && body == "" {
		// A notification or a response: MCP's streamable HTTP accepts it
		// with no body, as no reply is owed.
		return nil
	}
	if status >= 500 && status != http.StatusServiceUnavailable && status != http.StatusGatewayTimeout {
		return fmt.Errorf("status %d: %s", status, body)
	}
	if !isJSON(ctype) {
		return fmt.Errorf("status %d with Content-Type %q: %q", status, ctype, body)
	}
	if !json.Valid([]byte(body)) {
		return fmt.Errorf("status %d, not JSON: %q", status, body)
	}
	if status < 400 {
		return nil
	}
	if mcp {
		var r rpcReply
		if err := json.Unmarshal([]byte(body), &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil || r.Error.Code == 0 {
			// A guard's 401 or 403 too: it was the JSON API's error.
			return fmt.Errorf("status %d, not a JSON-RPC error: %s", status, body)
		}
		return nil
	}
	var e errorBody
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" || e.Code == "" {
		return fmt.Errorf("status %d, no error and code: %s", status, body)
	}
	return nil
}

// send sends one request and checks its reply. A transport error (the
// connection closed without a reply) is a crash or a lost reply.
func send(c *http.Client, method, url, ctype, body string) (int, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if strings.HasSuffix(url, "/mcp") {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%s %s %q: no reply: %w", method, url, trim(body), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", fmt.Errorf("%s %s %q: reply cut: %w", method, url, trim(body), err)
	}
	if err := checkReply(resp.StatusCode, resp.Header.Get("Content-Type"), string(b), strings.HasSuffix(url, "/mcp")); err != nil {
		return resp.StatusCode, string(b), fmt.Errorf("%s %s %q: %w", method, url, trim(body), err)
	}
	return resp.StatusCode, string(b), nil
}

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// hostileCase is a request and the status it must get (0: any status
// that keeps the invariants).
type hostileCase struct {
	name, method, path, body string
	status                   int
	code                     string // the error code wanted, when status is set
}

// hostileCases are issue 36's reproductions and their neighbours.
func hostileCases() []hostileCase {
	many := make([]string, 4500)
	for i := range many {
		many[i] = `"Inception"`
	}
	distinct := make([]string, MaxEntities+1)
	for i := range distinct {
		distinct[i] = fmt.Sprintf(`"e%d"`, i)
	}
	cs := []hostileCase{
		{"4,500 copies of one entity are one", "POST", "/v1/ask", `{"question":"who directed inception ?","entities":[` + strings.Join(many, ",") + `]}`, 200, ""},
		{"more entities than a question names", "POST", "/v1/ask", `{"question":"who directed inception ?","entities":[` + strings.Join(distinct, ",") + `]}`, 400, "too_many_entities"},
		{"an unknown entity", "POST", "/v1/ask", `{"question":"who directed x ?","entities":["No Such Film"]}`, 422, "unknown_entity"},
		{"an empty entity", "POST", "/v1/ask", `{"question":"who directed x ?","entities":[""]}`, 422, "unknown_entity"},
		{"GET /v1/ask", "GET", "/v1/ask", "", 405, "method_not_allowed"},
		{"PUT /v1/ask", "PUT", "/v1/ask", `{"question":"x"}`, 405, "method_not_allowed"},
		{"DELETE /v1/ask", "DELETE", "/v1/ask", "", 405, "method_not_allowed"},
		{"an unknown API route", "GET", "/v1/nothing", "", 404, "not_found"},
		{"POST to an unknown route", "POST", "/v2/ask", `{"question":"x"}`, 404, "not_found"},
		{"a search for NUL", "GET", "/v1/entities?q=%00", "", 400, "no_query"},
		{"a search for punctuation", "GET", "/v1/entities?q=%3F%21", "", 400, "no_query"},
		{"a search with k=0x10", "GET", "/v1/entities?q=nolan&k=0x10", "", 400, "bad_k"},
		{"neighbours of NUL", "GET", "/v1/entities/%00/neighbours", "", 404, "unknown_entity"},
		{"health", "GET", "/healthz", "", 200, ""},
		{"an unknown planner", "POST", "/v1/ask", `{"question":"who directed inception ?","planner":"../../etc/passwd"}`, 400, "unknown_planner"},
		{"an unknown strategy", "POST", "/v1/ask", `{"question":"who directed inception ?","strategy":"all"}`, 400, "bad_strategy"},
		{"a question too long", "POST", "/v1/ask", `{"question":"` + strings.Repeat("why ", 1200) + `"}`, 400, "question_too_long"},
	}
	// Questions of no words, alone and with an entity: 500 "empty
	// question" before.
	for _, q := range []string{` ? `, `\t`, `...`, `-`, `\u00a0`, `\u0000`, `\u200b`, `\n\r`, `¿?`} {
		cs = append(cs,
			hostileCase{"question " + q, "POST", "/v1/ask", `{"question":"` + q + `"}`, 400, "no_question"},
			hostileCase{"question " + q + " with an entity", "POST", "/v1/ask", `{"question":"` + q + `","entities":["Inception"]}`, 400, "no_question"})
	}
	// MCP over HTTP: a parse error or an unknown method was HTTP 400 in
	// plain text.
	for _, c := range []struct{ name, body string }{
		{"not JSON", `hello world`},
		{"an unknown method", `{"jsonrpc":"2.0","id":1,"method":"no/such"}`},
		{"an empty batch", `[]`},
		{"an unknown tool", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`},
		{"ask with no words", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{"question":" ? "}}}`},
		{"ask with a number", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","arguments":{"question":7}}}`},
		{"a response from nowhere", `{"jsonrpc":"2.0","id":5,"result":{}}`},
	} {
		cs = append(cs, hostileCase{"MCP " + c.name, "POST", "/mcp", c.body, 0, ""})
	}
	return cs
}

// randomBody returns a hostile /v1/ask body: a JSON object whose fields
// and values are drawn from what breaks parsers and pipelines, sometimes
// cut short or with a byte flipped.
func randomBody(r *rand.Rand) string {
	texts := []string{"", " ", "?", "\x00", "\u00a0", "\u202e", "\ufeff", "who directed inception ?", "Inception", "inception",
		"Christopher_Nolan", "\"", "\\", "<script>", "' OR 1=1 --", "𝔦𝔫𝔠𝔢𝔭𝔱𝔦𝔬𝔫", "ﬁlm", "a\nb", strings.Repeat("x", 300),
		strings.Repeat("who ", 60), "%s%n", "\xed\xa0\x80", "-1", "null"}
	var value func(depth int) any
	value = func(depth int) any {
		switch r.IntN(9) {
		case 0:
			return nil
		case 1:
			return r.IntN(2) == 0
		case 2:
			return r.NormFloat64() * 1e9
		case 3:
			if depth < 3 {
				a := make([]any, r.IntN(4))
				for i := range a {
					a[i] = value(depth + 1)
				}
				return a
			}
		case 4:
			if depth < 3 {
				return map[string]any{texts[r.IntN(len(texts))]: value(depth + 1)}
			}
		}
		return texts[r.IntN(len(texts))]
	}
	obj := map[string]any{}
	for _, k := range []string{"question", "entities", "planner", "strategy", "explain", "other"} {
		if r.IntN(3) == 0 {
			continue
		}
		switch {
		case k == "entities" && r.IntN(2) == 0:
			es := make([]string, r.IntN(40))
			for i := range es {
				es[i] = texts[r.IntN(len(texts))]
			}
			obj[k] = es
		case k == "question" && r.IntN(2) == 0:
			obj[k] = texts[r.IntN(len(texts))] + " " + texts[r.IntN(len(texts))]
		case k == "planner" && r.IntN(2) == 0:
			obj[k] = []string{"auto", "schema", "oracle", "llm", ""}[r.IntN(5)]
		case k == "strategy" && r.IntN(2) == 0:
			obj[k] = []string{"auto", "precision", "breadth", "PRECISION"}[r.IntN(4)]
		case k != "other" || r.IntN(4) == 0:
			obj[k] = value(0)
		}
	}
	b, _ := json.Marshal(obj)
	switch r.IntN(10) {
	case 0:
		b = b[:r.IntN(len(b)+1)]
	case 1:
		if len(b) > 0 {
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
		}
	}
	return string(b)
}

// randomMCP returns a hostile MCP message.
func randomMCP(r *rand.Rand) string {
	methods := []string{"initialize", "ping", "tools/list", "tools/call", "resources/list", "prompts/get", "notifications/initialized", "no/such", "", "$/cancel"}
	msg := map[string]any{"jsonrpc": []any{"2.0", "2.0", "2.0", "1.0", nil, 2}[r.IntN(6)]}
	switch r.IntN(4) {
	case 0:
	case 1:
		msg["id"] = r.IntN(1000)
	case 2:
		msg["id"] = fmt.Sprintf("id-%d", r.IntN(1000))
	case 3:
		msg["id"] = []any{nil, 1.5, map[string]any{}, true}[r.IntN(4)]
	}
	if r.IntN(8) != 0 {
		msg["method"] = methods[r.IntN(len(methods))]
	}
	switch r.IntN(5) {
	case 0:
		msg["params"] = map[string]any{"name": []string{"ask", "explain", "search_entities", "neighbours", "nope"}[r.IntN(5)],
			"arguments": map[string]any{"question": randomBody(r), "query": "\x00", "entity": "Inception", "k": r.IntN(300) - 100, "limit": r.IntN(20000) - 5000}}
	case 1:
		msg["params"] = []any{1, 2}
	case 2:
		msg["params"] = "x"
	}
	b, _ := json.Marshal(msg)
	if r.IntN(8) == 0 && len(b) > 0 {
		b = b[:r.IntN(len(b))]
	}
	return string(b)
}

// TestHostileInputs sends the reproductions and a few hundred random
// bodies and MCP messages to a server on loopback, and checks every reply
// and, at the end, that the server's goroutines and heap are back.
func TestHostileInputs(t *testing.T) {
	var log syncBuffer
	st := start(t, demoBackend(t, nil), Options{Log: &log, Timeout: 10 * time.Second})
	c := &http.Client{Timeout: 30 * time.Second}
	if _, _, err := send(c, "POST", st.URL+"/v1/ask", "application/json", `{"question":"who directed inception ?"}`); err != nil {
		t.Fatal(err)
	}
	c.CloseIdleConnections()
	baseG, baseHeap := settle()

	for _, hc := range hostileCases() {
		status, body, err := send(c, hc.method, st.URL+hc.path, "application/json", hc.body)
		if err != nil {
			t.Errorf("%s: %v", hc.name, err)
			continue
		}
		if hc.status != 0 && status != hc.status {
			t.Errorf("%s: %d %s, want %d", hc.name, status, trim(body), hc.status)
		}
		if hc.code != "" && !strings.Contains(body, `"code":"`+hc.code+`"`) {
			t.Errorf("%s: %s, want code %s", hc.name, trim(body), hc.code)
		}
	}
	// Duplicates are asked once: the answer with 4,500 copies of an
	// entity is the answer with one.
	_, one, _ := send(c, "POST", st.URL+"/v1/ask", "application/json", `{"question":"who directed inception ?","entities":["Inception"],"explain":true}`)
	_, dup, _ := send(c, "POST", st.URL+"/v1/ask", "application/json", `{"question":"who directed inception ?","entities":["Inception","inception","Inception"],"explain":true}`)
	if strip(one) != strip(dup) {
		t.Errorf("with the entity given three times:\n%s\nonce:\n%s", trim(dup), trim(one))
	}

	r := rand.New(rand.NewPCG(36, 1))
	for range 300 {
		if _, _, err := send(c, "POST", st.URL+"/v1/ask", "application/json", randomBody(r)); err != nil {
			t.Error(err)
		}
	}
	for i := range 250 {
		// Messages alone, and batches of them with odd ids: every call
		// answered with its id as sent.
		msg := randomMCP(r)
		if i%5 == 0 {
			msg = randomBatch(r)
		}
		_, reply, err := send(c, "POST", st.URL+"/mcp", "application/json", msg)
		if err == nil {
			err = repliedAsSent(msg, reply)
		}
		if err != nil {
			t.Error(err)
		}
	}
	if strings.Contains(log.String(), "stem serve:") {
		t.Errorf("hostile input was logged as the server's own failure:\n%s", log.String())
	}

	c.CloseIdleConnections()
	backToBaseline(t, "the inputs", baseG, baseHeap)
}

// strip drops the timings from a served answer, which differ run to run.
func strip(body string) string {
	var v map[string]any
	if json.Unmarshal([]byte(body), &v) != nil {
		return body
	}
	delete(v, "timings_ms")
	b, _ := json.Marshal(v)
	return string(b)
}

// fuzzMaxReply is the reply bound of the fuzz targets' servers, small
// enough that explain replies reach it.
const fuzzMaxReply = 16 << 10

// fuzzServer is one server for a fuzz target's inputs, answered in
// process through its handler.
func fuzzServer(f *testing.F) http.Handler {
	s := New(Options{Timeout: 10 * time.Second, MaxReply: fuzzMaxReply})
	if err := s.Load(context.Background(), demoBackend(f, nil)); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	return s.Handler()
}

// serveOnce answers one request in process and checks its reply: its
// invariants (checkReply), its size (a JSON-RPC error for each message of
// a batch beyond the bound), and on /mcp a reply to each call with the
// call's id as sent.
func serveOnce(h http.Handler, path, body string) error {
	req := httptest.NewRequest("POST", "http://localhost"+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if err := checkReply(w.Code, w.Header().Get("Content-Type"), w.Body.String(), path == "/mcp"); err != nil {
		return err
	}
	if n := w.Body.Len(); n > fuzzMaxReply+len(body)/16*1024 {
		return fmt.Errorf("%q: a reply of %d bytes, over the %d bound", trim(body), n, fuzzMaxReply)
	}
	if path != "/mcp" {
		return nil
	}
	return repliedAsSent(body, w.Body.String())
}

// callIDs returns the raw ids of the calls in an MCP body (one message
// or a batch) that are owed a reply with that id: those with a method and
// a string or number id.
func callIDs(body string) []string {
	var msgs []map[string]json.RawMessage
	if json.Unmarshal([]byte(body), &msgs) != nil {
		var one map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &one) != nil {
			return nil
		}
		msgs = append(msgs, one)
	}
	var ids []string
	for _, m := range msgs {
		id := bytes.TrimSpace(m["id"])
		if m["method"] == nil || len(id) == 0 || string(id) == "null" {
			continue
		}
		ids = append(ids, string(id))
	}
	return ids
}

// repliedAsSent checks that each call of an MCP request got a reply with
// its id as sent.
func repliedAsSent(body, reply string) error {
	want := callIDs(body)
	if len(want) == 0 {
		return nil
	}
	var got []map[string]json.RawMessage
	if json.Unmarshal([]byte(reply), &got) != nil {
		var one map[string]json.RawMessage
		if json.Unmarshal([]byte(reply), &one) != nil {
			return fmt.Errorf("%q: no JSON-RPC reply: %q", trim(body), trim(reply))
		}
		got = append(got, one)
	}
	ids := map[string]int{}
	for _, r := range got {
		ids[string(r["id"])]++
	}
	for _, id := range want {
		if ids[id] == 0 && ids["null"] == 0 {
			return fmt.Errorf("%q: no reply with id %s (nor null, for a request refused whole): %q", trim(body), id, trim(reply))
		}
		ids[id]--
	}
	return nil
}

// FuzzAsk: no /v1/ask body gives a 5xx, an error that is not JSON, or a
// reply over the bound.
func FuzzAsk(f *testing.F) {
	for _, hc := range hostileCases() {
		if hc.path == "/v1/ask" && hc.method == "POST" {
			f.Add(hc.body)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		f.Add(randomBody(r))
	}
	f.Add(`{"question":"who directed \u202einception\u202c ?","explain":true,"strategy":"breadth"}`)
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		if err := serveOnce(h, "/v1/ask", body); err != nil {
			t.Error(err)
		}
	})
}

// FuzzMCP: no MCP message or batch gives a 5xx, a reply that is not JSON
// or over the bound, or a call unanswered or answered under another id
// over HTTP; and over stdio every line answered is a JSON-RPC message,
// each call is answered with its id as sent, the session goes on (a ping
// after it is answered) and ends cleanly.
func FuzzMCP(f *testing.F) {
	for _, hc := range hostileCases() {
		if hc.path == "/mcp" {
			f.Add(hc.body)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(randomMCP(r))
	}
	for range 5 {
		f.Add(randomBatch(r))
	}
	for _, id := range oddIDs {
		f.Add(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	}
	f.Add(`[{"jsonrpc":"2.0","id":1e30,"method":"ping"},{"jsonrpc":"2.0","id":null,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},` +
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"explain","arguments":{"question":"who directed inception ?","strategy":"breadth"}}}]`)
	h := fuzzServer(f)
	s := New(Options{Timeout: 2 * time.Second, MaxBody: 4096})
	if err := s.Load(context.Background(), demoBackend(f, nil)); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, msg string) {
		if err := serveOnce(h, "/mcp", msg); err != nil {
			t.Error(err)
		}
		if err := stdioOnce(s, msg); err != nil {
			t.Error(err)
		}
	})
}

// randomBatch returns a batch of hostile MCP messages, calls with odd ids
// among them.
func randomBatch(r *rand.Rand) string {
	msgs := make([]string, 1+r.IntN(8))
	for i := range msgs {
		if r.IntN(3) == 0 {
			msgs[i] = `{"jsonrpc":"2.0","id":` + oddIDs[r.IntN(len(oddIDs))] + `,"method":"tools/call","params":{"name":"explain","arguments":{"question":"who directed inception ?"}}}`
			continue
		}
		msgs[i] = randomMCP(r)
		if !json.Valid([]byte(msgs[i])) {
			msgs[i] = "{}"
		}
	}
	return "[" + strings.Join(msgs, ",") + "]"
}

// stdioOnce sends msg between an initialize and a ping over stdio and
// checks that the ping is answered and every line is JSON-RPC.
func stdioOnce(s *Server, msg string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	in := strings.Join([]string{mcpInit, mcpInitialized, strings.ReplaceAll(msg, "\n", " "), `{"jsonrpc":"2.0","id":"last","method":"ping"}`}, "\n") + "\n"
	if err := s.ServeStdio(ctx, strings.NewReader(in), &out); err != nil {
		return fmt.Errorf("stdio %q: the session ended with %v", trim(msg), err)
	}
	// A call (a method and an id, names as spelled) is owed a reply with
	// its id as sent.
	var call map[string]json.RawMessage
	json.Unmarshal([]byte(strings.ReplaceAll(msg, "\n", " ")), &call)
	id := bytes.TrimSpace(call["id"])
	owed := len(id) > 0 && string(id) != "null" && call["method"] != nil
	pinged, answered := false, false
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r rpcReply
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.JSONRPC != "2.0" || json.Unmarshal([]byte(line), &raw) != nil {
			return fmt.Errorf("stdio %q: a line that is no JSON-RPC message: %q", trim(msg), line)
		}
		if r.Error != nil && r.Error.Code == 0 {
			return fmt.Errorf("stdio %q: an error with no code: %q", trim(msg), line)
		}
		pinged = pinged || r.ID == "last"
		answered = answered || owed && string(raw["id"]) == string(id)
	}
	if !pinged {
		return fmt.Errorf("stdio %q: the ping after it was not answered:\n%s", trim(msg), out.String())
	}
	if owed && !answered {
		return fmt.Errorf("stdio %q: the call got no reply:\n%s", trim(msg), out.String())
	}
	return nil
}

// rawRequest writes req on a new connection to the server at base and
// reads the reply, as a client that writes HTTP by hand does.
func rawRequest(t *testing.T, base, req string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(conn, req) // a reply may come before the request is all sent
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%q: no reply: %v", trim(req), err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// The replies net/http writes itself, before any handler, are JSON like
// every other (they were text/plain): headers too large, a bad request
// line, Host or Content-Length, an unknown transfer coding or HTTP
// version, an Expect header other than 100-continue.
func TestGoServerErrorsAreJSON(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{})
	for _, tc := range []struct {
		name, req string
		status    int
	}{
		{"headers over the bound", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + strings.Repeat("x", 80<<10) + "\r\n\r\n", 431},
		{"a bad request line", "GARBAGE\r\n\r\n", 400},
		{"no Host", "GET /healthz HTTP/1.1\r\n\r\n", 400},
		{"a bad Content-Length", "POST /v1/ask HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n", 400},
		{"an unknown transfer coding", "POST /v1/ask HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
		{"an unknown HTTP version", "GET /healthz HTTP/2.7\r\nHost: localhost\r\n\r\n", 505},
		{"an unknown expectation", "POST /v1/ask HTTP/1.1\r\nHost: localhost\r\nExpect: coffee\r\nContent-Length: 2\r\n\r\n{}", 417},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawRequest(t, st.URL, tc.req)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			var e errorBody
			if !isJSON(resp.Header.Get("Content-Type")) || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" || e.Code == "" {
				t.Errorf("%s %q, want a JSON error with a code", resp.Header.Get("Content-Type"), body)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("headers %v: no nosniff", resp.Header)
			}
		})
	}
	// The connections they came on are closed; the server answers on.
	if status, _ := get(t, &http.Client{}, st.URL+"/healthz"); status != 200 {
		t.Errorf("healthz after them: %d", status)
	}
}

// A body its Content-Length says is over --max-body is refused at once,
// before a byte of it is read: "Expect: 100-continue" got "100
// Continue", then a 400 naming the socket addresses after 15 s.
func TestBodyOverBoundRefusedAtOnce(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{})
	for _, path := range []string{"/v1/ask", "/mcp"} {
		begin := time.Now()
		resp, body := rawRequest(t, st.URL, "POST "+path+" HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nExpect: 100-continue\r\nContent-Length: 104857600\r\n\r\n")
		if resp.StatusCode != 413 {
			t.Errorf("%s: %d %s, want 413 before any 100 Continue", path, resp.StatusCode, body)
		}
		if d := time.Since(begin); d > 2*time.Second {
			t.Errorf("%s: answered after %v", path, d)
		}
		if err := checkReply(resp.StatusCode, resp.Header.Get("Content-Type"), body, path == "/mcp"); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if strings.Contains(body, "127.0.0.1") || !strings.Contains(body, "body_too_large") {
			t.Errorf("%s: %s, want body_too_large naming no address", path, body)
		}
	}
}

// /mcp refuses what is wrong with a request as a whole with a JSON-RPC
// error of the right code (all were -32700 "not JSON"), a guard's refusal
// too (401 and 403 were the JSON API's errors), and initialize with
// "params": null with invalid params (it was code 0).
func TestMCPErrorCodes(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{Token: "s3cret", MaxBody: 1 << 10})
	ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	for _, tc := range []struct {
		name, method, body string
		header             []string
		status             int
		code               int64
		id                 string
		dataCode           string
	}{
		{"GET", "GET", "", nil, 405, -32600, "null", "method_not_allowed"},
		{"DELETE", "DELETE", "", nil, 405, -32600, "null", "method_not_allowed"},
		{"a form", "POST", ping, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, -32600, "null", "content_type"},
		{"no Content-Type", "POST", ping, []string{"Content-Type", ""}, 415, -32600, "null", "content_type"},
		{"Accept text/html", "POST", ping, []string{"Accept", "text/html"}, 406, -32600, "null", "not_acceptable"},
		{"an unknown protocol version", "POST", ping, []string{"MCP-Protocol-Version", "1999-01-01"}, 400, -32600, "7", ""},
		{"a body over --max-body", "POST", `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"` + strings.Repeat("x", 2<<10) + `"}}`, nil, 413, -32600, "null", "body_too_large"},
		{"no token", "POST", ping, []string{"Authorization", ""}, 401, -32000, "null", "unauthorized"},
		{"another host", "POST", ping, []string{"Host", "attacker.example"}, 403, -32000, "null", "bad_host"},
		{"another site", "POST", ping, []string{"Origin", "https://attacker.example", "Sec-Fetch-Site", "cross-site"}, 403, -32000, "null", "cross_origin"},
		{"not JSON", "POST", `{"jsonrpc":`, nil, 400, -32700, "null", ""},
		{"initialize, params null", "POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":null}`, nil, 400, -32602, "1", ""},
		{"tools/call, params a list", "POST", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":[1]}`, nil, 400, -32602, `"a"`, ""},
		{"id null", "POST", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil, 400, -32600, "null", ""},
		{"an unknown method", "POST", `{"jsonrpc":"2.0","id":3,"method":"no/such"}`, nil, 200, -32601, "3", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, st.URL+"/mcp", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer s3cret")
			for i := 0; i < len(tc.header); i += 2 {
				switch {
				case tc.header[i] == "Host":
					req.Host = tc.header[i+1]
				case tc.header[i+1] == "":
					req.Header.Del(tc.header[i])
				default:
					req.Header.Set(tc.header[i], tc.header[i+1])
				}
			}
			status, body := do(t, &http.Client{}, req)
			var r struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
					Data    struct {
						Code string `json:"code"`
					} `json:"data"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil {
				t.Fatalf("%d %s: not a JSON-RPC error", status, body)
			}
			if status != tc.status || r.Error.Code != tc.code || string(r.ID) != tc.id || r.Error.Data.Code != tc.dataCode || r.Error.Message == "" {
				t.Errorf("%d %s\nwant status %d, code %d, id %s, data.code %q", status, body, tc.status, tc.code, tc.id, tc.dataCode)
			}
		})
	}
}

// oddIDs are ids the SDK changed (a number read as a float64 made int64)
// and their neighbours: each must come back exactly as sent.
var oddIDs = []string{`9223372036854775807`, `1e30`, `1.5`, `9007199254740993`, `-0`, `0.10`, `-9223372036854775809`, `1E+2`,
	`"x"`, `"\u0041"`, `""`, `"9223372036854775807"`, `7`}

// rawReplies decodes a reply (one message or a batch) into messages
// whose id is kept as raw JSON.
func rawReplies(t *testing.T, body string) []map[string]json.RawMessage {
	t.Helper()
	var batch []map[string]json.RawMessage
	if json.Unmarshal([]byte(body), &batch) == nil {
		return batch
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &one); err != nil {
		t.Fatalf("not JSON-RPC: %s", body)
	}
	return []map[string]json.RawMessage{one}
}

// MCP ids come back exactly as sent over HTTP, alone and in a batch:
// 9223372036854775807 and 1e30 came back as -9223372036854775808, 1.5
// as 1.
func TestMCPIDsAsSent(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{})
	c := &http.Client{}
	var batch []string
	for _, id := range oddIDs {
		call := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"ask","arguments":{"question":"who directed inception ?"}}}`
		batch = append(batch, call)
		status, body, err := send(c, "POST", st.URL+"/mcp", "application/json", call)
		if err != nil {
			t.Fatal(err)
		}
		r := rawReplies(t, body)[0]
		if status != 200 || string(r["id"]) != id || !strings.Contains(string(r["result"]), "Christopher_Nolan") {
			t.Errorf("id %s: %d %s", id, status, trim(body))
		}
	}
	status, body, err := send(c, "POST", st.URL+"/mcp", "application/json", "["+strings.Join(batch, ",")+"]")
	if err != nil {
		t.Fatal(err)
	}
	rs := rawReplies(t, body)
	if status != 200 || len(rs) != len(oddIDs) {
		t.Fatalf("a batch of %d calls: %d, %d replies: %s", len(oddIDs), status, len(rs), trim(body))
	}
	for i, r := range rs {
		if string(r["id"]) != oddIDs[i] || r["result"] == nil {
			t.Errorf("reply %d of the batch: id %s, want %s: %s", i, r["id"], oddIDs[i], trim(string(r["result"])+string(r["error"])))
		}
	}
}

// An MCP batch over HTTP is answered call by call within one reply
// budget (--max-reply) and one question deadline, each question holding
// a slot (--max-concurrent) until the batch's reply is written: 20
// explain calls held 461 MB of replies and 6 GB of memory at once. The
// calls past the budget are refused, each with its id and how to narrow
// the request.
func TestMCPBatchBounded(t *testing.T) {
	const maxReply = 40 << 10
	st := start(t, demoBackend(t, nil), Options{MaxReply: maxReply, MaxConcurrent: 64})
	var calls []string
	for i := range 60 {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"explain","arguments":{"question":"in which country was the director of inception born ?","strategy":"breadth"}}}`, i))
	}
	status, body, err := send(&http.Client{}, "POST", st.URL+"/mcp", "application/json", "["+strings.Join(calls, ",")+"]")
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > maxReply+60*1024 {
		t.Errorf("the batch's reply is %d bytes, over the %d bound and its refusals", len(body), maxReply)
	}
	rs := rawReplies(t, body)
	if status != 200 || len(rs) != len(calls) {
		t.Fatalf("%d, %d replies to %d calls", status, len(rs), len(calls))
	}
	answered, refused := 0, 0
	for i, r := range rs {
		if string(r["id"]) != fmt.Sprint(i) {
			t.Errorf("reply %d has id %s", i, r["id"])
		}
		switch text := string(r["result"]); {
		case strings.Contains(text, "United_Kingdom"):
			answered++
		case strings.Contains(text, "reply_too_large") || strings.Contains(text, "--max-reply"):
			refused++
			if !strings.Contains(text, "precision") {
				t.Errorf("a refusal does not say how to narrow the request: %s", trim(text))
			}
		default:
			t.Errorf("reply %d: %s", i, trim(text+string(r["error"])))
		}
	}
	if answered == 0 || refused == 0 {
		t.Errorf("%d calls answered and %d refused, want some of each", answered, refused)
	}
	waitFor(t, "the batch's slots to be released", func() bool { return len(st.slots) == 0 })

	// Each question of a batch takes a slot until the batch's reply is
	// written: with two slots the third question is refused.
	st2 := start(t, demoBackend(t, nil), Options{MaxConcurrent: 2})
	_, body, err = send(&http.Client{}, "POST", st2.URL+"/mcp", "application/json", "["+strings.Join(calls[:3], ",")+"]")
	if err != nil {
		t.Fatal(err)
	}
	rs = rawReplies(t, body)
	if len(rs) != 3 || !strings.Contains(string(rs[1]["result"]), "United_Kingdom") || !strings.Contains(string(rs[2]["result"]), "max-concurrent") {
		t.Errorf("a batch of 3 questions with 2 slots: %s", trim(body))
	}
}

// A reply over --max-reply is refused with how to narrow the request,
// on the JSON API as over MCP.
func TestReplyBound(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{MaxReply: 1500})
	c := &http.Client{}
	status, body := post(t, c, st.URL+"/v1/ask", `{"question":"who directed inception ?","explain":true}`)
	if e := decode[errorBody](t, body); status != 422 || e.Code != "reply_too_large" || !strings.Contains(e.Error, `"strategy": "precision"`) {
		t.Errorf("explain: %d %s, want 422 reply_too_large saying how to narrow it", status, body)
	}
	if status, body := post(t, c, st.URL+"/v1/ask", `{"question":"who directed inception ?"}`); status != 200 {
		t.Errorf("ask: %d %s", status, body)
	}
	small := start(t, demoBackend(t, nil), Options{MaxReply: 300})
	status, body = get(t, c, small.URL+"/v1/entities/Inception/neighbours?limit=10000")
	if e := decode[errorBody](t, body); status != 422 || !strings.Contains(e.Error, "smaller limit") {
		t.Errorf("neighbours: %d %s", status, body)
	}
	_, body, err := send(c, "POST", st.URL+"/mcp", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"explain","arguments":{"question":"who directed inception ?"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "--max-reply") {
		t.Errorf("MCP explain: %s", body)
	}
}

// blockedWriter is a client that does not read its reply: Write blocks
// until released.
type blockedWriter struct {
	*httptest.ResponseRecorder
	writing chan struct{}
	release chan struct{}
}

func (b *blockedWriter) Write(p []byte) (int, error) {
	select {
	case b.writing <- struct{}{}:
	default:
	}
	<-b.release
	return b.ResponseRecorder.Write(p)
}

// A question's slot is held until its reply is written: 30 clients that
// never read held 20 MB each with stem_questions_in_flight at 0, and
// --max-concurrent 2 refused 3 of them.
func TestSlotHeldUntilWritten(t *testing.T) {
	s := New(Options{MaxConcurrent: 1})
	if err := s.Load(context.Background(), demoBackend(t, nil)); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct{ path, body string }{
		{"/v1/ask", `{"question":"who directed inception ?"}`},
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"question":"who directed inception ?"}}}`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			w := &blockedWriter{httptest.NewRecorder(), make(chan struct{}, 1), make(chan struct{})}
			req := httptest.NewRequest("POST", "http://localhost"+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.Handler().ServeHTTP(w, req)
			}()
			<-w.writing
			if len(s.slots) != 1 {
				t.Errorf("%d slots held while the reply is written, want 1", len(s.slots))
			}
			if err := serveOnce(s.Handler(), "/v1/ask", `{"question":"who directed inception ?"}`); err != nil {
				t.Error(err)
			}
			rec := httptest.NewRecorder()
			req2 := httptest.NewRequest("POST", "http://localhost/v1/ask", strings.NewReader(`{"question":"who directed inception ?"}`))
			s.Handler().ServeHTTP(rec, req2)
			if rec.Code != 503 {
				t.Errorf("a second question while the first reply is written: %d, want 503", rec.Code)
			}
			close(w.release)
			<-done
			if len(s.slots) != 0 || w.Code != 200 {
				t.Errorf("after the reply: %d slots held, status %d", len(s.slots), w.Code)
			}
		})
	}
}
