package vecindex

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/stem-kgqa/stem/progress"
)

// IVF is an approximate index: an inverted file over a spherical k-means
// coarse quantiser. Every stored vector belongs to the list of its most
// similar centroid, and a query scans only the lists of its NProbe most
// similar centroids, so a search over N vectors reads about
// NList + NProbe*N/NList rows instead of N. Each list's vectors are one
// contiguous block, scanned with the same SIMD dot product as Flat.
//
// Results follow Flat's contract (cosine scores, best first, ties by smaller
// ID, min(k, Len) hits) except that a vector in an unprobed list can be
// missed; with NProbe = NList the results equal Flat's. An IVF is immutable
// once built, so it is safe for concurrent use without locks.
type IVF struct {
	dim    int
	nlist  int
	nprobe int
	// centroids is row-major nlist x dim, every row unit length.
	centroids []float32
	// start[l]..start[l+1]-1 are the rows of list l in data and ids; len
	// nlist+1 (len 0 for an empty index).
	start []int
	// data is row-major n x dim, unit-length (or zero) rows grouped by list
	// and in increasing ID order within a list.
	data []float32
	// ids[r] is the ID (the row number given to BuildIVF) of data row r.
	ids []int32
}

// Compile-time check that IVF satisfies Index.
var _ Index = (*IVF)(nil)

// IVFOptions tune BuildIVF; the zero value gives the defaults.
type IVFOptions struct {
	// NList is the number of lists (k-means clusters); 0 means DefaultNList.
	// It is capped at the number of vectors.
	NList int
	// NProbe is how many lists a search scans; 0 means DefaultNProbe. It is
	// capped at NList.
	NProbe int
	// Seed makes training deterministic: the same vectors, options and seed
	// give the same index, byte for byte.
	Seed uint64
	// Iterations of k-means; 0 means DefaultIterations.
	Iterations int
	// SamplePerList is how many training vectors k-means sees per list; 0
	// means DefaultSamplePerList.
	SamplePerList int
	// Log, when not nil, receives progress bars for training and assignment.
	Log io.Writer
}

// Defaults of IVFOptions.
const (
	// DefaultIterations of k-means: on entity-name vectors the assignment
	// stops changing noticeably after about 8 rounds.
	DefaultIterations = 10
	// DefaultSamplePerList training vectors per list: the usual 32-256
	// range of IVF literature, at its low end because training cost is
	// sample x nlist dot products and 32 per list already places centroids
	// well enough for recall (BenchmarkIVF).
	DefaultSamplePerList = 32
)

// DefaultNList is the number of lists for n vectors: 4*sqrt(n), the usual
// IVF rule (1M vectors: 4,000 lists of about 250). It balances the two
// costs of a search: comparing the query with every centroid (grows with
// nlist) and scanning the probed lists (shrinks with nlist).
func DefaultNList(n int) int {
	if n <= 0 {
		return 0
	}
	return min(n, max(1, int(math.Round(4*math.Sqrt(float64(n))))))
}

// DefaultNProbe is the number of lists a search scans when an index has
// nlist lists: 128, or nlist/32 when that is more. On structured entity-name
// vectors (BenchmarkIVF: n-gram encodings of synthetic names, 128 dims) the
// probes needed for recall@50 >= 0.95 stayed near 128 from 200k to 1M
// vectors. Measured at 1M (nlist 4,000, 2 shared cores), recall@50 and
// speedup over Flat by nprobe: 16: 0.845, 75x; 32: 0.883, 93x; 64: 0.929,
// 55x; 96: 0.945, 39x; 125: 0.956, 38x; 192: 0.973, 12x; 384: 0.984, 9x
// (times are noisy on a shared machine). nlist/32 keeps the probed share
// from shrinking for much larger indexes. Small indexes (nlist < 2,000,
// under about 250k vectors, where kgvec uses Flat anyway) need a larger
// share: 128 of 800 lists gave only 0.93 at 40k vectors, so they probe a
// quarter of their lists, which is still cheap at that size.
func DefaultNProbe(nlist int) int {
	if nlist <= 0 {
		return 0
	}
	if nlist < 2000 {
		return min(nlist, max(128, nlist/4))
	}
	return max(128, nlist/32)
}

