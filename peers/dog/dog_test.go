package dog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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

func graphOf(t testing.TB, triples [][3]string) *kg.Graph {
	t.Helper()
	b := kg.NewBuilder()
	for _, tr := range triples {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// movies is a small KG: two films by one director, their actors and a
// genre.
func movies(t testing.TB) *kg.Graph {
	return graphOf(t, [][3]string{
		{"Heat", "directed_by", "Michael Mann"},
		{"Collateral", "directed_by", "Michael Mann"},
		{"Heat", "starred_actors", "Al Pacino"},
		{"Heat", "starred_actors", "Robert De Niro"},
		{"Collateral", "starred_actors", "Tom Cruise"},
		{"Heat", "has_genre", "Crime"},
		{"Collateral", "has_genre", "Crime"},
		{"Lonely", "has_genre", "Drama"},
	})
}

// mughals is PathQuestion's KG around mumtaz_mahal: her son's parents
// triple is a triple of its own, apart from her children triple.
func mughals(t testing.TB) *kg.Graph {
	return graphOf(t, [][3]string{
		{"mumtaz_mahal", "children", "shah_shuja"},
		{"shah_shuja", "parents", "mumtaz_mahal"},
		{"shah_shuja", "parents", "shah_jahan"},
		{"shah_jahan", "children", "aurangzeb"},
	})
}

func ent(t testing.TB, g kg.Reader, name string) int32 {
	t.Helper()
	id, ok := g.Entity(name)
	if !ok {
		t.Fatalf("no entity %q", name)
	}
	return id
}

// newOn builds a retriever of DefaultConfig with cfg's non-zero beam
// and depth.
func newOn(t testing.TB, cfg Config) *Retriever {
	t.Helper()
	d := DefaultConfig()
	if cfg.Beam != 0 {
		d.Beam = cfg.Beam
	}
	if cfg.Depth != 0 {
		d.Depth = cfg.Depth
	}
	cfg = d
	r, err := newRetriever(plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func pathPlan(anchor string, steps ...schema.Step) projection.Projection {
	return projection.Projection{Candidates: []projection.Candidate{{Graph: schema.PathGraph(anchor, steps), Score: 1}}, Unranked: true}
}

func fwd(rel string) schema.Step { return schema.Step{Rel: rel} }
func inv(rel string) schema.Step { return schema.Step{Rel: rel, Dir: schema.Inverse} }

func names(as []tracing.Answer) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	return out
}

func TestRetrieve(t *testing.T) {
	mv, mg := movies(t), mughals(t)
	cases := []struct {
		name     string
		g        *kg.Graph
		question string
		anchors  []string
		mentions []string
		proj     projection.Projection
		strat    schema.Strategy
		beam     int
		want     []string // answer names, in order
		chains   []string
		problem  string // a substring of some problem, when one is expected
	}{
		{name: "co-star by the plan", g: mv, question: "who starred with Al Pacino", anchors: []string{"Al Pacino"},
			proj: pathPlan("Al Pacino", inv("starred_actors"), fwd("starred_actors")), strat: schema.Precision,
			want: []string{"Robert De Niro"}, chains: []string{"Al Pacino <- starred_actors <- Heat -> starred_actors -> Robert De Niro"}},
		{name: "director of an actor's film", g: mv, question: "who directed the films of Tom Cruise", anchors: []string{"Tom Cruise"},
			proj: pathPlan("Tom Cruise", inv("starred_actors"), fwd("directed_by")), strat: schema.Precision,
			want: []string{"Michael Mann"}, chains: []string{"Tom Cruise <- starred_actors <- Collateral -> directed_by -> Michael Mann"}},
		{name: "one hop stops after one triple", g: mv, question: "which films were directed by Michael Mann", anchors: []string{"Michael Mann"},
			proj: pathPlan("Michael Mann", inv("directed_by")), strat: schema.Breadth,
			want:   []string{"Collateral", "Heat"},
			chains: []string{"Michael Mann <- directed_by <- Collateral", "Michael Mann <- directed_by <- Heat"}},
		{name: "the question entity by another triple", g: mg, question: "what is the father of mumtaz_mahal 's son ?",
			anchors: []string{"mumtaz_mahal"}, proj: pathPlan("mumtaz_mahal", fwd("children"), fwd("parents")), strat: schema.Breadth,
			want: []string{"mumtaz_mahal", "shah_jahan"},
			chains: []string{"mumtaz_mahal -> children -> shah_shuja -> parents -> mumtaz_mahal",
				"mumtaz_mahal -> children -> shah_shuja -> parents -> shah_jahan"}},
		{name: "beam 1 keeps one chain", g: mg, question: "what is the father of mumtaz_mahal 's son ?",
			anchors: []string{"mumtaz_mahal"}, proj: pathPlan("mumtaz_mahal", fwd("children"), fwd("parents")), strat: schema.Breadth, beam: 1,
			want: []string{"mumtaz_mahal"}, chains: []string{"mumtaz_mahal -> children -> shah_shuja -> parents -> mumtaz_mahal"}},
		{name: "anchored by name when no anchors", g: mv, question: "which films were directed by Michael Mann",
			mentions: []string{"michael mann"}, proj: pathPlan("michael mann", inv("directed_by")), strat: schema.Precision,
			want: []string{"Collateral", "Heat"}},
		{name: "no anchor", g: mv, question: "who is nobody", mentions: []string{"Nobody"}, problem: "no question entity"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newOn(t, Config{Beam: c.beam})
			req := plan.Request{Question: c.question, Graph: c.g, Mentions: c.mentions, Projection: c.proj, Strategy: c.strat}
			for _, a := range c.anchors {
				req.Anchors = append(req.Anchors, ent(t, c.g, a))
			}
			ev, err := r.Retrieve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			res := ev.Trace
			if got := names(res.Answers); !slices.Equal(got, c.want) {
				t.Errorf("answers %q, want %q (chains %q)", got, c.want, res.Chains)
			}
			if c.chains != nil && !slices.Equal(res.Chains, c.chains) {
				t.Errorf("chains\n got %q\nwant %q", res.Chains, c.chains)
			}
			if res.Unbacked != 0 || tracing.Audit(c.g, res) != 0 {
				t.Errorf("unbacked %d", res.Unbacked)
			}
			if c.problem != "" && !slices.ContainsFunc(res.Problems, func(p string) bool { return strings.Contains(p, c.problem) }) {
				t.Errorf("problems %q, want one with %q", res.Problems, c.problem)
			}
			for _, a := range res.Answers {
				if !slices.ContainsFunc(res.Chains, func(ch string) bool { return strings.HasSuffix(ch, " "+a.Name) }) {
					t.Errorf("answer %s ends no chain of %q", a.Name, res.Chains)
				}
			}
		})
	}
}

// TestStoppingRule checks the no-LLM stop: a chain stops when no
// continuation scores better than it, and chains still open at Depth stop
// there.
func TestStoppingRule(t *testing.T) {
	g := movies(t)
	req := plan.Request{Question: "which films were directed by Michael Mann", Graph: g, Anchors: []int32{ent(t, g, "Michael Mann")},
		Projection: pathPlan("Michael Mann", inv("directed_by")), Strategy: schema.Breadth}
	cases := []struct {
		name  string
		cfg   Config
		steps []int // the triples of each decoded chain
	}{
		// The plan's one step is worth 1, every second step's plan term is 0
		// and no cosine makes up for it: both chains stop at one triple.
		{name: "stops where the plan ends", cfg: Config{Depth: 3}, steps: []int{1, 1}},
		{name: "depth 1 stops every chain", cfg: Config{Depth: 1}, steps: []int{1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newOn(t, c.cfg)
			chains, err := r.decode(context.Background(), g, req, req.Anchors, &tracing.Result{})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, ch := range chains {
				got = append(got, len(ch.Steps))
				if !ch.Done {
					t.Errorf("chain %v not stopped", ch.Steps)
				}
			}
			if !slices.Equal(got, c.steps) {
				t.Errorf("chain lengths %v, want %v", got, c.steps)
			}
		})
	}
}

func TestCandidates(t *testing.T) {
	g := mughals(t)
	mm, ss := ent(t, g, "mumtaz_mahal"), ent(t, g, "shah_shuja")
	first, cut := candidates(g, []int32{mm}, Chain{}, 10)
	if cut || len(first) != 2 {
		t.Fatalf("first steps %+v (cut %v), want mumtaz_mahal's 2 triples", first, cut)
	}
	// After mumtaz_mahal -> children -> shah_shuja, the chain may go on
	// from either entity, but not over its own triple, and the parents
	// triple back to mumtaz_mahal leaves from shah_shuja, the later one.
	var c Chain
	for _, s := range first {
		if s.To == ss && !s.Token.Inverse {
			c.Steps = []Step{s}
		}
	}
	next, _ := candidates(g, []int32{mm}, c, 10)
	var got []string
	for _, s := range next {
		got = append(got, fmt.Sprintf("%s>%s", g.EntityName(s.From), g.EntityName(s.To)))
	}
	if want := []string{"shah_shuja>mumtaz_mahal", "shah_shuja>shah_jahan"}; !slices.Equal(got, want) {
		t.Errorf("steps %q, want %q", got, want)
	}
	if capped, cut := candidates(g, []int32{ss}, Chain{}, 1); !cut || len(capped) != 1 {
		t.Errorf("limit 1: %d steps, cut %v", len(capped), cut)
	}
}

func TestConfig(t *testing.T) {
	for _, cfg := range []Config{{Beam: -1}, {Depth: -1}, {PlanWeight: -1}, {Scorer: ScorerLLM}, {Scorer: "gpt"}} {
		if _, err := newRetriever(plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, cfg); err == nil {
			t.Errorf("config %+v: no error", cfg)
		}
	}
	if _, err := newRetriever(plan.Env{}, Config{}); err == nil {
		t.Error("no encoder: no error")
	}
	r, err := newRetriever(plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.PlanWeight != 0 {
		t.Errorf("plan weight %g, want 0 as given", r.cfg.PlanWeight)
	}
	if r.cfg.Beam != 2 || r.cfg.Depth != 3 || r.cfg.MaxCandidates != 2000 {
		t.Errorf("defaults %+v", r.cfg)
	}
}

// TestChainsExist is the property test: on random graphs, every decoded
// chain is well formed (each triple a KG triple at an entity the chain
// visited before it, none repeated), and no answer is unbacked.
func TestChainsExist(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 40; trial++ {
		b := kg.NewBuilder()
		for i := 0; i < 60; i++ {
			b.Add(fmt.Sprintf("e%d", rng.IntN(25)), fmt.Sprintf("r%d", rng.IntN(3)), fmt.Sprintf("e%d", rng.IntN(25)))
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		anchor := int32(rng.IntN(g.NumEntities()))
		r := newOn(t, Config{Beam: 1 + rng.IntN(4), Depth: 1 + rng.IntN(3)})
		req := plan.Request{Question: "what r1 of the r0 of x", Graph: g, Anchors: []int32{anchor}, Strategy: schema.Breadth,
			Projection: pathPlan("x", fwd("r0"), inv("r1"))}
		chains, err := r.decode(context.Background(), g, req, req.Anchors, &tracing.Result{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chains {
			visited := []int32{anchor}
			for i, s := range c.Steps {
				tr := g.Triple(s.Triple)
				okDir := (tr.Head == s.From && tr.Tail == s.To && !s.Token.Inverse) || (tr.Tail == s.From && tr.Head == s.To && s.Token.Inverse)
				if !g.HasTriple(tr.Head, tr.Rel, tr.Tail) || !okDir || tr.Rel != s.Token.Rel || !slices.Contains(visited, s.From) {
					t.Fatalf("trial %d: chain %+v step %d is not a well-formed step", trial, c.Steps, i)
				}
				if slices.ContainsFunc(c.Steps[:i], func(p Step) bool { return p.Triple == s.Triple }) {
					t.Fatalf("trial %d: chain %+v repeats triple %d", trial, c.Steps, s.Triple)
				}
				visited = append(visited, s.To)
			}
		}
		ev, err := r.Retrieve(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Trace.Unbacked != 0 {
			t.Fatalf("trial %d: %d unbacked", trial, ev.Trace.Unbacked)
		}
	}
}

func TestConcurrentAndDeterministic(t *testing.T) {
	g := movies(t)
	r := newOn(t, Config{})
	questions := []plan.Request{
		{Question: "who directed the films of Tom Cruise", Graph: g, Anchors: []int32{ent(t, g, "Tom Cruise")},
			Projection: pathPlan("Tom Cruise", inv("starred_actors"), fwd("directed_by"))},
		{Question: "which films were directed by Michael Mann", Graph: g, Anchors: []int32{ent(t, g, "Michael Mann")}, Strategy: schema.Breadth},
		{Question: "what genre is Heat", Graph: g, Anchors: []int32{ent(t, g, "Heat")}, Own: true},
	}
	want := make([]string, len(questions))
	for i, q := range questions {
		ev, err := r.Retrieve(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = fmt.Sprint(ev.Trace.Answers, ev.Trace.Chains, ev.Trace.Evidence)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for i := 0; i < 30; i++ {
				k := (i + w) % len(questions)
				ev, err := r.Retrieve(context.Background(), questions[k])
				if err != nil {
					errs <- err
					return
				}
				if got := fmt.Sprint(ev.Trace.Answers, ev.Trace.Chains, ev.Trace.Evidence); got != want[k] {
					errs <- fmt.Errorf("question %d: %s, want %s", k, got, want[k])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCancelled(t *testing.T) {
	g := movies(t)
	r := newOn(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q := "who starred with Al Pacino"
	_, err := r.Retrieve(ctx, plan.Request{Question: q, Graph: g, Anchors: []int32{ent(t, g, "Al Pacino")}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), q) {
		t.Errorf("error %v, want context.Canceled naming the question", err)
	}
	if _, err := r.Retrieve(context.Background(), plan.Request{Question: q}); err == nil || !strings.Contains(err.Error(), "no KG") {
		t.Errorf("no KG: %v", err)
	}
}
