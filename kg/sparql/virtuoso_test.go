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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/internal/virtuoso"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/kgtest"
	"github.com/stem-kgqa/stem/kg/sparql"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/pattern"
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

// encoder returns the default word-vector encoder (stem setup installs
// it), or skips.
func encoder(t testing.TB) models.Encoder {
	t.Helper()
	p, err := wordvec.DefaultPath()
	if err == nil {
		var v *wordvec.Vectors
		if v, err = wordvec.Open(p); err == nil {
			return wordvec.New(v, wordvec.Options{})
		}
	}
	t.Skipf("word vectors not set up (run stem setup): %v", err)
	return nil
}

// recorder keeps every question's prediction while eval.Run scores them.
type recorder struct {
	eval.Answerer
	mu    sync.Mutex
	preds map[string]eval.Prediction
}

func (r *recorder) Answer(ctx context.Context, q benchmark.Question) (eval.Prediction, error) {
	p, err := r.Answerer.Answer(ctx, q)
	r.mu.Lock()
	r.preds[q.ID] = p
	r.mu.Unlock()
	return p, err
}

// evaluate answers qs over g with the planner (nil: the oracle) and
// returns the report and every prediction.
func evaluate(t *testing.T, g kg.Reader, enc models.Encoder, planner func(kg.Reader) projection.Planner, qs []benchmark.Question) (*eval.Report, map[string]eval.Prediction) {
	t.Helper()
	ctx := context.Background()
	s := plan.DefaultSettings()
	a := plan.Assets{Graph: g, Encoder: enc}
	if planner == nil {
		s.Planner = "oracle"
	} else {
		a.AutoPlanner = planner(g)
	}
	p, closeP, err := plan.Open(ctx, s, a)
	if err != nil {
		t.Fatal(err)
	}
	defer closeP()
	rec := &recorder{Answerer: eval.Pipeline{Pipeline: p}, preds: map[string]eval.Prediction{}}
	rep, err := eval.Run(ctx, qs, rec, eval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep, rec.preds
}

// The pipeline over the endpoint gives the answers and evidence of the
// same KG in memory answered the same way (each question over its
// neighbourhood), question for question, and the answers of the whole KG
// in memory wherever the question's entities are in the KG: PathQuestion 3-hop and MetaQA 2-hop test questions,
// with the oracle and the pattern planner. (Over the whole KG, evidence
// can differ where a question's entity is missing from the KG: tracing
// then anchors by similarity among every entity's vector, which an
// endpoint has not.)
func TestEvalMatchesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: whole test splits over SPARQL take minutes")
	}
	virtuoso.SkipUnavailable(t)
	enc := encoder(t)
	ctx := context.Background()
	fileKG := func(rel string) func([]benchmark.Question) (*kg.Graph, error) {
		return func([]benchmark.Question) (*kg.Graph, error) {
			return kg.Load(ctx, shareddata.Path(t, rel), kg.FormatAuto)
		}
	}
	for _, c := range []struct {
		name  string
		kb    func([]benchmark.Question) (*kg.Graph, error)
		load  func() ([]benchmark.Question, error)
		train func() ([]benchmark.Question, error) // nil: the oracle alone
		n     int                                  // test questions answered
		// freebase serves the KG as Freebase is served: named
		// entities are machine ids named by type.object.name.
		freebase bool
	}{
		{"PQ-3H", fileKG("pathquestion/3H-kb.txt"),
			func() ([]benchmark.Question, error) {
				return benchmark.LoadPathQuestion(ctx, shareddata.Path(t, "pathquestion/splits/PQ-3H.test.txt"))
			},
			func() ([]benchmark.Question, error) {
				return benchmark.LoadPathQuestion(ctx, shareddata.Path(t, "pathquestion/splits/PQ-3H.train.txt"))
			}, 472, false},
		{"MetaQA-2hop", fileKG("metaqa/kb.txt"),
			func() ([]benchmark.Question, error) {
				return benchmark.LoadMetaQA(ctx, shareddata.Path(t, "metaqa/qa_test_2hop.txt"), shareddata.Path(t, "metaqa/qtype_test_2hop.txt"))
			},
			func() ([]benchmark.Question, error) {
				return benchmark.LoadMetaQA(ctx, shareddata.Path(t, "metaqa/qa_dev_2hop.txt"), shareddata.Path(t, "metaqa/qtype_dev_2hop.txt"))
			}, 500, false},
		// WebQSP-mini: real Freebase graphs (relations such as
		// people.person.nationality, CVT ids m.0...), their union loaded
		// once and each question asked of the union.
		{"WebQSP-mini", union, webqspMini(ctx, t), nil, 1628, false},
		{"WebQSP-mini-as-Freebase", union, webqspMini(ctx, t), nil, 1628, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			qs, err := c.load()
			if err != nil {
				t.Fatal(err)
			}
			qs = qs[:min(c.n, len(qs))]
			mem, err := c.kb(qs)
			if err != nil {
				t.Fatal(err)
			}
			for i := range qs {
				qs[i].Graph = nil // asked of the shared KG
			}
			var train []benchmark.Question
			if c.train != nil {
				if train, err = c.train(); err != nil {
					t.Fatal(err)
				}
				train = train[:min(3000, len(train))]
			}
			var endpoint, graph string
			if c.freebase {
				endpoint, graph = serveNT(t, freebaseOf(mem))
			} else {
				endpoint, graph = serve(t, mem)
			}
			patternOver := func(g kg.Reader) projection.Planner {
				p, err := pattern.FromExamples(ctx, g, enc, planeval.Examples(train), projection.DefaultBeam)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			for _, planner := range []struct {
				name string
				open func(kg.Reader) projection.Planner
			}{{"oracle", nil}, {"pattern", patternOver}} {
				if planner.open != nil && train == nil {
					continue
				}
				t.Run(planner.name, func(t *testing.T) {
					whole, wholePreds := evaluate(t, mem, enc, planner.open, qs)
					want, wantPreds := evaluate(t, fetching{mem}, enc, planner.open, qs)
					// A Graph of its own, so its cache starts cold.
					remote, err := sparql.Open(sparql.Config{Endpoint: endpoint, Graph: graph})
					if err != nil {
						t.Fatal(err)
					}
					got, gotPreds := evaluate(t, remote, enc, planner.open, qs)
					queries := remote.Stats().Queries
					linked := 0 // questions without marked entities, linked by name
					for _, q := range qs {
						if len(q.Entities) == 0 {
							linked++
						}
					}
					if linked == 0 && (got.Scores != want.Scores || got.Unbacked != want.Unbacked || got.Errors != want.Errors) {
						t.Errorf("over SPARQL %+v, in memory %+v", got.Scores, want.Scores)
					}
					// Against the whole KG: the same answers wherever the
					// question's entities are in the KG; the others are
					// anchored by similarity over every entity in memory.
					missing, unlike := 0, 0
					for _, q := range qs {
						in := true
						for _, e := range q.Entities {
							if _, ok := mem.Entity(e); !ok {
								in = false
							}
						}
						a, b := gotPreds[q.ID], wholePreds[q.ID]
						same := fmt.Sprint(a.Answers) == fmt.Sprint(b.Answers)
						switch {
						case len(q.Entities) == 0:
							// Linked by name: see linkDiffer below.
						case !in:
							missing++
							if !same {
								unlike++
							}
						case !same:
							t.Errorf("%s %q: over SPARQL %v, over the whole KG %v", q.ID, q.Text, a.Answers, b.Answers)
						}
					}
					differ, linkOnly := 0, 0
					for _, q := range qs {
						a, b := gotPreds[q.ID], wantPreds[q.ID]
						if len(q.Entities) == 0 {
							// Linked by name. In memory every n-gram is
							// matched ignoring case; over an endpoint
							// n-grams are looked up as spelled, then
							// found by the engine's text index and
							// matched ignoring case, so they link the
							// same entities. Where nothing is named
							// exactly, the text index's finds ranked by
							// the encoder may still link one (the whole
							// KG in memory would need every entity's
							// vector): counted.
							w := wholePreds[q.ID]
							switch {
							case len(w.Answers) == 0 && len(a.Answers) > 0:
								linkOnly++
							case fmt.Sprint(a.Answers) != fmt.Sprint(w.Answers):
								t.Errorf("%s %q, linked by name: over SPARQL %v, over the whole KG %v", q.ID, q.Text, a.Answers, w.Answers)
							}
							continue
						}
						if fmt.Sprint(a.Answers) != fmt.Sprint(b.Answers) || fmt.Sprint(sorted(a.EvidenceTriples)) != fmt.Sprint(sorted(b.EvidenceTriples)) {
							if differ++; differ <= 3 {
								t.Errorf("%s %q: over SPARQL %v from %v; in memory %v from %v", q.ID, q.Text, a.Answers, a.EvidenceTriples, b.Answers, b.EvidenceTriples)
							}
						}
					}
					if differ > 0 {
						t.Errorf("%d of %d questions differ", differ, len(qs))
					}
					t.Logf("%d questions (%d linked by name, %d of them answered over SPARQL only, through the text index and the encoder; %d with an entity the KG lacks, %d of them answered otherwise over the whole KG): Hits@1 %.2f F1 %.2f (the whole KG in memory: %.2f %.2f); mean latency per question %.2f ms over SPARQL (%.1f queries), %.2f ms over in-memory neighbourhoods, %.3f ms over the whole KG in memory",
						len(qs), linked, linkOnly, missing, unlike, got.Hits1, got.F1, whole.Hits1, whole.F1, got.Latency.Mean, float64(queries)/float64(len(qs)), want.Latency.Mean, whole.Latency.Mean)
				})
			}
		})
	}
}

