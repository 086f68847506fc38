package settings

import (
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string // part of the error, "" for none
	}{
		{"3000000000", 3000000000, ""},
		{"2GiB", 2 << 30, ""},
		{"2gib", 2 << 30, ""},
		{"512MiB", 512 << 20, ""},
		{"512M", 512 << 20, ""},
		{"1.5G", 3 << 29, ""},
		{"512MB", 512e6, ""},
		{"4 kB", 4000, ""},
		{" 1TiB ", 1 << 40, ""},
		{"7b", 7, ""},
		{"0", 0, ""},
		{"", 0, "is not a size"},
		{"GiB", 0, "is not a size"},
		{"-1GiB", 0, "is not a size"},
		{"1.2.3G", 0, "is not a size"},
		{"2PiB", 0, `unknown unit "PiB"`},
		{"2 gigs", 0, "unknown unit"},
		{"9000000TiB", 0, "too large"},
	} {
		got, err := ParseBytes(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseBytes(%q) = %d, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"2GiB", "1.5G", "512 MB", "-3", "1e9", "0.0001k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err == nil && n < 0 {
			t.Errorf("ParseBytes(%q) = %d, a negative size", s, n)
		}
	})
}
