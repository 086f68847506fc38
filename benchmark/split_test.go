package benchmark

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestHalfOf(t *testing.T) {
	// FNV-1a 64 of the id's bytes: "" hashes to the offset basis
	// 0xcbf29ce484222325 (odd), "a" to 0xaf63dc4c8601ec8c (even),
	// "WebQTest-0" to 0x67b09f188fcd68a1, "WebQTest-1" to
	// 0x67b09e188fcd66ee.
	tests := []struct {
		id   string
		want Half
	}{
		{"", Test},
		{"a", Train},
		{"WebQTest-0", Test},
		{"WebQTest-1", Train},
	}
	for _, tc := range tests {
		if got := HalfOf(tc.id); got != tc.want {
			t.Errorf("HalfOf(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
	var qs []Question
	for _, id := range []string{"a", "", "b", "c", "d"} {
		qs = append(qs, Question{ID: id})
	}
	train, test := SplitByID(qs)
	if len(train)+len(test) != len(qs) {
		t.Fatalf("split lost questions: %d + %d of %d", len(train), len(test), len(qs))
	}
	for _, q := range train {
		if HalfOf(q.ID) != Train {
			t.Errorf("%q on the train side", q.ID)
		}
	}
	for _, q := range test {
		if HalfOf(q.ID) != Test {
			t.Errorf("%q on the test side", q.ID)
		}
	}
}

func TestReadAndKeepIDs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	qs := []Question{{ID: "q1"}, {ID: "q2"}, {ID: "q3"}}
	tests := []struct {
		name    string
		path    string
		want    []string
		wantErr error
	}{
		{"two ids, blank lines and spaces", write("two.ids", "q3\n\n  q1 \n"), []string{"q1", "q3"}, nil},
		{"empty file", write("empty.ids", "\n \n"), nil, ErrNoIDs},
		{"ids matching nothing", write("other.ids", "x9\n"), nil, ErrNoIDs},
		{"missing file", filepath.Join(dir, "missing.ids"), nil, os.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids, err := ReadIDs(tc.path)
			var kept []Question
			if err == nil {
				kept, err = KeepIDs(qs, ids, tc.path)
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			var got []string
			for _, q := range kept {
				got = append(got, q.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("kept %q, want %q", got, tc.want)
			}
		})
	}
}
