package chains

import (
	"math"
	"strings"

	"github.com/stem-kgqa/stem/kg"
)

// Defaults for Options' zero fields. Three hops covers PathQuestion's 2H and
// 3H paths and MetaQA's 1- to 3-hop questions; 64 chains a question keeps
// one chain for every answer of nearly all MetaQA Breadth questions while
// bounding the hub cases (a genre reached through hundreds of films).
const (
	DefaultMaxHops  = 3
	DefaultMaxPaths = 64
)

// Options bound the chain search.
type Options struct {
	// MaxHops is the longest chain, in triples (0 = DefaultMaxHops).
	MaxHops int
	// MaxPaths caps the chains kept per question (0 = DefaultMaxPaths).
	MaxPaths int
	// MinHops asks for chains of at least this many triples; 0 or 1
	// means the shortest chains. An answer nearer than MinHops gets
	// instead the non-backtracking walks (no triple walked twice in a
	// row; entities may repeat) of the smallest length from MinHops to
	// MaxHops that has any, and its shortest chains when none has. See
	// the package documentation.
	MinHops int
	// QuestionHops raises MinHops, question by question, to the length
	// of the question's gold path (benchmark.Question.Hops) in
	// Extractor.Extract: PathQuestion's 2H and 3H questions and MetaQA's
	// qtypes say how many hops the question asks for, and a shorter path
	// to the answer ("the gender of X's father" when X is male too) is
	// not the reasoning the question describes.
	QuestionHops bool
	// MaxPatterns caps the relation patterns an item's schema graph keeps
	// (0 = DefaultMaxPatterns; see Schema).
	MaxPatterns int
}

// WithDefaults returns o with zero (or negative) fields set to the defaults.
func (o Options) WithDefaults() Options {
	if o.MaxHops <= 0 {
		o.MaxHops = DefaultMaxHops
	}
	if o.MaxPaths <= 0 {
		o.MaxPaths = DefaultMaxPaths
	}
	if o.MaxPatterns <= 0 {
		o.MaxPatterns = DefaultMaxPatterns
	}
	return o
}

// Chain is one path of KG triples from a question entity to an answer.
type Chain struct {
	// Entities are the entities walked: Entities[0] is the question
	// entity, the last one the answer; len(Entities) == len(Triples)+1.
	// A shortest chain holds no entity twice; a closed walk or a walk of
	// Options.MinHops may.
	Entities []int32
	// Triples are KG triple ids; step i joins Entities[i] and
	// Entities[i+1], in either direction (see Forward).
	Triples []int32
}

// Len returns the chain's length in triples.
func (c Chain) Len() int { return len(c.Triples) }

// Start returns the question entity the chain leaves.
func (c Chain) Start() int32 { return c.Entities[0] }

// End returns the answer the chain reaches.
func (c Chain) End() int32 { return c.Entities[len(c.Entities)-1] }

// Forward reports whether step i follows its triple from head to tail; a
// self-loop counts as forward.
func (c Chain) Forward(g *kg.Graph, i int) bool { return g.Triple(c.Triples[i]).Head == c.Entities[i] }

// Result is what Finder.Find found for one question. Its slices are the
// Finder's scratch space: they are valid until the next call to Find.
type Result struct {
	// Chains are the kept chains, grouped by answer in the order the
	// answers were given, each answer's in search order.
	Chains []Chain
	// Found counts every chain of the kind kept (the shortest, or the
	// walks of the length a minimum hop count chose), kept or not,
	// saturating at math.MaxInt64; Capped counts those MaxPaths left out.
	Found, Capped int64
	// CappedAnswers counts reachable answers that kept no chain because
	// of the cap (more answers than MaxPaths).
	CappedAnswers int
	// Unreachable lists the answers with no chain within MaxHops: farther
	// away, in another component of the KG, not a KG entity id, or a
	// question entity with no closed walk back to itself.
	Unreachable []int32
}

// parent is one entry of an entity's parent list: the entity was reached
// from `from` through triple tr at its BFS distance; next links the list.
type parent struct{ from, tr, next int32 }

