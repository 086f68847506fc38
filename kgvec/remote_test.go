package kgvec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
)

func TestOpenQdrantErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kb.tsv")
	if err := os.WriteFile(path, []byte(triples), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := kg.Load(context.Background(), path, kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct{ url, kgPath, want string }{
		{"http://127.0.0.1:6334", path, "--vector-store"},
		{"qdrant://127.0.0.1:6334?api-key=secret", path, "--vector-store"},
		{"qdrant://127.0.0.1:1?timeout=200ms", filepath.Join(dir, "missing.tsv"), "missing.tsv"},
	} {
		if _, _, err := OpenQdrant(ctx, g, tc.kgPath, enc, tc.url, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s over %s: %v, want an error naming %q", tc.url, tc.kgPath, err, tc.want)
		}
	}
}

// TestOpenQdrantServer runs against a real Qdrant server when QDRANT_URL
// names one: the entity index uploads, searches as the exact index does,
// and a second opening reuses the collection.
func TestOpenQdrantServer(t *testing.T) {
	url := os.Getenv("QDRANT_URL")
	if url == "" {
		t.Skip("QDRANT_URL not set: no Qdrant server here; start one with docker run -p 6334:6334 qdrant/qdrant:v1.17.1 and set QDRANT_URL=qdrant://127.0.0.1:6334")
	}
	path := filepath.Join(t.TempDir(), "kb.tsv")
	if err := os.WriteFile(path, []byte(triples), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g, err := kg.Load(ctx, path, kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	exact, err := Build(ctx, g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		e, closeFn, err := OpenQdrant(ctx, g, path, enc, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Nearest(ctx, "nolan", 3)
		closeFn()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := exact.Nearest(ctx, "nolan", 3)
		for i := range want {
			if got[i].Entity != want[i].Entity {
				t.Errorf("hit %d: %v, exact %v", i, got[i], want[i])
			}
		}
	}
}
