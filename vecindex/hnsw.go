package vecindex

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/stem-kgqa/stem/progress"
)

// HNSW is an approximate index: a hierarchical navigable small world graph
// (Malkov & Yashunin, 2016). Every vector is a node; a node drawn at level L
// has neighbour lists on layers 0..L, and a search descends greedily from the
// single top-level entry point to layer 0, where a best-first search keeps
// the EfSearch best nodes seen. A query therefore costs a few thousand dot
// products instead of IVF's scan of a share of all vectors.
//
// Results follow Flat's contract (cosine scores of unit vectors, best first,
// ties by smaller ID, min(k, Len) hits) except that a stored vector the
// search never reaches can be missed; with ef >= Len on a connected graph the
// results equal Flat's. An HNSW is immutable once built, so it is safe for
// concurrent use without locks; per-search scratch comes from a sync.Pool.
type HNSW struct {
	dim      int
	m        int // neighbour capacity on layers >= 1
	m0       int // neighbour capacity on layer 0 (2*m)
	efC      int // efConstruction the graph was built with
	efSearch int // default ef of Search
	entry    int32
	maxLevel int
	// data is row-major n x dim, unit-length (or zero) rows in ID order.
	data []float32
	// levels[i] is the top layer of node i.
	levels []uint8
	// l0 holds a block of m0+1 values per node: the neighbour count, then
	// m0 neighbour slots. A fixed stride keeps a node's layer-0 list at a
	// computable place with no per-node allocation.
	l0 []int32
	// upper holds, for every node with level >= 1, level blocks of m+1
	// values (count, then m slots) for layers 1..level; uoff[i] is the start
	// of node i's first block (meaningless for level-0 nodes). Only about
	// 1/(m-1) of the nodes have upper layers, so they do not get l0's stride.
	upper []int32
	uoff  []int32
	// same[i] is the next larger ID whose vector is identical to node i's,
	// or -1. Only the smallest ID of each group of identical vectors is in
	// the graph: a group of identical vectors would otherwise fill each
	// other's neighbour lists (they are all most similar to one another)
	// and form a clique cut off from the rest, and Flat's tie rule (the
	// smallest IDs of a group) is met by walking the chain.
	same []int32

	pool sync.Pool // *hnswScratch
}

// Compile-time check that HNSW satisfies Index.
var _ Index = (*HNSW)(nil)

// HNSWOptions tune BuildHNSW; the zero value gives the defaults.
type HNSWOptions struct {
	// M is the number of neighbours per node on layers >= 1 (2*M on layer
	// 0); 0 means DefaultM.
	M int
	// EfConstruction is the size of the candidate list while inserting; 0
	// means DefaultEfConstruction.
	EfConstruction int
	// EfSearch is the size of the candidate list Search keeps (at least k);
	// 0 means DefaultEfSearch.
	EfSearch int
	// Seed draws the node levels. With Workers = 1 the same vectors, options
	// and seed give the same index, byte for byte.
	Seed uint64
	// Workers is how many goroutines insert nodes; 0 means GOMAXPROCS. With
	// more than one the graph depends on thread timing, so it is not byte
	// for byte reproducible (its quality is the same).
	Workers int
	// Log, when not nil, receives a progress bar for the build.
	Log io.Writer
}

// Defaults of HNSWOptions.
const (
	// DefaultM is the usual HNSW choice for 100-1000 dimensional data: 16
	// neighbours per upper layer and 32 on layer 0.
	DefaultM = 16
	// DefaultEfConstruction is enough candidates for the neighbour heuristic
	// to find diverse links; larger values cost build time roughly linearly.
	DefaultEfConstruction = 100
	// DefaultEfSearch is chosen from BenchmarkHNSW at 1M structured
	// entity-name vectors (2 shared cores; Flat 15.1 ms/query). recall@50
	// and speedup over Flat by ef: 64: 0.912, 74x; 96: 0.945, 50x; 128:
	// 0.952, 38x; 160: 0.956, 31x; 200: 0.958, 26x; 256: 0.959, 22x. Recall
	// flattens above 128, so 160 buys a little margin over 0.95.
	DefaultEfSearch = 160
)

