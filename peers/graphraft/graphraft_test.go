package graphraft

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/models/wordvec"
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
	return r.(*Retriever)
}

func TestRetrieve(t *testing.T) {
	g := family(t)
	anna := ids(t, g, "anna")
	path := func(rels ...string) projection.Candidate {
		return projection.Candidate{Graph: schema.Path("anna", rels...)}
	}
	for _, tc := range []struct {
		name     string
		cfg      Config
		req      plan.Request
		answers  []string
		chain    string
		problems string
	}{
		{"the planner's path is executed",
			DefaultConfig(),
			plan.Request{Question: "the parent of anna 's son ?", Anchors: anna, Mentions: []string{"anna"},
				Projection: projection.Projection{Candidates: []projection.Candidate{path("children", "parents")}}},
			[]string{"anna", "enno"}, "anna -> children -> rudolf -> parents -> enno", ""},
		{"anchored by name",
			DefaultConfig(),
			plan.Request{Question: "where was anna 's son born ?", Mentions: []string{"anna"},
				Projection: projection.Projection{Candidates: []projection.Candidate{path("children", "place_of_birth")}}},
			[]string{"aurich"}, "anna -> children -> rudolf -> place_of_birth -> aurich", ""},
		{"no entity",
			DefaultConfig(),
			plan.Request{Question: "who ?", Mentions: []string{"nobody"}},
			nil, "", "no question entity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Graph = g
			ev, err := newRetriever(t, tc.cfg).Retrieve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			res := ev.Trace
			got := answerNames(res.Answers)
			if !slices.Equal(got, tc.answers) {
				t.Errorf("answers %v, want %v", got, tc.answers)
			}
			if res.Unbacked != 0 || tracing.Audit(g, res) != 0 {
				t.Errorf("unbacked %d", res.Unbacked)
			}
			if tc.chain != "" && !slices.Contains(res.Chains, tc.chain) {
				t.Errorf("chains %q lack %q", res.Chains, tc.chain)
			}
			if p := strings.Join(res.Problems, "; "); tc.problems == "" && p != "" || !strings.Contains(p, tc.problems) {
				t.Errorf("problems %q, want %q", p, tc.problems)
			}
		})
	}
}

// The oracle's candidates are unranked: each counts fully, and with
// Queries 2 both are executed.
func TestRetrieveUnrankedTopQueries(t *testing.T) {
	g := family(t)
	proj := projection.Projection{Unranked: true, Candidates: []projection.Candidate{
		{Graph: schema.Path("anna", "spouse")}, {Graph: schema.Path("anna", "children", "place_of_birth")}}}
	req := plan.Request{Question: "q", Graph: g, Anchors: ids(t, g, "anna"), Projection: proj}
	cfg := DefaultConfig()
	cfg.Queries = 2
	ev, err := newRetriever(t, cfg).Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := answerNames(ev.Trace.Answers)
	if want := []string{"aurich", "enno"}; !slices.Equal(got, want) {
		t.Errorf("answers %v, want %v", got, want)
	}
}

func TestConfig(t *testing.T) {
	if _, err := New(context.Background(), plan.Env{}, DefaultConfig()); err == nil {
		t.Error("no encoder, no error")
	}
	if _, err := New(context.Background(), plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, Config{Queries: -1}); err == nil {
		t.Error("negative queries, no error")
	}
	if c, _ := (Config{}).withDefaults(); c.Queries != 1 || c.MaxPaths != 5000 || c.PlanWeight != 0 {
		t.Errorf("defaults %+v", c)
	}
}

func TestSelector(t *testing.T) {
	s := Train([]Pair{
		{"who is the spouse of anna ?", "spouse>"},
		{"who is the wife of bob ?", "spouse>"},
		{"where was the son of anna born ?", "children>place_of_birth>"},
		{"where was carl 's son born ?", "children>place_of_birth>"},
		{"", ""},
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
