package sparql_test

// The SPARQL backend against a real Virtuoso (Debian's virtuoso-opensource,
// started privately on 127.0.0.1): the KG seam's conformance suite, and
// whole evaluations that must give the in-memory backend's figures and
// evidence question for question. Skipped only where virtuoso-t is absent;
// CI installs it and sets $STEM_REQUIRE_VIRTUOSO=1 so they cannot stop
// running unnoticed.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/internal/virtuoso"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/kgtest"
	"github.com/stem-kgqa/stem/kg/sparql"
)

// server is one Virtuoso for the package's tests, started by the first
// test that needs it and stopped by TestMain.
var server struct {
	once   sync.Once
	srv    *virtuoso.Server
	err    error
	mu     sync.Mutex
	graphs int
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server.srv != nil {
		if err := server.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop virtuoso:", err)
		}
	}
	os.Exit(code)
}

// start starts the package's shared server, or skips.
func start(t testing.TB) *virtuoso.Server {
	t.Helper()
	virtuoso.SkipUnavailable(t)
	server.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		server.srv, server.err = virtuoso.Start(ctx, virtuoso.Options{})
		t.Logf("virtuoso started in %v", time.Since(start).Round(time.Millisecond))
	})
	if server.err != nil {
		t.Fatal(server.err)
	}
	return server.srv
}

// newGraph names a fresh named graph of the shared server.
func newGraph() string {
	server.mu.Lock()
	defer server.mu.Unlock()
	server.graphs++
	return fmt.Sprintf("http://stem.test/graph%d", server.graphs)
}

// serve loads g into the shared server as a named graph of its own and
// returns the endpoint and the graph's IRI.
func serve(t testing.TB, g kg.Reader) (endpoint, graph string) {
	t.Helper()
	srv := start(t)
	graph = newGraph()
	start := time.Now()
	if err := srv.LoadKG(context.Background(), g, graph); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d triples in %v", g.NumTriples(), time.Since(start).Round(time.Millisecond))
	return srv.URL(), graph
}