// maxHNSWLevel caps drawn levels: with mL = 1/ln(M) a level above 31 has
// probability M^-31, and the cap keeps levels in a byte and loaded files
// from claiming absurd heights.
const maxHNSWLevel = 31

// BuildHNSW builds an HNSW graph over the row-major vectors data (len a
// multiple of dim; row i gets ID i). data is not modified. Rows are
// normalised as Flat.Add does; NaN or infinite values are rejected.
func BuildHNSW(ctx context.Context, dim int, data []float32, opts HNSWOptions) (*HNSW, error) {
	if dim <= 0 || dim > MaxDim {
		return nil, fmt.Errorf("vecindex: hnsw: dimension %d out of range 1..%d", dim, MaxDim)
	}
	if len(data)%dim != 0 {
		return nil, fmt.Errorf("vecindex: hnsw: %d values is not a multiple of dimension %d", len(data), dim)
	}
	n := len(data) / dim
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("vecindex: hnsw: %d vectors exceed the int32 ID space", n)
	}
	if opts.M < 0 || opts.EfConstruction < 0 || opts.EfSearch < 0 || opts.Workers < 0 {
		return nil, fmt.Errorf("vecindex: hnsw: negative option in %+v", opts)
	}
	if opts.M == 1 || opts.M > 1<<12 {
		return nil, fmt.Errorf("vecindex: hnsw: M = %d, want 2..%d", opts.M, 1<<12)
	}
	for i, v := range data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("vecindex: hnsw: row %d holds non-finite value %v", i/dim, v)
		}
	}
	m := cmp0(opts.M, DefaultM)
	x := &HNSW{
		dim:      dim,
		m:        m,
		m0:       2 * m,
		efC:      cmp0(opts.EfConstruction, DefaultEfConstruction),
		efSearch: cmp0(opts.EfSearch, DefaultEfSearch),
	}
	x.data = make([]float32, len(data))
	copy(x.data, data)
	for r := 0; r < len(x.data); r += dim {
		normalize(x.data[r : r+dim])
	}
	// Levels are drawn up front, in ID order, so they depend on the seed
	// alone and upper-layer storage can be laid out before any insertion.
	rng := rand.New(rand.NewPCG(opts.Seed, 0x45a5))
	mL := 1 / math.Log(float64(m))
	x.levels = make([]uint8, n)
	for i := range x.levels {
		lvl := int(-math.Log(1-rng.Float64()) * mL)
		x.levels[i] = uint8(min(lvl, maxHNSWLevel))
	}
	x.same = make([]int32, n)
	dup := x.chainDuplicates()
	if err := x.layout(); err != nil {
		return nil, err
	}
	if n == 0 {
		return x, nil
	}
	x.entry, x.maxLevel = 0, int(x.levels[0])

	var bar *progress.Bar
	if opts.Log != nil {
		bar = progress.New(opts.Log, fmt.Sprintf("building HNSW graph of %d vectors", n), int64(n))
	}
	b := &hnswBuilder{x: x, locks: make([]sync.Mutex, n)}
	b.entry, b.maxLevel = x.entry, x.maxLevel
	workers := cmp0(opts.Workers, runtime.GOMAXPROCS(0))
	const block = 256
	blocks := (n - 1 + block - 1) / block
	workers = max(1, min(workers, blocks))
	var next atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			s := x.newScratch(n)
			for {
				bl := int(next.Add(1) - 1)
				if bl >= blocks {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[w] = fmt.Errorf("vecindex: hnsw: build: %w", err)
					return
				}
				// Node 0 is the initial entry point; insert 1..n-1.
				lo, hi := 1+bl*block, min(1+(bl+1)*block, n)
				for id := lo; id < hi; id++ {
					if !dup[id] {
						b.insert(int32(id), s)
					}
				}
				bar.Add(int64(hi - lo))
			}
		})
	}
	wg.Wait()
	if err := firstErr(errs); err != nil {
		return nil, err
	}
	bar.Add(1)
	bar.Finish()
	x.entry, x.maxLevel = b.entry, b.maxLevel
	x.connect(dup)
	return x, nil
}

