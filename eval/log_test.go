package eval

import (
	"slices"
	"testing"
)

// A log written before a configuration key existed resumes under a
// configuration that holds the key at the value older builds behaved as,
// and under no other.
func TestConfigDiffAddedKeys(t *testing.T) {
	old := map[string]string{"planner": "oracle"}
	for _, c := range []struct {
		now  map[string]string
		want []string
	}{
		{map[string]string{"planner": "oracle", "selection": "strategy"}, nil},
		{map[string]string{"planner": "oracle", "selection": "greedy"}, []string{`selection: "" != "greedy"`}},
		{map[string]string{"planner": "pattern", "selection": "strategy"}, []string{`planner: "oracle" != "pattern"`}},
		{map[string]string{"planner": "oracle", "theta": "0.6"}, []string{`theta: "" != "0.6"`}},
	} {
		if got := ConfigDiff(old, c.now); !slices.Equal(got, c.want) {
			t.Errorf("ConfigDiff(%v, %v) = %q, want %q", old, c.now, got, c.want)
		}
		// The other way round, as a newer log read by a build with the key.
		if got := ConfigDiff(c.now, old); len(got) != len(c.want) {
			t.Errorf("ConfigDiff(%v, %v) = %q, want %d differences", c.now, old, got, len(c.want))
		}
	}
}