// BuildIVF trains an IVF index over the row-major vectors vecs (len a
// multiple of dim; row i gets ID i). vecs is not modified. Rows are
// normalised as Flat.Add does; NaN or infinite values are rejected.
// Assignment of every vector to its list runs on GOMAXPROCS goroutines.
func BuildIVF(ctx context.Context, dim int, vecs []float32, opts IVFOptions) (*IVF, error) {
	if dim <= 0 || dim > MaxDim {
		return nil, fmt.Errorf("vecindex: ivf: dimension %d out of range 1..%d", dim, MaxDim)
	}
	if len(vecs)%dim != 0 {
		return nil, fmt.Errorf("vecindex: ivf: %d values is not a multiple of dimension %d", len(vecs), dim)
	}
	n := len(vecs) / dim
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("vecindex: ivf: %d vectors exceed the int32 ID space", n)
	}
	if opts.NList < 0 || opts.NProbe < 0 || opts.Iterations < 0 || opts.SamplePerList < 0 {
		return nil, fmt.Errorf("vecindex: ivf: negative option in %+v", opts)
	}
	for i, x := range vecs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("vecindex: ivf: row %d holds non-finite value %v", i/dim, x)
		}
	}
	ix := &IVF{dim: dim}
	if n == 0 {
		return ix, nil
	}
	unit := make([]float32, len(vecs))
	copy(unit, vecs)
	for r := 0; r < len(unit); r += dim {
		normalize(unit[r : r+dim])
	}
	nlist := opts.NList
	if nlist == 0 {
		nlist = DefaultNList(n)
	}
	nlist = min(nlist, n)
	nprobe := opts.NProbe
	if nprobe == 0 {
		nprobe = DefaultNProbe(nlist)
	}
	ix.nlist, ix.nprobe = nlist, min(nprobe, nlist)
	iters := cmp0(opts.Iterations, DefaultIterations)
	perList := cmp0(opts.SamplePerList, DefaultSamplePerList)

	cent, err := trainKMeans(ctx, unit, dim, nlist, iters, perList, opts.Seed, opts.Log)
	if err != nil {
		return nil, err
	}
	ix.centroids = cent

	var bar *progress.Bar
	if opts.Log != nil {
		bar = progress.New(opts.Log, "assigning vectors to lists", int64(n))
	}
	assign := make([]int32, n)
	if err := assignAll(ctx, unit, dim, cent, assign, bar); err != nil {
		return nil, err
	}
	bar.Finish()

	// Counting sort by list keeps IDs increasing within each list.
	ix.start = make([]int, nlist+1)
	for _, l := range assign {
		ix.start[l+1]++
	}
	for l := range nlist {
		ix.start[l+1] += ix.start[l]
	}
	next := make([]int, nlist)
	copy(next, ix.start[:nlist])
	ix.data = make([]float32, len(unit))
	ix.ids = make([]int32, n)
	for id, l := range assign {
		r := next[l]
		next[l]++
		copy(ix.data[r*dim:(r+1)*dim], unit[id*dim:(id+1)*dim])
		ix.ids[r] = int32(id)
	}
	return ix, nil
}