func webqspMini(ctx context.Context, t *testing.T) func() ([]benchmark.Question, error) {
	return func() ([]benchmark.Question, error) {
		return benchmark.LoadWebQSP(ctx, []string{shareddata.Path(t, "webqsp/gnnrag_sbert_test.jsonl"), shareddata.Path(t, "webqsp/gnnrag_lmsr_test.jsonl")},
			shareddata.Path(t, "webqsp/rog_paths_test.jsonl"))
	}
}

// freebaseOf writes g as N-Triples in Freebase's shape: each named entity
// a machine id of its own (ns:m.0s0, ns:m.0s1, ...) with its name as
// type.object.name; entities named by an id (CVTs) keep it, with no name.
func freebaseOf(g *kg.Graph) string {
	ns := func(s string) string { return "<" + kg.EntityIRI(kg.FreebaseNS, s) + ">" }
	ids := make([]string, g.NumEntities())
	var b strings.Builder
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	for i := range ids {
		name := g.EntityName(int32(i))
		if kg.IsFreebaseID(name) {
			ids[i] = ns(name)
			continue
		}
		ids[i] = ns("m.0s" + strconv.FormatInt(int64(i), 36))
		fmt.Fprintf(&b, "%s %s \"%s\"@en .\n", ids[i], ns("type.object.name"), esc.Replace(name))
	}
	for i := range g.NumTriples() {
		tr := g.Triple(int32(i))
		fmt.Fprintf(&b, "%s %s %s .\n", ids[tr.Head], ns(g.RelationName(tr.Rel)), ids[tr.Tail])
	}
	return b.String()
}

// union is the union of the questions' own graphs, as one KG.
func union(qs []benchmark.Question) (*kg.Graph, error) {
	return benchmark.Union(context.Background(), qs)
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
