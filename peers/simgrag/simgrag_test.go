package simgrag

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/peers/signals/signalstest"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

func films(t *testing.T) *kg.Graph {
	t.Helper()
	g, err := kg.GraphOf([][3]string{
		{"inception", "directed_by", "christopher_nolan"},
		{"interstellar", "directed_by", "christopher_nolan"},
		{"christopher_nolan", "nationality", "united_kingdom"},
		{"inception", "starred_actors", "leonardo_dicaprio"},
		{"leonardo_dicaprio", "nationality", "united_states"},
		{"titanic", "starred_actors", "leonardo_dicaprio"},
		{"titanic", "directed_by", "james_cameron"},
		{"james_cameron", "nationality", "canada"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func proj(unranked bool, st schema.Strategy, gs ...schema.Graph) projection.Projection {
	p := projection.Projection{Strategy: st, Unranked: unranked}
	for _, g := range gs {
		p.Candidates = append(p.Candidates, projection.Candidate{Graph: g})
	}
	return p
}

func names(as []tracing.Answer) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Name
	}
	return out
}

// In the planner-assisted mode the planner's schema graphs are the
// patterns; the answers are every kept subgraph's answer node, by GSD.
func TestRetrievePlannerAssisted(t *testing.T) {
	g := films(t)
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	cfg := DefaultConfig()
	cfg.PlanWeight = 1
	r, err := New(ctx, plan.Env{Graph: g, Encoder: enc}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	id := func(n string) int32 {
		e, ok := g.Entity(n)
		if !ok {
			t.Fatalf("no entity %s", n)
		}
		return e
	}
	// No entity has four edges, so a four-edge star embeds nowhere, whichever
	// candidate its centre maps to.
	star := schema.Graph{Triples: []schema.Triple{
		{Head: "united_states", Rel: "nationality", Tail: "[ENT1]"},
		{Head: "united_states", Rel: "nationality", Tail: "[ENT2]"},
		{Head: "united_states", Rel: "nationality", Tail: "[ENT3]"},
		{Head: "united_states", Rel: "nationality", Tail: "[ENT4]"},
	}, Answer: "[ENT4]"}
	path := schema.Path("inception", "directed_by", "nationality")
	tests := []struct {
		name        string
		req         plan.Request
		want        []string
		wantGraph   int
		wantChain   string
		wantProblem string
		wantTriples int
	}{{
		name:      "anchored path",
		req:       plan.Request{Anchors: []int32{id("inception")}, Mentions: []string{"inception"}, Projection: proj(false, schema.Precision, path)},
		want:      []string{"united_kingdom", "canada"},
		wantChain: "inception -> directed_by -> christopher_nolan -> nationality -> united_kingdom",
		// Every pattern node has its top-k(n) candidates, the linked entity
		// among them (appendix D): the runners-up start at interstellar and
		// titanic, 2 + 1 + 2 distinct triples.
		wantTriples: 5,
	}, {
		name:      "similarity anchoring",
		req:       plan.Request{Projection: proj(false, schema.Precision, path)},
		want:      []string{"united_kingdom", "canada"},
		wantChain: "inception -> directed_by -> christopher_nolan -> nationality -> united_kingdom",
	}, {
		name:      "against the KG's direction",
		req:       plan.Request{Anchors: []int32{id("christopher_nolan")}, Projection: proj(false, schema.Breadth, schema.Path("christopher_nolan", "directed_by"))},
		want:      []string{"inception", "interstellar", "christopher_nolan"},
		wantChain: "christopher_nolan <- directed_by <- inception",
	}, {
		name:        "ranked: first candidate that matches",
		req:         plan.Request{Anchors: []int32{id("united_states"), id("inception")}, Projection: proj(false, schema.Precision, star, path)},
		want:        []string{"united_kingdom", "canada"},
		wantGraph:   1,
		wantProblem: "graph 0: no KG subgraph is isomorphic",
	}, {
		name:        "no candidates",
		req:         plan.Request{Projection: proj(false, schema.Precision)},
		wantProblem: "no schema graph to match",
	}, {
		name:        "no mention",
		req:         plan.Request{Projection: proj(false, schema.Precision, schema.Graph{Triples: []schema.Triple{{Head: "[ENT1]", Rel: "r", Tail: "[ENT2]"}}})},
		wantProblem: "names no question entity",
	}, {
		name:        "bad anchor id",
		req:         plan.Request{Anchors: []int32{-4, 1 << 30}, Projection: proj(false, schema.Precision, path)},
		want:        []string{"united_kingdom", "canada"},
		wantProblem: "",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Graph, tt.req.Strategy = g, tt.req.Projection.Strategy
			ev, st, err := r.Match(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			res := ev.Trace
			if res.Unbacked != 0 {
				t.Errorf("unbacked %d", res.Unbacked)
			}
			if got := names(res.Answers); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("answers %v, want %v", got, tt.want)
			}
			for _, a := range res.Answers[:min(1, len(res.Answers))] {
				if a.Graph != tt.wantGraph {
					t.Errorf("answer from graph %d, want %d", a.Graph, tt.wantGraph)
				}
			}
			if tt.wantChain != "" && !slices.Contains(res.Chains, tt.wantChain) {
				t.Errorf("chains %q lack %q", res.Chains, tt.wantChain)
			}
			if tt.wantProblem != "" && !slices.ContainsFunc(res.Problems, func(p string) bool { return strings.Contains(p, tt.wantProblem) }) {
				t.Errorf("problems %q lack %q", res.Problems, tt.wantProblem)
			}
			if tt.wantTriples > 0 && len(res.Evidence) != tt.wantTriples {
				t.Errorf("%d evidence triples, want %d", len(res.Evidence), tt.wantTriples)
			}
			if len(tt.want) > 0 && st.Complete == 0 {
				t.Errorf("stats %+v: no complete mapping counted", st)
			}
			if _, ok := ev.Timings[StageMatch]; !ok {
				t.Errorf("timings %v lack %s", ev.Timings, StageMatch)
			}
		})
	}
}

// directorNationality is an encoder under which the stand-in's pattern
// for "what is the nationality of the director of X" is X's directed_by,
// nationality path.
func directorNationality() *signalstest.Encoder {
	return signalstest.New(4, map[string][]float32{
		"what is the nationality of the director of": {1, 0, 0, 0},
		"directed by nationality":                    {1, 0, 0, 0},
	})
}

// TestRetrieveEvidence checks the scores of the best subgraph of an exact
// pattern: every relation matches itself (T-Score 1) and the anchor is
// exact, so the GSD is 0 and the subgraph's score 1.
func TestRetrieveEvidence(t *testing.T) {
	g := films(t)
	ctx := context.Background()
	r, err := New(ctx, plan.Env{Graph: g, Encoder: directorNationality()}, Config{K: 1, KNodes: 4, KRelations: 4, PatternFromKG: true})
	if err != nil {
		t.Fatal(err)
	}
	inc, _ := g.Entity("inception")
	ev, err := r.Retrieve(ctx, plan.Request{Question: "what is the nationality of the director of inception", Graph: g, Anchors: []int32{inc}, Mentions: []string{"inception"}})
	if err != nil {
		t.Fatal(err)
	}
	res := ev.Trace
	if len(res.Evidence) != 2 {
		t.Fatalf("evidence %+v, want the path's 2 triples", res.Evidence)
	}
	for _, m := range res.Evidence {
		if m.TScore < 0.999 || m.Cum < 0.999 {
			t.Errorf("match %+v: want T-Score and Cum 1", m)
		}
	}
	if len(res.Anchors) != 1 || res.Anchors[0].Name != "inception" || res.Anchors[0].Score != 1 {
		t.Errorf("anchors %+v", res.Anchors)
	}
	if len(res.Answers) != 1 || res.Answers[0].Name != "united_kingdom" || res.Answers[0].Score < 0.999 || res.Answers[0].Reversed != 0 {
		t.Errorf("answers %+v", res.Answers)
	}
}

func TestRetrieveOwnGraphAndConcurrency(t *testing.T) {
	g := films(t)
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.K, cfg.PatternFromKG = 1, true
	r, err := New(ctx, plan.Env{Encoder: directorNationality()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	q := "what is the nationality of the director of titanic"
	if _, err := r.Retrieve(ctx, plan.Request{Question: q, Mentions: []string{"titanic"}}); err == nil {
		t.Error("no error without any KG")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev, err := r.Retrieve(ctx, plan.Request{Question: q, Graph: g, Own: true, Mentions: []string{"titanic"}})
			if err != nil {
				t.Error(err)
				return
			}
			if got := names(ev.Trace.Answers); !slices.Equal(got, []string{"canada"}) {
				t.Errorf("answers %v, want [canada]", got)
			}
		}()
	}
	wg.Wait()
	if _, n := r.Totals(); n != 8 {
		t.Errorf("%d searches counted, want 8", n)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	enc := wordvec.New(nil, wordvec.Options{})
	for _, cfg := range []Config{{}, {K: 3, KNodes: 0, KRelations: 1}, {K: 1, KNodes: 1, KRelations: 1, MaxExpansions: -1}} {
		if _, err := New(context.Background(), plan.Env{Encoder: enc}, cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	if _, err := New(context.Background(), plan.Env{}, DefaultConfig()); err == nil {
		t.Error("no encoder accepted")
	}
}
