package vecindex

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestHNSWRecall checks the default efSearch against Flat on structured
// entity-name vectors (smaller under the race detector, which slows the
// build about tenfold).
func TestHNSWRecall(t *testing.T) {
	n := 20000
	if raceEnabled {
		n = 4000
	}
	data, qs, dim := structured(t, n, 200)
	flat := NewFlat(dim)
	if err := flat.Add(data); err != nil {
		t.Fatal(err)
	}
	x, err := BuildHNSW(context.Background(), dim, data, HNSWOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := recallAt(searchAll(t, flat, qs, dim, 50), searchAll(t, x, qs, dim, 50))
	t.Logf("recall@50 %.3f over %d vectors", r, n)
	if r < 0.95 {
		t.Errorf("recall@50 = %.3f, want >= 0.95", r)
	}
}

// withDuplicates returns n random rows of dimension dim where every fifth row
// repeats an earlier one (scaled, which normalises to the same vector) and
// one row is zero.
func withDuplicates(n, dim int) []float32 {
	data := randVecs(5, n, dim)
	for i := 5; i < n; i += 5 {
		src := data[(i/3)*dim : (i/3+1)*dim]
		for j := range dim {
			data[i*dim+j] = 2 * src[j]
		}
	}
	if n > 7 {
		clear(data[7*dim : 8*dim])
	}
	return data
}

// TestHNSWExhaustiveMatchesFlat: with ef >= Len every node is reached, so
// the results, ties among duplicates included, are exactly Flat's.
func TestHNSWExhaustiveMatchesFlat(t *testing.T) {
	const n, dim = 300, 8
	data := withDuplicates(n, dim)
	flat := NewFlat(dim)
	if err := flat.Add(data); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		x, err := BuildHNSW(context.Background(), dim, data, HNSWOptions{M: 4, Seed: 3, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		qs := append(randVecs(9, 20, dim), data[:10*dim]...)
		for i := range len(qs) / dim {
			q := qs[i*dim : (i+1)*dim]
			for _, k := range []int{1, 10, n, n + 5} {
				want, err := flat.Search(context.Background(), q, k)
				if err != nil {
					t.Fatal(err)
				}
				got, err := x.SearchEf(context.Background(), q, k, n)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("workers %d query %d k %d:\n got %v\nwant %v", workers, i, k, got, want)
				}
			}
		}
	}
}

// TestHNSWSmallAndErrors covers the edges of Flat's contract.
func TestHNSWSmallAndErrors(t *testing.T) {
	ctx := context.Background()
	empty, err := BuildHNSW(ctx, 3, nil, HNSWOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := empty.Search(ctx, []float32{1, 2, 3}, 5); err != nil || len(hits) != 0 || hits == nil {
		t.Errorf("empty: %v, %v; want empty non-nil", hits, err)
	}
	one, err := BuildHNSW(ctx, 3, []float32{0, 0, 2}, HNSWOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := one.Search(ctx, []float32{0, 0, 1}, 5); err != nil || len(hits) != 1 || hits[0] != (Hit{ID: 0, Score: 1}) {
		t.Errorf("one vector: %v, %v", hits, err)
	}
	dups, err := BuildHNSW(ctx, 2, []float32{1, 0, 0, 1, 2, 0, 1, 0, 0, 3}, HNSWOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := dups.Search(ctx, []float32{1, 0}, 10)
	want := []Hit{{0, 1}, {2, 1}, {3, 1}, {1, 0}, {4, 0}}
	if err != nil || !reflect.DeepEqual(hits, want) {
		t.Errorf("duplicates: %v, %v; want %v", hits, err, want)
	}
	if hits, err := dups.Search(ctx, []float32{0, 0}, 2); err != nil || !reflect.DeepEqual(hits, []Hit{{0, 0}, {1, 0}}) {
		t.Errorf("zero query: %v, %v; want the smallest IDs with score 0", hits, err)
	}
	for _, tc := range []struct {
		q    []float32
		k    int
		want string
	}{
		{[]float32{1}, 1, "dimension"},
		{[]float32{1, 0}, 0, "k = 0"},
		{[]float32{1, float32(nanF())}, 1, "non-finite"},
	} {
		if _, err := dups.Search(ctx, tc.q, tc.k); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Search(%v, %d) error %v, want %q", tc.q, tc.k, err, tc.want)
		}
	}
	if _, err := dups.SearchEf(ctx, []float32{1, 0}, 1, 0); err == nil {
		t.Error("ef 0 accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := dups.Search(cctx, []float32{1, 0}, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
	if _, err := BuildHNSW(cctx, 2, randVecs(1, 2000, 2), HNSWOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled build: %v", err)
	}
	if _, err := BuildHNSW(ctx, 2, []float32{1}, HNSWOptions{}); err == nil {
		t.Error("ragged data accepted")
	}
	if _, err := BuildHNSW(ctx, 0, nil, HNSWOptions{}); err == nil {
		t.Error("dim 0 accepted")
	}
	if _, err := BuildHNSW(ctx, 1, []float32{float32(nanF())}, HNSWOptions{}); err == nil {
		t.Error("NaN accepted")
	}
}

// TestHNSWDeterministicSaveLoad: a single-threaded build is reproducible,
// and a saved index loads to identical results and bytes.
func TestHNSWDeterministicSaveLoad(t *testing.T) {
	const n, dim = 2000, 16
	data := withDuplicates(n, dim)
	build := func() *HNSW {
		x, err := BuildHNSW(context.Background(), dim, data, HNSWOptions{Seed: 7, Workers: 1, EfSearch: 40})
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	a, b := build(), build()
	var ba, bb bytes.Buffer
	if err := encodeHNSW(&ba, a); err != nil {
		t.Fatal(err)
	}
	if err := encodeHNSW(&bb, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ba.Bytes(), bb.Bytes()) {
		t.Error("two single-threaded builds with one seed differ")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "x.hnsw")
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	c, err := LoadHNSW(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.EfSearch() != 40 || c.M() != DefaultM || c.Len() != n || c.Dim() != dim {
		t.Errorf("loaded params: ef %d M %d len %d dim %d", c.EfSearch(), c.M(), c.Len(), c.Dim())
	}
	qs := randVecs(8, 50, dim)
	if !reflect.DeepEqual(searchAll(t, a, qs, dim, 20), searchAll(t, c, qs, dim, 20)) {
		t.Error("loaded index answers differently")
	}
	raw := ba.Bytes()
	bad := func(name string, b []byte, want string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadHNSW(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming the file and %q", name, err, want)
		}
	}
	bad("truncated", raw[:len(raw)-9], "truncated")
	bad("padded", append(append([]byte(nil), raw...), 0), "trailing")
	flip := append([]byte(nil), raw...)
	flip[len(flip)/2] ^= 1
	bad("corrupt", flip, "checksum")
	flat := NewFlat(dim)
	if err := flat.Add(data); err != nil {
		t.Fatal(err)
	}
	fp := filepath.Join(dir, "flat")
	if err := flat.Save(fp); err != nil {
		t.Fatal(err)
	}
	fb, _ := os.ReadFile(fp)
	bad("flat", fb, "flat")
	if _, err := LoadHNSW(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file loaded")
	}
}

// TestHNSWConcurrentSearch runs searches in parallel (meaningful under
// -race) and checks they agree with sequential ones.
func TestHNSWConcurrentSearch(t *testing.T) {
	const n, dim = 1000, 8
	x, err := BuildHNSW(context.Background(), dim, randVecs(2, n, dim), HNSWOptions{})
	if err != nil {
		t.Fatal(err)
	}
	qs := randVecs(4, 40, dim)
	want := searchAll(t, x, qs, dim, 10)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range len(qs) / dim {
				got, err := x.Search(context.Background(), qs[i*dim:(i+1)*dim], 10)
				if err != nil || !reflect.DeepEqual(got, want[i]) {
					t.Errorf("query %d: %v, %v", i, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzLoadHNSW: any bytes give an index or an error, a decoded index can be
// searched, and it re-encodes to the same bytes.
func FuzzLoadHNSW(f *testing.F) {
	for _, tc := range []struct{ n, dim int }{{0, 1}, {1, 2}, {6, 2}, {30, 3}} {
		x, err := BuildHNSW(context.Background(), tc.dim, withDuplicates(tc.n, tc.dim), HNSWOptions{M: 2, Workers: 1})
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		if err := encodeHNSW(&buf, x); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := decodeHNSW(b)
		if err != nil {
			return
		}
		q := make([]float32, x.Dim())
		q[0] = 1
		if _, err := x.SearchEf(context.Background(), q, max(1, x.Len()), x.Len()+1); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := encodeHNSW(&buf, x); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), b) {
			t.Fatalf("re-encoding differs: %d bytes in, %d out", len(b), buf.Len())
		}
	})
}

// A node whose every in-link was pruned away is linked again by connect,
// so an exhaustive search still finds it.
func TestHNSWConnect(t *testing.T) {
	const n, dim = 300, 8
	data := withDuplicates(n, dim)
	x, err := BuildHNSW(context.Background(), dim, data, HNSWOptions{M: 4, Seed: 3, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	dup := make([]bool, n)
	for i := range int32(n) {
		if s := x.same[i]; s >= 0 {
			dup[s] = true
		}
	}
	// Cut every layer-0 link into the last graph node that is not the
	// entry point.
	victim := int32(-1)
	for i := int32(n - 1); i > 0; i-- {
		if !dup[i] && i != x.entry {
			victim = i
			break
		}
	}
	for v := range int32(n) {
		bl := x.links(v, 0)
		k := 0
		for _, w := range bl[1 : 1+bl[0]] {
			if w != victim {
				bl[1+k] = w
				k++
			}
		}
		bl[0] = int32(k)
	}
	if added := x.connect(dup); added == 0 {
		t.Fatal("connect added no link to an unreachable node")
	}
	got, err := x.SearchEf(context.Background(), x.vec(victim), 1, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != victim {
		t.Errorf("exhaustive search for node %d's own vector: %v", victim, got)
	}
	if added := x.connect(dup); added != 0 {
		t.Errorf("a connected graph got %d more links", added)
	}
}
