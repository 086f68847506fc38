package runner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/settings"
	"github.com/stem-kgqa/stem/tracing"
)

func TestCompareSetups(t *testing.T) {
	base, kgBase := EvalSettings(), NewDataset().Backends
	with := func(name string, f func(*plan.Settings)) Setup {
		s := base
		f(&s)
		return Setup{Name: name, Settings: s, KG: kgBase}
	}
	tests := []struct {
		spec string
		want Setup
	}{
		{"", with("", func(*plan.Settings) {})},
		{"name=x, no-triple-bias ,beam=8", with("x", func(s *plan.Settings) { s.Beam, s.Tracing.NoTripleBias = 8, true })},
		{"planner=pattern,planner-model=m.stempat,strategy=breadth,reuse=never,triple-text=full,max-branch=5,no-entity-bias=true,only-greedy",
			with("planner=pattern,planner-model=m.stempat,strategy=breadth,reuse=never,triple-text=full,max-branch=5,no-entity-bias=true,only-greedy", func(s *plan.Settings) {
				s.Planner, s.PlannerModel, s.Strategy = "pattern", "m.stempat", "breadth"
				s.Tracing.Reuse, s.Tracing.Text, s.Tracing.MaxBranch = tracing.ReuseNever, tracing.TextFull, 5
				s.Tracing.NoEntityBias, s.Tracing.OnlyGreedy = true, true
			})},
		{"name=g,gnn=a.tgnn,gnn=off", with("g", func(*plan.Settings) {})},
		{"name=g,gnn=a.tgnn", with("g", func(s *plan.Settings) { s.GNN = "a.tgnn" })},
		{"name=t,theta=0.7,top-n=10,strict-theta,retriever=stem", with("t", func(s *plan.Settings) {
			s.Tracing.Theta, s.Tracing.TopN, s.Tracing.StrictTheta = 0.7, 10, true
		})},
	}
	for _, tc := range tests {
		got, err := Setups(base, kgBase, "", []string{tc.spec})
		tc.want.Spec = tc.spec
		if tc.want.Name == "" {
			tc.want.Name = tc.spec
		}
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
			t.Errorf("Setups(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
		}
	}
	// The KG backends' settings are keys too; the base keeps its own.
	got, err := Setups(base, kgBase, "", []string{"name=p,sparql-page=500,kg-graph=http://g"})
	if err != nil || len(got) != 1 {
		t.Fatalf("backend keys: %v, %v", got, err)
	}
	for _, tc := range []struct {
		s           kg.BackendSettings
		page, graph string
	}{{got[0].KG, "500", "http://g"}, {kgBase, "10000", ""}} {
		fields, err := settings.Fields(&struct{ KG kg.BackendSettings }{tc.s})
		if err != nil {
			t.Fatal(err)
		}
		if v := settings.Values(fields); v["sparql-page"] != tc.page || v["kg-graph"] != tc.graph {
			t.Errorf("backend settings %v, want sparql-page %s and kg-graph %q", v, tc.page, tc.graph)
		}
	}
	withGNN := base
	withGNN.GNN = "m.tgnn"
	for name := range Presets {
		if _, err := Setups(withGNN, kgBase, name, nil); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	for _, tc := range []struct {
		base               plan.Settings
		preset, spec, want string
	}{
		{base, "table7", "", "need --gnn MODEL"},
		{base, "", "beam=0", "from 1 to 64"},
		{base, "", "planner=pattern", "--planner-model"},
		{base, "", "retriever=stme", `did you mean "stem"`},
		{base, "", "lambda=NaN", "finite number"},
		{base, "", "only-greedy,only-threshold", "exclude each other"},
		{base, "", "wat=1", `"wat" is not a setting`},
	} {
		var specs []string
		if tc.spec != "" {
			specs = []string{tc.spec}
		}
		if _, err := Setups(tc.base, kgBase, tc.preset, specs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Setups(%q, %q): err = %v, want one containing %q", tc.preset, tc.spec, err, tc.want)
		}
	}
}

// A row named by its strategy says what ran: a peer's stand-in, trained
// or not, or its LLM; STEM's planner, trained or zero-shot. Rows the user
// named otherwise keep their names.
func TestRowLabels(t *testing.T) {
	base, kgBase := EvalSettings(), NewDataset().Backends
	for _, c := range []struct{ spec, want string }{
		{"name=gcr,retriever=gcr", "gcr (stand-in)"},
		{"name=gcr,retriever=gcr,gcr-model=pairs.jsonl", "gcr (stand-in, trained)"},
		{"name=graphraft,retriever=graphraft,graphraft-model=pairs.jsonl", "graphraft (stand-in, trained)"},
		{"name=dog,retriever=dog", "dog (stand-in)"},
		{"name=gcr+plan,retriever=gcr,peer-plan-weight=1", "gcr+plan"},
		{"name=stem,retriever=stem", "stem"},
	} {
		got, err := Setups(base, kgBase, "", []string{c.spec})
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if got[0].Name != c.want {
			t.Errorf("%s: named %q, want %q", c.spec, got[0].Name, c.want)
		}
	}
	for _, c := range []struct{ name, retriever, planner, want string }{
		{"stem", "stem", "pattern", "stem (trained: pattern)"},
		{"stem", "stem", "compose", "stem (zero-shot: compose)"},
		{"stem", "stem", "oracle", "stem (oracle plans: upper bound)"},
		{"zs", "stem", "compose", "zs"},
		{"gcr (stand-in)", "gcr", "", "gcr (stand-in)"},
	} {
		if got := RowName(c.name, c.retriever, &eval.Report{Planner: c.planner}); got != c.want {
			t.Errorf("RowName(%s, %s, planner %s) = %q, want %q", c.name, c.retriever, c.planner, got, c.want)
		}
	}
}

// The trained peers' pairs are each training question with each distinct
// gold relation path, directions written '>' and '<'.
func TestPeerPairs(t *testing.T) {
	qs := []planeval.Question{
		{Text: "who is the father of anna 's son ?", Gold: [][]schema.Step{
			{{Rel: "children", Dir: schema.Forward}, {Rel: "parents", Dir: schema.Forward}},
			{{Rel: "children", Dir: schema.Forward}, {Rel: "parents", Dir: schema.Forward}},
			{{Rel: "children", Dir: schema.Forward}, {Rel: "children", Dir: schema.Inverse}}}},
		{Text: "no gold path"},
	}
	want := []signals.Pair{
		{Question: "who is the father of anna 's son ?", Key: "children>parents>"},
		{Question: "who is the father of anna 's son ?", Key: "children>children<"},
	}
	if got := PeerPairs(qs); !reflect.DeepEqual(got, want) {
		t.Errorf("pairs %+v, want %+v", got, want)
	}
}
