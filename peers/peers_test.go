package peers

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/peers/signals/signalstest"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/settings"
	"github.com/stem-kgqa/stem/tracing"
)

var peerNames = []string{"simgrag", "gcr", "graphraft", "dog"}

func TestRetrievers(t *testing.T) {
	r := Retrievers()
	if got, want := r.Names(), append([]string{"stem"}, peerNames...); !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	g, err := kg.GraphOf([][3]string{{"a", "r", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range r.Names() {
		if r.Doc(name) == "" {
			t.Errorf("%s has no doc", name)
		}
		if _, err := r.New(context.Background(), name, plan.Env{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Each peer's settings are its own, registered with it: they reach the
// pipeline's settings (flags, --config keys, compare keys) without plan
// naming them, with their papers' values as defaults.
func TestSettingsRegistered(t *testing.T) {
	s := plan.DefaultSettings()
	s.Retrievers = Retrievers().NewSettings()
	fields, err := settings.Fields(&s)
	if err != nil {
		t.Fatal(err)
	}
	values := settings.Values(fields)
	for key, want := range map[string]string{
		"simgrag-k": "3", "simgrag-kn": "16", "simgrag-kr": "16", "simgrag-hops": "2", "simgrag-llm": "false",
		"gcr-hops": "2", "gcr-beam": "10", "gcr-llm": "false",
		"graphraft-queries": "5", "graphraft-nodes": "20", "graphraft-hops": "2", "graphraft-choices": "20", "graphraft-llm": "false",
		"dog-beam": "2", "dog-depth": "3", "dog-llm": "false",
		"peer-plan-weight": "0",
	} {
		if got, ok := values[key]; !ok || got != want {
			t.Errorf("setting %s = %q (present %v), want %q", key, got, ok, want)
		}
	}
	if _, err := settings.ApplySpec(fields, "gcr-beam=3,dog-llm"); err != nil {
		t.Fatal(err)
	}
	s.Retriever = "dog"
	if err := s.Check(Retrievers()); err == nil || !strings.Contains(err.Error(), "--dog-llm needs --llm-model") {
		t.Errorf("Check: %v", err)
	}
}

// Each LLM mode takes the pipeline's LLM client, and says so when there
// is none.
func TestLLMModesNeedAClient(t *testing.T) {
	g, err := kg.GraphOf([][3]string{{"a", "r", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	reg := Retrievers()
	for _, name := range peerNames {
		set := reg.NewSettings()
		reflect.ValueOf(set.Of(name)).Elem().FieldByName("LLM").SetBool(true)
		env := plan.Env{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})}
		if _, err := reg.NewWith(context.Background(), name, env, set); err == nil || !strings.Contains(err.Error(), "--llm-model") {
			t.Errorf("%s, no client: %v", name, err)
		}
		env.Chat = func() (*llm.Client, error) { return llm.New(llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}) }
		r, err := reg.NewWith(context.Background(), name, env, set)
		if err != nil {
			t.Errorf("%s, with a client: %v", name, err)
			continue
		}
		if m := plan.ModeOf(r); m != "standalone, llm" {
			t.Errorf("%s: mode %q", name, m)
		}
	}
}

// family is PathQuestion-like: anna's son rudolf, his parents, birthplace
// and anna's spouse.
func family(t testing.TB) *kg.Graph {
	t.Helper()
	g, err := kg.GraphOf([][3]string{
		{"anna", "children", "rudolf"},
		{"rudolf", "parents", "anna"},
		{"rudolf", "parents", "enno"},
		{"anna", "spouse", "enno"},
		{"rudolf", "place_of_birth", "aurich"},
		{"enno", "place_of_birth", "emden"},
		{"aurich", "located_in", "frisia"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func id(t testing.TB, g kg.Reader, name string) int32 { return signalstest.Entity(t, g, name) }

// outcome is what a retrieval returned, in comparable form.
type outcome struct {
	Answers, Chains []string
	Evidence        []int32
}

func outcomeOf(ev *plan.Evidence) outcome {
	var o outcome
	for _, a := range ev.Trace.Answers {
		o.Answers = append(o.Answers, a.Name)
	}
	o.Chains = ev.Trace.Chains
	for _, m := range ev.Trace.Evidence {
		o.Evidence = append(o.Evidence, m.Triple)
	}
	return o
}

// request is a question over family with the planner's output set: a
// plan and a strategy a peer standing alone must not read.
func request(t testing.TB, g kg.Reader, rels []string, strat schema.Strategy) plan.Request {
	req := plan.Request{Question: "where was anna 's son born ?", Graph: g, Anchors: []int32{id(t, g, "anna")}, Mentions: []string{"anna"}, Strategy: strat}
	if rels != nil {
		req.Projection = projection.Projection{Unranked: true, Strategy: strat, Candidates: []projection.Candidate{{Graph: schema.Path("anna", rels...)}}}
	}
	return req
}

// TestStandingAloneReadsNoPlan is issue 35's acceptance test: by default
// no peer's result depends on the planner's paths or STEM's strategy. The
// same question with the gold path and Breadth, a wrong path and
// Precision, and no plan at all gives each peer one and the same
// evidence, and the peer tells the pipeline it needs no planner. A peer
// whose default score read either would fail here: with planner help
// (the labelled mode), the wrong plan does change the result, which is
// what this test would catch.
func TestStandingAloneReadsNoPlan(t *testing.T) {
	g := family(t)
	enc := wordvec.New(nil, wordvec.Options{})
	ctx := context.Background()
	reg := Retrievers()
	requests := []plan.Request{
		request(t, g, nil, schema.Precision),
		request(t, g, []string{"children", "place_of_birth"}, schema.Breadth),
		request(t, g, []string{"spouse", "place_of_birth"}, schema.Precision),
		request(t, g, []string{"children", "parents"}, schema.Breadth),
	}
	for _, name := range peerNames {
		t.Run(name, func(t *testing.T) {
			r, err := reg.New(ctx, name, plan.Env{Graph: g, Encoder: enc})
			if err != nil {
				t.Fatal(err)
			}
			if u, ok := r.(plan.PlanUser); !ok || u.UsesPlan() {
				t.Errorf("standing alone, %s does not say it needs no plan", name)
			}
			if m := plan.ModeOf(r); m != "standalone, encoder" {
				t.Errorf("mode %q", m)
			}
			var first outcome
			for i, req := range requests {
				ev, err := r.Retrieve(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				o := outcomeOf(ev)
				if i == 0 {
					first = o
					continue
				}
				if !reflect.DeepEqual(o, first) {
					t.Errorf("request %d (plan %v, %v) changed the result:\n got %+v\nwant %+v", i, req.Projection.Graphs(), req.Strategy, o, first)
				}
			}
			// The labelled planner-assisted mode does read the plan: the
			// wrong plans above now change the result.
			helped, err := reg.New(ctx, name, plan.Env{Graph: g, Encoder: enc, PlanWeight: 10})
			if err != nil {
				t.Fatal(err)
			}
			if u, ok := helped.(plan.PlanUser); !ok || !u.UsesPlan() || !strings.HasPrefix(plan.ModeOf(helped), "planner-assisted w=10") {
				t.Errorf("planner-assisted %s: UsesPlan or mode %q wrong", name, plan.ModeOf(helped))
			}
			changed := false
			var results []outcome
			for _, req := range requests[1:] {
				ev, err := helped.Retrieve(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, outcomeOf(ev))
			}
			for _, o := range results[1:] {
				changed = changed || !reflect.DeepEqual(o, results[0])
			}
			if !changed {
				t.Errorf("planner-assisted %s gave one result for three plans: the mode reads no plan", name)
			}
		})
	}
}

// The strategy suite every peer passes: every answer is backed by
// returned triples, a question with no entity in the KG is answered empty
// with a problem, and a question's own graph is searched, not the shared
// one.
func TestStrategySuite(t *testing.T) {
	g := family(t)
	enc := wordvec.New(nil, wordvec.Options{})
	reg := Retrievers()
	island, err := kg.GraphOf([][3]string{{"lonely", "likes", "nobody"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range peerNames {
		t.Run(name, func(t *testing.T) {
			r, err := reg.New(context.Background(), name, plan.Env{Graph: g, Encoder: enc})
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range []string{"where was anna 's son born ?", "who is anna 's spouse ?", "where is the birthplace of anna 's son located ?"} {
				req := request(t, g, nil, schema.Precision)
				req.Question = q
				ev, err := r.Retrieve(context.Background(), req)
				if err != nil {
					t.Fatalf("%d: %v", i, err)
				}
				if n := tracing.Audit(g, ev.Trace); n != 0 || ev.Trace.Unbacked != 0 {
					t.Errorf("%q: %d answers unbacked (%d reported)", q, n, ev.Trace.Unbacked)
				}
				if len(ev.Trace.Answers) == 0 {
					t.Errorf("%q: no answer", q)
				}
			}
			ev, err := r.Retrieve(context.Background(), plan.Request{Question: "who is nobody ?", Graph: g, Mentions: []string{"somebody else"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(ev.Trace.Answers) != 0 && name != "simgrag" { // SimGRAG anchors by similarity
				t.Errorf("answers %v from no entity", ev.Trace.Answers)
			}
			if len(ev.Trace.Problems) == 0 {
				t.Error("no entity: no problem reported")
			}
			own := plan.Request{Question: "who does lonely like ?", Graph: island, Own: true, Anchors: []int32{id(t, island, "lonely")}, Mentions: []string{"lonely"}}
			ev, err = r.Retrieve(context.Background(), own)
			if err != nil {
				t.Fatal(err)
			}
			if got := outcomeOf(ev).Answers; len(got) == 0 || got[0] != "nobody" || tracing.Audit(island, ev.Trace) != 0 {
				t.Errorf("own graph: answers %v", got)
			}
		})
	}
}

// ExampleRetrievers runs a peer standing alone, then planner-assisted.
func ExampleRetrievers() {
	g, _ := kg.GraphOf([][3]string{{"Heat", "directed_by", "Michael Mann"}, {"Heat", "starred_actors", "Al Pacino"}})
	reg := Retrievers()
	for _, w := range []float32{0, 1} {
		r, _ := reg.New(context.Background(), "gcr", plan.Env{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{}), PlanWeight: w})
		fmt.Println(plan.ModeOf(r))
	}
	// Output:
	// standalone, encoder
	// planner-assisted w=1, encoder
}
