package eval

import (
	"testing"
)

// The fuzz targets check that the parsers never panic and that what they
// accept is well formed.

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"The Beatles", "the’s café", "a\x1can", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if Normalize(n) != n {
			t.Fatalf("Normalize not idempotent on %q: %q then %q", s, n, Normalize(n))
		}
		if !Match(s, s) {
			t.Fatalf("%q does not match itself", s)
		}
	})
}
