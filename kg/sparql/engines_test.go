package sparql_test

// The SPARQL engines the integration tests run against: Virtuoso (Debian's
// virtuoso-opensource, internal/virtuoso) and Oxigraph (the npm package
// behind a small SPARQL 1.1 Protocol server, internal/oxigraph). The client
// is the same for both: where they differ (row caps, typed literals in
// results, the free-text extension, the default graph) it follows the
// standard, and every test here asks the same of each engine. Each is
// skipped where it is absent; CI installs both and sets
// $STEM_REQUIRE_VIRTUOSO=1 and $STEM_REQUIRE_OXIGRAPH=1 so that neither
// can stop running unnoticed.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/internal/oxigraph"
	"github.com/stem-kgqa/stem/internal/virtuoso"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/sparql"
)

// store is a running engine the tests load KGs into, as named graphs.
type store interface {
	URL() string
	Load(ctx context.Context, file, graphIRI string) error
	LoadKG(ctx context.Context, g kg.Reader, graphIRI string) error
	Stop() error
}

// engine is one SPARQL engine, started once by the first test that needs
// it and stopped by TestMain.
type engine struct {
	name  string
	skip  func(testing.TB)
	start func(context.Context) (store, error)
	// textIndex: the engine has Virtuoso's free-text extension
	// (bif:contains), which SearchNames uses when the engine accepts it.
	textIndex bool
	// sortLimit is the most rows the engine sorts for one query
	// (Virtuoso's MaxSortedTopRows), 0 for no limit.
	sortLimit int
	// every is the stride of the benchmark questions TestBackendsAgree
	// asks of the engine (0 or 1: all of them).
	every int

	once   sync.Once
	srv    store
	err    error
	mu     sync.Mutex
	graphs int
	served onceMap[servedKG] // KG -> its graph on the server (serveOnce)
	// loading holds one load into the server at a time: TestBackendsAgree
	// answers datasets in parallel, and two of Virtuoso's bulk loads at
	// once (rdf_loader_run) may each take the other's file, so that one
	// returns before its own file is loaded.
	loading sync.Mutex
}

// servedKG is where a KG loaded once into an engine's server is served.
type servedKG struct{ endpoint, graph string }

// onceMap computes a value once per key, also when parallel tests ask for
// the same key at once (the later ones wait for the first).
type onceMap[V any] struct {
	mu    sync.Mutex
	byKey map[string]*onceEntry[V]
}

// onceEntry is one key's value of a onceMap.
type onceEntry[V any] struct {
	once sync.Once
	v    V
	err  error
	ran  bool // f returned; false when it stopped its test (t.Fatal)
}

// get returns key's value, computing it with f the first time; ok is false
// when f stopped the test that ran it instead of returning.
func (o *onceMap[V]) get(key string, f func() (V, error)) (v V, ok bool, err error) {
	o.mu.Lock()
	if o.byKey == nil {
		o.byKey = map[string]*onceEntry[V]{}
	}
	e, found := o.byKey[key]
	if !found {
		e = &onceEntry[V]{}
		o.byKey[key] = e
	}
	o.mu.Unlock()
	e.once.Do(func() {
		e.v, e.err = f()
		e.ran = true
	})
	return e.v, e.ran, e.err
}

var (
	virtuosoEngine = &engine{name: "Virtuoso", skip: virtuoso.SkipUnavailable, textIndex: true, sortLimit: 10000,
		start: func(ctx context.Context) (store, error) {
			s, err := virtuoso.Start(ctx, virtuoso.Options{})
			if err != nil {
				return nil, err
			}
			return s, nil
		}}
	// Oxigraph answers every fifth question of each set (every planner,
	// both shapes): every third took 95 s of TestBackendsAgree on a loaded
	// machine, all of them would take about five minutes, for plans a
	// fifth exercise alike.
	oxigraphEngine = &engine{name: "Oxigraph", skip: oxigraph.SkipUnavailable, every: 5,
		start: func(ctx context.Context) (store, error) {
			s, err := oxigraph.Start(ctx, oxigraph.Options{})
			if err != nil {
				return nil, err
			}
			return s, nil
		}}
	// engines are the engines every integration test runs against.
	engines = []*engine{virtuosoEngine, oxigraphEngine}
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, e := range engines {
		if e.srv != nil {
			if err := e.srv.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "stop %s: %v\n", e.name, err)
			}
		}
	}
	os.Exit(code)
}

// eachEngine runs f as a subtest per engine, named by the engine; an
// engine that is absent is skipped (see engine.skip).
func eachEngine(t *testing.T, f func(t *testing.T, e *engine)) {
	t.Helper()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			e.skip(t)
			f(t, e)
		})
	}
}

// get returns the engine's shared server, starting it first, or skips.
func (e *engine) get(t testing.TB) store {
	t.Helper()
	e.skip(t)
	e.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		e.srv, e.err = e.start(ctx)
		t.Logf("%s started in %v", e.name, time.Since(start).Round(time.Millisecond))
	})
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e.srv
}

// newGraph names a fresh named graph of the engine's server.
func (e *engine) newGraph() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.graphs++
	return fmt.Sprintf("http://stem.test/graph%d", e.graphs)
}

// serve loads g into the engine's server as a named graph of its own and
// returns the endpoint and the graph's IRI.
func (e *engine) serve(t testing.TB, g kg.Reader) (endpoint, graph string) {
	t.Helper()
	srv := e.get(t)
	graph = e.newGraph()
	e.loading.Lock()
	defer e.loading.Unlock()
	start := time.Now()
	if err := srv.LoadKG(context.Background(), g, graph); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: loaded %d triples in %v", e.name, g.NumTriples(), time.Since(start).Round(time.Millisecond))
	return srv.URL(), graph
}

// serveNT loads N-Triples text into a named graph of its own.
func (e *engine) serveNT(t testing.TB, nt string) (endpoint, graph string) {
	t.Helper()
	srv := e.get(t)
	graph = e.newGraph()
	f := filepath.Join(t.TempDir(), "kg.nt")
	if err := os.WriteFile(f, []byte(nt), 0o644); err != nil {
		t.Fatal(err)
	}
	e.loading.Lock()
	defer e.loading.Unlock()
	if err := srv.Load(context.Background(), f, graph); err != nil {
		t.Fatal(err)
	}
	return srv.URL(), graph
}

// serveOnce returns the endpoint and graph serving the KG named key,
// loading it with load the first time: benchmark sets sharing a KG
// (MetaQA's) load it once, also when they run in parallel (the second
// waits for the first's load).
func (e *engine) serveOnce(t testing.TB, key string, load func() (endpoint, graph string)) (string, string) {
	t.Helper()
	s, ok, _ := e.served.get(key, func() (servedKG, error) {
		endpoint, graph := load()
		return servedKG{endpoint, graph}, nil
	})
	if !ok {
		t.Fatalf("%s: loading %s failed (in the test that loaded it first)", e.name, key)
	}
	return s.endpoint, s.graph
}

// open serves g and opens it through the SPARQL backend.
func (e *engine) open(t testing.TB, g kg.Reader, cfg sparql.Config) *sparql.Graph {
	t.Helper()
	cfg.Endpoint, cfg.Graph = e.serve(t, g)
	s, err := sparql.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