// Finder finds shortest chains in one graph. It keeps per-entity scratch
// arrays (marks reset by a generation counter, not cleared), parent lists
// in one flat slice and the found chains in flat slices, all reused across
// questions, so a question allocates nothing once the buffers have grown.
// A Finder is not safe for concurrent use; use one per goroutine.
type Finder struct {
	g            *kg.Graph
	opt          Options
	heads, tails []int32

	// BFS state, valid where seen[v] == stamp.
	stamp   uint32
	seen    []uint32
	dist    []int32
	first   []int32 // head of v's parent list in par, -1 if none
	last    []int32 // tail of v's parent list
	target  []uint32
	cstamp  []uint32 // cnt[v] valid where cstamp[v] == stamp
	cnt     []int64
	par     []parent
	front   []int32
	next    []int32
	avoid   int32
	pending int // targets not reached yet

	// Question marks, valid where smark/amark == qstamp.
	qstamp       uint32
	smark, amark []uint32
	starts       []int32
	answers      []int32
	targets      []int32
	near         []int32 // answers nearer than the minimum hops
	src, dst     [1]int32

	// Candidate chains: chain k has triples cTr[cOff[k]:cOff[k+1]] and
	// entities cEnt[cOff[k]+k : cOff[k+1]+k+1].
	cTr, cEnt, cOff []int32
	ansFirst        []int32 // first candidate chain of answer i
	ansN            []int32 // candidate chains stored for answer i
	ansFound        []int64
	quota           []int32

	// Depth-first walk state: the chain being built, from its end back.
	stackT, stackE []int32
	limit, stored  int
	found          int64
	cycle          bool

	chains  []Chain
	unreach []int32
}

// NewFinder returns a Finder over g with opt (zero fields take defaults).
func NewFinder(g *kg.Graph, opt Options) *Finder {
	n := g.NumEntities()
	heads, _, tails := g.Columns()
	return &Finder{
		g: g, opt: opt.WithDefaults(), heads: heads, tails: tails,
		seen: make([]uint32, n), dist: make([]int32, n), first: make([]int32, n), last: make([]int32, n),
		target: make([]uint32, n), cstamp: make([]uint32, n), cnt: make([]int64, n),
		smark: make([]uint32, n), amark: make([]uint32, n),
	}
}

// Options returns the options the Finder searches with, defaults filled in.
func (f *Finder) Options() Options { return f.opt }

// Find returns the shortest chains from the question entities starts to
// each of answers (see the package documentation), at least
// Options.MinHops long. Ids outside the graph are ignored as starts and
// reported unreachable as answers; repeated ids count once.
func (f *Finder) Find(starts, answers []int32) Result {
	return f.FindMin(starts, answers, f.opt.MinHops)
}

