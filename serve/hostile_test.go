package serve

// The hostile-input suite: what a careless or malicious client can send
// the server, over loopback, with the invariants that must hold whatever
// it sends. No input gives a 5xx, an error that is not JSON, a crash (a
// connection closed without a reply) or a lost reply; and once the
// inputs are done, goroutines and the live heap are back where they
// started. The reproductions of issue 36 are cases of the table; a
// seeded generator adds a few hundred random bodies and MCP messages on
// every run (bounded in count, so CI's time is bounded), and the fuzz
// targets FuzzAsk and FuzzMCP explore further with go test -fuzz (CI
// runs each for a few seconds).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
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
			// A 401 or 403 comes from the server's guards, before MCP.
			var e errorBody
			if json.Unmarshal([]byte(body), &e) == nil && e.Code != "" {
				return nil
			}
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
	for range 200 {
		if _, _, err := send(c, "POST", st.URL+"/mcp", "application/json", randomMCP(r)); err != nil {
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

// fuzzServer is one server for a fuzz target's inputs, answered in
// process through its handler.
func fuzzServer(f *testing.F) http.Handler {
	s := New(Options{Timeout: 10 * time.Second})
	if err := s.Load(context.Background(), demoBackend(f, nil)); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	return s.Handler()
}

// serveOnce answers one request in process and checks its reply.
func serveOnce(h http.Handler, path, body string) error {
	req := httptest.NewRequest("POST", "http://localhost"+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return checkReply(w.Code, w.Header().Get("Content-Type"), w.Body.String(), path == "/mcp")
}

// FuzzAsk: no /v1/ask body gives a 5xx or an error that is not JSON.
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
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		if err := serveOnce(h, "/v1/ask", body); err != nil {
			t.Error(err)
		}
	})
}

// FuzzMCP: no MCP message gives a 5xx or a reply that is not JSON over
// HTTP, and over stdio every line answered is a JSON-RPC message, the
// session goes on (a ping after it is answered) and ends cleanly.
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
	// A call (a method and an id, names as spelled) is owed a reply.
	var call map[string]any
	json.Unmarshal([]byte(strings.ReplaceAll(msg, "\n", " ")), &call)
	owed := call["id"] != nil && call["method"] != nil
	pinged, answered := false, false
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r rpcReply
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.JSONRPC != "2.0" {
			return fmt.Errorf("stdio %q: a line that is no JSON-RPC message: %q", trim(msg), line)
		}
		if r.Error != nil && r.Error.Code == 0 {
			return fmt.Errorf("stdio %q: an error with no code: %q", trim(msg), line)
		}
		pinged = pinged || r.ID == "last"
		answered = answered || owed && fmt.Sprint(r.ID) == fmt.Sprint(call["id"])
	}
	if !pinged {
		return fmt.Errorf("stdio %q: the ping after it was not answered:\n%s", trim(msg), out.String())
	}
	if owed && !answered {
		return fmt.Errorf("stdio %q: the call got no reply:\n%s", trim(msg), out.String())
	}
	return nil
}