// connect makes every node of the graph reachable on layer 0 from the
// entry point. An insert can prune away every link into a node (concurrent
// inserts make it likelier): no search could then return that node, and
// a search with ef >= Len would no longer match Flat. Each unreachable node
// gets a link from its most similar reachable neighbour with a free slot,
// or, when all are full, replaces that neighbour's least similar link; a
// node orphaned by a replacement is linked on the next pass. The passes are
// bounded; the count of links added is returned for tests.
func (x *HNSW) connect(dup []bool) int {
	n := len(x.levels)
	if n == 0 {
		return 0
	}
	reach := make([]bool, n)
	var queue []int32
	visit := func(from int32) {
		if reach[from] {
			return
		}
		reach[from] = true
		queue = append(queue[:0], from)
		for len(queue) > 0 {
			v := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			bl := x.links(v, 0)
			for _, w := range bl[1 : 1+bl[0]] {
				if !reach[w] {
					reach[w] = true
					queue = append(queue, w)
				}
			}
		}
	}
	added := 0
	for range 8 {
		clear(reach)
		visit(x.entry)
		missing := false
		for u := range int32(n) {
			if dup[u] || reach[u] {
				continue
			}
			missing = true
			from := x.entry
			best, free := float32(math.Inf(-1)), false
			ul := x.links(u, 0)
			for _, v := range ul[1 : 1+ul[0]] {
				if !reach[v] {
					continue
				}
				vf := int(x.links(v, 0)[0]) < x.m0
				if sc := dot(x.vec(u), x.vec(v)); (vf && !free) || (vf == free && sc > best) {
					from, best, free = v, sc, vf
				}
			}
			bl := x.links(from, 0)
			if c := int(bl[0]); c < x.m0 {
				bl[1+c] = u
				bl[0]++
			} else {
				worst, at := float32(math.Inf(1)), 1
				for i, w := range bl[1 : 1+c] {
					if sc := dot(x.vec(from), x.vec(w)); sc < worst {
						worst, at = sc, 1+i
					}
				}
				bl[at] = u
			}
			added++
			visit(u)
		}
		if !missing {
			break
		}
	}
	return added
}

// chainDuplicates links every group of identical rows of x.data into x.same
// (in increasing ID order), sets the level of every row but the group's
// first to 0, and reports which rows are such duplicates. Row 0 is never
// one.
func (x *HNSW) chainDuplicates() []bool {
	n := len(x.same)
	dup := make([]bool, n)
	last := make(map[uint64]int32, n) // hash -> last ID of its first group
	first := make(map[uint64]int32, n)
	for i := range x.same {
		x.same[i] = -1
		v := x.vec(int32(i))
		h := uint64(14695981039346656037)
		for _, f := range v {
			h ^= uint64(math.Float32bits(f))
			h *= 1099511628211
		}
		f, ok := first[h]
		if !ok {
			first[h], last[h] = int32(i), int32(i)
			continue
		}
		if !slices.Equal(x.vec(f), v) {
			continue // a hash collision: stays a graph node of its own
		}
		x.same[last[h]] = int32(i)
		last[h] = int32(i)
		dup[i] = true
		x.levels[i] = 0
	}
	return dup
}

// layout allocates (or, after loading, sizes) the neighbour storage from
// x.levels and sets uoff.
func (x *HNSW) layout() error {
	n := len(x.levels)
	x.uoff = make([]int32, n)
	var total int64
	for i, l := range x.levels {
		x.uoff[i] = int32(total)
		total += int64(l) * int64(x.m+1)
		if total > math.MaxInt32 {
			return fmt.Errorf("vecindex: hnsw: upper layers need %d slots, more than int32 offsets hold", total)
		}
	}
	if x.l0 == nil {
		x.l0 = make([]int32, n*(x.m0+1))
		x.upper = make([]int32, total)
	}
	if len(x.l0) != n*(x.m0+1) || int64(len(x.upper)) != total {
		return fmt.Errorf("vecindex: hnsw: neighbour storage does not match the levels")
	}
	return nil
}