// FindMin is Find with minHops in place of Options.MinHops.
func (f *Finder) FindMin(starts, answers []int32, minHops int) Result {
	minHops = min(max(minHops, 1), f.opt.MaxHops)
	f.qstamp++
	if f.qstamp == 0 {
		clear(f.smark)
		clear(f.amark)
		f.qstamp = 1
	}
	qs, n := f.qstamp, int32(f.g.NumEntities())
	f.starts, f.answers, f.targets, f.unreach = f.starts[:0], f.answers[:0], f.targets[:0], f.unreach[:0]
	for _, s := range starts {
		if s >= 0 && s < n && f.smark[s] != qs {
			f.smark[s] = qs
			f.starts = append(f.starts, s)
		}
	}
	for _, a := range answers {
		if a < 0 || a >= n {
			f.unreach = append(f.unreach, a)
			continue
		}
		if f.amark[a] != qs {
			f.amark[a] = qs
			f.answers = append(f.answers, a)
			if f.smark[a] != qs {
				f.targets = append(f.targets, a)
			}
		}
	}
	na := len(f.answers)
	f.cTr, f.cEnt, f.cOff = f.cTr[:0], f.cEnt[:0], append(f.cOff[:0], 0)
	f.ansFirst, f.ansN, f.ansFound, f.quota = resize(f.ansFirst, na), resize(f.ansN, na), resize(f.ansFound, na), resize(f.quota, na)

	if len(f.targets) > 0 && len(f.starts) > 0 {
		f.bfs(f.starts, f.targets, f.opt.MaxHops, -1, false)
	}
	f.near = f.near[:0]
	for i, a := range f.answers {
		f.ansFirst[i] = int32(len(f.cOff) - 1)
		f.ansN[i], f.ansFound[i] = 0, 0
		if f.smark[a] == qs {
			continue // closed walks below, once this BFS is no longer needed
		}
		if len(f.starts) == 0 || f.seen[a] != f.stamp {
			f.unreach = append(f.unreach, a)
			continue
		}
		if int(f.dist[a]) < minHops {
			f.near = append(f.near, int32(i)) // longer chains below
			continue
		}
		f.ansFound[i] = f.count(a)
		f.startWalk(a, -1, false)
		f.walk(a)
		f.ansN[i] = int32(f.stored)
	}
	for _, i := range f.near {
		a := f.answers[i]
		f.ansFirst[i] = int32(len(f.cOff) - 1)
		if !f.longer(int(i), a, minHops, false) {
			f.shortest(int(i), a)
		}
	}
	for i, a := range f.answers {
		if f.smark[a] == qs {
			f.ansFirst[i] = int32(len(f.cOff) - 1)
			if minHops < 2 || !f.longer(i, a, minHops, true) {
				f.cycles(i, a)
			}
			if f.ansN[i] == 0 {
				f.unreach = append(f.unreach, a)
			}
		}
	}
	return f.share()
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// newStamp starts a new BFS generation.
func (f *Finder) newStamp() uint32 {
	f.stamp++
	if f.stamp == 0 {
		clear(f.seen)
		clear(f.target)
		clear(f.cstamp)
		f.stamp = 1
	}
	return f.stamp
}

// bfs runs a breadth-first search from sources, over edges in both
// directions except triple avoid, for at most maxDepth levels, stopping
// after the level that reaches the last of targets. Every entity reached
// gets its distance and its full parent list, except that the last
// allowed level records only targets (nothing is expanded past it). With
// all, it searches all maxDepth levels, recording every entity.
func (f *Finder) bfs(sources, targets []int32, maxDepth int, avoid int32, all bool) {
	st := f.newStamp()
	f.par, f.front, f.avoid = f.par[:0], f.front[:0], avoid
	for _, s := range sources {
		if f.seen[s] != st {
			f.seen[s], f.dist[s], f.first[s], f.last[s] = st, 0, -1, -1
			f.front = append(f.front, s)
		}
	}
	f.pending = 0
	for _, t := range targets {
		if f.target[t] != st && f.seen[t] != st {
			f.target[t] = st
			f.pending++
		}
	}
	g, heads, tails := f.g, f.heads, f.tails
	for d := int32(0); int(d) < maxDepth && (all || f.pending > 0) && len(f.front) > 0; d++ {
		last := !all && int(d)+1 == maxDepth
		f.next = f.next[:0]
		for _, u := range f.front {
			for _, t := range g.Out(u) {
				f.relax(u, tails[t], t, d, last)
			}
			for _, t := range g.In(u) {
				f.relax(u, heads[t], t, d, last)
			}
		}
		f.front, f.next = f.next, f.front
	}
}

// relax handles the edge u -t- v met while expanding level d.
func (f *Finder) relax(u, v, t, d int32, last bool) {
	if v == u || t == f.avoid { // a self-loop is on no shortest path
		return
	}
	st := f.stamp
	if f.seen[v] == st {
		if f.dist[v] == d+1 && (!last || f.target[v] == st) {
			f.addParent(v, u, t)
		}
		return
	}
	if last && f.target[v] != st {
		return
	}
	f.seen[v], f.dist[v], f.first[v], f.last[v] = st, d+1, -1, -1
	f.addParent(v, u, t)
	f.next = append(f.next, v)
	if f.target[v] == st {
		f.pending--
	}
}

func (f *Finder) addParent(v, from, t int32) {
	i := int32(len(f.par))
	f.par = append(f.par, parent{from: from, tr: t, next: -1})
	if f.last[v] < 0 {
		f.first[v] = i
	} else {
		f.par[f.last[v]].next = i
	}
	f.last[v] = i
}

// count returns the number of shortest chains from the sources to v, which
// the last BFS reached.
func (f *Finder) count(v int32) int64 {
	if f.dist[v] == 0 {
		return 1
	}
	if f.cstamp[v] == f.stamp {
		return f.cnt[v]
	}
	var n int64
	for i := f.first[v]; i >= 0; i = f.par[i].next {
		n = satAdd(n, f.count(f.par[i].from))
	}
	f.cstamp[v], f.cnt[v] = f.stamp, n
	return n
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// startWalk prepares a walk back from end. With closing >= 0 the chain
// ends with that triple, reaching end from the entity the walk starts at.
func (f *Finder) startWalk(end, closing int32, cycle bool) {
	f.stackE = append(f.stackE[:0], end)
	f.stackT = f.stackT[:0]
	if closing >= 0 {
		f.stackT = append(f.stackT, closing)
	}
	f.limit, f.stored, f.cycle = f.opt.MaxPaths, 0, cycle
}

// walk follows parent lists back from v (the entity last pushed on
// stackE) to a source, storing each chain it completes, until limit.
func (f *Finder) walk(v int32) {
	if f.dist[v] == 0 {
		f.emit()
		return
	}
	for i := f.first[v]; i >= 0 && f.stored < f.limit; i = f.par[i].next {
		p := f.par[i]
		f.stackT = append(f.stackT, p.tr)
		f.stackE = append(f.stackE, p.from)
		f.walk(p.from)
		f.stackT = f.stackT[:len(f.stackT)-1]
		f.stackE = f.stackE[:len(f.stackE)-1]
	}
}

// emit stores the chain on the stacks, reversed into walking order. A
// closed walk is stored in one orientation only: the one that reads first
// in name order (entity, relation, entity, ...), so that a KG read from a
// file and the same KG fetched from an endpoint store the same one; the
// one whose first triple has the smaller id when both read the same.
func (f *Finder) emit() {
	n := len(f.stackT)
	if f.cycle && n > 1 {
		// The stacks hold the walk reversed.
		if c := -f.cmpReverse(f.stackT, f.stackE); c > 0 || c == 0 && f.stackT[n-1] > f.stackT[0] {
			return
		}
	}
	for i := n - 1; i >= 0; i-- {
		f.cTr = append(f.cTr, f.stackT[i])
	}
	for i := len(f.stackE) - 1; i >= 0; i-- {
		f.cEnt = append(f.cEnt, f.stackE[i])
	}
	f.cOff = append(f.cOff, int32(len(f.cTr)))
	f.stored++
}

// cmpReverse compares, in name order (relation, entity, relation, ...),
// the closed walk ts, es (triple k joins es[k] and es[k+1]) with the same
// walk reversed. Both start at the question entity.
func (f *Finder) cmpReverse(ts, es []int32) int {
	n := len(ts)
	for k := 0; k < n; k++ {
		fw, bw := f.g.Triple(ts[k]), f.g.Triple(ts[n-1-k])
		if c := strings.Compare(f.g.RelationName(fw.Rel), f.g.RelationName(bw.Rel)); c != 0 {
			return c
		}
		if c := strings.Compare(f.g.EntityName(es[k+1]), f.g.EntityName(es[n-1-k])); c != 0 {
			return c
		}
	}
	return 0
}

// cycles finds answer i's shortest closed walks through a, a question
// entity: its self-loops if it has any, else for every triple t joining a
// to another entity n, the shortest chains from a to n that avoid t,
// closed by t, keeping the shortest length over all t.
func (f *Finder) cycles(i int, a int32) {
	g, heads, tails := f.g, f.heads, f.tails
	f.startWalk(a, -1, false)
	for _, t := range g.Out(a) {
		if tails[t] == a {
			f.ansFound[i]++
			if f.stored < f.limit {
				f.stackT = append(f.stackT[:0], t)
				f.stackE = append(f.stackE[:0], a, a)
				f.emit()
			}
		}
	}
	if f.ansFound[i] > 0 {
		f.ansN[i] = int32(f.stored)
		return
	}
	best := f.opt.MaxHops + 1
	block := len(f.cOff) - 1
	var found int64
	stored := 0
	for pass := 0; pass < 2; pass++ {
		row := g.Out(a)
		if pass == 1 {
			row = g.In(a)
		}
		for _, t := range row {
			n := tails[t]
			if pass == 1 {
				n = heads[t]
			}
			maxLen := min(best, f.opt.MaxHops) // ties with the best so far are kept
			if n == a || maxLen < 2 {          // without a self-loop a closed walk has 2 triples or more
				continue
			}
			f.src[0], f.dst[0] = a, n
			f.bfs(f.src[:], f.dst[:], maxLen-1, t, false)
			if f.seen[n] != f.stamp {
				continue
			}
			if l := int(f.dist[n]) + 1; l < best {
				best, found, stored = l, 0, 0
				f.cTr, f.cEnt, f.cOff = f.cTr[:f.cOff[block]], f.cEnt[:int(f.cOff[block])+block], f.cOff[:block+1]
			}
			found = satAdd(found, f.count(n))
			f.startWalk(a, t, true)
			f.stackE = append(f.stackE, n)
			f.limit = f.opt.MaxPaths - stored
			f.walk(n)
			stored += f.stored
		}
	}
	f.ansFound[i] = found / 2 // every closed walk was met in both orientations
	f.ansN[i] = int32(stored)
}

// longer finds answer i's chains when a is nearer than minHops: the
// non-backtracking walks (no triple walked twice in a row) of the
// smallest length L in [minHops, MaxHops] that has any, walked forward
// from the starts (from a alone when closed: a is a question entity) and
// pruned by the distance to a. It reports whether it found any; if not,
// it stores nothing.
func (f *Finder) longer(i int, a int32, minHops int, closed bool) bool {
	f.dst[0] = a
	f.bfs(f.dst[:], nil, f.opt.MaxHops-1, -1, true)
	starts := f.starts
	if closed {
		starts = f.dst[:]
	}
	block := len(f.cOff) - 1
	for l := minHops; l <= f.opt.MaxHops; l++ {
		f.limit, f.stored, f.cycle, f.found = f.opt.MaxPaths, 0, closed, 0
		for _, s := range starts {
			if f.seen[s] == f.stamp && int(f.dist[s]) <= l {
				f.stackE = append(f.stackE[:0], s)
				f.stackT = f.stackT[:0]
				f.forward(s, a, l)
			}
		}
		if f.found > 0 {
			f.ansFound[i], f.ansN[i] = f.found, int32(f.stored)
			return true
		}
		f.cTr, f.cEnt, f.cOff = f.cTr[:f.cOff[block]], f.cEnt[:int(f.cOff[block])+block], f.cOff[:block+1]
	}
	return false
}

// shortest stores answer i's shortest chains, searching again: the
// fallback of longer.
func (f *Finder) shortest(i int, a int32) {
	f.dst[0] = a
	f.bfs(f.starts, f.dst[:], f.opt.MaxHops, -1, false)
	f.ansFound[i] = f.count(a)
	f.startWalk(a, -1, false)
	f.walk(a)
	f.ansN[i] = int32(f.stored)
}

// forward extends the walk on the stacks (walking order) from u, which
// is k = len(stackT) triples from its start, to a in exactly l triples,
// counting every walk in f.found and storing up to f.limit. The last BFS
// ran from a, so dist is the distance to a. A closed walk (f.cycle) is
// taken in one orientation only, as emit does.
func (f *Finder) forward(u, a int32, l int) {
	k := len(f.stackT)
	if k == l {
		if u != a {
			return
		}
		// A closed walk is kept in one orientation, as in emit.
		if f.cycle && k > 1 {
			if c := f.cmpReverse(f.stackT, f.stackE); c > 0 || c == 0 && f.stackT[0] > f.stackT[k-1] {
				return
			}
		}
		f.found = satAdd(f.found, 1)
		if f.stored < f.limit {
			f.cTr = append(f.cTr, f.stackT...)
			f.cEnt = append(f.cEnt, f.stackE...)
			f.cOff = append(f.cOff, int32(len(f.cTr)))
			f.stored++
		}
		return
	}
	g := f.g
	for pass := 0; pass < 2; pass++ {
		row := g.Out(u)
		if pass == 1 {
			row = g.In(u)
		}
		for _, t := range row {
			v := f.tails[t]
			if pass == 1 {
				v = f.heads[t]
				if v == u {
					continue // a self-loop is in both rows: walk it once
				}
			}
			if f.seen[v] != f.stamp || int(f.dist[v]) > l-k-1 || k > 0 && f.stackT[k-1] == t {
				continue
			}
			f.stackT = append(f.stackT, t)
			f.stackE = append(f.stackE, v)
			f.forward(v, a, l)
			f.stackT = f.stackT[:k]
			f.stackE = f.stackE[:k+1]
		}
	}
}

// share deals the MaxPaths chain budget out round-robin over the answers
// and returns the chains kept.
func (f *Finder) share() Result {
	total := 0
	for _, n := range f.ansN {
		total += int(n)
	}
	if total <= f.opt.MaxPaths {
		copy(f.quota, f.ansN)
	} else {
		clear(f.quota)
		left := f.opt.MaxPaths
		for more := true; more && left > 0; {
			more = false
			for i := range f.quota {
				if left == 0 {
					break
				}
				if f.quota[i] < f.ansN[i] {
					f.quota[i]++
					left--
					more = true
				}
			}
		}
	}
	var r Result
	f.chains = f.chains[:0]
	for i := range f.answers {
		r.Found = satAdd(r.Found, f.ansFound[i])
		if f.ansN[i] > 0 && f.quota[i] == 0 {
			r.CappedAnswers++
		}
		for k := f.ansFirst[i]; k < f.ansFirst[i]+f.quota[i]; k++ {
			a, b := f.cOff[k], f.cOff[k+1]
			f.chains = append(f.chains, Chain{Triples: f.cTr[a:b:b], Entities: f.cEnt[a+k : b+k+1 : b+k+1]})
		}
	}
	r.Chains = f.chains
	r.Capped = r.Found - int64(len(f.chains))
	r.Unreachable = f.unreach
	return r
}
