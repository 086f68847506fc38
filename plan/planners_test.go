package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/projection"
)

func TestPlanners(t *testing.T) {
	r := DefaultPlanners()
	want := "where schema graphs come from: auto (pattern with --planner-model, else compose), oracle (the gold path; eval only), pattern, compose (zero-shot, composes relation words), schema (zero-shot, whole-question similarity) or llm"
	if got := r.Help(); got != want {
		t.Errorf("Help:\n got %s\nwant %s", got, want)
	}
	if got := (PlannerName("")).Usage(); got != want {
		t.Errorf("PlannerName.Usage = %q, want the registry's help", got)
	}
	for _, tc := range []struct{ name, err string }{
		{"compose", ""},
		{"composer", `unknown planner "composer" (have auto, oracle, pattern, compose, schema, llm); did you mean "compose"?`},
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
