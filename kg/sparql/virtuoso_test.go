package sparql_test

// The SPARQL backend against real engines (Virtuoso and Oxigraph, started
// privately on 127.0.0.1: see engines_test.go): the KG seam's conformance
// suite, neighbourhoods and paging that must give the in-memory backend's
// triples, and Virtuoso's row cap. Skipped only where an engine is absent;
// CI installs both and requires them.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/internal/virtuoso"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/kgtest"
	"github.com/stem-kgqa/stem/kg/sparql"
)

func graphOf(t testing.TB, triples [][3]string) *kg.Graph {
	t.Helper()
	g, err := kg.GraphOf(triples)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestConformance(t *testing.T) {
	eachEngine(t, func(t *testing.T, e *engine) {
		kgtest.TestAll(t, func(t *testing.T, triples [][3]string) kg.Reader {
			g := e.open(t, graphOf(t, triples), sparql.Config{})
			t.Cleanup(func() {
				if err := g.Err(); err != nil {
					t.Errorf("the backend kept an error: %v", err)
				}
			})
			return g
		}, kgtest.Config{Interned: true})
	})
}

// The neighbourhood the endpoint serves is the in-memory backend's, triple
// for triple and id for id, at every radius, including with pages and
// batches far smaller than the graph (so paging and batching are used).
func TestNeighbourhoodMatchesMemory(t *testing.T) {
	eachEngine(t, testNeighbourhoodMatchesMemory)
}

func testNeighbourhoodMatchesMemory(t *testing.T, e *engine) {
	mem := graphOf(t, kgtest.Triples)
	for _, cfg := range []sparql.Config{{}, {PageSize: 2, Batch: 1}} {
		g := e.open(t, mem, cfg)
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
	eachEngine(t, testOutEdgesMatchMemory)
}

func testOutEdgesMatchMemory(t *testing.T, e *engine) {
	mem := graphOf(t, kgtest.Triples)
	for _, cfg := range []sparql.Config{{}, {PageSize: 2, Batch: 1}} {
		g := e.open(t, mem, cfg)
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
			// Restricted to relations by the end of their name: the same
			// edges, those relations' alone, every entity still named (a
			// page filled falls back to OutEdges, as at page 2).
			for _, endings := range [][]string{{"in"}, {"by", "_in"}, {"nothing"}} {
				got, err := g.OutEdgesEnding(context.Background(), seeds, endings)
				if err != nil {
					t.Fatal(err)
				}
				var kept [][3]string
				for _, w := range want {
					if slices.ContainsFunc(endings, func(e string) bool { return strings.HasSuffix(w[1], e) }) {
						kept = append(kept, w)
					}
				}
				for _, s := range seeds {
					if _, ok := mem.Entity(s); ok {
						if _, ok := got.Entity(s); !ok {
							t.Errorf("page %d: %q is not in the graph of %v ending %v", cfg.PageSize, s, seeds, endings)
						}
					}
				}
				a, b := sorted(triplesOf(got)), sorted(kept)
				if cfg.PageSize == 2 && len(a) > len(b) {
					b = sorted(want) // a page filled: OutEdges's edges
				}
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Errorf("page %d batch %d, out of %v ending %v: endpoint %v, memory %v", cfg.PageSize, cfg.Batch, seeds, endings, a, b)
				}
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
// and at a page of a fifteenth of the hub. The hub is past the engine's
// sort limit; an engine with none (Oxigraph, which sorts a whole result
// for each page in about 0.3 s) gets a tenth of Virtuoso's hub.
func TestHubPastTheSortLimit(t *testing.T) {
	eachEngine(t, testHubPastTheSortLimit)
}

func testHubPastTheSortLimit(t *testing.T, e *engine) {
	n := 1050
	if e.sortLimit > 0 {
		n = e.sortLimit + 500
	}
	ns := func(s string) string { return "<" + kg.FreebaseNS + s + ">" }
	var b strings.Builder
	var want [][3]string
	scripts := []string{"e", "É", "日本", "z", "Ω"}
	for i := range n {
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
	endpoint, graph := e.serveNT(t, b.String())
	for _, page := range []int{0, n / 15} {
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

// A typed literal ("148"^^xsd:integer, a date) is an entity like any
// other: the walk reaches it and goes on to every entity holding the same
// value, as in memory. The engines give its datatype, and the literal is
// asked for again with it, not as the plain string, which is another RDF
// term and matches nothing.
func TestTypedLiteralsWalked(t *testing.T) {
	eachEngine(t, testTypedLiteralsWalked)
}

func testTypedLiteralsWalked(t *testing.T, e *engine) {
	ctx := context.Background()
	ns := func(s string) string { return "<" + kg.FreebaseNS + s + ">" }
	xsd := func(s string) string { return "<http://www.w3.org/2001/XMLSchema#" + s + ">" }
	var b, dump strings.Builder
	name := func(s string) string { return `"` + s + `"@en` }
	for _, tr := range [][3]string{
		{ns("m.0film1"), ns("type.object.name"), name("Inception")},
		{ns("m.0film2"), ns("type.object.name"), name("Predators")},
		{ns("m.0film3"), ns("type.object.name"), name("Zodiac")},
		{ns("m.0film4"), ns("type.object.name"), name("Inception 2")},
		{ns("m.0film1"), ns("film.film.release_date"), `"2010-07-08"^^` + xsd("date")},
		{ns("m.0film2"), ns("film.film.release_date"), `"2010-07-08"^^` + xsd("date")},
		{ns("m.0film1"), ns("film.film.runtime"), `"148"^^` + xsd("integer")},
		{ns("m.0film3"), ns("film.film.runtime"), `"148"^^` + xsd("integer")},
		{ns("m.0film1"), ns("film.film.tagline"), `"Your mind is the scene of the crime"@en`},
		{ns("m.0film1"), ns("film.film.code"), `"tt1375666"^^` + xsd("string")},
		{ns("m.0film4"), ns("film.film.code"), `"tt1375666"`},
	} {
		fmt.Fprintf(&b, "%s %s %s .\n", tr[0], tr[1], tr[2])
		fmt.Fprintf(&dump, "%s\t%s\t%s\t.\n", tr[0], tr[1], tr[2])
	}
	// Read in memory as a Freebase dump, which names machine ids by their
	// type.object.name, as the backend does.
	mem, err := kg.LoadReader(ctx, strings.NewReader(dump.String()), "freebase-rdf-typed", kg.FormatFreebase)
	if err != nil {
		t.Fatal(err)
	}
	endpoint, graph := e.serveNT(t, b.String())
	g, err := sparql.Open(sparql.Config{Endpoint: endpoint, Graph: graph})
	if err != nil {
		t.Fatal(err)
	}
	want, err := kg.Neighbourhood(ctx, mem, []string{"Inception"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Neighbourhood(ctx, []string{"Inception"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, w := sorted(triplesOf(got)), sorted(triplesOf(want))
	if fmt.Sprint(a) != fmt.Sprint(w) {
		t.Errorf("within 2 of Inception:\nover SPARQL %q\n  in memory %q", a, w)
	}
	if len(w) != 7 {
		t.Errorf("in memory %d triples, want all 7", len(w))
	}
}

// TestNeighbourhoodWithinMatchesMemory: the seeds' edges, the edges of
// their neighbours of at most bound edges, and the others named, as the
// KG in memory gives them, whole batches and paged ones alike.
func TestNeighbourhoodWithinMatchesMemory(t *testing.T) {
	eachEngine(t, testNeighbourhoodWithinMatchesMemory)
}

func testNeighbourhoodWithinMatchesMemory(t *testing.T, e *engine) {
	mem := graphOf(t, kgtest.Triples)
	edgesOf := func(x int32) [][3]string {
		var out [][3]string
		for _, tid := range append(slices.Clone(mem.Out(x)), mem.In(x)...) {
			tr := mem.Triple(tid)
			out = append(out, [3]string{mem.EntityName(tr.Head), mem.RelationName(tr.Rel), mem.EntityName(tr.Tail)})
		}
		return out
	}
	for _, cfg := range []sparql.Config{{}, {PageSize: 2, Batch: 1}} {
		g := e.open(t, mem, cfg)
		for _, seeds := range [][]string{{"Nolan"}, {"Drama", "Inception"}, {"New York", "Paris", "Atlantis"}} {
			for _, bound := range []int{0, 2, 3, 100} {
				got, over, err := g.NeighbourhoodWithin(context.Background(), seeds, bound)
				if err != nil {
					t.Fatal(err)
				}
				var want [][3]string
				var wantOver []string
				isSeed := map[int32]bool{}
				for _, s := range seeds {
					if x, ok := mem.Entity(s); ok {
						isSeed[x] = true
					}
				}
				near := map[int32]bool{}
				for x := range isSeed {
					want = append(want, edgesOf(x)...)
					for _, tid := range append(slices.Clone(mem.Out(x)), mem.In(x)...) {
						tr := mem.Triple(tid)
						for _, y := range []int32{tr.Head, tr.Tail} {
							if !isSeed[y] {
								near[y] = true
							}
						}
					}
				}
				for y := range near {
					if mem.Degree(y) <= bound {
						want = append(want, edgesOf(y)...)
					} else {
						wantOver = append(wantOver, mem.EntityName(y))
					}
				}
				slices.Sort(wantOver)
				slices.Sort(over)
				if a, b := sorted(triplesOf(got)), slices.Compact(sorted(want)); fmt.Sprint(a) != fmt.Sprint(b) {
					t.Errorf("page %d batch %d, %v within %d: endpoint %v, memory %v", cfg.PageSize, cfg.Batch, seeds, bound, a, b)
				}
				if fmt.Sprint(over) != fmt.Sprint(wantOver) {
					t.Errorf("page %d batch %d, %v within %d: over %v, want %v", cfg.PageSize, cfg.Batch, seeds, bound, over, wantOver)
				}
			}
		}
	}
}