// cmp0 returns v, or def when v is zero.
func cmp0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// trainKMeans runs spherical k-means (centroid = normalised mean of its
// members, similarity = dot product) on a seeded random sample of the unit
// rows of data and returns nlist unit centroids, row-major.
func trainKMeans(ctx context.Context, data []float32, dim, nlist, iters, perList int, seed uint64, log io.Writer) ([]float32, error) {
	n := len(data) / dim
	rng := rand.New(rand.NewPCG(seed, 0x5eed1f))
	// Sample without replacement: a partial Fisher-Yates over row numbers.
	ns := min(n, nlist*perList)
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	for i := range ns {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	sample := make([]float32, ns*dim)
	for i, r := range perm[:ns] {
		copy(sample[i*dim:(i+1)*dim], data[int(r)*dim:(int(r)+1)*dim])
	}
	perm = nil
	// Start from nlist distinct sample rows (the sample is already in random
	// order); k-means++ seeding would cost another nlist passes.
	cent := make([]float32, nlist*dim)
	copy(cent, sample[:nlist*dim])

	var bar *progress.Bar
	if log != nil {
		bar = progress.New(log, fmt.Sprintf("training %d lists on %d vectors", nlist, ns), int64(iters))
	}
	assign := make([]int32, ns)
	sums := make([]float64, nlist*dim)
	counts := make([]int, nlist)
	for range iters {
		if err := assignAll(ctx, sample, dim, cent, assign, nil); err != nil {
			return nil, err
		}
		clear(sums)
		clear(counts)
		for i, l := range assign {
			counts[l]++
			s := sums[int(l)*dim : (int(l)+1)*dim]
			for j, x := range sample[i*dim : (i+1)*dim] {
				s[j] += float64(x)
			}
		}
		for l := range nlist {
			c := cent[l*dim : (l+1)*dim]
			if counts[l] == 0 {
				// An empty list is re-seeded with a random sample row so
				// that no list is wasted; the next round fills it.
				r := rng.IntN(ns)
				copy(c, sample[r*dim:(r+1)*dim])
				continue
			}
			s := sums[l*dim : (l+1)*dim]
			var norm float64
			for _, x := range s {
				norm += x * x
			}
			if norm == 0 {
				continue // only zero vectors: keep the old centroid
			}
			inv := 1 / math.Sqrt(norm)
			for j, x := range s {
				c[j] = float32(x * inv)
			}
		}
		bar.Add(1)
	}
	bar.Finish()
	return cent, nil
}

// assignBlock is how many rows a worker of assignAll claims at a time: big
// enough that the shared counter is rarely touched, small enough for even
// load and frequent context checks.
const assignBlock = 1024

// assignAll sets assign[i] to the most similar centroid of row i of data
// (ties to the smaller list), on GOMAXPROCS goroutines: this is the bulk of
// building (n x nlist dot products) and splits perfectly.
func assignAll(ctx context.Context, data []float32, dim int, cent []float32, assign []int32, bar *progress.Bar) error {
	n := len(data) / dim
	nlist := len(cent) / dim
	blocks := (n + assignBlock - 1) / assignBlock
	workers := max(1, min(runtime.GOMAXPROCS(0), blocks))
	var next atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				b := int(next.Add(1) - 1)
				if b >= blocks {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[w] = fmt.Errorf("vecindex: ivf: build: %w", err)
					return
				}
				lo, hi := b*assignBlock, min((b+1)*assignBlock, n)
				for r := lo; r < hi; r++ {
					row := data[r*dim : (r+1)*dim : (r+1)*dim]
					best, bestS := 0, float32(math.Inf(-1))
					for l := range nlist {
						if s := dot(row, cent[l*dim:(l+1)*dim:(l+1)*dim]); s > bestS {
							best, bestS = l, s
						}
					}
					assign[r] = int32(best)
				}
				bar.Add(int64(hi - lo))
			}
		})
	}
	wg.Wait()
	return firstErr(errs)
}

// Dim returns the vector length.
func (x *IVF) Dim() int { return x.dim }

// Len returns the number of stored vectors.
func (x *IVF) Len() int { return len(x.ids) }

// NList returns the number of lists.
func (x *IVF) NList() int { return x.nlist }

// NProbe returns how many lists Search scans.
func (x *IVF) NProbe() int { return x.nprobe }

// WithNProbe returns the index with Search scanning nprobe lists (capped at
// NList; nprobe <= 0 keeps the current value). It shares the stored vectors
// with x, so it costs nothing and both stay usable.
func (x *IVF) WithNProbe(nprobe int) *IVF {
	y := *x
	if nprobe > 0 {
		y.nprobe = min(nprobe, x.nlist)
	}
	return &y
}

// Search returns the k stored vectors most similar to query among those in
// the NProbe lists nearest to it, best first, ties broken by smaller ID. If
// those lists hold fewer than min(k, Len) vectors, further lists are probed
// in order of similarity until they do, so the result length is as Flat's.
func (x *IVF) Search(ctx context.Context, query []float32, k int) ([]Hit, error) {
	return x.SearchProbe(ctx, query, k, x.nprobe)
}

// SearchProbe is Search scanning nprobe lists instead of NProbe (capped at
// NList): the knob that trades speed for recall per query. nprobe = NList
// gives exactly Flat's results.
func (x *IVF) SearchProbe(ctx context.Context, query []float32, k, nprobe int) ([]Hit, error) {
	q, err := prepareQuery(x.dim, query, k)
	if err != nil {
		return nil, err
	}
	k = min(k, len(x.ids))
	if k == 0 {
		return []Hit{}, nil
	}
	if nprobe <= 0 {
		return nil, fmt.Errorf("vecindex: nprobe = %d, want nprobe >= 1", nprobe)
	}
	return x.search(ctx, q, k, min(nprobe, x.nlist))
}

