package plan

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// nothing is a retrieval strategy that finds no evidence.
type nothing struct{}

func (nothing) Retrieve(context.Context, Request) (*Evidence, error) {
	return nil, errors.New("nothing")
}

func TestRegistry(t *testing.T) {
	r := DefaultRetrievers()
	if got := r.Names(); len(got) != 1 || got[0] != DefaultStrategy || r.Doc(DefaultStrategy) == "" {
		t.Fatalf("built-ins = %v", got)
	}
	mk := func(context.Context, Env) (Retriever, error) { return nothing{}, nil }
	if err := r.Register("simgrag", "SimGRAG", mk); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    Factory
		want string
	}{
		{"simgrag", mk, "registered twice"},
		{"Bad Name", mk, "lowercase word"},
		{"", mk, "lowercase word"},
		{"gcr", nil, "no constructor"},
	} {
		if err := r.Register(tc.name, "", tc.f); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%q): err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if got := strings.Join(r.Names(), ","); got != "stem,simgrag" {
		t.Errorf("names = %s", got)
	}
	ret, err := r.New(context.Background(), "simgrag", Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ret.(nothing); !ok {
		t.Errorf("New(simgrag) = %T", ret)
	}
	for _, tc := range []struct{ name, want string }{
		{"simgrg", `did you mean "simgrag"?`},
		{"stme", `did you mean "stem"?`},
		{"graphraft", `unknown retrieval strategy "graphraft" (have stem, simgrag)`},
	} {
		if _, err := r.New(context.Background(), tc.name, Env{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q): err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// A strategy whose constructor fails says which.
	_ = r.Register("broken", "", func(context.Context, Env) (Retriever, error) { return nil, errors.New("no model") })
	if _, err := r.New(context.Background(), "broken", Env{}); err == nil || err.Error() != "retrieval strategy broken: no model" {
		t.Errorf("broken: err = %v", err)
	}
}

func TestSettingsCheck(t *testing.T) {
	reg := DefaultRetrievers()
	for _, tc := range []struct {
		edit func(*Settings)
		want string
	}{
		{func(s *Settings) { s.Planner = "pattern" }, "--planner-model"},
		{func(s *Settings) { s.Generator = "llm" }, "--llm-model"},
		{func(s *Settings) { s.Peers.GraphRAFTLLM = true }, "--graphraft-llm need --llm-model"},
		{func(s *Settings) { s.Peers.DoGLLM = true }, "--llm-model"},
		{func(s *Settings) { s.Tracing.OnlyGreedy, s.Tracing.OnlyThreshold = true, true }, "exclude each other"},
		{func(s *Settings) { s.Retriever = "nope" }, `--retriever: unknown retrieval strategy "nope"`},
		{func(s *Settings) {}, ""},
	} {
		s := DefaultSettings()
		tc.edit(&s)
		err := s.Check(reg)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check: err = %v, want %q", err, tc.want)
		}
	}
}
