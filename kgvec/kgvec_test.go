package kgvec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
)

const triples = "Christopher_Nolan\tdirected\tInception\n" +
	"Ljubljana_Zoo\tlocated_in\tLjubljana\n" +
	"Barack_Obama\tborn_in\tHonolulu\n"

func TestNearestAndCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "kb.txt")
	if err := os.WriteFile(path, []byte(triples), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := kg.Load(ctx, path, kg.FormatTSV)
	if err != nil {
		t.Fatal(err)
	}
	// Spelling-only encoder: no word vectors needed for the test.
	enc := wordvec.New(nil, wordvec.Options{})
	e, err := LoadOrBuild(ctx, g, path, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.Len() != g.NumEntities() {
		t.Fatalf("Len = %d, want %d", e.Len(), g.NumEntities())
	}
	tests := []struct{ query, want string }{
		{"christopher nolan", "Christopher_Nolan"},
		{"Ljubljana zoo", "Ljubljana_Zoo"},
		{"barak obama", "Barack_Obama"},
		{"inceptoin", "Inception"},
	}
	for _, tc := range tests {
		hits, err := e.Nearest(ctx, tc.query, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 || hits[0].Name != tc.want {
			t.Errorf("Nearest(%q) = %+v, want %s first", tc.query, hits, tc.want)
		}
		if hits[0].Score < hits[1].Score {
			t.Errorf("Nearest(%q) not sorted: %+v", tc.query, hits)
		}
	}
	cache, err := CachePath(path, enc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("cache file not written: %v", err)
	}
	if !strings.HasPrefix(cache, path+".") {
		t.Errorf("cache %s not beside %s", cache, path)
	}
	// A second load reads the cache and answers the same.
	e2, err := LoadOrBuild(ctx, g, path, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := e.Nearest(ctx, "nolan", 3)
	h2, _ := e2.Nearest(ctx, "nolan", 3)
	for i := range h1 {
		if h1[i] != h2[i] {
			t.Errorf("cached index differs at %d: %+v vs %+v", i, h1[i], h2[i])
		}
	}
	// Another encoder configuration gets another cache file.
	other, _ := CachePath(path, wordvec.New(nil, wordvec.Options{NGramDims: 32}))
	if other == cache {
		t.Error("different encoders share a cache path")
	}
}

func TestCachePathMissingKG(t *testing.T) {
	_, err := CachePath(filepath.Join(t.TempDir(), "nope.txt"), wordvec.New(nil, wordvec.Options{}))
	if err == nil || !strings.Contains(err.Error(), "nope.txt") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}
