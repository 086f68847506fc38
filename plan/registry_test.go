package plan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/settings"
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
		{func(s *Settings) { s.Generator = "llm" }, "--generator llm need --llm-model"},
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

// knobs is a toy strategy's own settings.
type knobs struct {
	Depth int  `flag:"toy-depth" min:"1"`
	LLM   bool `flag:"toy-llm"`
}

func (k knobs) Check(llm bool) error {
	if k.LLM && !llm {
		return errors.New("--toy-llm needs --llm-model")
	}
	return nil
}

// built records the settings a toy strategy was built with.
type built struct {
	nothing
	k knobs
}

// A strategy registered with settings gets its own struct, defaults
// first, then what the user set, never another configuration's; its
// Check runs with the pipeline's.
func TestRegisterWith(t *testing.T) {
	r := DefaultRetrievers()
	if err := RegisterWith(r, "toy", "a toy", func() knobs { return knobs{Depth: 3} }, func(_ context.Context, _ Env, k knobs) (Retriever, error) {
		return built{k: k}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := RegisterWith(r, "toy", "again", func() knobs { return knobs{} }, func(context.Context, Env, knobs) (Retriever, error) { return nil, nil }); err == nil {
		t.Error("a second toy was registered")
	}
	ret, err := r.New(context.Background(), "toy", Env{})
	if err != nil || ret.(built).k.Depth != 3 {
		t.Fatalf("defaults: %v %+v", err, ret)
	}
	s := DefaultSettings()
	s.Retriever = "toy"
	s.Retrievers = r.NewSettings()
	fields, err := settings.Fields(&s)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := settings.Lookup(fields, "toy-depth"); !ok {
		t.Fatal("no toy-depth setting")
	}
	// A compare configuration changes its clone only.
	c := s.Clone()
	cf, _ := settings.Fields(&c)
	if _, err := settings.ApplySpec(cf, "toy-depth=5,toy-llm"); err != nil {
		t.Fatal(err)
	}
	if got := s.Retrievers.Of("toy").(*knobs).Depth; got != 3 {
		t.Errorf("the original changed with its clone: depth %d", got)
	}
	ret, err = r.NewWith(context.Background(), "toy", Env{}, c.Retrievers)
	if err != nil || ret.(built).k.Depth != 5 {
		t.Fatalf("set: %v %+v", err, ret)
	}
	if err := c.Check(r); err == nil || !strings.Contains(err.Error(), "--retriever toy: --toy-llm needs --llm-model") {
		t.Errorf("Check: %v", err)
	}
	c.Chat.Model = "m"
	if err := c.Check(r); err != nil {
		t.Errorf("Check with a model: %v", err)
	}
}
