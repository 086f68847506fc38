package kgvec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/vecindex"
)

const triples = "Christopher_Nolan\tdirected\tInception\n" +
	"Ljubljana_Zoo\tlocated_in\tLjubljana\n" +
	"Barack_Obama\tborn_in\tHonolulu\n"

func TestNearestAndCache(t *testing.T) {
	ctx := context.Background()
	dir, cacheDir := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "kb.txt")
	if err := os.WriteFile(path, []byte(triples), 0o644); err != nil {
		t.Fatal(err)
	}
	// A read-only data folder: nothing may be written beside the KG.
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	g, err := kg.Load(ctx, path, kg.FormatTSV)
	if err != nil {
		t.Fatal(err)
	}
	// Spelling-only encoder: no word vectors needed for the test.
	enc := wordvec.New(nil, wordvec.Options{})
	e, err := LoadOrBuild(ctx, g, path, cacheDir, enc, nil)
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
	cache, err := CachePath(cacheDir, path, enc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("cache file not written: %v", err)
	}
	if !strings.HasPrefix(cache, cacheDir+string(filepath.Separator)) {
		t.Errorf("cache %s not in the cache directory %s", cache, cacheDir)
	}
	if ls, _ := os.ReadDir(dir); len(ls) != 1 {
		t.Errorf("the data folder holds %d files, want the KG alone", len(ls))
	}
	// A second load reads the cache and answers the same.
	e2, err := LoadOrBuild(ctx, g, path, cacheDir, enc, nil)
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
	other, _ := CachePath(cacheDir, path, wordvec.New(nil, wordvec.Options{NGramDims: 32}))
	if other == cache {
		t.Error("different encoders share a cache path")
	}
	// The same content elsewhere shares the cache; other content does not.
	copyPath := filepath.Join(t.TempDir(), "copy.txt")
	if err := os.WriteFile(copyPath, []byte(triples), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := CachePath(cacheDir, copyPath, enc); c != cache {
		t.Errorf("a copy of the KG has cache %s, want %s", c, cache)
	}
	if err := os.WriteFile(copyPath, []byte(triples+"A\tr\tB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := CachePath(cacheDir, copyPath, enc); c == cache {
		t.Error("an edited KG reuses the old cache")
	}
	// A corrupt cache file is rebuilt, not trusted.
	if err := os.WriteFile(cache, []byte("STEMVX garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	e3, err := LoadOrBuild(ctx, g, path, cacheDir, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h3, _ := e3.Nearest(ctx, "nolan", 3); len(h3) != 3 || h3[0] != h1[0] {
		t.Errorf("rebuilt index answers %+v, want %+v first", h3, h1[0])
	}
	if ix, err := vecindex.Load(cache); err != nil || ix.Len() != g.NumEntities() {
		t.Errorf("corrupt cache not rewritten: %v", err)
	}
	// An index of the wrong size is refused.
	if _, err := New(g, enc, vecindex.NewFlat(enc.Dim())); err == nil {
		t.Error("New accepted an empty index for a KG with entities")
	}
}

func TestCachePathMissingKG(t *testing.T) {
	_, err := CachePath(t.TempDir(), filepath.Join(t.TempDir(), "nope.txt"), wordvec.New(nil, wordvec.Options{}))
	if err == nil || !strings.Contains(err.Error(), "nope.txt") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}

func TestIndexKinds(t *testing.T) {
	ctx := context.Background()
	var sb strings.Builder
	for i := range 300 {
		fmt.Fprintf(&sb, "Person_%d_%c\tknows\tPlace_%d\n", i, 'a'+i%26, i%37)
	}
	path := filepath.Join(t.TempDir(), "kb.txt")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := kg.Load(ctx, path, kg.FormatTSV)
	if err != nil {
		t.Fatal(err)
	}
	n := g.NumEntities()
	enc := wordvec.New(nil, wordvec.Options{})
	cacheDir := t.TempDir()
	for _, tc := range []struct {
		opts Options
		want Kind
	}{
		{Options{}, Exact},
		{Options{IVFThreshold: n + 1}, Exact},
		{Options{IVFThreshold: n}, HNSW},
		{Options{Kind: Auto, IVFThreshold: 10}, HNSW},
		{Options{Kind: Exact, IVFThreshold: 10}, Exact},
		{Options{Kind: IVF}, IVF},
		{Options{Kind: HNSW}, HNSW},
	} {
		if got := tc.opts.Resolve(n); got != tc.want {
			t.Errorf("%+v.Resolve(%d) = %s, want %s", tc.opts, n, got, tc.want)
		}
		e, err := LoadOrBuildWith(ctx, g, path, cacheDir, enc, tc.opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind() != tc.want {
			t.Errorf("%+v: built %s, want %s", tc.opts, e.Kind(), tc.want)
		}
		hits, err := e.Nearest(ctx, "person 7 h", 3)
		if err != nil || len(hits) != 3 || hits[0].Name != "Person_7_h" {
			t.Errorf("%+v: Nearest = %+v, %v", tc.opts, hits, err)
		}
	}
	exact, _ := CachePathKind(cacheDir, path, enc, Exact)
	ivf, _ := CachePathKind(cacheDir, path, enc, IVF)
	hn, _ := CachePathKind(cacheDir, path, enc, HNSW)
	if exact == ivf || hn == ivf || hn == exact {
		t.Fatalf("kinds share a cache: %s %s %s", exact, ivf, hn)
	}
	if _, err := vecindex.LoadHNSW(hn); err != nil {
		t.Errorf("HNSW cache: %v", err)
	}
	// The HNSW cache is loaded, not rebuilt.
	hBefore, _ := os.Stat(hn)
	if e, err := LoadOrBuildWith(ctx, g, path, cacheDir, enc, Options{Kind: HNSW}, nil); err != nil || e.Kind() != HNSW {
		t.Fatalf("HNSW reload: kind %v, err %v", e, err)
	}
	if after, _ := os.Stat(hn); !after.ModTime().Equal(hBefore.ModTime()) {
		t.Error("the HNSW cache was rewritten instead of loaded")
	}
	if c, _ := CachePath(cacheDir, path, enc); c != exact {
		t.Errorf("CachePath = %s, want the exact path %s", c, exact)
	}
	if _, err := vecindex.Load(exact); err != nil {
		t.Errorf("exact cache: %v", err)
	}
	x, err := vecindex.LoadIVF(ivf)
	if err != nil {
		t.Fatalf("IVF cache: %v", err)
	}
	// The IVF cache is loaded, not rebuilt: a requested nprobe is applied
	// to the loaded lists, and the file is left untouched.
	e, err := LoadOrBuildWith(ctx, g, path, cacheDir, enc, Options{Kind: IVF, IVF: vecindex.IVFOptions{NProbe: 2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.index.(*vecindex.IVF); got.NProbe() != 2 || got.NList() != x.NList() {
		t.Errorf("loaded IVF has nprobe %d nlist %d, want 2 %d", got.NProbe(), got.NList(), x.NList())
	}
	before, _ := os.Stat(ivf)
	if _, err := LoadOrBuildWith(ctx, g, path, cacheDir, enc, Options{Kind: IVF}, nil); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(ivf); !after.ModTime().Equal(before.ModTime()) {
		t.Error("the IVF cache was rewritten instead of loaded")
	}
	// An exact file put where the IVF cache belongs is rebuilt, never read
	// as IVF.
	b, _ := os.ReadFile(exact)
	if err := os.WriteFile(ivf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err = LoadOrBuildWith(ctx, g, path, cacheDir, enc, Options{Kind: IVF}, nil)
	if err != nil || e.Kind() != IVF {
		t.Fatalf("kind %s, err %v", e.Kind(), err)
	}
	if _, err := vecindex.LoadIVF(ivf); err != nil {
		t.Errorf("IVF cache not rewritten: %v", err)
	}
	var k Kind
	if err := k.UnmarshalText([]byte("ivf")); err != nil || k != IVF {
		t.Errorf("UnmarshalText(ivf) = %s, %v", k, err)
	}
	if err := k.UnmarshalText([]byte("hnsw")); err != nil || k != HNSW {
		t.Errorf("UnmarshalText(hnsw) = %s, %v", k, err)
	}
	if err := k.UnmarshalText([]byte("annoy")); err == nil {
		t.Error("UnmarshalText accepted annoy")
	}
}

// A deferred index opens on the first search only, once, and a failed
// opening is tried again by the next search.
func TestDeferred(t *testing.T) {
	g, err := kg.GraphOf([][3]string{{"Paris", "capital_of", "France"}, {"Berlin", "capital_of", "Germany"}})
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	opens, fail := 0, true
	e := Deferred(g, enc, func(ctx context.Context) (*Entities, error) {
		opens++
		if fail {
			fail = false
			return nil, errors.New("disk full")
		}
		return Build(ctx, g, enc, nil)
	})
	if e.Len() != 4 || e.Kind() != "" || opens != 0 {
		t.Fatalf("before a search: len %d kind %q opens %d, want 4, \"\", 0", e.Len(), e.Kind(), opens)
	}
	if _, err := e.Nearest(context.Background(), "paris", 1); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("failed opening: %v", err)
	}
	for range 3 {
		hits, err := e.Nearest(context.Background(), "paris", 1)
		if err != nil || len(hits) != 1 || hits[0].Name != "Paris" {
			t.Fatalf("hits %v, %v", hits, err)
		}
	}
	if opens != 2 || e.Kind() != Exact {
		t.Errorf("opens %d kind %q, want 2 and exact", opens, e.Kind())
	}
	other, _ := kg.GraphOf([][3]string{{"a", "r", "b"}})
	bad := Deferred(g, enc, func(ctx context.Context) (*Entities, error) { return Build(ctx, other, enc, nil) })
	if _, err := bad.Nearest(context.Background(), "a", 1); err == nil {
		t.Error("an index opened for another graph was used")
	}
}
