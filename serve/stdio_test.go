package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

const (
	mcpInit        = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
	mcpInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// rpcReply is a JSON-RPC response as a client reads it.
type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// stdioSession writes lines to a ServeStdio session, closes its input and
// returns every line it wrote, once it has returned, with its error.
func stdioSession(t *testing.T, s *Server, lines ...string) ([]rpcReply, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.ServeStdio(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"), outW)
		outW.Close()
	}()
	var replies []rpcReply
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r rpcReply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.JSONRPC != "2.0" {
			t.Errorf("a line that is no JSON-RPC message: %q (%v)", sc.Text(), err)
		}
		replies = append(replies, r)
	}
	return replies, <-done
}

// replyTo finds the reply to the call with id (a JSON number or string).
func replyTo(replies []rpcReply, id any) (rpcReply, bool) {
	for _, r := range replies {
		if r.ID == id {
			return r, true
		}
	}
	return rpcReply{}, false
}

// The MCP stdio session survives what a client or a broken pipe may send:
// a line that is not JSON, a batch, a line over the size limit, a call
// before initialize, and input that ends while a question is being
// answered. Each bad line gets a JSON-RPC error naming it, the calls
// around it get their replies, and the replies owed when the input ends
// are written before the session ends (they were lost, and the first bad
// line ended the process).
func TestStdioHostileInput(t *testing.T) {
	var log syncBuffer
	st := New(Options{MaxBody: 4096, Log: &log})
	if err := st.Load(context.Background(), demoBackend(t, nil)); err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	t.Run("call before initialize", func(t *testing.T) {
		replies, err := stdioSession(t, st, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := replyTo(replies, float64(7))
		if !ok || r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("a call before initialize: %+v, want error -32600", replies)
		}
	})

	t.Run("input ends with a question owed", func(t *testing.T) {
		replies, err := stdioSession(t, st, mcpInit, mcpInitialized,
			`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ask","arguments":{"question":"who directed inception ?"}}}`)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := replyTo(replies, float64(9)); !ok || !strings.Contains(string(r.Result), "Christopher_Nolan") {
			t.Errorf("replies %+v: the question's answer is lost", replies)
		}
	})

	t.Run("bad lines among good ones", func(t *testing.T) {
		ask := `{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"ask","arguments":{"question":"who directed inception ?"}}}`
		replies, err := stdioSession(t, st, mcpInit, mcpInitialized,
			`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
			`hello world`,
			`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
			`{"jsonrpc":"2.0","id":3,"method":"ping","params":"`+strings.Repeat("x", 5000)+`"}`,
			`{"jsonrpc":"1.0","id":4}`,
			`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
			ask, // the input ends while it is answered
		)
		if err != nil {
			t.Fatalf("the session ended with %v\n%s", err, log.String())
		}
		for _, id := range []any{float64(0), float64(1), float64(5), "q"} {
			r, ok := replyTo(replies, id)
			if !ok || r.Error != nil {
				t.Errorf("call %v: reply %+v (found %v), want a result", id, r, ok)
			}
		}
		if r, _ := replyTo(replies, "q"); !strings.Contains(string(r.Result), "Christopher_Nolan") {
			t.Errorf("ask answered %s", r.Result)
		}
		codes := map[int64]int{}
		for _, r := range replies {
			if r.Error != nil {
				codes[r.Error.Code]++
				if !strings.Contains(r.Error.Message, "line ") {
					t.Errorf("error %q does not name the line", r.Error.Message)
				}
			}
		}
		if codes[-32700] != 1 || codes[-32600] != 3 {
			t.Errorf("error codes %v, want one -32700 (not JSON) and three -32600 (batch, too long, not JSON-RPC)", codes)
		}
		for _, want := range []string{"MCP input line 4: parse error", "MCP input line 6: a message over 4096 bytes"} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("the log lacks %q:\n%s", want, log.String())
			}
		}
	})
}
