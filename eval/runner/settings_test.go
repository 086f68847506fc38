package runner

import (
	"testing"

	"github.com/stem-kgqa/stem/plan"
)

// TestDefaultMinConfidence: ask and serve abstain below the default floor
// with no flag given, while eval and compare score every answer unless a
// floor is asked for.
func TestDefaultMinConfidence(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    plan.Settings
		want float64
	}{
		{"ask, serve", PipelineSettings(), plan.DefaultMinConfidence},
		{"eval, compare", EvalSettings(), 0},
	} {
		if got := tc.s.MinConfidence.Value(); got != tc.want {
			t.Errorf("%s: --min-confidence %v = %g, want %g", tc.name, tc.s.MinConfidence, got, tc.want)
		}
	}
}
