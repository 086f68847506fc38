package pattern

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

// TestScorePaths checks that ScorePaths gives a known path the score
// Predict ranks it by, an unseen one the classifier's reading of its parts
// (nothing without a classifier), and that a model's Prior survives its
// file.
func TestScorePaths(t *testing.T) {
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	train, _ := orderExamples()
	child := []schema.Step{{Rel: "children"}, {Rel: "parents"}}
	parent := []schema.Step{{Rel: "parents"}, {Rel: "children"}}
	unseen := []schema.Step{{Rel: "children"}, {Rel: "children"}}
	const q = "the parent of zoe 's son ?"
	for _, tt := range []struct {
		name      string
		epochs    int
		unseenPos bool
	}{
		{"with the classifier", 0, true},
		{"vote only", -1, false},
	} {
		m, err := Train(ctx, enc, train, Options{Epochs: tt.epochs})
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(m, enc, Config{})
		if err != nil {
			t.Fatal(err)
		}
		pred, err := p.Predict(ctx, q, nil, []string{"zoe"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.ScorePaths(ctx, q, []string{"zoe"}, [][]schema.Step{child, parent, unseen})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range pred.Paths {
			i := map[string]int{Path(child).key(): 0, Path(parent).key(): 1}[Path(c.Steps).key()]
			if got[i] != c.Score {
				t.Errorf("%s: ScorePaths %v of %v, Predict scores it %v", tt.name, got[i], c.Steps, c.Score)
			}
		}
		if !(got[0] > got[1]) {
			t.Errorf("%s: scores %v: want the trained reading (children, parents) first", tt.name, got)
		}
		if (got[2] > 0) != tt.unseenPos || got[2] >= got[0] {
			t.Errorf("%s: unseen path scored %v (known best %v)", tt.name, got[2], got[0])
		}
	}
	if _, err := (&Planner{}).ScorePaths(ctx, " ? ", nil, nil); err != ErrEmptyQuestion {
		t.Errorf("empty question: err = %v", err)
	}

	m, err := Train(ctx, enc, train, Options{Epochs: -1})
	if err != nil {
		t.Fatal(err)
	}
	if m.Prior() != (Prior{}) {
		t.Errorf("a model trained on questions has prior %+v", m.Prior())
	}
	m.SetPrior(Prior{Planner: "compose", Weight: 0.25})
	path := filepath.Join(t.TempDir(), "m.stempat")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path, enc)
	if err != nil || back.Prior() != (Prior{Planner: "compose", Weight: 0.25}) {
		t.Errorf("reloaded prior %+v, %v", back.Prior(), err)
	}
}
