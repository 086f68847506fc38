package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/pattern"
)

// demoBackend serves the embedded demo KG with the pattern planner learnt
// from the demo questions, as `stem serve` does with no --kg. wrap, when
// not nil, replaces the default planner (to block or fail on purpose).
func demoBackend(t testing.TB, wrap func(projection.Planner) projection.Planner) Backend {
	t.Helper()
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	ents, err := kgvec.Build(ctx, g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := benchmark.ReadPathQuestion(ctx, bytes.NewReader(demo.Questions()), demo.QuestionsName)
	if err != nil {
		t.Fatal(err)
	}
	pat, err := pattern.FromExamples(ctx, g, enc, planeval.Examples(qs), 3)
	if err != nil {
		t.Fatal(err)
	}
	a := plan.Assets{Graph: g, Entities: ents, Encoder: enc, AutoPlanner: pat}
	return Backend{
		Graph:    g,
		Planners: []string{"auto", "schema"},
		Open: func(ctx context.Context, planner string) (*plan.Pipeline, func() error, error) {
			s := plan.DefaultSettings()
			s.Planner = plan.PlannerName(planner)
			p, closeP, err := plan.Open(ctx, s, a)
			if err == nil && wrap != nil && planner == "auto" {
				p.Planner = wrap(p.Planner)
			}
			return p, closeP, err
		},
		Search: func(ctx context.Context, q string, k int) ([]Entity, error) {
			hits, err := ents.Nearest(ctx, q, k)
			out := make([]Entity, len(hits))
			for i, h := range hits {
				out[i] = Entity{Name: h.Name, Score: h.Score}
			}
			return out, err
		},
	}
}

// started is a server answering on a loopback port.
type started struct {
	*Server
	URL  string
	stop context.CancelFunc
	done chan error
}

// start runs a server over b on 127.0.0.1 until the test ends (or
// Shutdown), and returns its base URL.
func start(t testing.TB, b Backend, o Options) *started {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.Loopback = true
	s := New(o)
	if err := s.Load(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &started{Server: s, URL: "http://" + ln.Addr().String(), stop: cancel, done: make(chan error, 1)}
	go func() { st.done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		st.Shutdown()
		s.Close()
	})
	return st
}

// Shutdown stops the server as SIGTERM does and returns Serve's error.
func (st *started) Shutdown() error {
	st.stop()
	select {
	case err, ok := <-st.done:
		if ok {
			close(st.done)
		}
		return err
	case <-time.After(30 * time.Second):
		return context.DeadlineExceeded
	}
}

// post sends body to path with the JSON content type and returns the
// status and the body read.
func post(t testing.TB, c *http.Client, url, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, c, req)
}

func get(t testing.TB, c *http.Client, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, c, req)
}

func do(t testing.TB, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL, err)
	}
	return resp.StatusCode, string(b)
}

// decode unmarshals body into a new T or fails the test.
func decode[T any](t testing.TB, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not the JSON wanted: %v\n%s", err, body)
	}
	return v
}