// links returns the block of node id on layer: element 0 is the neighbour
// count, elements 1.. the neighbour slots.
func (x *HNSW) links(id int32, layer int) []int32 {
	if layer == 0 {
		o := int(id) * (x.m0 + 1)
		return x.l0[o : o+x.m0+1 : o+x.m0+1]
	}
	o := int(x.uoff[id]) + (layer-1)*(x.m+1)
	return x.upper[o : o+x.m+1 : o+x.m+1]
}

// vec returns the unit vector of node id.
func (x *HNSW) vec(id int32) []float32 {
	o := int(id) * x.dim
	return x.data[o : o+x.dim : o+x.dim]
}

// hnswScratch is the per-search working memory: reused through a pool so a
// search allocates nothing per visited node.
type hnswScratch struct {
	visited []uint32 // visited[i] == gen means node i was seen this search
	gen     uint32
	cand    candHeap
	res     topK
	sorted  []Hit
	nb      []int32
	eps     []Hit // entry points of the next layer
	chosen  []Hit // the new node's neighbours while they are linked back
	pick    []Hit
	pruned  []Hit
}

func (x *HNSW) newScratch(n int) *hnswScratch {
	return &hnswScratch{visited: make([]uint32, n)}
}

// reset starts a new search: bumping the generation forgets every visit
// without clearing the slice, except once every 2^32 searches.
func (s *hnswScratch) reset() {
	s.gen++
	if s.gen == 0 {
		clear(s.visited)
		s.gen = 1
	}
}

// candHeap is a binary max-heap of hits, best (highest score, then smaller
// ID) at the root: the frontier of the best-first search.
type candHeap []Hit

func (h *candHeap) push(v Hit) {
	a := append(*h, v)
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !worse(a[p], a[i]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
	*h = a
}

func (h *candHeap) pop() Hit {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && worse(a[l], a[r]) {
			c = r
		}
		if !worse(a[i], a[c]) {
			break
		}
		a[i], a[c] = a[c], a[i]
		i = c
	}
	*h = a
	return top
}

// expandCheck is how many node expansions a search makes between context
// checks: a few microseconds of work, so cancellation is prompt while the
// check stays negligible.
const expandCheck = 256

// searchLayer is the paper's SEARCH-LAYER: a best-first search on layer from
// the entry points eps that leaves the ef best nodes found in s.res. locks is
// nil for searches of a built index; during a parallel build every read of a
// neighbour list takes that node's lock.
func (x *HNSW) searchLayer(ctx context.Context, q []float32, eps []Hit, ef, layer int, s *hnswScratch, locks []sync.Mutex) error {
	s.reset()
	s.cand = s.cand[:0]
	s.res.h, s.res.k = s.res.h[:0], ef
	for _, e := range eps {
		if s.visited[e.ID] == s.gen {
			continue
		}
		s.visited[e.ID] = s.gen
		s.cand.push(e)
		s.res.push(e)
	}
	for expanded := 1; len(s.cand) > 0; expanded++ {
		c := s.cand.pop()
		if len(s.res.h) == s.res.k && worse(c, s.res.h[0]) {
			break // the best candidate left cannot improve the results
		}
		if expanded%expandCheck == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("vecindex: search: %w", err)
			}
		}
		for _, e := range x.neighbours(c.ID, layer, s, locks) {
			if s.visited[e] == s.gen {
				continue
			}
			s.visited[e] = s.gen
			h := Hit{ID: e, Score: dot(q, x.vec(e))}
			if len(s.res.h) < s.res.k || worse(s.res.h[0], h) {
				s.cand.push(h)
				s.res.push(h)
			}
		}
	}
	return nil
}

// neighbours returns id's neighbour list at layer. During a parallel
// build (locks not nil) the list may change under us, so it is copied
// into s.nb under id's lock; otherwise the stored list itself is returned.
func (x *HNSW) neighbours(id int32, layer int, s *hnswScratch, locks []sync.Mutex) []int32 {
	if locks == nil {
		bl := x.links(id, layer)
		return bl[1 : 1+bl[0]]
	}
	locks[id].Lock()
	bl := x.links(id, layer)
	s.nb = append(s.nb[:0], bl[1:1+bl[0]]...)
	locks[id].Unlock()
	return s.nb
}

