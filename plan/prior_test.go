package plan

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/compose"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/schema"
)

// TestPatternModelWithPrior checks that a pattern model trained from its
// KG alone plans beside the zero-shot planner its Prior names, by --planner
// pattern and by auto with a model, and that a prior this build does not
// know is refused.
func TestPatternModelWithPrior(t *testing.T) {
	ctx := context.Background()
	b := kg.NewBuilder()
	for _, tr := range [][3]string{{"bob", "manager", "alice"}, {"alice", "manager", "frank"}, {"bob", "works_for", "acme"}} {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	m, err := pattern.Train(ctx, enc, []pattern.Example{
		{Question: "who is the manager of bob ?", Mentions: []string{"bob"}, Paths: [][]schema.Step{{{Rel: "manager"}}}, Answers: 1},
		{Question: "where does bob work ?", Mentions: []string{"bob"}, Paths: [][]schema.Step{{{Rel: "works_for"}}}, Answers: 1},
	}, pattern.Options{Epochs: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	save := func(name string, pr pattern.Prior) string {
		m.SetPrior(pr)
		p := filepath.Join(dir, name)
		if err := m.Save(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withPrior := save("kg.stempat", pattern.Prior{Planner: compose.Name, Weight: 0.1})
	alone := save("questions.stempat", pattern.Prior{})
	other := save("other.stempat", pattern.Prior{Planner: "oracle-of-delphi", Weight: 1})
	for _, tt := range []struct {
		planner PlannerName
		model   string
		compose bool
		err     string
	}{
		{"pattern", withPrior, true, ""},
		{"auto", withPrior, true, ""},
		{"pattern", alone, false, ""},
		{"pattern", other, false, `plans beside planner "oracle-of-delphi", which this build does not know`},
	} {
		s := DefaultSettings()
		s.Planner, s.PlannerModel = tt.planner, tt.model
		pl, _, err := OpenPlanner(ctx, s, Assets{Graph: g, Encoder: enc})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %s: err = %v, want %q", tt.planner, filepath.Base(tt.model), err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := pl.(*compose.Planner); ok != tt.compose {
			t.Errorf("%s %s: planner %T, compose %v", tt.planner, filepath.Base(tt.model), pl, tt.compose)
		}
		pr, err := pl.Plan(ctx, projection.Input{Question: "who is the manager of bob 's manager ?", Entities: []string{"bob"}})
		if err != nil {
			t.Fatal(err)
		}
		if tt.compose && pr.Candidates[0].Graph.String() != schema.Path("bob", "manager", "manager").String() {
			t.Errorf("%s %s: first plan %s", tt.planner, filepath.Base(tt.model), pr.Candidates[0].Graph)
		}
	}
}