// serveNT loads N-Triples text into a named graph of its own.
func serveNT(t testing.TB, nt string) (endpoint, graph string) {
	t.Helper()
	srv := start(t)
	graph = newGraph()
	f := filepath.Join(t.TempDir(), "kg.nt")
	if err := os.WriteFile(f, []byte(nt), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := srv.Load(context.Background(), f, graph); err != nil {
		t.Fatal(err)
	}
	return srv.URL(), graph
}

// open serves g and opens it through the SPARQL backend.
func open(t testing.TB, g kg.Reader, cfg sparql.Config) *sparql.Graph {
	t.Helper()
	cfg.Endpoint, cfg.Graph = serve(t, g)
	s, err := sparql.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func graphOf(t testing.TB, triples [][3]string) *kg.Graph {
	t.Helper()
	g, err := kg.GraphOf(triples)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestConformance(t *testing.T) {
	kgtest.TestAll(t, func(t *testing.T, triples [][3]string) kg.Reader {
		g := open(t, graphOf(t, triples), sparql.Config{})
		t.Cleanup(func() {
			if err := g.Err(); err != nil {
				t.Errorf("the backend kept an error: %v", err)
			}
		})
		return g
	}, kgtest.Config{Interned: true})
}

// The neighbourhood the endpoint serves is the in-memory backend's, triple
// for triple and id for id, at every radius, including with pages and
// batches far smaller than the graph (so paging and batching are used).
func TestNeighbourhoodMatchesMemory(t *testing.T) {
	mem := graphOf(t, kgtest.Triples)
	for _, cfg := range []sparql.Config{{}, {PageSize: 2, Batch: 1}} {
		g := open(t, mem, cfg)
		for _, seeds := range [][]string{{"Nolan"}, {"Drama"}, {"New York", "Paris"}, {"Atlantis"}} {
			for hops := 1; hops <= 3; hops++ {
				want, err := kg.Neighbourhood(context.Background(), mem, seeds, hops)
				if err != nil {
					t.Fatal(err)
				}
				got, err := g.Neighbourhood(context.Background(), seeds, hops)
				if err != nil {
					t.Fatal(err)
				}
				if a, b := triplesOf(got), triplesOf(want); fmt.Sprint(a) != fmt.Sprint(b) {
					t.Errorf("page %d batch %d, %v within %d: endpoint %v, memory %v", cfg.PageSize, cfg.Batch, seeds, hops, a, b)
				}
			}
		}
	}
}

// OutEdges holds each named entity's outgoing edges, those the in-memory
// KG holds, and every entity named, those with none too (an answer the
// constraint check then reads as having no attribute).
func TestOutEdgesMatchMemory(t *testing.T) {
	mem := graphOf(t, kgtest.Triples)
	for _, cfg := range []sparql.Config{{}, {PageSize: 2, Batch: 1}} {
		g := open(t, mem, cfg)
		for _, seeds := range [][]string{{"Nolan"}, {"Drama", "Inception"}, {"New York", "Paris", "Atlantis"}} {
			got, err := g.OutEdges(context.Background(), seeds)
			if err != nil {
				t.Fatal(err)
			}
			var want [][3]string
			for _, s := range seeds {
				e, ok := mem.Entity(s)
				if !ok {
					continue
				}
				if _, ok := got.Entity(s); !ok {
					t.Errorf("page %d batch %d: %q is not in the graph of %v", cfg.PageSize, cfg.Batch, s, seeds)
				}
				for _, tid := range mem.Out(e) {
					tr := mem.Triple(tid)
					want = append(want, [3]string{s, mem.RelationName(tr.Rel), mem.EntityName(tr.Tail)})
				}
			}
			if a, b := sorted(triplesOf(got)), sorted(want); fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("page %d batch %d, out of %v: endpoint %v, memory %v", cfg.PageSize, cfg.Batch, seeds, a, b)
			}
		}
	}
}

func triplesOf(g *kg.Graph) [][3]string {
	out := make([][3]string, g.NumTriples())
	for i := range out {
		t := g.Triple(int32(i))
		out[i] = [3]string{g.EntityName(t.Head), g.RelationName(t.Rel), g.EntityName(t.Tail)}
	}
	return out
}

// Virtuoso cuts a result at ResultSetMaxRows without an error; a page size
// above the cap must end in ErrTruncated, never in fewer edges.
func TestRealTruncationDetected(t *testing.T) {
	virtuoso.SkipUnavailable(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := virtuoso.Start(ctx, virtuoso.Options{ResultSetMaxRows: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	var ts [][3]string
	for i := range 12 {
		ts = append(ts, [3]string{"hub", "r", fmt.Sprintf("e%02d", i)})
	}
	if err := srv.LoadKG(ctx, graphOf(t, ts), "http://stem.test/hub"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		page int
		cut  bool
	}{{10, true}, {5, false}, {3, false}} {
		g, err := sparql.Open(sparql.Config{Endpoint: srv.URL(), Graph: "http://stem.test/hub", PageSize: c.page})
		if err != nil {
			t.Fatal(err)
		}
		sub, err := g.Neighbourhood(ctx, []string{"hub"}, 1)
		switch {
		case c.cut && err == nil:
			t.Errorf("page %d over the server's cap of 5: %d triples and no error, want ErrTruncated", c.page, sub.NumTriples())
		case !c.cut && err != nil:
			t.Errorf("page %d: %v", c.page, err)
		case !c.cut && sub.NumTriples() != 12:
			t.Errorf("page %d: %d triples, want 12", c.page, sub.NumTriples())
		}
	}
}

// fetching answers over an in-memory KG as over an endpoint: each
// question over its neighbourhood (kg.Neighbourhood). The endpoint must
// give exactly its answers and evidence.
type fetching struct{ *kg.Graph }

func (f fetching) Neighbourhood(ctx context.Context, seeds []string, hops int) (*kg.Graph, error) {
	return kg.Neighbourhood(ctx, f.Graph, seeds, hops)
}

func sorted(ts [][3]string) [][3]string {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b [3]string) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return ts
}

// A hub with more edges than a page is read page after page, each
// starting after the last row of the one before: a stock Virtuoso
// refuses to sort more than MaxSortedTopRows (10,000) rows, so paging by
// OFFSET failed on the second page of any such hub ("SR353: Sorted TOP
// clause specifies more then 10530 rows to sort"). The edges must be
// those served, with names in several scripts and objects that tie as
// strings (an IRI and a literal spelled alike), at the default page size
// and at a page of 700 rows.
func TestHubPastTheSortLimit(t *testing.T) {
	ns := func(s string) string { return "<" + kg.FreebaseNS + s + ">" }
	var b strings.Builder
	var want [][3]string
	scripts := []string{"e", "É", "日本", "z", "Ω"}
	for i := range 10500 {
		o := fmt.Sprintf("%s%05d", scripts[i%len(scripts)], i)
		fmt.Fprintf(&b, "%s %s %s .\n", ns("hub"), ns("r"), ns(o))
		want = append(want, [3]string{"hub", "r", o})
	}
	for i := range 30 {
		// The literal ties with the IRI as a string; both are named
		// e000NN, so they are one triple by name.
		fmt.Fprintf(&b, "%s %s \"e%05d\" .\n", ns("hub"), ns("r"), i*5)
		fmt.Fprintf(&b, "%s %s %s .\n", ns(fmt.Sprintf("in%02d", i)), ns("s"), ns("hub"))
		want = append(want, [3]string{fmt.Sprintf("in%02d", i), "s", "hub"})
	}
	endpoint, graph := serveNT(t, b.String())
	for _, page := range []int{0, 700} {
		g, err := sparql.Open(sparql.Config{Endpoint: endpoint, Graph: graph, PageSize: page})
		if err != nil {
			t.Fatal(err)
		}
		got, err := g.Neighbourhood(context.Background(), []string{"hub"}, 1)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if a, b := fmt.Sprint(sorted(triplesOf(got))), fmt.Sprint(sorted(want)); a != b {
			t.Errorf("page %d: %d triples from the endpoint, %d served", page, got.NumTriples(), len(want))
		}
	}
}
