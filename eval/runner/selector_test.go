package runner

import (
	"testing"

	"github.com/stem-kgqa/stem/selection"
	"github.com/stem-kgqa/stem/tracing"
)

// --rows writes each answer a reading's features were computed for, with
// its features by name and its gold label; answers past the features (a
// reading binds more than selection.MaxAnswers) are left out.
func TestAnswerRows(t *testing.T) {
	row := func(v float64) []float64 {
		f := make([]float64, len(selection.AnswerNames))
		for i := range f {
			f[i] = v
		}
		return f
	}
	answers := []tracing.Answer{{Name: "Madrid"}, {Name: "Majorca"}, {Name: "m.0abc"}}
	for _, c := range []struct {
		name   string
		fs     [][]float64
		labels []bool
		want   []string
		right  []bool
	}{
		{"all", [][]float64{row(0.5), row(0.25), row(1)}, []bool{true, false, false}, []string{"Madrid", "Majorca", "m.0abc"}, []bool{true, false, false}},
		{"features for two", [][]float64{row(0.5), row(0.25)}, []bool{false, true, false}, []string{"Madrid", "Majorca"}, []bool{false, true}},
		{"none", nil, nil, nil, nil},
	} {
		got := answerRows(answers, c.fs, c.labels)
		if len(got) != len(c.want) {
			t.Fatalf("%s: %d rows, want %d", c.name, len(got), len(c.want))
		}
		for j, r := range got {
			if r.Name != c.want[j] || r.Right != c.right[j] {
				t.Errorf("%s: row %d is %q right=%v, want %q right=%v", c.name, j, r.Name, r.Right, c.want[j], c.right[j])
			}
			for k, n := range selection.AnswerNames {
				if r.Features[n] != c.fs[j][k] {
					t.Errorf("%s: row %d feature %s = %g, want %g", c.name, j, n, r.Features[n], c.fs[j][k])
				}
			}
		}
	}
}
