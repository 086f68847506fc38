package plan

import "testing"

// TestResolvePlanner checks what --planner auto resolves to, the name a
// report prints for the planner that ran.
func TestResolvePlanner(t *testing.T) {
	for _, tc := range []struct {
		planner, model string
		auto           bool
		want           string
	}{
		{"auto", "", false, "compose"},
		{"auto", "m.stempat", false, "pattern"},
		{"auto", "", true, "demo"},
		{"auto", "m.stempat", true, "pattern"},
		{"oracle", "", true, "oracle"},
		{"schema", "m.stempat", false, "schema"},
		{"pattern", "m.stempat", false, "pattern"},
	} {
		var a Assets
		if tc.auto {
			a.AutoPlanner = failingPlanner{}
		}
		if got := resolvePlanner(Settings{Planner: PlannerName(tc.planner), PlannerModel: tc.model}, a); got != tc.want {
			t.Errorf("--planner %s, model %q, demo planner %v: %q, want %q", tc.planner, tc.model, tc.auto, got, tc.want)
		}
	}
}
