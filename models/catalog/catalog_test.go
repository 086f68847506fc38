package catalog

import (
	"strings"
	"testing"
)

// --entity-index takes kgvec's kinds by name; anything else is refused
// before any work.
func TestCheckEntityIndex(t *testing.T) {
	for _, tc := range []struct {
		kind string
		ok   bool
	}{{"", true}, {"auto", true}, {"exact", true}, {"ivf", true}, {"hnsw", true}, {"fast", false}, {"HNSW", false}} {
		s := DefaultEncoderSettings()
		s.EntityIndex = tc.kind
		err := s.Check()
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "--entity-index")) {
			t.Errorf("%q: %v", tc.kind, err)
		}
	}
}
