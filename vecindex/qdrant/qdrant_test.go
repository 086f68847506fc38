package qdrant

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stem-kgqa/stem/vecindex"
)

// randVecs returns n row-major random vectors of dimension dim; rows 1 and 2
// repeat row 0 so that searches meet ties.
func randVecs(n, dim int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	for row := 1; row < min(3, n); row++ {
		copy(v[row*dim:(row+1)*dim], v[:dim])
	}
	return v
}

func rows(v []float32, dim int) func(lo, hi int) ([]float32, error) {
	return func(lo, hi int) ([]float32, error) { return v[lo*dim : hi*dim], nil }
}

func name(i int) string { return fmt.Sprintf("entity %d", i) }

func open(t *testing.T, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestEnsureCreatesAndUploadsInBatches(t *testing.T) {
	f, cfg := startFake(t)
	s := open(t, cfg)
	const n, dim = 2500, 8
	vecs := randVecs(n, dim, 1)
	var prog [][2]int
	c, err := s.Ensure(context.Background(), "kg_a", dim, n, rows(vecs, dim), name,
		func(done, total int) { prog = append(prog, [2]int{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	if c.Dim() != dim || c.Len() != n || c.Name() != "kg_a" {
		t.Errorf("collection dim %d len %d name %s", c.Dim(), c.Len(), c.Name())
	}
	creates, upserts := f.requests()
	if len(creates) != 1 {
		t.Fatalf("%d creates, want 1", len(creates))
	}
	p := creates[0].GetVectorsConfig().GetParams()
	if p.Size != dim || p.Distance != pb.Distance_Cosine {
		t.Errorf("created with size %d distance %v, want %d Cosine", p.Size, p.Distance, dim)
	}
	var sizes []int
	next := uint64(0)
	for _, u := range upserts {
		sizes = append(sizes, len(u.Points))
		if u.Wait == nil || !*u.Wait {
			t.Errorf("upsert without wait")
		}
		for _, pt := range u.Points {
			if id := pt.GetId().GetNum(); id != next {
				t.Fatalf("point id %d, want %d", id, next)
			}
			if got := pt.Payload["name"].GetStringValue(); got != name(int(next)) {
				t.Fatalf("point %d payload name %q", next, got)
			}
			got := pt.GetVectors().GetVector().GetDense().GetData()
			if !equal(got, vecs[int(next)*dim:int(next+1)*dim]) {
				t.Fatalf("point %d vector differs", next)
			}
			next++
		}
	}
	if fmt.Sprint(sizes) != "[1000 1000 500]" {
		t.Errorf("upsert sizes %v, want [1000 1000 500]", sizes)
	}
	if fmt.Sprint(prog) != "[[1000 2500] [2000 2500] [2500 2500]]" {
		t.Errorf("progress %v", prog)
	}

	// A second Ensure finds the collection complete and uploads nothing.
	if _, err := s.Ensure(context.Background(), "kg_a", dim, n, rows(vecs, dim), name, nil); err != nil {
		t.Fatal(err)
	}
	if f.count("Create") != 1 || f.count("Upsert") != 3 || f.count("Delete") != 0 {
		t.Errorf("re-Ensure: creates %d upserts %d deletes %d, want 1 3 0", f.count("Create"), f.count("Upsert"), f.count("Delete"))
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEnsureRecreatesWrongDimension(t *testing.T) {
	f, cfg := startFake(t)
	s := open(t, cfg)
	ctx := context.Background()
	if _, err := s.Ensure(ctx, "kg", 4, 10, rows(randVecs(10, 4, 2), 4), nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ensure(ctx, "kg", 8, 10, rows(randVecs(10, 8, 2), 8), nil, nil); err != nil {
		t.Fatal(err)
	}
	creates, _ := f.requests()
	if f.count("Delete") != 1 || len(creates) != 2 {
		t.Fatalf("deletes %d creates %d, want 1 2", f.count("Delete"), len(creates))
	}
	if got := creates[1].GetVectorsConfig().GetParams().GetSize(); got != 8 {
		t.Errorf("collection dim %d after Ensure, want 8", got)
	}
}

func TestEnsureRecreatesPartialUpload(t *testing.T) {
	f, cfg := startFake(t)
	cfg.BatchSize = 4
	s := open(t, cfg)
	ctx := context.Background()
	vecs := randVecs(10, 3, 3)
	// The third batch fails for good: the collection is left with 8 points.
	f.set(func() { f.fail["Upsert"] = []codes.Code{codes.OK, codes.OK, codes.InvalidArgument} })
	if _, err := s.Ensure(ctx, "kg", 3, 10, rows(vecs, 3), nil, nil); err == nil {
		t.Fatal("Ensure succeeded despite a failed upsert")
	}
	if got := f.points("kg"); got != 8 {
		t.Fatalf("%d points after the failed upload, want 8", got)
	}
	if _, err := s.Ensure(ctx, "kg", 3, 10, rows(vecs, 3), nil, nil); err != nil {
		t.Fatal(err)
	}
	if f.count("Delete") != 1 || f.points("kg") != 10 {
		t.Errorf("deletes %d points %d, want 1 10", f.count("Delete"), f.points("kg"))
	}
}

func TestEnsureBadInput(t *testing.T) {
	_, cfg := startFake(t)
	s := open(t, cfg)
	ctx := context.Background()
	nan := randVecs(5, 2, 4)
	nan[7] = float32(math.NaN())
	cases := map[string]func() error{
		"dim 0": func() error { _, err := s.Ensure(ctx, "a", 0, 1, rows(nan, 2), nil, nil); return err },
		"n<0":   func() error { _, err := s.Ensure(ctx, "a", 2, -1, rows(nan, 2), nil, nil); return err },
		"name":  func() error { _, err := s.Ensure(ctx, "a/b", 2, 5, rows(nan, 2), nil, nil); return err },
		"nil":   func() error { _, err := s.Ensure(ctx, "a", 2, 5, nil, nil, nil); return err },
		"NaN":   func() error { _, err := s.Ensure(ctx, "b", 2, 5, rows(nan, 2), nil, nil); return err },
		"short": func() error {
			_, err := s.Ensure(ctx, "c", 2, 5, func(lo, hi int) ([]float32, error) { return nil, nil }, nil, nil)
			return err
		},
		"source": func() error {
			_, err := s.Ensure(ctx, "d", 2, 5, func(lo, hi int) ([]float32, error) { return nil, errors.New("boom") }, nil, nil)
			return err
		},
	}
	for name, f := range cases {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSearchMatchesFlat checks the vecindex.Index contract against Flat:
// same ids in the same order (ties included), scores within 1e-5.
func TestSearchMatchesFlat(t *testing.T) {
	_, cfg := startFake(t)
	s := open(t, cfg)
	ctx := context.Background()
	const n, dim = 300, 16
	vecs := randVecs(n, dim, 5)
	copy(vecs[10*dim:11*dim], make([]float32, dim)) // a zero row, as Flat allows
	c, err := s.Ensure(ctx, "flat", dim, n, rows(vecs, dim), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	flat := vecindex.NewFlat(dim)
	if err := flat.Add(vecs); err != nil {
		t.Fatal(err)
	}
	queries := randVecs(8, dim, 6)
	copy(queries[dim:2*dim], vecs[:dim]) // query 1 hits the tied rows 0, 1, 2
	for qi := range 8 {
		q := queries[qi*dim : (qi+1)*dim]
		for _, k := range []int{1, 2, 5, 50, n, n + 10} {
			want, err := flat.Search(ctx, q, k)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Search(ctx, q, k)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("q%d k=%d: %d hits, want %d", qi, k, len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID || math.Abs(float64(got[i].Score-want[i].Score)) > 1e-5 {
					t.Fatalf("q%d k=%d hit %d: %+v, want %+v", qi, k, i, got[i], want[i])
				}
			}
		}
	}
	// A zero query scores 0 everywhere; Flat then returns the smallest ids.
	zero := make([]float32, dim)
	want, _ := flat.Search(ctx, zero, 3)
	got, err := c.Search(ctx, zero, 3)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("zero query: %v %v, want %v", got, err, want)
	}
}

func TestSearchRejectsBadQueries(t *testing.T) {
	f, cfg := startFake(t)
	s := open(t, cfg)
	ctx := context.Background()
	c, err := s.Ensure(ctx, "q", 4, 5, rows(randVecs(5, 4, 7), 4), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]struct {
		q []float32
		k int
	}{
		"dim": {make([]float32, 3), 1},
		"k=0": {[]float32{1, 0, 0, 0}, 0},
		"NaN": {[]float32{float32(math.NaN()), 0, 0, 0}, 1},
		"Inf": {[]float32{float32(math.Inf(1)), 0, 0, 0}, 1},
	}
	for name, b := range bad {
		if _, err := c.Search(ctx, b.q, b.k); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if f.count("Search") != 0 {
		t.Errorf("bad queries reached the server %d times", f.count("Search"))
	}
	empty, err := s.Ensure(ctx, "empty", 4, 0, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := empty.Search(ctx, []float32{1, 0, 0, 0}, 3); err != nil || len(hits) != 0 {
		t.Errorf("empty collection: %v %v", hits, err)
	}
}

func TestRetryTransientThenSuccess(t *testing.T) {
	f, cfg := startFake(t)
	s := open(t, cfg)
	var waits []time.Duration
	s.sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	ctx := context.Background()
	c, err := s.Ensure(ctx, "r", 2, 3, rows(randVecs(3, 2, 8), 2), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.set(func() {
		f.fail["Search"] = []codes.Code{codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded}
	})
	if _, err := c.Search(ctx, []float32{1, 0}, 2); err != nil {
		t.Fatal(err)
	}
	if got := f.count("Search"); got != 4 {
		t.Errorf("%d search calls, want 4", got)
	}
	if fmt.Sprint(waits) != "[1ms 2ms 4ms]" {
		t.Errorf("backoff waits %v, want [1ms 2ms 4ms]", waits)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	f, cfg := startFake(t)
	s := open(t, cfg)
	s.sleep = func(context.Context, time.Duration) error { return nil }
	f.set(func() {
		f.fail["CollectionExists"] = []codes.Code{codes.Unavailable, codes.Unavailable, codes.Unavailable, codes.Unavailable, codes.Unavailable}
	})
	_, err := s.Ensure(context.Background(), "b", 2, 1, rows([]float32{1, 2}, 2), nil, nil)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("error %v, want Unavailable", err)
	}
	if got := f.count("CollectionExists"); got != 4 {
		t.Errorf("%d calls, want 1 + MaxRetries = 4", got)
	}
}

func TestNoRetryOnInvalidArgument(t *testing.T) {
	f, cfg := startFake(t)
	s := open(t, cfg)
	ctx := context.Background()
	c, err := s.Ensure(ctx, "coll_x", 2, 3, rows(randVecs(3, 2, 9), 2), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []codes.Code{codes.InvalidArgument, codes.NotFound} {
		f.set(func() { f.fail["Search"] = []codes.Code{code} })
		before := f.count("Search")
		_, err = c.Search(ctx, []float32{1, 0}, 1)
		if status.Code(err) != code {
			t.Fatalf("error %v, want %v", err, code)
		}
		if got := f.count("Search") - before; got != 1 {
			t.Errorf("%v: %d calls, want 1", code, got)
		}
		if msg := err.Error(); !strings.Contains(msg, cfg.Addr()) || !strings.Contains(msg, "coll_x") {
			t.Errorf("error %q does not name host and collection", msg)
		}
	}
}

func TestPerCallTimeout(t *testing.T) {
	f, cfg := startFake(t)
	cfg.Timeout = 50 * time.Millisecond
	cfg.MaxRetries = 1
	s := open(t, cfg)
	c, err := s.Ensure(context.Background(), "t", 2, 3, rows(randVecs(3, 2, 10), 2), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.set(func() { f.hang["Search"] = true })
	start := time.Now()
	_, err = c.Search(context.Background(), []float32{1, 0}, 1)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("error %v, want DeadlineExceeded", err)
	}
	if got := f.count("Search"); got != 2 {
		t.Errorf("%d calls, want 2 (timeout is retried once)", got)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v", el)
	}
}

func TestContextCancelStopsRetrying(t *testing.T) {
	f, cfg := startFake(t)
	cfg.Backoff = time.Hour // a retry would hang the test
	s := open(t, cfg)
	c, err := s.Ensure(context.Background(), "cx", 2, 3, rows(randVecs(3, 2, 11), 2), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.set(func() { f.hang["Search"] = true })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = c.Search(ctx, []float32{1, 0}, 1)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want context.DeadlineExceeded", err)
	}
	f.set(func() { f.hang["Search"] = false })
	f.set(func() { f.fail["Search"] = []codes.Code{codes.Unavailable} })
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	start := time.Now()
	if _, err := c.Search(ctx2, []float32{1, 0}, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want context.DeadlineExceeded during backoff", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("backoff ignored the context: %v", el)
	}
}

func TestAPIKeyFromEnvironment(t *testing.T) {
	f, cfg := startFake(t)
	cfg.APIKeyEnv = "STEM_TEST_QDRANT_KEY"
	t.Setenv(cfg.APIKeyEnv, "")
	if _, err := Open(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), cfg.APIKeyEnv) {
		t.Fatalf("unset key: error %v", err)
	}
	t.Setenv(cfg.APIKeyEnv, "s3cret")
	open(t, cfg)
	f.mu.Lock()
	keys := slices.Clone(f.apiKeys)
	f.mu.Unlock()
	if len(keys) != 1 || keys[0] != "s3cret" {
		t.Errorf("server saw api keys %v", keys)
	}
}

func TestOpenUnreachable(t *testing.T) {
	_, cfg := startFake(t)
	cfg.Port = 1 // nothing listens there
	cfg.MaxRetries = -1
	_, err := Open(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("error %v, want one naming 127.0.0.1:1", err)
	}
}

func TestCollectionFor(t *testing.T) {
	_, cfg := startFake(t)
	s := open(t, cfg)
	if got, want := s.CollectionFor("k", "e"), CollectionName("k", "e"); got != want {
		t.Errorf("CollectionFor %q, want %q", got, want)
	}
	cfg.Collection = "mine"
	s2 := open(t, cfg)
	if got := s2.CollectionFor("k", "e"); got != "mine" {
		t.Errorf("CollectionFor with collection=mine: %q", got)
	}
}
