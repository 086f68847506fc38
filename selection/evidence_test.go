package selection

import (
	"slices"
	"testing"
)

// TestContradicted: a reading is contradicted by the KG when a reading
// ranked above it bound nothing or it avoids a relation a question word
// names at the anchor, not otherwise.
func TestContradicted(t *testing.T) {
	with := func(names []string, name string) []float64 {
		x := make([]float64, len(names))
		if i := slices.Index(names, name); i >= 0 {
			x[i] = 1
		}
		return x
	}
	for _, tc := range []struct {
		name               string
		features, evidence []float64
		want               bool
	}{
		{"fallback", with(Names, "fallback"), with(EvidenceNames, ""), true},
		{"bypassed", with(Names, ""), with(EvidenceNames, "bypassed"), true},
		{"kind only", with(Names, "first"), with(EvidenceNames, "kind"), false},
		{"no evidence terms", with(Names, ""), nil, false},
	} {
		if got := (Candidate{Features: tc.features, Evidence: tc.evidence}).Contradicted(); got != tc.want {
			t.Errorf("%s: Contradicted = %v, want %v", tc.name, got, tc.want)
		}
	}
}
