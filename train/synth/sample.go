package synth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/train/dataset"
)

// DefaultSkipEntity matches Freebase machine ids such as "m.0abc12" and
// "g.11b6x_": CVT and other unnamed nodes, which no question can name and
// no placeholder can be verbalised from.
const DefaultSkipEntity = `^[mg]\.[0-9a-z_]+$`

// Defaults for Options' zero values.
const (
	DefaultMaxAnswers = 20
	DefaultMaxFanout  = 10000
	DefaultPerSeed    = 1
	DefaultTries      = 4
)

// Reasons a walk yields no item, as counted in Stats.Dropped.
const (
	// DropDeadEnd: the walk met a node with no edge it may take before
	// reaching its drawn length.
	DropDeadEnd = "dead end"
	// DropDuplicate: the walk sampled the same triples as an earlier
	// sample of the same seed.
	DropDuplicate = "duplicate"
	// DropTooManyAnswers: the chain's pattern reaches more than
	// Options.MaxAnswers entities from the seed.
	DropTooManyAnswers = "too many answers"
	// DropFanout: an intermediate step of the pattern reaches more than
	// Options.MaxFanout entities; the answers are not computed.
	DropFanout = "fan-out"
	// DropInvalid: the item failed validation (a triple the KG lacks, or
	// an answer slot outside the answers). It means a bug, so it is
	// counted rather than hidden.
	DropInvalid = "invalid"
)

var dropNames = [...]string{DropDeadEnd, DropDuplicate, DropTooManyAnswers, DropFanout, DropInvalid}

const (
	dDeadEnd = iota
	dDuplicate
	dTooMany
	dFanout
	dInvalid
	nDrops
)

// Options shape the sampled subgraphs. Zero values take the defaults.
type Options struct {
	// Hops is the distribution of chain lengths: Hops[i] is the relative
	// weight of a walk of i+1 hops. Nil means 1, 2 and 3 hops equally often
	// (see ParseHops).
	Hops []float64
	// Branch is the probability that a node the chain leaves (the seed or
	// an intermediate node, not the answer) grows one extra edge, making
	// the subgraph a tree. The extra edge is a sibling of the chain's step
	// from that node (same relation and direction, another neighbour) when
	// there is one, so at the last step it shows a second answer;
	// otherwise any edge to an entity not yet in the sample. The branch's
	// far end gets its own placeholder; the answers follow the chain alone.
	Branch float64
	// PerSeed is how many items are kept per seed entity (default 1);
	// Tries*PerSeed walks are tried at most.
	PerSeed int
	// Tries is the number of walks tried per wanted item (default 4).
	Tries int
	// Max caps the number of items Run emits; 0 means no cap.
	Max int
	// MaxAnswers drops items whose pattern reaches more answers (default
	// 20).
	MaxAnswers int
	// MaxFanout drops items whose pattern reaches more entities at an
	// intermediate step (default 10,000), which bounds the work per item.
	MaxFanout int
	// SkipEntity, when set, names entities a walk never enters and that are
	// never seeds (DefaultSkipEntity: Freebase machine ids).
	SkipEntity *regexp.Regexp
	// SkipRelation, when set, names relations a walk never takes.
	SkipRelation *regexp.Regexp
	// MaxDegree, when positive, makes entities with more edges hubs: a walk
	// may end on a hub (a gender, a genre) but never starts from or passes
	// through one, since the pattern would fan out to most of the graph.
	MaxDegree int
	// Seed makes sampling repeatable.
	Seed uint64
	// Workers is the number of sampling goroutines (default GOMAXPROCS).
	Workers int
}