// search answers the unit query q, 1 <= k <= Len, 1 <= nprobe <= nlist.
func (x *IVF) search(ctx context.Context, q []float32, k, nprobe int) ([]Hit, error) {
	// Rank centroids with the same heap as results: list number as ID, so
	// equal centroid scores are probed in list order.
	probe := x.nearestLists(q, nprobe)
	for len(probe) < x.nlist && x.rows(probe) < k {
		// Too few candidates for k hits: probe twice as many lists. The
		// ranking is deterministic, so the first lists stay the same.
		probe = x.nearestLists(q, min(2*len(probe), x.nlist))
	}
	parts := 1
	if x.rows(probe)*x.dim >= parallelMin {
		// As Flat does: a scan this large pays for a goroutine per core.
		parts = min(runtime.GOMAXPROCS(0), len(probe))
	}
	if parts <= 1 {
		t := newTopK(k)
		if err := x.scanLists(ctx, q, probe, t); err != nil {
			return nil, err
		}
		return t.sorted(), nil
	}
	tops := make([]*topK, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		tops[p] = newTopK(k)
		// Interleaved lists give every part a share of the best lists and
		// about the same number of rows.
		mine := make([]Hit, 0, len(probe)/parts+1)
		for i := p; i < len(probe); i += parts {
			mine = append(mine, probe[i])
		}
		wg.Go(func() { errs[p] = x.scanLists(ctx, q, mine, tops[p]) })
	}
	wg.Wait()
	if err := firstErr(errs); err != nil {
		return nil, err
	}
	return mergeTops(tops), nil
}

// rows is the number of vectors in the lists of probe.
func (x *IVF) rows(probe []Hit) int {
	n := 0
	for _, p := range probe {
		n += x.start[p.ID+1] - x.start[p.ID]
	}
	return n
}

// scanLists feeds t with the scores of q against every vector of the lists
// of probe (list number in ID), checking ctx between lists.
func (x *IVF) scanLists(ctx context.Context, q []float32, probe []Hit, t *topK) error {
	dim := x.dim
	for _, p := range probe {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("vecindex: search: %w", err)
		}
		lo, hi := x.start[p.ID], x.start[p.ID+1]
		ids := x.ids[lo:hi]
		block := x.data[lo*dim : hi*dim]
		for i, id := range ids {
			s := dot(q, block[i*dim:(i+1)*dim:(i+1)*dim])
			// Lists are not in ID order, so an equal score may still win
			// on ID: only strictly lower scores are skipped here.
			if len(t.h) == t.k && s < t.h[0].Score {
				continue
			}
			t.push(Hit{ID: id, Score: s})
		}
	}
	return nil
}

// nearestLists returns the n lists whose centroids are most similar to q,
// best first (ID = list number).
func (x *IVF) nearestLists(q []float32, n int) []Hit {
	dim := x.dim
	c := newTopK(n)
	for l := range x.nlist {
		s := dot(q, x.centroids[l*dim:(l+1)*dim:(l+1)*dim])
		if len(c.h) == c.k && s <= c.h[0].Score {
			continue // lists come in increasing order: the kept one wins ties
		}
		c.push(Hit{ID: int32(l), Score: s})
	}
	return c.sorted()
}

// SearchBatch answers len(queries)/Dim row-major queries at once, spreading
// them over GOMAXPROCS goroutines. Result i belongs to query i and is what
// Search would return for it.
func (x *IVF) SearchBatch(ctx context.Context, queries []float32, k int) ([][]Hit, error) {
	if x.dim <= 0 || x.dim > MaxDim {
		return nil, fmt.Errorf("vecindex: dimension %d out of range 1..%d", x.dim, MaxDim)
	}
	if len(queries)%x.dim != 0 {
		return nil, fmt.Errorf("vecindex: search batch: %d values is not a multiple of dimension %d", len(queries), x.dim)
	}
	nq := len(queries) / x.dim
	out := make([][]Hit, nq)
	workers := min(runtime.GOMAXPROCS(0), nq)
	var next atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= nq {
					return
				}
				hits, err := x.Search(ctx, queries[i*x.dim:(i+1)*x.dim], k)
				if err != nil {
					errs[w] = fmt.Errorf("query %d: %w", i, err)
					return
				}
				out[i] = hits
			}
		})
	}
	wg.Wait()
	if err := firstErr(errs); err != nil {
		return nil, err
	}
	return out, nil
}
