package compose

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

// favour is a stand-in learnt model: it scores one path 1 and every other
// 0, and records how many paths it was asked about.
type favour struct {
	path  string
	asked int
	err   error
}

func (f *favour) ScorePaths(_ context.Context, _ string, _ []string, paths [][]schema.Step) ([]float32, error) {
	f.asked = len(paths)
	out := make([]float32, len(paths))
	for i, p := range paths {
		var b []string
		for _, s := range p {
			b = append(b, s.Rel)
		}
		if strings.Join(b, " ") == f.path {
			out[i] = 1
		}
	}
	return out, f.err
}

func TestLearntRescores(t *testing.T) {
	ctx := context.Background()
	b := kg.NewBuilder()
	b.Add("bob", "manager", "alice")
	b.Add("alice", "manager", "frank")
	b.Add("bob", "works_for", "acme")
	// A hub: a hundred colleagues, so that bob has far more than
	// learntTop paths.
	for i := range 100 {
		b.Add(fmt.Sprintf("p%d", i), "works_for", "acme")
		b.Add(fmt.Sprintf("p%d", i), fmt.Sprintf("skill_%d", i), "go")
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	q := "who is the manager of bob 's manager ?"
	for _, tt := range []struct {
		name   string
		weight float32
		err    error
		want   string
	}{
		{"no weight: alignment alone", 0, nil, "manager manager"},
		{"a small weight keeps a clear reading", 0.1, nil, "manager manager"},
		{"a large weight overrules it", 5, nil, "manager"},
	} {
		f := &favour{path: "manager"}
		p, err := New(ctx, g, enc, Config{Learnt: f, LearntWeight: tt.weight})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := p.Predict(ctx, q, []string{"bob"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range pr.Paths[0].Steps {
			got = append(got, s.Rel)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s: best path %v, want %q", tt.name, got, tt.want)
		}
		if tt.weight != 0 && f.asked != learntTop {
			t.Errorf("%s: learnt model asked about %d paths, want the %d best aligned", tt.name, f.asked, learntTop)
		}
	}
	p, _ := New(ctx, g, enc, Config{Learnt: &favour{err: errors.New("model broke")}, LearntWeight: 1})
	if _, err := p.Predict(ctx, q, []string{"bob"}, nil); err == nil || !strings.Contains(err.Error(), "model broke") {
		t.Errorf("learnt model error: %v", err)
	}
}