// greedy descends from ep through layers top..bottom+1, moving to the best
// neighbour while it improves on the current node (the paper's search with
// ef = 1, without the bookkeeping).
func (x *HNSW) greedy(q []float32, ep Hit, top, bottom int, s *hnswScratch, locks []sync.Mutex) Hit {
	for layer := top; layer > bottom; layer-- {
		for changed := true; changed; {
			changed = false
			for _, e := range x.neighbours(ep.ID, layer, s, locks) {
				h := Hit{ID: e, Score: dot(q, x.vec(e))}
				if worse(ep, h) {
					ep, changed = h, true
				}
			}
		}
	}
	return ep
}

// sortedResults copies s.res into s.sorted, best first.
func (s *hnswScratch) sortedResults() []Hit {
	s.sorted = append(s.sorted[:0], s.res.h...)
	slices.SortFunc(s.sorted, func(a, b Hit) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	return s.sorted
}

// hnswBuilder is the shared state of a (possibly parallel) build.
type hnswBuilder struct {
	x     *HNSW
	locks []sync.Mutex // one per node, guarding its neighbour lists
	// mu guards entry and maxLevel. An insertion that raises maxLevel holds
	// it throughout, as hnswlib does, so no other insertion starts from a
	// half-linked new top node; that happens about log_M(n) times.
	mu       sync.Mutex
	entry    int32
	maxLevel int
}

// insert adds node id to the graph (the paper's INSERT with the
// neighbour-selection heuristic).
func (b *hnswBuilder) insert(id int32, s *hnswScratch) {
	x := b.x
	q := x.vec(id)
	level := int(x.levels[id])
	b.mu.Lock()
	ep, top := b.entry, b.maxLevel
	raise := level > top
	if !raise {
		b.mu.Unlock()
	}
	cur := x.greedy(q, Hit{ID: ep, Score: dot(q, x.vec(ep))}, top, level, s, b.locks)
	eps := append(s.eps[:0], cur)
	for layer := min(level, top); layer >= 0; layer-- {
		_ = x.searchLayer(context.Background(), q, eps, x.efC, layer, s, b.locks)
		// eps for the next layer is every candidate found here, as in the
		// paper; link reuses the other scratch buffers, so copy first.
		eps = append(eps[:0], s.sortedResults()...)
		s.chosen = append(s.chosen[:0], x.selectNeighbours(eps, x.m, s)...)
		b.locks[id].Lock()
		bl := x.links(id, layer)
		bl[0] = int32(len(s.chosen))
		for i, h := range s.chosen {
			bl[1+i] = h.ID
		}
		b.locks[id].Unlock()
		capacity := x.m
		if layer == 0 {
			capacity = x.m0
		}
		for _, h := range s.chosen {
			b.link(h.ID, id, h.Score, layer, capacity, s)
		}
	}
	s.eps = eps
	if raise {
		b.entry, b.maxLevel = id, level
		b.mu.Unlock()
	}
}

// link adds the edge from -> to (similarity score) on layer, shrinking from's
// list with the heuristic when it is full.
func (b *hnswBuilder) link(from, to int32, score float32, layer, capacity int, s *hnswScratch) {
	x := b.x
	b.locks[from].Lock()
	defer b.locks[from].Unlock()
	bl := x.links(from, layer)
	n := int(bl[0])
	if n < capacity {
		bl[1+n] = to
		bl[0]++
		return
	}
	base := x.vec(from)
	cands := s.sorted[:0]
	cands = append(cands, Hit{ID: to, Score: score})
	for _, e := range bl[1 : 1+n] {
		cands = append(cands, Hit{ID: e, Score: dot(base, x.vec(e))})
	}
	slices.SortFunc(cands, func(a, c Hit) int {
		if worse(a, c) {
			return 1
		}
		if worse(c, a) {
			return -1
		}
		return 0
	})
	s.sorted = cands
	sel := x.selectNeighbours(cands, capacity, s)
	bl[0] = int32(len(sel))
	for i, h := range sel {
		bl[1+i] = h.ID
	}
}

// selectNeighbours is the paper's heuristic (algorithm 4) with
// keepPrunedConnections: from cands (best first, scores against the base
// node) it keeps a candidate only if it is more similar to the base than to
// every kept one, which spreads links over directions and keeps clusters
// connected; pruned candidates then fill any free slots, so nodes in dense
// regions still get m links. The result lives in s.pick until the next call.
func (x *HNSW) selectNeighbours(cands []Hit, m int, s *hnswScratch) []Hit {
	if len(cands) <= m {
		s.pick = append(s.pick[:0], cands...)
		return s.pick
	}
	sel := s.pick[:0]
	pruned := s.pruned[:0]
	for _, c := range cands {
		if len(sel) >= m {
			break
		}
		cv := x.vec(c.ID)
		good := true
		for _, r := range sel {
			if dot(cv, x.vec(r.ID)) > c.Score {
				good = false
				break
			}
		}
		if good {
			sel = append(sel, c)
		} else {
			pruned = append(pruned, c)
		}
	}
	for _, c := range pruned {
		if len(sel) >= m {
			break
		}
		sel = append(sel, c)
	}
	s.pick, s.pruned = sel, pruned
	return sel
}

// Dim returns the vector length.
func (x *HNSW) Dim() int { return x.dim }

// Len returns the number of stored vectors.
func (x *HNSW) Len() int { return len(x.levels) }

// M returns the neighbour capacity on layers >= 1 (layer 0 has 2*M).
func (x *HNSW) M() int { return x.m }

// EfConstruction returns the candidate list size the graph was built with.
func (x *HNSW) EfConstruction() int { return x.efC }

// EfSearch returns the candidate list size Search uses (raised to k when k
// is larger).
func (x *HNSW) EfSearch() int { return x.efSearch }

// Search returns the k stored vectors most similar to query among those the
// graph search reaches with ef = max(k, EfSearch), best first, ties broken
// by smaller ID.
func (x *HNSW) Search(ctx context.Context, query []float32, k int) ([]Hit, error) {
	return x.SearchEf(ctx, query, k, x.efSearch)
}

// SearchEf is Search keeping ef candidates instead of EfSearch (raised to k
// when smaller): the knob that trades speed for recall per query. ef >= Len
// visits every node reachable from the entry point.
func (x *HNSW) SearchEf(ctx context.Context, query []float32, k, ef int) ([]Hit, error) {
	q, err := prepareQuery(x.dim, query, k)
	if err != nil {
		return nil, err
	}
	if ef <= 0 {
		return nil, fmt.Errorf("vecindex: ef = %d, want ef >= 1", ef)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("vecindex: search: %w", err)
	}
	n := x.Len()
	k = min(k, n)
	if k == 0 {
		return []Hit{}, nil
	}
	if isZero(q) {
		// Every vector scores 0 against a zero query, so Flat's answer is
		// the k smallest IDs; a graph walk would return arbitrary ones.
		out := make([]Hit, k)
		for i := range out {
			out[i].ID = int32(i)
		}
		return out, nil
	}
	ef = max(ef, k)
	s, _ := x.pool.Get().(*hnswScratch)
	if s == nil || len(s.visited) != n {
		s = x.newScratch(n)
	}
	defer x.pool.Put(s)
	ep := x.greedy(q, Hit{ID: x.entry, Score: dot(q, x.vec(x.entry))}, x.maxLevel, 0, s, nil)
	s.eps = append(s.eps[:0], ep)
	if err := x.searchLayer(ctx, q, s.eps, ef, 0, s, nil); err != nil {
		return nil, err
	}
	// Expand every found node into its group of identical vectors: equal
	// scores, so the group's smallest IDs win ties, as in Flat.
	top := newTopK(k)
	for _, h := range s.res.h {
		for id := h.ID; id >= 0; id = x.same[id] {
			hit := Hit{ID: id, Score: h.Score}
			if len(top.h) == k && !worse(top.h[0], hit) {
				break // later IDs of the chain are larger: they lose too
			}
			top.push(hit)
		}
	}
	return top.sorted(), nil
}

// isZero reports whether every element of v is zero.
func isZero(v []float32) bool {
	for _, a := range v {
		if a != 0 {
			return false
		}
	}
	return true
}
