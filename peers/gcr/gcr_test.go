package gcr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// movies is a small KG: two films by one director, their actors and a
// hub genre.
func movies(t testing.TB) *kg.Graph {
	t.Helper()
	b := kg.NewBuilder()
	for _, tr := range [][3]string{
		{"Heat", "directed_by", "Michael Mann"},
		{"Collateral", "directed_by", "Michael Mann"},
		{"Heat", "starred_actors", "Al Pacino"},
		{"Heat", "starred_actors", "Robert De Niro"},
		{"Collateral", "starred_actors", "Tom Cruise"},
		{"Heat", "has_genre", "Crime"},
		{"Collateral", "has_genre", "Crime"},
		{"Lonely", "has_genre", "Drama"},
	} {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func ent(t testing.TB, g kg.Reader, name string) int32 {
	t.Helper()
	id, ok := g.Entity(name)
	if !ok {
		t.Fatalf("no entity %q", name)
	}
	return id
}

// pathString writes a trie path as "rel/^rel" tokens joined by ".".
func pathString(g kg.Reader, toks []Token) string {
	parts := make([]string, len(toks))
	for i, tok := range toks {
		parts[i] = g.RelationName(tok.Rel)
		if tok.Inverse {
			parts[i] = "^" + parts[i]
		}
	}
	return strings.Join(parts, ".")
}

// contents lists every non-root node of t as "path: reached names".
func contents(g kg.Reader, t *Trie) []string {
	var out []string
	for i := 1; i < len(t.Nodes); i++ {
		var names []string
		for _, e := range t.Nodes[i].Reach {
			names = append(names, g.EntityName(e))
		}
		sort.Strings(names)
		out = append(out, pathString(g, t.Path(int32(i)))+": "+strings.Join(names, ","))
	}
	sort.Strings(out)
	return out
}

func TestBuildTrie(t *testing.T) {
	g := movies(t)
	cases := []struct {
		name    string
		anchors []string
		hops    int
		lim     Limits
		want    []string
		capped  bool
	}{
		{name: "one hop from a director", anchors: []string{"Michael Mann"}, hops: 1, lim: Limits{100, 100},
			want: []string{"^directed_by: Collateral,Heat"}},
		{name: "two hops from a director", anchors: []string{"Michael Mann"}, hops: 2, lim: Limits{100, 100},
			want: []string{
				"^directed_by.directed_by: Michael Mann",
				"^directed_by.has_genre: Crime",
				"^directed_by.starred_actors: Al Pacino,Robert De Niro,Tom Cruise",
				"^directed_by: Collateral,Heat",
			}},
		{name: "two anchors share one trie", anchors: []string{"Al Pacino", "Tom Cruise"}, hops: 1, lim: Limits{100, 100},
			want: []string{"^starred_actors: Collateral,Heat"}},
		{name: "reach capped at the lowest ids", anchors: []string{"Crime"}, hops: 1, lim: Limits{1, 100},
			want: []string{"^has_genre: Heat"}},
		{name: "nodes capped", anchors: []string{"Heat"}, hops: 2, lim: Limits{100, 3}, capped: true,
			// Relation ids follow first appearance: directed_by, starred_actors, has_genre.
			want: []string{"directed_by: Michael Mann", "starred_actors: Al Pacino,Robert De Niro"}},
		{name: "no anchors is a bare root", hops: 2, lim: Limits{100, 100}},
		{name: "zero hops is a bare root", anchors: []string{"Heat"}, hops: 0, lim: Limits{100, 100}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var anchors []int32
			for _, a := range c.anchors {
				anchors = append(anchors, ent(t, g, a))
			}
			tr, err := Build(context.Background(), g, anchors, c.hops, c.lim)
			if err != nil {
				t.Fatal(err)
			}
			if got := contents(g, tr); !slices.Equal(got, c.want) {
				t.Errorf("trie\n got %q\nwant %q", got, c.want)
			}
			if tr.Capped != c.capped {
				t.Errorf("Capped = %v, want %v", tr.Capped, c.capped)
			}
			for i, n := range tr.Nodes {
				if i == 0 {
					continue
				}
				if got, ok := tr.Find(tr.Path(int32(i))); !ok || got != int32(i) {
					t.Errorf("Find(Path(%d)) = %d, %v", i, got, ok)
				}
				_ = n
			}
		})
	}
}

func TestBuildRejects(t *testing.T) {
	g := movies(t)
	for _, c := range []struct {
		hops int
		lim  Limits
	}{{-1, Limits{1, 1}}, {2, Limits{0, 1}}, {2, Limits{1, 0}}} {
		if _, err := Build(context.Background(), g, nil, c.hops, c.lim); err == nil {
			t.Errorf("Build(hops %d, %+v): no error", c.hops, c.lim)
		}
	}
	if _, err := Build(context.Background(), nil, nil, 2, Limits{1, 1}); err == nil {
		t.Error("Build(nil KG): no error")
	}
	tr, err := Build(context.Background(), g, []int32{-4, 1 << 30}, 2, Limits{10, 10})
	if err != nil || len(tr.Anchors) != 0 || len(tr.Nodes) != 1 {
		t.Errorf("unknown anchors: trie %+v, %v; want a bare root", tr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, g, []int32{ent(t, g, "Heat")}, 2, Limits{10, 10}); err == nil {
		t.Error("cancelled context: no error")
	}
}

func newTest(t testing.TB, cfg Config) *Retriever {
	t.Helper()
	return newOn(t, nil, cfg)
}

// newOn builds a retriever whose shared KG is g.
func newOn(t testing.TB, g kg.Reader, cfg Config) *Retriever {
	t.Helper()
	r, err := newRetriever(plan.Env{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func pathPlan(g kg.Reader, anchor string, steps ...schema.Step) projection.Projection {
	return projection.Projection{Candidates: []projection.Candidate{{Graph: schema.PathGraph(anchor, steps), Score: 1}}, Unranked: true}
}

func TestRetrieve(t *testing.T) {
	g := movies(t)
	cases := []struct {
		name     string
		question string
		anchors  []string
		mentions []string
		proj     projection.Projection
		strat    schema.Strategy
		want     []string // answer names, in order
		problem  string   // a substring of some problem, when one is expected
	}{
		{name: "plan picks co-star path", question: "who starred with Al Pacino", anchors: []string{"Al Pacino"},
			proj:  pathPlan(g, "Al Pacino", schema.Step{Rel: "starred_actors", Dir: schema.Inverse}, schema.Step{Rel: "starred_actors"}),
			strat: schema.Precision, want: []string{"Robert De Niro"}},
		{name: "breadth drops far weaker paths' ends", question: "who starred with Al Pacino", anchors: []string{"Al Pacino"},
			proj:  pathPlan(g, "Al Pacino", schema.Step{Rel: "starred_actors", Dir: schema.Inverse}, schema.Step{Rel: "starred_actors"}),
			strat: schema.Breadth, want: []string{"Robert De Niro"}},
		{name: "director of an actor's films", question: "who directed the films of Tom Cruise", anchors: []string{"Tom Cruise"},
			proj:  pathPlan(g, "Tom Cruise", schema.Step{Rel: "starred_actors", Dir: schema.Inverse}, schema.Step{Rel: "directed_by"}),
			strat: schema.Precision, want: []string{"Michael Mann"}},
		{name: "films of a director without a plan", question: "which films were directed by Michael Mann",
			anchors: []string{"Michael Mann"}, mentions: []string{"Michael Mann"}, strat: schema.Precision,
			want: []string{"Collateral", "Heat"}},
		{name: "anchored by name when no anchors", question: "which films were directed by Michael Mann",
			mentions: []string{"michael mann"}, strat: schema.Precision, want: []string{"Collateral", "Heat"}},
		{name: "no anchor", question: "who is nobody", mentions: []string{"Nobody"}, problem: "no question entity"},
	}
	r := newTest(t, DefaultConfig())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := plan.Request{Question: c.question, Graph: g, Mentions: c.mentions, Projection: c.proj, Strategy: c.strat}
			for _, a := range c.anchors {
				req.Anchors = append(req.Anchors, ent(t, g, a))
			}
			ev, err := r.Retrieve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			res := ev.Trace
			var got []string
			for _, a := range res.Answers {
				got = append(got, a.Name)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("answers %q, want %q (chains %q)", got, c.want, res.Chains)
			}
			if res.Unbacked != 0 || tracing.Audit(g, res) != 0 {
				t.Errorf("unbacked %d", res.Unbacked)
			}
			if c.problem != "" && !slices.ContainsFunc(res.Problems, func(p string) bool { return strings.Contains(p, c.problem) }) {
				t.Errorf("problems %q, want one with %q", res.Problems, c.problem)
			}
			for _, a := range got {
				if !slices.ContainsFunc(res.Chains, func(ch string) bool { return strings.HasSuffix(ch, " "+a) }) {
					t.Errorf("answer %s ends no chain of %q", a, res.Chains)
				}
			}
		})
	}
}

func TestRetrieveChainsAndEvidence(t *testing.T) {
	g := movies(t)
	r := newOn(t, g, Config{Beam: 1})
	req := plan.Request{Question: "who directed the films of Tom Cruise", Graph: g, Anchors: []int32{ent(t, g, "Tom Cruise")},
		Projection: pathPlan(g, "Tom Cruise", schema.Step{Rel: "starred_actors", Dir: schema.Inverse}, schema.Step{Rel: "directed_by"}),
		Strategy:   schema.Precision}
	ev, err := r.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Tom Cruise <- starred_actors <- Collateral -> directed_by -> Michael Mann"}
	if !slices.Equal(ev.Trace.Chains, want) {
		t.Errorf("chains %q, want %q", ev.Trace.Chains, want)
	}
	var trips []string
	for _, m := range ev.Trace.Evidence {
		tr := g.Triple(m.Triple)
		trips = append(trips, fmt.Sprintf("%d:%s %s %s", m.SchemaTriple, g.EntityName(tr.Head), g.RelationName(tr.Rel), g.EntityName(tr.Tail)))
	}
	sort.Strings(trips)
	wantTrips := []string{"0:Collateral starred_actors Tom Cruise", "1:Collateral directed_by Michael Mann"}
	if !slices.Equal(trips, wantTrips) {
		t.Errorf("evidence %q, want %q", trips, wantTrips)
	}
	if _, ok := ev.Timings[StageTrie]; !ok {
		t.Errorf("timings %v lack %q", ev.Timings, StageTrie)
	}
	// The second question on the same anchors is a cache hit.
	if _, err := r.Retrieve(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.Builds != 1 || s.Hits != 1 || s.Questions != 2 {
		t.Errorf("stats %+v, want 1 build and 1 hit over 2 questions", s)
	}
}

func TestSchemaSteps(t *testing.T) {
	cases := []struct {
		g    schema.Graph
		want []schema.Step
	}{
		{schema.PathGraph("X", []schema.Step{{Rel: "a", Dir: schema.Inverse}, {Rel: "b"}}),
			[]schema.Step{{Rel: "a", Dir: schema.Inverse}, {Rel: "b"}}},
		// A constraint edge off the path is not a step.
		{schema.Graph{Triples: []schema.Triple{{Head: "[ENT1]", Rel: "directed_by", Tail: "X"}, {Head: "[ENT1]", Rel: "has_genre", Tail: "Drama"}}, Answer: "[ENT1]"},
			[]schema.Step{{Rel: "directed_by", Dir: schema.Inverse}}},
		{schema.Graph{Triples: []schema.Triple{{Head: "X", Rel: "r", Tail: "Y"}}}, nil},
	}
	for i, c := range cases {
		if got := schemaSteps(c.g); !slices.Equal(got, c.want) {
			t.Errorf("%d %s: steps %v, want %v", i, c.g, got, c.want)
		}
	}
}

func TestConfigAndNew(t *testing.T) {
	if _, err := New(context.Background(), plan.Env{}, DefaultConfig()); err == nil {
		t.Error("no encoder: no error")
	}
	if _, err := New(context.Background(), plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, Config{Beam: -1}); err == nil {
		t.Error("negative beam: no error")
	}
	if _, err := New(context.Background(), plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, Config{BreadthFloor: 1.5}); err == nil {
		t.Error("breadth floor 1.5: no error")
	}
	r := newTest(t, Config{})
	want := DefaultConfig()
	want.PlanWeight, want.Margin, want.BreadthFloor = 0, 0, 0
	if r.cfg != want {
		t.Errorf("zero config became %+v, want %+v", r.cfg, want)
	}
	if _, err := r.Retrieve(context.Background(), plan.Request{Question: "q"}); err == nil {
		t.Error("no KG: no error")
	}
}

// randomGraph builds a KG of n entities and m random triples over 3
// relations.
func randomGraph(t testing.TB, rng *rand.Rand, n, m int) *kg.Graph {
	t.Helper()
	b := kg.NewBuilder()
	for i := 0; i < m; i++ {
		b.Add(fmt.Sprintf("e%d", rng.IntN(n)), fmt.Sprintf("r%d", rng.IntN(3)), fmt.Sprintf("e%d", rng.IntN(n)))
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestDecodedPathsExist is the property test: on random graphs, every
// node of the trie is a path the KG has from an anchor to every entity it
// lists, every decoded path is a trie path, every evidence chain is made
// of KG triples, and no answer is unbacked.
func TestDecodedPathsExist(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := newTest(t, Config{Hops: 3, Beam: 5, MaxReach: 8, MaxNodes: 60, CacheSize: 4})
	for round := 0; round < 60; round++ {
		g := randomGraph(t, rng, 4+rng.IntN(20), 1+rng.IntN(60))
		anchors := []int32{int32(rng.IntN(g.NumEntities()))}
		trie, err := Build(context.Background(), g, anchors, 3, Limits{MaxReach: 8, MaxNodes: 60})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(trie.Nodes); i++ {
			toks := trie.Path(int32(i))
			for _, e := range trie.Nodes[i].Reach {
				if !reaches(g, trie.Anchors, toks, e) {
					t.Fatalf("round %d: trie path %s lists %s, which the KG does not reach", round, pathString(g, toks), g.EntityName(e))
				}
			}
		}
		strat := schema.Strategy(rng.IntN(2))
		ev, err := r.Retrieve(context.Background(), plan.Request{Question: "r0 of r1", Graph: g, Anchors: anchors, Strategy: strat})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Trace.Unbacked != 0 {
			t.Fatalf("round %d: %d unbacked", round, ev.Trace.Unbacked)
		}
		for _, m := range ev.Trace.Evidence {
			tr := g.Triple(m.Triple)
			if !g.HasTriple(tr.Head, tr.Rel, tr.Tail) {
				t.Fatalf("round %d: evidence triple %d not in the KG", round, m.Triple)
			}
		}
		cached := trie
		paths, err := r.decode(context.Background(), g, cached, plan.Request{Question: "r0 of r1", Graph: g}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			toks := cached.Path(p.Node)
			if n, ok := cached.Find(toks); !ok || n != p.Node {
				t.Fatalf("round %d: decoded path %s not in the trie", round, pathString(g, toks))
			}
			gr := groundPath(g, cached.Anchors, toks, 8)
			for _, e := range gr.ends {
				if !reaches(g, cached.Anchors, toks, e) {
					t.Fatalf("round %d: path %s grounds %s, which the KG does not reach", round, pathString(g, toks), g.EntityName(e))
				}
			}
		}
	}
}

// reaches reports whether the KG has a walk along toks from an anchor to e,
// by brute force.
func reaches(g kg.Reader, anchors []int32, toks []Token, e int32) bool {
	front := map[int32]bool{}
	for _, a := range anchors {
		front[a] = true
	}
	for _, tok := range toks {
		next := map[int32]bool{}
		for i := 0; i < g.NumTriples(); i++ {
			tr := g.Triple(int32(i))
			if tr.Rel != tok.Rel {
				continue
			}
			if !tok.Inverse && front[tr.Head] {
				next[tr.Tail] = true
			}
			if tok.Inverse && front[tr.Tail] {
				next[tr.Head] = true
			}
		}
		front = next
	}
	return front[e]
}

func TestHubIsBounded(t *testing.T) {
	b := kg.NewBuilder()
	for i := 0; i < 5000; i++ {
		b.Add(fmt.Sprintf("film%d", i), "has_genre", "Drama")
		b.Add(fmt.Sprintf("film%d", i), "directed_by", fmt.Sprintf("director%d", i%700))
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := newTest(t, Config{MaxReach: 100})
	ev, err := r.Retrieve(context.Background(), plan.Request{Question: "who directed drama films", Graph: g,
		Anchors: []int32{ent(t, g, "Drama")}, Strategy: schema.Breadth,
		Projection: pathPlan(g, "Drama", schema.Step{Rel: "has_genre", Dir: schema.Inverse}, schema.Step{Rel: "directed_by"})})
	if err != nil {
		t.Fatal(err)
	}
	res := ev.Trace
	if res.Unbacked != 0 {
		t.Errorf("%d unbacked", res.Unbacked)
	}
	// Each of the 10 decoded paths brings at most MaxReach ends.
	if len(res.Answers) == 0 || len(res.Answers) > 10*100 {
		t.Errorf("%d answers, want 1-1000 (reach capped at 100 per path)", len(res.Answers))
	}
	for _, a := range res.Answers[:min(len(res.Answers), 100)] {
		if !strings.HasPrefix(a.Name, "director") {
			t.Errorf("answer %s ranks among the first 100, want directors first (the planned path)", a.Name)
			break
		}
	}
	if len(res.Chains) > DefaultConfig().MaxChains {
		t.Errorf("%d chains over the cap", len(res.Chains))
	}
}

func TestConcurrentAndDeterministic(t *testing.T) {
	g := movies(t)
	r := newOn(t, g, Config{CacheSize: 1})
	questions := []plan.Request{
		{Question: "who directed the films of Tom Cruise", Graph: g, Anchors: []int32{ent(t, g, "Tom Cruise")}},
		{Question: "which films were directed by Michael Mann", Graph: g, Anchors: []int32{ent(t, g, "Michael Mann")}, Strategy: schema.Breadth},
		{Question: "what genre is Heat", Graph: g, Anchors: []int32{ent(t, g, "Heat")}, Own: true},
	}
	want := make([]string, len(questions))
	for i, q := range questions {
		ev, err := r.Retrieve(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = fmt.Sprint(ev.Trace.Answers, ev.Trace.Chains)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				k := (i + w) % len(questions)
				ev, err := r.Retrieve(context.Background(), questions[k])
				if err != nil {
					errs <- err
					return
				}
				if got := fmt.Sprint(ev.Trace.Answers, ev.Trace.Chains); got != want[k] {
					errs <- fmt.Errorf("question %d: %s, want %s", k, got, want[k])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := r.cache.len(); n > 1 {
		t.Errorf("cache holds %d tries, bound 1", n)
	}
}

// TestBreadthFloor checks which hypothesis answers each BreadthFloor
// keeps under Breadth, and the votes they keep them by.
func TestBreadthFloor(t *testing.T) {
	g := movies(t)
	costar := []schema.Step{{Rel: "starred_actors", Dir: schema.Inverse}, {Rel: "starred_actors"}}
	films := []schema.Step{{Rel: "directed_by", Dir: schema.Inverse}}
	cases := []struct {
		question, anchor string
		steps            []schema.Step
		floor            float32
		want             []string // "name vote", best first
	}{
		{"who starred with Al Pacino", "Al Pacino", costar, 0,
			[]string{"Robert De Niro 0.993", "Heat 0.007", "Michael Mann 0.000", "Crime 0.000"}},
		{"who starred with Al Pacino", "Al Pacino", costar, 0.005, []string{"Robert De Niro 0.993", "Heat 0.007"}},
		{"who starred with Al Pacino", "Al Pacino", costar, 0.5, []string{"Robert De Niro 0.993"}},
		{"which films did Michael Mann direct", "Michael Mann", films, 0,
			[]string{"Collateral 1.000", "Heat 1.000", "Al Pacino 0.000", "Robert De Niro 0.000", "Tom Cruise 0.000", "Crime 0.000"}},
		{"which films did Michael Mann direct", "Michael Mann", films, 0.5, []string{"Collateral 1.000", "Heat 1.000"}},
		// Ties survive the strictest floor: a path's ends share its vote.
		{"which films did Michael Mann direct", "Michael Mann", films, 1, []string{"Collateral 1.000", "Heat 1.000"}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.anchor, c.floor), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.BreadthFloor = c.floor
			req := plan.Request{Question: c.question, Graph: g, Anchors: []int32{ent(t, g, c.anchor)},
				Projection: pathPlan(g, c.anchor, c.steps...), Strategy: schema.Breadth}
			ev, err := newOn(t, g, cfg).Retrieve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range ev.Trace.Answers {
				got = append(got, fmt.Sprintf("%s %.3f", a.Name, a.Score))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("answers %q, want %q", got, c.want)
			}
		})
	}
}
