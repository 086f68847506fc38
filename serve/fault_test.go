package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/projection"
)

// gate is a planner that holds questions starting with "slow:" until
// released or their context ends, so tests can fill the server on
// purpose.
type gate struct {
	inner   projection.Planner
	entered chan struct{}
	release chan struct{}
	// cancelled counts held questions whose context ended first.
	mu        sync.Mutex
	cancelled int
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 64), release: make(chan struct{})}
}

func (g *gate) wrap(p projection.Planner) projection.Planner {
	g.inner = p
	return g
}

func (g *gate) Plan(ctx context.Context, in projection.Input) (projection.Projection, error) {
	if strings.HasPrefix(in.Question, "slow:") {
		g.entered <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done():
			g.mu.Lock()
			g.cancelled++
			g.mu.Unlock()
			return projection.Projection{}, ctx.Err()
		}
	}
	return g.inner.Plan(ctx, in)
}

func (g *gate) cancelledCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cancelled
}

// waitEntered waits for n held questions.
func (g *gate) waitEntered(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-g.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("a slow question never reached the planner")
		}
	}
}

const slowQuestion = `{"question": "slow: who directed inception ?"}`

// TestFaults sends what a hostile or broken client sends, then checks the
// server still answers correctly and holds no more goroutines or memory
// than before.
func TestFaults(t *testing.T) {
	g := newGate()
	st := start(t, demoBackend(t, g.wrap), Options{MaxBody: 1 << 10, MaxConcurrent: 2, Timeout: time.Second, HeaderTimeout: 300 * time.Millisecond})
	c := &http.Client{Timeout: 20 * time.Second}
	check := func(t *testing.T) {
		t.Helper()
		status, body := post(t, c, st.URL+"/v1/ask", `{"question": "who directed inception ?"}`)
		if status != 200 || !strings.Contains(body, `"answer":"Christopher_Nolan"`) {
			t.Fatalf("after the faults: %d %s", status, body)
		}
	}
	check(t)
	c.CloseIdleConnections()
	baseG, baseHeap := settle()

	t.Run("malformed bodies", func(t *testing.T) {
		for _, body := range []string{"", "{", `{"question": 7}`, `[1,2]`, `{"question": "a", "explain": "yes"}`, "\x00\xff", `{"question": "a"`} {
			if status, resp := post(t, c, st.URL+"/v1/ask", body); status != 400 || !strings.Contains(resp, `"code":"bad_json"`) {
				t.Errorf("body %q: %d %s", body, status, resp)
			}
		}
	})
	t.Run("oversized body", func(t *testing.T) {
		body := `{"question": "` + strings.Repeat("x", 2<<10) + `"}`
		if status, resp := post(t, c, st.URL+"/v1/ask", body); status != 413 || !strings.Contains(resp, `"code":"body_too_large"`) {
			t.Errorf("%d %s", status, resp)
		}
	})
	t.Run("wrong content type", func(t *testing.T) {
		if status, resp := post(t, c, st.URL+"/v1/ask", "question=x", "Content-Type", "application/x-www-form-urlencoded"); status != 415 {
			t.Errorf("%d %s", status, resp)
		}
	})
	t.Run("slow clients", func(t *testing.T) {
		// Ten connections that send half a request line and stall are cut
		// off after the header timeout, and a normal client is answered
		// meanwhile.
		var conns []net.Conn
		for range 10 {
			conn, err := net.Dial("tcp", strings.TrimPrefix(st.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v1/ask HTTP/1.1\r\nHost: localhost\r\nContent-")
			conns = append(conns, conn)
		}
		check(t)
		for _, conn := range conns {
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := conn.Read(make([]byte, 512))
			if n != 0 && !errors.Is(err, io.EOF) {
				// Some Go versions answer 408 before closing.
				continue
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("a stalled client kept its connection past the header timeout")
			}
		}
	})
	t.Run("slow body", func(t *testing.T) {
		// A client that sends its headers and part of its body is
		// answered 408, in JSON, once the body deadline (the header
		// timeout) has passed: it waited 15 s for a non-standard 499.
		conn, err := net.Dial("tcp", strings.TrimPrefix(st.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /v1/ask HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"quest")
		begin := time.Now()
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("a truncated body got no reply: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 408 || !strings.Contains(string(body), `"code":"body_timeout"`) || strings.Contains(string(body), "127.0.0.1") {
			t.Errorf("a truncated body got %d %s, want 408 body_timeout naming no address", resp.StatusCode, body)
		}
		if d := time.Since(begin); d > 3*time.Second {
			t.Errorf("a truncated body was answered after %v, with a header timeout of 300 ms", d)
		}
	})
	t.Run("cancelled requests", func(t *testing.T) {
		before := g.cancelledCount()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", st.URL+"/v1/ask", strings.NewReader(slowQuestion))
		req.Header.Set("Content-Type", "application/json")
		done := make(chan error, 1)
		go func() {
			resp, err := c.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		g.waitEntered(t, 1)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("client: %v", err)
		}
		// The question stops, and its slot is free again.
		waitFor(t, "the cancelled question to stop", func() bool { return g.cancelledCount() == before+1 && len(st.slots) == 0 })
	})
	t.Run("deadline", func(t *testing.T) {
		status, resp := post(t, c, st.URL+"/v1/ask", slowQuestion)
		g.waitEntered(t, 1)
		if status != 504 || !strings.Contains(resp, `"code":"timeout"`) {
			t.Errorf("%d %s", status, resp)
		}
	})
	t.Run("burst beyond the bound", func(t *testing.T) {
		var wg sync.WaitGroup
		held := make([]int, 2)
		for i := range held {
			wg.Go(func() { held[i], _, _ = ask(c, st.URL, slowQuestion) })
		}
		g.waitEntered(t, 2)
		var refused sync.Map
		var burst sync.WaitGroup
		for i := range 20 {
			burst.Go(func() {
				req, _ := http.NewRequest("POST", st.URL+"/v1/ask", strings.NewReader(`{"question": "who directed inception ?"}`))
				req.Header.Set("Content-Type", "application/json")
				resp, err := c.Do(req)
				if err != nil {
					refused.Store(i, err.Error())
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				refused.Store(i, fmt.Sprintf("%d retry=%s", resp.StatusCode, resp.Header.Get("Retry-After")))
			})
		}
		burst.Wait()
		refused.Range(func(k, v any) bool {
			if v != "503 retry=1" {
				t.Errorf("burst request %v: %v, want 503 with Retry-After", k, v)
			}
			return true
		})
		g.release <- struct{}{}
		g.release <- struct{}{}
		wg.Wait()
		if held[0] != 200 || held[1] != 200 {
			t.Errorf("the questions in the slots: %v, want both answered", held)
		}
	})
	check(t)
	c.CloseIdleConnections()
	// Nothing a fault started is left running, and memory is back.
	backToBaseline(t, "the faults", baseG, baseHeap)
}

// backToBaseline waits for the goroutines to return to their number
// before what the test did (give or take two) and checks that the live
// heap grew by less than 8 MiB.
func backToBaseline(t *testing.T, what string, baseG int, baseHeap uint64) {
	t.Helper()
	var gs int
	var heap uint64
	waitFor(t, "goroutines to return to their number before "+what, func() bool {
		gs, heap = settle()
		return gs <= baseG+2
	})
	if heap > baseHeap+8<<20 {
		t.Errorf("live heap grew from %d to %d bytes over %s", baseHeap, heap, what)
	}
}

// ask posts body to /v1/ask from any goroutine (post may not: it fails
// the test).
func ask(c *http.Client, base, body string) (int, string, error) {
	req, err := http.NewRequest("POST", base+"/v1/ask", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// settle collects garbage and returns the goroutines and live heap bytes.
func settle() (int, uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return runtime.NumGoroutine(), m.HeapAlloc
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestShutdown(t *testing.T) {
	t.Run("in-flight questions finish", func(t *testing.T) {
		g := newGate()
		st := start(t, demoBackend(t, g.wrap), Options{Grace: 10 * time.Second})
		c := &http.Client{}
		type reply struct {
			status int
			body   string
		}
		got := make(chan reply, 1)
		go func() {
			s, b, err := ask(c, st.URL, slowQuestion)
			if err != nil {
				b = err.Error()
			}
			got <- reply{s, b}
		}()
		g.waitEntered(t, 1)
		stopped := make(chan error, 1)
		go func() { stopped <- st.Shutdown() }()
		// New connections are refused while the question finishes.
		waitFor(t, "the listener to close", func() bool {
			conn, err := net.DialTimeout("tcp", strings.TrimPrefix(st.URL, "http://"), time.Second)
			if err == nil {
				conn.Close()
			}
			return err != nil
		})
		g.release <- struct{}{}
		r := <-got
		if r.status != 200 || !strings.Contains(r.body, "Christopher_Nolan") {
			t.Errorf("the question in flight got %d %s", r.status, r.body)
		}
		if err := <-stopped; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	t.Run("a second stop cuts the grace short", func(t *testing.T) {
		g := newGate()
		st := start(t, demoBackend(t, g.wrap), Options{Grace: time.Minute})
		go ask(&http.Client{}, st.URL, slowQuestion)
		g.waitEntered(t, 1)
		go func() {
			time.Sleep(100 * time.Millisecond)
			st.Abort()
		}()
		begin := time.Now()
		err := st.Shutdown()
		if err == nil || !strings.Contains(err.Error(), "cut off when asked again") {
			t.Errorf("Serve: %v, want the requests cut off by the second stop", err)
		}
		if d := time.Since(begin); d > 10*time.Second {
			t.Errorf("shutdown took %v of its minute's grace", d)
		}
		waitFor(t, "the cut-off question to stop", func() bool { return g.cancelledCount() == 1 })
	})
	t.Run("grace runs out", func(t *testing.T) {
		g := newGate()
		st := start(t, demoBackend(t, g.wrap), Options{Grace: 200 * time.Millisecond})
		go ask(&http.Client{}, st.URL, slowQuestion)
		g.waitEntered(t, 1)
		err := st.Shutdown()
		if err == nil || !strings.Contains(err.Error(), "cut off") {
			t.Errorf("Serve: %v, want the requests cut off reported", err)
		}
		waitFor(t, "the cut-off question to stop", func() bool { return g.cancelledCount() == 1 })
	})
}
