package plan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

func TestPlanners(t *testing.T) {
	r := DefaultPlanners()
	want := "where schema graphs come from: auto (pattern with --planner-model, else compose), oracle (the gold path; eval only), pattern, compose (zero-shot, composes relation words), schema (zero-shot, whole-question similarity), llm or both (pattern with --planner-model and compose, their beams merged for --selector to choose among)"
	if got := r.Help(); got != want {
		t.Errorf("Help:\n got %s\nwant %s", got, want)
	}
	if got := (PlannerName("")).Usage(); got != want {
		t.Errorf("PlannerName.Usage = %q, want the registry's help", got)
	}
	for _, tc := range []struct{ name, err string }{
		{"compose", ""},
		{"composer", `unknown planner "composer" (have auto, oracle, pattern, compose, schema, llm, both); did you mean "compose"?`},
	} {
		err := r.Check(tc.name)
		if got := errString(err); got != tc.err {
			t.Errorf("Check(%q) = %q, want %q", tc.name, got, tc.err)
		}
		var p PlannerName
		if got := errString(p.UnmarshalText([]byte(tc.name))); got != tc.err {
			t.Errorf("UnmarshalText(%q) = %q, want %q", tc.name, got, tc.err)
		}
	}
	noop := func(context.Context, PlannerEnv) (projection.Planner, error) { return nil, nil }
	if err := r.Register("oracle", "", nil, noop); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("registering oracle twice: %v", err)
	}
	if err := r.Register("Mine", "", nil, noop); err == nil {
		t.Error("registering an uppercase name: no error")
	}
	for _, tc := range []struct {
		s   Settings
		err string
	}{
		{Settings{Planner: "pattern"}, "--planner pattern needs --planner-model FILE"},
		{Settings{Planner: "llm"}, "--planner llm and --generator llm need --llm-model NAME"},
		{Settings{Planner: "auto"}, ""},
		{Settings{Planner: "both"}, "--planner both needs --planner-model FILE"},
		{Settings{Planner: "both", PlannerModel: "m.stempat"}, ""},
		{Settings{Planner: "nope"}, `--planner: unknown planner "nope"`},
	} {
		if got := errString(r.checkSettings(tc.s)); !strings.HasPrefix(got, tc.err) || (tc.err == "") != (got == "") {
			t.Errorf("checkSettings(%s) = %q, want %q...", tc.s.Planner, got, tc.err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// beamPlanner answers every question with its projection, or its error.
type beamPlanner struct {
	p   projection.Projection
	err error
}

func (f beamPlanner) Plan(context.Context, projection.Input) (projection.Projection, error) {
	return f.p, f.err
}

// TestMergedPlanner merges two planners' beams, and answers with the one
// that planned where the other failed.
func TestMergedPlanner(t *testing.T) {
	trained := beamPlanner{p: projection.Projection{Candidates: []projection.Candidate{{Graph: schema.Path("X", "a"), Score: 0.9}}}}
	zero := beamPlanner{p: projection.Projection{Candidates: []projection.Candidate{{Graph: schema.Path("X", "b"), Score: 2}}}}
	broken := beamPlanner{err: errors.New("no pattern fits")}
	for _, tc := range []struct {
		name          string
		first, second projection.Planner
		plans, err    string // the candidates' relations, joined; the error
		note          string
	}{
		{"both plan", trained, zero, "a b", "", ""},
		{"trained fails", broken, zero, "b", "", "trained planner failed: no pattern fits"},
		{"zero-shot fails", trained, broken, "a", "", "zero-shot planner failed: no pattern fits"},
		{"both fail", broken, broken, "", "no pattern fits", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := mergedPlanner{first: tc.first, second: tc.second}.Plan(context.Background(), projection.Input{Question: "q"})
			if got := errString(err); got != tc.err {
				t.Fatalf("error %q, want %q", got, tc.err)
			}
			var rels []string
			for _, c := range p.Candidates {
				rels = append(rels, c.Graph.Triples[0].Rel)
			}
			if got := strings.Join(rels, " "); got != tc.plans {
				t.Errorf("plans %q, want %q", got, tc.plans)
			}
			if got := strings.Join(p.Notes, "; "); got != tc.note {
				t.Errorf("notes %q, want %q", got, tc.note)
			}
		})
	}
}
