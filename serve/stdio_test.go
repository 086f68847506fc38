package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
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

// Over stdio every id comes back exactly as sent (9007199254740993 came
// back as 9007199254740992), and a call with "id": null is answered with
// -32600 and logged (it got no reply, and nothing was said).
func TestStdioIDs(t *testing.T) {
	var log syncBuffer
	s := New(Options{Log: &log})
	if err := s.Load(context.Background(), demoBackend(t, nil)); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lines := []string{mcpInit, mcpInitialized}
	for _, id := range oddIDs {
		lines = append(lines, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"ask","arguments":{"question":"who directed inception ?"}}}`)
	}
	lines = append(lines, `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		// Two ids that are one string, and one number written two ways.
		`{"jsonrpc":"2.0","id":"\u0062","method":"ping"}`, `{"jsonrpc":"2.0","id":"b","method":"ping"}`)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.ServeStdio(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]json.RawMessage{}
	var nulls int
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if string(r["id"]) == "null" {
			nulls++
			if !strings.Contains(string(r["error"]), "-32600") {
				t.Errorf("id null: %s, want -32600", line)
			}
			continue
		}
		got[string(r["id"])] = r
	}
	for _, id := range oddIDs {
		if r, ok := got[id]; !ok || !strings.Contains(string(r["result"]), "Christopher_Nolan") {
			t.Errorf("id %s: no answer with that id among %d replies:\n%s", id, len(got), out.String())
		}
	}
	if nulls != 1 || !strings.Contains(log.String(), `"id": null`) {
		t.Errorf("%d replies with id null, log %q: want one -32600, logged", nulls, log.String())
	}
	// "\u0062" and "b" are one id: the second is a duplicate only while
	// the first is in flight, so both may be answered, each as sent.
	if got[`"\u0062"`] == nil && got[`"b"`] == nil {
		t.Errorf("neither spelling of id b was answered:\n%s", out.String())
	}
}

// With --mcp-stdio the first stop (ctx's end) stops reading and lets the
// calls in flight be answered within the grace: three 9 s calls got no
// reply and the process exited 130. A second stop (Abort) cuts them off
// at once.
func TestStdioStop(t *testing.T) {
	for _, abort := range []bool{false, true} {
		t.Run(map[bool]string{false: "drain", true: "abort"}[abort], func(t *testing.T) {
			g := newGate()
			var log syncBuffer
			s := New(Options{Log: &log, Grace: time.Minute})
			if err := s.Load(context.Background(), demoBackend(t, g.wrap)); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			inR, inW := io.Pipe() // stdin stays open, as a client's does
			defer inW.Close()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- s.ServeStdio(ctx, inR, outW)
				outW.Close()
			}()
			replies := make(chan []rpcReply, 1)
			go func() {
				var rs []rpcReply
				sc := bufio.NewScanner(outR)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					var r rpcReply
					json.Unmarshal(sc.Bytes(), &r)
					rs = append(rs, r)
				}
				replies <- rs
			}()
			fmt.Fprintln(inW, mcpInit)
			fmt.Fprintln(inW, mcpInitialized)
			for i := range 3 {
				fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ask","arguments":{"question":"slow: who directed inception ?"}}}`+"\n", 10+i)
			}
			g.waitEntered(t, 3)
			cancel() // the first SIGINT
			waitFor(t, "the stop to be logged", func() bool { return strings.Contains(log.String(), "stopping MCP over stdio") })
			select {
			case err := <-done:
				t.Fatalf("ServeStdio returned with calls in flight: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
			if abort {
				s.Abort() // the second
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), "cut off") {
						t.Errorf("ServeStdio: %v, want the calls cut off", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("Abort did not end the session")
				}
				return
			}
			close(g.release) // the three calls finish
			if err := <-done; err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
			rs := <-replies
			for i := range 3 {
				if r, ok := replyTo(rs, float64(10+i)); !ok || !strings.Contains(string(r.Result), "Christopher_Nolan") {
					t.Errorf("call %d: %+v (found %v)", 10+i, r, ok)
				}
			}
		})
	}
}

// `stem serve --mcp-stdio` counts stop signals as over HTTP: the first
// lets the call in flight be answered, a second cuts it off at once (it
// did nothing: the process waited).
func TestRunStdioSignals(t *testing.T) {
	g := newGate()
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	go io.Copy(io.Discard, outR)
	stop := make(chan os.Signal, 2)
	_, log, done := runInBackground(t, context.Background(), RunOptions{Options: Options{Grace: time.Minute}, Stdio: true, In: inR, Out: outW, Stop: stop}, g.wrap)
	fmt.Fprintln(inW, mcpInit)
	fmt.Fprintln(inW, mcpInitialized)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"question":"slow: who directed inception ?"}}}`)
	g.waitEntered(t, 1)
	stop <- os.Interrupt
	select {
	case err := <-done:
		t.Fatalf("the first signal ended the session with a call in flight: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	begin := time.Now()
	stop <- os.Interrupt
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cut off") {
			t.Errorf("Run: %v, want the call cut off", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the second signal did not stop the session:\n%s", log.String())
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("stopped %v after the second signal", d)
	}
	if text := log.String(); !strings.Contains(text, "stopping;") || !strings.Contains(text, "stopping now") {
		t.Errorf("log:\n%s", text)
	}
}

// Framing over stdio: CRLF line ends, blank lines, input that arrives a
// byte at a time, a last line with no newline, and a line just under the
// bound are read as the messages they hold; each call is answered once,
// with its id.
func TestStdioFraming(t *testing.T) {
	s := New(Options{MaxBody: 4096})
	if err := s.Load(context.Background(), demoBackend(t, nil)); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	long := `{"jsonrpc":"2.0","id":"long","method":"ping","params":{"_meta":{"x":"` + strings.Repeat("x", 4000) + `"}}}`
	in := mcpInit + "\r\n" + mcpInitialized + "\r\n\r\n\n" +
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r\n" + long + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{"question":"who directed inception ?"}}}`
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.ServeStdio(ctx, iotest.OneByteReader(strings.NewReader(in)), &out); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &r); err != nil || r["error"] != nil {
			t.Errorf("reply %q", trim(line))
		}
		ids[string(r["id"])]++
	}
	if want := map[string]int{"0": 1, "1": 1, `"long"`: 1, "2": 1}; fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("replies by id %v, want %v:\n%s", ids, want, trim(out.String()))
	}
}
