package graphraft

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/peers/signals/signalstest"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

func newRetriever(t *testing.T, cfg Config) *Retriever {
	t.Helper()
	r, err := New(context.Background(), plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Standing alone, the queries are ranked by the stand-in: the m best are
// executed in order until Nodes result nodes, each query's nodes by the
// similarity of their name to the question, never the alphabet.
func TestRetrieveStandingAlone(t *testing.T) {
	g := family(t)
	enc := signalstest.New(4, map[string][]float32{
		// The masked question, nearest the two-hop children>parents query.
		"who are the parents of 's son ?": {1, 0, 0, 0},
		"children parents":                {1, 0, 0, 0},
		"parents":                         {0.9, 0.4, 0, 0},
		// Result names: enno is nearer the question than anna.
		"who are the parents of anna 's son ?": {0, 0, 1, 0},
		"enno":                                 {0, 0, 1, 0},
		"anna":                                 {0, 0, 0.2, 1},
	})
	req := plan.Request{Question: "who are the parents of anna 's son ?", Graph: g, Anchors: ids(t, g, "anna"), Mentions: []string{"anna"}}
	for _, tc := range []struct {
		name    string
		cfg     Config
		answers []string
	}{
		{"one query, its nodes by name similarity", Config{Queries: 1}, []string{"enno", "anna"}},
		{"m queries in order until the nodes threshold", Config{Queries: 5, Nodes: 3}, []string{"enno", "anna", "rudolf"}},
		{"the threshold cuts within a query", Config{Queries: 5, Nodes: 1}, []string{"enno"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(context.Background(), plan.Env{Encoder: enc}, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := r.Retrieve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range ev.Trace.Answers {
				got = append(got, a.Name)
			}
			if !slices.Equal(got, tc.answers) {
				t.Errorf("answers %v, want %v in this order (chains %q)", got, tc.answers, ev.Trace.Chains)
			}
			if ev.Trace.Unbacked != 0 || tracing.Audit(g, ev.Trace) != 0 {
				t.Errorf("%d unbacked", ev.Trace.Unbacked)
			}
			if !slices.Contains(ev.Trace.Chains, "anna -> children -> rudolf -> parents -> enno") {
				t.Errorf("chains %q", ev.Trace.Chains)
			}
			// Another plan and strategy change nothing standing alone.
			other := req
			other.Projection = projection.Projection{Unranked: true, Candidates: []projection.Candidate{{Graph: schema.Path("anna", "spouse")}}}
			other.Strategy = schema.Breadth
			ev2, err := r.Retrieve(context.Background(), other)
			if err != nil || len(ev2.Trace.Answers) != len(got) || ev2.Trace.Answers[0].Name != got[0] {
				t.Errorf("another plan changed a standalone result: %v %v", err, ev2.Trace.Answers)
			}
			if r.UsesPlan() || r.Mode() != "standalone, encoder" {
				t.Errorf("UsesPlan %v, mode %q", r.UsesPlan(), r.Mode())
			}
		})
	}
}

// In the planner-assisted mode the planner's paths weigh in: the planned
// spouse query comes first.
func TestRetrievePlannerAssisted(t *testing.T) {
	g := family(t)
	req := plan.Request{Question: "the parent of anna 's son ?", Graph: g, Anchors: ids(t, g, "anna"), Mentions: []string{"anna"},
		Projection: projection.Projection{Candidates: []projection.Candidate{{Graph: schema.Path("anna", "spouse")}}}}
	r, err := New(context.Background(), plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, Config{Queries: 1, PlanWeight: 5})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := r.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := answerNames(ev.Trace.Answers); !slices.Equal(got, []string{"enno"}) || !slices.Contains(ev.Trace.Chains, "anna -> spouse -> enno") {
		t.Errorf("answers %v, chains %q", got, ev.Trace.Chains)
	}
	if !r.UsesPlan() || r.Mode() != "planner-assisted w=5, encoder" {
		t.Errorf("UsesPlan %v, mode %q", r.UsesPlan(), r.Mode())
	}
}

func TestRetrieveNoEntity(t *testing.T) {
	g := family(t)
	ev, err := newRetriever(t, DefaultConfig()).Retrieve(context.Background(), plan.Request{Question: "who ?", Graph: g, Mentions: []string{"nobody"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Trace.Answers) != 0 || !strings.Contains(strings.Join(ev.Trace.Problems, "; "), "no question entity") {
		t.Errorf("answers %v, problems %q", ev.Trace.Answers, ev.Trace.Problems)
	}
}

func TestConfig(t *testing.T) {
	if _, err := New(context.Background(), plan.Env{}, DefaultConfig()); err == nil {
		t.Error("no encoder, no error")
	}
	if _, err := New(context.Background(), plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, Config{Queries: -1}); err == nil {
		t.Error("negative queries, no error")
	}
	// m = 5 (the released code's beam width), 20 nodes (the paper's
	// sections 5.1-5.2), one- and two-hop templates (appendix A.2).
	if c, _ := (Config{}).withDefaults(); c.Queries != 5 || c.Nodes != 20 || c.Hops != 2 || c.MaxPaths != 5000 || c.PlanWeight != 0 {
		t.Errorf("defaults %+v", c)
	}
	if s := DefaultSettings(); s.Queries != 5 || s.Nodes != 20 || s.Hops != 2 || s.LLM {
		t.Errorf("settings %+v", s)
	}
	if err := (Settings{LLM: true}).Check(false); err == nil || !strings.Contains(err.Error(), "--graphraft-llm needs --llm-model") {
		t.Errorf("Check: %v", err)
	}
}

func TestSelector(t *testing.T) {
	s := Train([]Pair{
		{Question: "who is the spouse of anna ?", Key: "spouse>"},
		{Question: "who is the wife of bob ?", Key: "spouse>"},
		{Question: "where was the son of anna born ?", Key: "children>place_of_birth>"},
		{Question: "where was carl 's son born ?", Key: "children>place_of_birth>"},
		{Question: "", Key: ""},
	})
	if got := s.Keys(); !slices.Equal(got, []string{"spouse>", "children>place_of_birth>"}) {
		t.Fatalf("keys %v", got)
	}
	for _, tc := range []struct {
		q, want string
	}{
		{"who is the spouse of dora ?", "spouse>"},
		{"where was dora 's son born ?", "children>place_of_birth>"},
	} {
		p := s.Posterior(tc.q)
		var sum float32
		best := ""
		for k, v := range p {
			sum += v
			if best == "" || v > p[best] {
				best = k
			}
		}
		if best != tc.want || sum < 0.999 || sum > 1.001 {
			t.Errorf("%q: posterior %v, want %s first, summing to 1", tc.q, p, tc.want)
		}
	}
}

// answerNames are the names of answers, sorted.
func answerNames(answers []tracing.Answer) []string {
	var out []string
	for _, a := range answers {
		out = append(out, a.Name)
	}
	slices.Sort(out)
	return out
}