// ParseHops reads a walk-length spec: "2", "1-3" (uniform over the range)
// or weights "1:0.2,2:0.5,3:0.3". It returns Options.Hops.
func ParseHops(s string) ([]float64, error) {
	bad := func(why string) error {
		return fmt.Errorf("hops %q: %s (want 2, 1-3 or 1:0.2,2:0.8)", s, why)
	}
	const maxHops = 8
	if s == "" {
		return nil, bad("empty")
	}
	if lo, hi, ok := strings.Cut(s, "-"); ok {
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a < 1 || b < a || b > maxHops {
			return nil, bad(fmt.Sprintf("a range of hop counts between 1 and %d", maxHops))
		}
		w := make([]float64, b)
		for i := a - 1; i < b; i++ {
			w[i] = 1
		}
		return w, nil
	}
	var w []float64
	for part := range strings.SplitSeq(s, ",") {
		k, v, weighted := strings.Cut(strings.TrimSpace(part), ":")
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 || n > maxHops {
			return nil, bad(fmt.Sprintf("hop count %q is not between 1 and %d", k, maxHops))
		}
		x := 1.0
		if weighted {
			if x, err = strconv.ParseFloat(v, 64); err != nil || x < 0 || x != x {
				return nil, bad(fmt.Sprintf("weight %q is not a non-negative number", v))
			}
		}
		if len(w) < n {
			w = append(w, make([]float64, n-len(w))...)
		}
		w[n-1] += x
	}
	total := 0.0
	for _, x := range w {
		total += x
	}
	if total <= 0 || total > 1e300 {
		return nil, bad("no positive weight")
	}
	return w, nil
}

// Stats count what a run did.
type Stats struct {
	// Seeds is the number of seed entities walked from.
	Seeds int `json:"seeds"`
	// NoEdges counts seeds with no edge a walk may take (all skipped, or
	// none at all).
	NoEdges int `json:"no_edges"`
	// Attempts is the number of walks tried.
	Attempts int `json:"attempts"`
	// Kept is the number of items emitted.
	Kept int `json:"kept"`
	// Dropped counts the walks that gave no item, by reason (Drop...).
	Dropped map[string]int `json:"dropped"`
}

// Sampler draws random-walk subgraphs from one graph. It is safe for
// concurrent use.
type Sampler struct {
	g       *kg.Graph
	opt     Options
	cum     []float64 // cumulative hop weights
	skipEnt []bool
	skipRel []bool
	heads   []int32
	rels    []int32
	tails   []int32
}

