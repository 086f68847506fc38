package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b  string
		d     int
		ratio float32
	}{
		{"", "", 0, 1},
		{"abc", "", 3, 0},
		{"kitten", "sitting", 3, 1 - float32(3)/float32(7)},
		{"stme", "stem", 2, 0.5},
		{"naïve", "naive", 1, 0.8},
		{"flaw", "lawn", 2, 0.5},
	} {
		if d := Distance(tc.a, tc.b); d != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, d, tc.d)
		}
		if d := Distance(tc.b, tc.a); d != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, d, tc.d)
		}
		if r := Ratio(tc.a, tc.b); r != tc.ratio {
			t.Errorf("Ratio(%q, %q) = %v, want %v", tc.a, tc.b, r, tc.ratio)
		}
	}
}
