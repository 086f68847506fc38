package qdrant

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/vecindex"
)

// TestIntegration runs the Ensure/Search contract against a real server
// named by QDRANT_URL, in a collection of its own that it deletes after.
func TestIntegration(t *testing.T) {
	u := os.Getenv("QDRANT_URL")
	if u == "" {
		t.Skip("QDRANT_URL not set: no Qdrant server here; start one with docker run -p 6334:6334 qdrant/qdrant:v1.17.1 and set QDRANT_URL=qdrant://127.0.0.1:6334")
	}
	cfg, err := ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	name := fmt.Sprintf("stem_test_%d", time.Now().UnixNano())
	defer func() {
		if err := s.Delete(context.Background(), name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	const n, dim = 2500, 16
	vecs := randVecs(n, dim, 42)
	c, err := s.Ensure(ctx, name, dim, n, rows(vecs, dim), func(i int) string { return fmt.Sprint("e", i) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	flat := vecindex.NewFlat(dim)
	if err := flat.Add(vecs); err != nil {
		t.Fatal(err)
	}
	queries := randVecs(5, dim, 43)
	for qi := range 5 {
		q := queries[qi*dim : (qi+1)*dim]
		want, _ := flat.Search(ctx, q, 10)
		got, err := c.Search(ctx, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("q%d: %d hits, want %d", qi, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || math.Abs(float64(got[i].Score-want[i].Score)) > 1e-5 {
				t.Errorf("q%d hit %d: %+v, want %+v", qi, i, got[i], want[i])
			}
		}
	}
	// Ensure again: the complete collection is reused.
	if _, err := s.Ensure(ctx, name, dim, n, rows(vecs, dim), nil, nil); err != nil {
		t.Fatal(err)
	}
}
