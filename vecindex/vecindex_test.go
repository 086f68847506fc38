package vecindex

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// randVecs returns n random vectors of length dim from a fixed seed.
func randVecs(seed uint64, n, dim int) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// bruteForce ranks every row by float64 cosine, best first, ties by ID.
func bruteForce(data []float32, dim int, q []float32, k int) []Hit {
	n := len(data) / dim
	all := make([]Hit, n)
	for i := range n {
		all[i] = Hit{ID: int32(i), Score: cosine64(data[i*dim:(i+1)*dim], q)}
	}
	slices.SortStableFunc(all, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return all[:min(k, n)]
}

func cosine64(a, b []float32) float32 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float32(d / math.Sqrt(na*nb))
}

// sameRanking checks got against the brute-force want. float32 rounding can
// swap neighbours whose exact scores differ by less than eps, so at each rank
// the IDs must agree unless the two candidates' true scores are that close.
func sameRanking(t *testing.T, got, want []Hit, data []float32, dim int, q []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d hits, want %d", len(got), len(want))
	}
	const eps = 1e-5
	for i := range got {
		if d := math.Abs(float64(got[i].Score - want[i].Score)); d > eps {
			t.Fatalf("rank %d: score %v, want %v (id %d vs %d)", i, got[i].Score, want[i].Score, got[i].ID, want[i].ID)
		}
		if got[i].ID != want[i].ID {
			exact := cosine64(data[int(got[i].ID)*dim:int(got[i].ID+1)*dim], q)
			if math.Abs(float64(exact-want[i].Score)) > eps {
				t.Fatalf("rank %d: id %d (score %v), want id %d (score %v)", i, got[i].ID, exact, want[i].ID, want[i].Score)
			}
		}
		if i > 0 && worse(got[i-1], got[i]) {
			t.Fatalf("rank %d: %+v ranked above better %+v", i, got[i-1], got[i])
		}
	}
	seen := map[int32]bool{}
	for _, h := range got {
		if seen[h.ID] {
			t.Fatalf("id %d returned twice", h.ID)
		}
		seen[h.ID] = true
	}
}