// NewSampler checks opt, fills in its defaults and evaluates the skip rules
// once per entity and relation.
func NewSampler(g *kg.Graph, opt Options) (*Sampler, error) {
	if g == nil {
		return nil, fmt.Errorf("synth: no graph")
	}
	if opt.Hops == nil {
		opt.Hops = []float64{1, 1, 1}
	}
	if !(opt.Branch >= 0 && opt.Branch <= 1) {
		return nil, fmt.Errorf("synth: branch probability %v is not in [0, 1]", opt.Branch)
	}
	if opt.PerSeed == 0 {
		opt.PerSeed = DefaultPerSeed
	}
	if opt.Tries == 0 {
		opt.Tries = DefaultTries
	}
	if opt.MaxAnswers == 0 {
		opt.MaxAnswers = DefaultMaxAnswers
	}
	if opt.MaxFanout == 0 {
		opt.MaxFanout = DefaultMaxFanout
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.PerSeed < 0 || opt.Tries < 0 || opt.Max < 0 || opt.MaxAnswers < 0 || opt.MaxFanout < 0 || opt.MaxDegree < 0 {
		return nil, fmt.Errorf("synth: negative count in options %+v", opt)
	}
	s := &Sampler{g: g, opt: opt}
	total := 0.0
	for _, w := range opt.Hops {
		if !(w >= 0) {
			return nil, fmt.Errorf("synth: hop weight %v is negative", w)
		}
		total += w
		s.cum = append(s.cum, total)
	}
	if !(total > 0) {
		return nil, fmt.Errorf("synth: no positive hop weight in %v", opt.Hops)
	}
	s.skipEnt = make([]bool, g.NumEntities())
	if opt.SkipEntity != nil {
		for e := range s.skipEnt {
			s.skipEnt[e] = opt.SkipEntity.MatchString(g.EntityName(int32(e)))
		}
	}
	s.skipRel = make([]bool, g.NumRelations())
	if opt.SkipRelation != nil {
		for r := range s.skipRel {
			s.skipRel[r] = opt.SkipRelation.MatchString(g.RelationName(int32(r)))
		}
	}
	s.heads, s.rels, s.tails = g.Columns()
	return s, nil
}

// Options returns the options in effect, defaults filled in.
func (s *Sampler) Options() Options { return s.opt }

func (s *Sampler) hub(e int32) bool {
	return s.opt.MaxDegree > 0 && s.g.Degree(e) > s.opt.MaxDegree
}

// eligibleSeed: a seed is never skipped, never a hub.
func (s *Sampler) eligibleSeed(e int32) bool {
	return !s.skipEnt[e] && !s.hub(e) && s.g.Degree(e) > 0
}

// Seeds returns up to n seed entities (all when n <= 0) in an order drawn
// from Options.Seed, so that a capped run spreads over the whole graph.
// Skipped entities and hubs are left out.
func (s *Sampler) Seeds(n int) []int32 {
	ids := make([]int32, s.g.NumEntities())
	for i := range ids {
		ids[i] = int32(i)
	}
	rng := rand.New(rand.NewPCG(s.opt.Seed, 0x5eed5))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	out := ids[:0]
	for _, e := range ids {
		if n > 0 && len(out) == n {
			break
		}
		if s.eligibleSeed(e) {
			out = append(out, e)
		}
	}
	return slices.Clip(out)
}

// SeedsByName returns the entities with these names, in order, without
// repeats; names the graph lacks are returned in unknown.
func (s *Sampler) SeedsByName(names []string) (ids []int32, unknown []string) {
	seen := make(map[int32]bool, len(names))
	for _, n := range names {
		e, ok := s.g.Entity(n)
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		if !seen[e] {
			seen[e] = true
			ids = append(ids, e)
		}
	}
	return ids, unknown
}

// step is one edge of the chain: triple tri, walked tail -> head when inv.
type step struct {
	tri int32
	inv bool
}

// scratch is one worker's reusable memory, so the walk allocates nothing.
type scratch struct {
	rng      *rand.Rand
	pcg      *rand.PCG
	nodes    []int32 // chain nodes; nodes[0] is the seed
	steps    []step
	branches []int32 // branch triple ids
	ents     []int32 // every entity of the sample
	cand     []int32
	front    []int32
	next     []int32
	sig      []int32   // sorted triple ids of the sample
	sigs     [][]int32 // signatures kept for the current seed
	phEnts   []int32   // entities in placeholder order
	counts   [nDrops]int
	attempts int
	noEdges  int
}

func (s *Sampler) newScratch() *scratch {
	pcg := rand.NewPCG(0, 0)
	return &scratch{pcg: pcg, rng: rand.New(pcg)}
}

// other returns the far end of triple t from the walk's side.
func (s *Sampler) other(st step) int32 {
	if st.inv {
		return s.heads[st.tri]
	}
	return s.tails[st.tri]
}

func has(xs []int32, x int32) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// edgeAt returns the p-th edge of cur: its out-edges, then its in-edges.
func edgeAt(out, in []int32, p int) step {
	if p < len(out) {
		return step{tri: out[p]}
	}
	return step{tri: in[p-len(out)], inv: true}
}

// chainOK reports whether the chain may take st as its next edge.
func (s *Sampler) chainOK(sc *scratch, st step, last bool) bool {
	if s.skipRel[s.rels[st.tri]] {
		return false
	}
	o := s.other(st)
	return !s.skipEnt[o] && !has(sc.nodes, o) && (last || !s.hub(o))
}

// branchOK reports whether st may hang off the tree as a leaf.
func (s *Sampler) branchOK(sc *scratch, st step) bool {
	if s.skipRel[s.rels[st.tri]] {
		return false
	}
	o := s.other(st)
	return !s.skipEnt[o] && !has(sc.ents, o)
}

// pick draws uniformly among the edges of row set (out, in) that ok
// accepts: a few rejection draws first (most edges are acceptable), then
// a scan.
func (s *Sampler) pick(sc *scratch, out, in []int32, ok func(step) bool) (step, bool) {
	d := len(out) + len(in)
	if d == 0 {
		return step{}, false
	}
	for range min(d, 8) {
		if st := edgeAt(out, in, sc.rng.IntN(d)); ok(st) {
			return st, true
		}
	}
	sc.cand = sc.cand[:0]
	for p := range d {
		if ok(edgeAt(out, in, p)) {
			sc.cand = append(sc.cand, int32(p))
		}
	}
	if len(sc.cand) == 0 {
		return step{}, false
	}
	return edgeAt(out, in, int(sc.cand[sc.rng.IntN(len(sc.cand))])), true
}

func (s *Sampler) drawHops(rng *rand.Rand) int {
	x := rng.Float64() * s.cum[len(s.cum)-1]
	for i, c := range s.cum {
		if x < c {
			return i + 1
		}
	}
	return len(s.cum)
}

// walk draws one sample from seed into sc; it returns a drop index or -1.
func (s *Sampler) walk(sc *scratch, seed int32) int {
	h := s.drawHops(sc.rng)
	sc.nodes = append(sc.nodes[:0], seed)
	sc.steps = sc.steps[:0]
	sc.branches = sc.branches[:0]
	for i := range h {
		last := i == h-1
		cur := sc.nodes[i]
		st, ok := s.pick(sc, s.g.Out(cur), s.g.In(cur), func(st step) bool { return s.chainOK(sc, st, last) })
		if !ok {
			return dDeadEnd
		}
		sc.steps = append(sc.steps, st)
		sc.nodes = append(sc.nodes, s.other(st))
	}
	sc.ents = append(sc.ents[:0], sc.nodes...)
	if s.opt.Branch > 0 {
		for i := range h {
			if sc.rng.Float64() >= s.opt.Branch {
				continue
			}
			cur := sc.nodes[i]
			ok := func(st step) bool { return s.branchOK(sc, st) }
			// A sibling (same relation, same direction as the chain's
			// step) shows one more entity matching the pattern so far:
			// at the last step, a second answer.
			cs := sc.steps[i]
			rel := s.rels[cs.tri]
			var st step
			var found bool
			if cs.inv {
				st, found = s.pick(sc, nil, s.g.InRel(cur, rel), ok)
			} else {
				st, found = s.pick(sc, s.g.OutRel(cur, rel), nil, ok)
			}
			if !found {
				st, found = s.pick(sc, s.g.Out(cur), s.g.In(cur), ok)
			}
			if found {
				sc.branches = append(sc.branches, st.tri)
				sc.ents = append(sc.ents, s.other(st))
			}
		}
	}
	// The same triples twice from one seed teach nothing new.
	sc.sig = sc.sig[:0]
	for _, st := range sc.steps {
		sc.sig = append(sc.sig, st.tri)
	}
	sc.sig = append(sc.sig, sc.branches...)
	slices.Sort(sc.sig)
	for _, prev := range sc.sigs {
		if slices.Equal(prev, sc.sig) {
			return dDuplicate
		}
	}
	return s.answers(sc, seed)
}

// answers follows the chain's relations and directions from seed and
// leaves the entities reached (seed excluded, sorted by id) in sc.front.
// It returns a drop index or -1.
func (s *Sampler) answers(sc *scratch, seed int32) int {
	sc.front = append(sc.front[:0], seed)
	for i, st := range sc.steps {
		rel := s.rels[st.tri]
		last := i == len(sc.steps)-1
		limit := s.opt.MaxFanout
		if last {
			limit = s.opt.MaxAnswers + 1 // the seed may be among them
		}
		sc.next = sc.next[:0]
		for _, n := range sc.front {
			if st.inv {
				for _, t := range s.g.InRel(n, rel) {
					sc.next = append(sc.next, s.heads[t])
				}
			} else {
				for _, t := range s.g.OutRel(n, rel) {
					sc.next = append(sc.next, s.tails[t])
				}
			}
			if len(sc.next) > limit {
				slices.Sort(sc.next)
				sc.next = slices.Compact(sc.next)
			}
			if len(sc.next) > limit {
				if last {
					return dTooMany
				}
				return dFanout
			}
		}
		slices.Sort(sc.next)
		sc.next = slices.Compact(sc.next)
		sc.front, sc.next = sc.next, sc.front
	}
	if i, ok := slices.BinarySearch(sc.front, seed); ok {
		sc.front = slices.Delete(sc.front, i, i+1)
	}
	if len(sc.front) > s.opt.MaxAnswers {
		return dTooMany
	}
	return -1
}

// validate checks what the item will claim: every triple is in the KG and
// the walk's end is among the answers.
func (s *Sampler) validate(sc *scratch) bool {
	for _, st := range sc.steps {
		if !s.g.HasTriple(s.heads[st.tri], s.rels[st.tri], s.tails[st.tri]) {
			return false
		}
	}
	for _, t := range sc.branches {
		if !s.g.HasTriple(s.heads[t], s.rels[t], s.tails[t]) {
			return false
		}
	}
	end := sc.nodes[len(sc.nodes)-1]
	_, ok := slices.BinarySearch(sc.front, end)
	return ok && len(sc.front) > 0
}

// item builds the dataset item of the sample in sc.
func (s *Sampler) item(sc *scratch, seed int32, k int) dataset.Item {
	g := s.g
	seedName := g.EntityName(seed)
	n := len(sc.steps) + len(sc.branches)
	it := dataset.Item{
		ID:       seedName + "#" + strconv.Itoa(k),
		Source:   "synth",
		Entities: []string{seedName},
		Answers:  make([]string, len(sc.front)),
		Triples:  make([][3]string, 0, n),
		Masked:   make([][3]string, 0, n),
		Hops:     len(sc.steps),
		Strategy: dataset.StrategyFor(len(sc.front)),
	}
	for i, e := range sc.front {
		it.Answers[i] = g.EntityName(e)
	}
	slices.Sort(it.Answers)
	sc.phEnts = sc.phEnts[:0]
	mask := func(e int32) string {
		if e == seed {
			return seedName
		}
		for i, p := range sc.phEnts {
			if p == e {
				return placeholder(i + 1)
			}
		}
		sc.phEnts = append(sc.phEnts, e)
		return placeholder(len(sc.phEnts))
	}
	add := func(t int32) {
		h, r, tl := s.heads[t], s.rels[t], s.tails[t]
		it.Triples = append(it.Triples, [3]string{g.EntityName(h), g.RelationName(r), g.EntityName(tl)})
		it.Masked = append(it.Masked, [3]string{mask(h), g.RelationName(r), mask(tl)})
	}
	for _, st := range sc.steps {
		add(st.tri)
	}
	for _, t := range sc.branches {
		add(t)
	}
	it.Placeholders = make(map[string]string, len(sc.phEnts))
	for i, e := range sc.phEnts {
		it.Placeholders[placeholder(i+1)] = g.EntityName(e)
	}
	it.AnswerSlot = mask(sc.nodes[len(sc.nodes)-1])
	it.SubgraphEntities = make([]string, len(sc.ents))
	for i, e := range sc.ents {
		it.SubgraphEntities[i] = g.EntityName(e)
	}
	slices.Sort(it.SubgraphEntities)
	return it
}

var placeholderNames = func() []string {
	out := make([]string, 33)
	for i := range out {
		out[i] = "[ENT" + strconv.Itoa(i) + "]"
	}
	return out
}()

// placeholder returns "[ENTn]".
func placeholder(n int) string {
	if n < len(placeholderNames) {
		return placeholderNames[n]
	}
	return "[ENT" + strconv.Itoa(n) + "]"
}

// hasEdge reports whether any walk may leave seed.
func (s *Sampler) hasEdge(seed int32) bool {
	for _, row := range [2][]int32{s.g.Out(seed), s.g.In(seed)} {
		for _, t := range row {
			o := s.tails[t]
			if o == seed {
				o = s.heads[t]
			}
			if !s.skipRel[s.rels[t]] && !s.skipEnt[o] && o != seed {
				return true
			}
		}
	}
	return false
}

// sampleSeed appends seed's items to dst.
func (s *Sampler) sampleSeed(sc *scratch, seed int32, dst []dataset.Item) []dataset.Item {
	if !s.hasEdge(seed) {
		sc.noEdges++
		return dst
	}
	// One stream per seed entity: the items of a seed do not depend on
	// which worker draws them or on the seeds before it.
	sc.pcg.Seed(s.opt.Seed, uint64(seed))
	sc.sigs = sc.sigs[:0]
	kept := 0
	for a := 0; a < s.opt.PerSeed*s.opt.Tries && kept < s.opt.PerSeed; a++ {
		sc.attempts++
		d := s.walk(sc, seed)
		if d < 0 && !s.validate(sc) {
			d = dInvalid
		}
		if d >= 0 {
			sc.counts[d]++
			continue
		}
		sc.sigs = append(sc.sigs, slices.Clone(sc.sig))
		dst = append(dst, s.item(sc, seed, kept))
		kept++
	}
	return dst
}

// Sample returns the items of one seed entity, as Run would emit them.
func (s *Sampler) Sample(seed int32) []dataset.Item {
	return s.sampleSeed(s.newScratch(), seed, nil)
}

type chunkResult struct {
	items    []dataset.Item
	counts   [nDrops]int
	attempts int
	noEdges  int
	seeds    int
}

// chunkSeeds is the number of seeds a worker takes at a time: large enough
// to amortise the hand-over, small enough to keep output flowing.
const chunkSeeds = 32

// Run samples from each seed in turn and calls fn with every item, in seed
// order, from one goroutine, until the seeds are used up, Options.Max items
// were emitted, fn returns an error or ctx is done. fn may keep the item.
func (s *Sampler) Run(ctx context.Context, seeds []int32, fn func(*dataset.Item) error) (Stats, error) {
	st := Stats{Dropped: map[string]int{}}
	nch := (len(seeds) + chunkSeeds - 1) / chunkSeeds
	workers := min(s.opt.Workers, max(nch, 1))
	window := 4 * workers
	sem := make(chan struct{}, window)
	slots := make([]chan chunkResult, window)
	for i := range slots {
		slots[i] = make(chan chunkResult, 1)
	}
	done := make(chan struct{})
	var (
		next atomic.Int64
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := s.newScratch()
			for {
				select {
				case sem <- struct{}{}:
				case <-done:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= nch {
					<-sem
					return
				}
				// Chunks claimed and not yet consumed number at most
				// window, so slot i%window is free.
				var res chunkResult
				for _, seed := range seeds[i*chunkSeeds : min((i+1)*chunkSeeds, len(seeds))] {
					if stop.Load() {
						break
					}
					res.items = s.sampleSeed(sc, seed, res.items)
					res.seeds++
				}
				res.counts, sc.counts = sc.counts, [nDrops]int{}
				res.attempts, sc.attempts = sc.attempts, 0
				res.noEdges, sc.noEdges = sc.noEdges, 0
				slots[i%window] <- res
			}
		}()
	}
	var err error
loop:
	for i := range nch {
		var res chunkResult
		select {
		case res = <-slots[i%window]:
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		}
		<-sem
		st.Seeds += res.seeds
		st.Attempts += res.attempts
		st.NoEdges += res.noEdges
		for d, n := range res.counts {
			if n > 0 {
				st.Dropped[dropNames[d]] += n
			}
		}
		for j := range res.items {
			if s.opt.Max > 0 && st.Kept >= s.opt.Max {
				break loop
			}
			if err = fn(&res.items[j]); err != nil {
				break loop
			}
			st.Kept++
		}
		if err = ctx.Err(); err != nil {
			break
		}
	}
	stop.Store(true)
	close(done)
	wg.Wait()
	return st, err
}
