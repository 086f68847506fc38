package models

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteSimilarities(t *testing.T) {
	texts := []string{"a", "b"}
	vecs := []float32{1, 0, 0.6, 0.8}
	var buf bytes.Buffer
	if err := WriteSimilarities(&buf, texts, vecs, 2, true); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"           [0]    [1]",
		"  [0] a  1.000  0.600",
		"  [1] b  0.600  1.000",
		"[0] 1 0",
		"[1] 0.6 0.8",
	}
	got := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if strings.TrimRight(got[i], " ") != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
	if err := WriteSimilarities(&buf, texts, vecs[:3], 2, false); err == nil {
		t.Error("3 numbers for 2 texts of 2 dims: want an error")
	}
}