func TestSearchMatchesBruteForce(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		seed     uint64
		n, dim   int
		k        int
		nQueries int
	}{
		{1, 1, 1, 1, 3},
		{2, 10, 3, 4, 5},
		{3, 100, 16, 10, 5},
		{4, 1000, 100, 50, 5},
		{5, 500, 7, 500, 2},  // k == n
		{6, 30, 5, 100, 2},   // k > n returns all
		{7, 6000, 100, 3, 3}, // > parallelMin values: split scan
		{8, 3000, 384, 20, 3},
	}
	for _, tc := range tests {
		data := randVecs(tc.seed, tc.n, tc.dim)
		f := NewFlat(tc.dim)
		if err := f.Add(data); err != nil {
			t.Fatal(err)
		}
		if f.Len() != tc.n {
			t.Fatalf("Len = %d, want %d", f.Len(), tc.n)
		}
		queries := randVecs(tc.seed+1000, tc.nQueries, tc.dim)
		batch, err := f.SearchBatch(ctx, queries, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		for qi := range tc.nQueries {
			q := queries[qi*tc.dim : (qi+1)*tc.dim]
			want := bruteForce(data, tc.dim, q, tc.k)
			got, err := f.Search(ctx, q, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			sameRanking(t, got, want, data, tc.dim, q)
			if !slices.Equal(got, batch[qi]) {
				t.Fatalf("seed %d query %d: SearchBatch %v differs from Search %v", tc.seed, qi, batch[qi], got)
			}
		}
	}
}

func TestTiesAndZeroVectors(t *testing.T) {
	ctx := context.Background()
	// Rows 1, 3 and 4 point the same way (different lengths normalise to the
	// same unit vector); row 2 is zero; rows 0 and 5 are orthogonal to q.
	f := NewFlat(3)
	if err := f.Add([]float32{
		0, 1, 0,
		2, 0, 0,
		0, 0, 0,
		4, 0, 0,
		1, 0, 0,
		0, 0, 1,
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		q    []float32
		k    int
		want []Hit
	}{
		{"ties by smaller id", []float32{3, 0, 0}, 4, []Hit{{1, 1}, {3, 1}, {4, 1}, {0, 0}}},
		{"all", []float32{1, 0, 0}, 10, []Hit{{1, 1}, {3, 1}, {4, 1}, {0, 0}, {2, 0}, {5, 0}}},
		{"k cuts inside a tie", []float32{1, 0, 0}, 2, []Hit{{1, 1}, {3, 1}}},
		{"zero query scores 0 everywhere", []float32{0, 0, 0}, 3, []Hit{{0, 0}, {1, 0}, {2, 0}}},
		{"negative scores rank last", []float32{-1, 0, 0}, 6, []Hit{{0, 0}, {2, 0}, {5, 0}, {1, -1}, {3, -1}, {4, -1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.Search(ctx, tc.q, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTiesAcrossSplitScan(t *testing.T) {
	// Enough identical rows that Search splits the scan: the merged result
	// must still prefer the smallest IDs.
	const dim, n = 64, parallelMin/64 + 100
	data := make([]float32, n*dim)
	for i := range n {
		data[i*dim] = 1
	}
	f := NewFlat(dim)
	if err := f.Add(data); err != nil {
		t.Fatal(err)
	}
	q := make([]float32, dim)
	q[0] = 1
	got, err := f.Search(context.Background(), q, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []Hit{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	f := NewFlat(3)
	if err := f.Add([]float32{1, 2, 3, 4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	nan := float32(math.NaN())
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"add ragged", func() error { return f.Add([]float32{1, 2}) }, "not a multiple of dimension 3"},
		{"add NaN", func() error { return f.Add([]float32{1, nan, 0}) }, "non-finite"},
		{"query dim", func() error { _, err := f.Search(ctx, []float32{1, 2}, 1); return err }, "query has dimension 2, index has 3"},
		{"k zero", func() error { _, err := f.Search(ctx, []float32{1, 2, 3}, 0); return err }, "k = 0"},
		{"k negative", func() error { _, err := f.Search(ctx, []float32{1, 2, 3}, -1); return err }, "k = -1"},
		{"query NaN", func() error { _, err := f.Search(ctx, []float32{nan, 0, 0}, 1); return err }, "non-finite"},
		{"batch ragged", func() error { _, err := f.SearchBatch(ctx, []float32{1, 2, 3, 4}, 1); return err }, "not a multiple"},
		{"batch k", func() error { _, err := f.SearchBatch(ctx, []float32{1, 2, 3}, 0); return err }, "query 0: vecindex: k = 0"},
		{"dim zero", func() error { return NewFlat(0).Add(nil) }, "dimension 0 out of range"},
		{"dim zero search", func() error { _, err := NewFlat(0).Search(ctx, nil, 1); return err }, "dimension 0 out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if f.Len() != 2 {
		t.Errorf("failed Adds changed Len to %d", f.Len())
	}
}

func TestEmptyAndCancelled(t *testing.T) {
	f := NewFlat(2)
	got, err := f.Search(context.Background(), []float32{1, 0}, 3)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty index: %v, %v", got, err)
	}
	if err := f.Add(randVecs(1, 100, 2)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Search(ctx, []float32{1, 0}, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("Search with cancelled ctx: err = %v", err)
	}
	if _, err := f.SearchBatch(ctx, []float32{1, 0}, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("SearchBatch with cancelled ctx: err = %v", err)
	}
}

func TestAddNormalisesAndAppends(t *testing.T) {
	f := NewFlat(2)
	if err := f.Add([]float32{3, 4}); err != nil {
		t.Fatal(err)
	}
	if err := f.Add([]float32{0, 0, 0, 5}); err != nil {
		t.Fatal(err)
	}
	want := []float32{0.6, 0.8, 0, 0, 0, 1}
	if !slices.Equal(f.data, want) {
		t.Errorf("data = %v, want %v", f.data, want)
	}
	got, err := f.Search(context.Background(), []float32{0, 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Hit{{2, 1}}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v (IDs continue across Adds)", got, want)
	}
}

func TestConcurrentSearchAndAdd(t *testing.T) {
	const dim = 8
	f := NewFlat(dim)
	base := randVecs(9, 500, dim)
	if err := f.Add(base); err != nil {
		t.Fatal(err)
	}
	q := base[:dim]
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for range 50 {
				hits, err := f.Search(context.Background(), q, 1)
				if err != nil {
					t.Error(err)
					return
				}
				if hits[0].ID != 0 {
					t.Errorf("goroutine %d: best hit %v, want id 0", g, hits[0])
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			if err := f.Add(randVecs(uint64(100+i), 10, dim)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	if f.Len() != 700 {
		t.Errorf("Len = %d, want 700", f.Len())
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ n, dim int }{{0, 5}, {1, 1}, {37, 13}} {
		f := NewFlat(tc.dim)
		if err := f.Add(randVecs(uint64(tc.n), tc.n, tc.dim)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "idx.stemvx")
		if err := f.Save(path); err != nil {
			t.Fatal(err)
		}
		g, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if g.Dim() != tc.dim || g.Len() != tc.n || !slices.Equal(g.data, f.data) {
			t.Fatalf("n=%d dim=%d: loaded dim %d len %d, data equal %v", tc.n, tc.dim, g.Dim(), g.Len(), slices.Equal(g.data, f.data))
		}
		st, _ := os.Stat(path)
		if want := int64(headerSize + 4*tc.n*tc.dim + trailerSize); st.Size() != want {
			t.Errorf("file size %d, want %d", st.Size(), want)
		}
	}
}

func TestLoadCorrupt(t *testing.T) {
	dir := t.TempDir()
	f := NewFlat(4)
	if err := f.Add(randVecs(3, 10, 4)); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.stemvx")
	if err := f.Save(good); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(fn func([]byte) []byte) []byte { return fn(slices.Clone(b)) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "bad magic"},
		{"wrong magic", mutate(func(c []byte) []byte { c[0] = 'X'; return c }), "bad magic"},
		{"header only", b[:headerSize], "truncated"},
		{"truncated data", b[:len(b)-7], "truncated"},
		{"missing checksum", b[:len(b)-1], "truncated"},
		{"trailing bytes", append(slices.Clone(b), 0), "trailing bytes"},
		{"flipped data byte", mutate(func(c []byte) []byte { c[headerSize+5] ^= 0x10; return c }), "checksum mismatch"},
		{"flipped checksum", mutate(func(c []byte) []byte { c[len(c)-1] ^= 1; return c }), "checksum mismatch"},
		{"version", mutate(func(c []byte) []byte { c[6] = 9; return c }), "unsupported version 9"},
		{"huge count", mutate(func(c []byte) []byte { c[19] = 0x7f; return c }), "exceeds the int32 ID space"},
		{"count lies", mutate(func(c []byte) []byte { c[12] = 200; return c }), "truncated"},
		{"zero dim", mutate(func(c []byte) []byte { clear(c[8:12]); return c }), "dimension 0 out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.stemvx")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want it to name %s and contain %q", err, path, tc.want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestDotMatchesGo(t *testing.T) {
	for _, dim := range []int{1, 3, 8, 15, 100, 384} {
		a, b := randVecs(uint64(dim), 1, dim), randVecs(uint64(dim)+1, 1, dim)
		x, y := dot(a, b), dotGo(a, b)
		if math.Abs(float64(x-y)) > 1e-4*math.Sqrt(float64(dim)) {
			t.Errorf("dim %d: dot %v, dotGo %v", dim, x, y)
		}
	}
}

func TestTopKHeap(t *testing.T) {
	// Feed hits in a scrambled order (as the split-scan merge does) and check
	// the heap keeps exactly the best k under the (score desc, id asc) order.
	r := rand.New(rand.NewPCG(5, 5))
	for trial := range 50 {
		n, k := 1+r.IntN(60), 1+r.IntN(20)
		hits := make([]Hit, n)
		for i := range hits {
			hits[i] = Hit{ID: int32(i), Score: float32(r.IntN(5))} // many ties
		}
		r.Shuffle(n, func(i, j int) { hits[i], hits[j] = hits[j], hits[i] })
		tk := newTopK(k)
		for _, h := range hits {
			tk.push(h)
		}
		want := slices.Clone(hits)
		slices.SortFunc(want, func(a, b Hit) int {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		want = want[:min(k, n)]
		if got := tk.sorted(); !slices.Equal(got, want) {
			t.Fatalf("trial %d: got %v, want %v", trial, got, want)
		}
	}
}
