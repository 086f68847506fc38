package tracing

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// cand is one KG edge considered for a schema edge.
type cand struct {
	tid, far    int32
	rel         int32
	score, bias float32
	aligned     bool // the KG edge points the way the schema edge does
}

// runOut is what one (schema graph, anchor) search found.
type runOut struct {
	matches []Match
	answers map[int32]Answer // answer entity -> best (S, Reversed) that bound it
	bound   []bool           // schema nodes bound at least once
	spent   budget           // what the search used of its budget
	// fallback says the search ran on Config.FallbackScan (a later
	// reading of a ranked request whose answers an earlier one set).
	fallback bool
}

// run is the state of one search: the bindings and used edges of the
// current branch, restored on backtracking, and per-depth buffers.
type run struct {
	t          *Tracer
	s          *sGraph
	bias       bias // guidance's, decided once for the search
	strat      schema.Strategy
	maxScan    int     // the search's scan budget: Config.MaxScan, or FallbackScan
	bind       []int32 // schema node -> KG entity on this branch, -1 unbound
	usedSchema []bool
	usedKG     []int32 // KG triples matched on this branch (the Contradict set)
	arrival    []int32 // schema node -> KG triple that bound it on this branch, -1 for the anchor
	reversed   int     // edges on this branch matched against their schema direction
	bufs       [][]cand
	rows       [][]int32     // per depth: the rows a step narrowed (prune.go)
	runs       [][2][]relRun // per depth: their relation runs, out and in
	// join and adj are set where the search has pinned nodes (order):
	// the join edges, and each node's edges in the order matched.
	join  []bool
	adj   [][]int
	cache map[string][]float32 // triple text -> unit vector (non-additive encoders)
	parts map[int32][]float32  // entity -> encoder part, when the tracer's are lazy
	out   runOut
}

func newRun(t *Tracer, s *sGraph, guide *Guidance, strat schema.Strategy) *run {
	r := &run{
		t: t, s: s, bias: newBias(t.cfg, guide), strat: strat, maxScan: t.cfg.MaxScan,
		bind:       make([]int32, len(s.nodes)),
		arrival:    make([]int32, len(s.nodes)),
		usedSchema: make([]bool, len(s.edges)),
		bufs:       make([][]cand, len(s.edges)+1),
		out:        runOut{answers: map[int32]Answer{}, bound: make([]bool, len(s.nodes))},
	}
	for i := range r.bind {
		r.bind[i] = -1
		r.arrival[i] = -1
	}
	if t.add == nil {
		r.cache = map[string][]float32{}
	}
	if t.lazyParts {
		r.parts = map[int32][]float32{}
	}
	return r
}

// trace runs Algorithm 1 from schema node j.node bound to KG entity
// anchor, with j's pinned nodes bound before it starts.
func (r *run) trace(ctx context.Context, j job, anchor int32, s0 float32) error {
	r.bind[j.node] = anchor
	r.out.bound[j.node] = true
	for _, p := range j.pins {
		r.bind[p.node] = p.entity
		r.out.bound[p.node] = true
	}
	if len(j.pins) > 0 {
		r.order(j.node)
	}
	_, _, err := r.match(ctx, j.node, s0, 0)
	return err
}

// order prepares a search with pinned nodes (a conjunction): it marks
// the join edges, those (walked away from root) whose far side holds a
// pinned node, and orders each node's edges so that the join edges are
// matched first and, of them, those towards the answer last. Matching
// is depth first and an answer is bound as soon as its branch is matched,
// so a branch must have reached its pinned nodes before it goes on to the
// answer: a join edge that matches nothing ends the branch (match's dead).
func (r *run) order(root int) {
	s := r.s
	r.join = make([]bool, len(s.edges))
	toAnswer := make([]bool, len(s.edges))
	pinned := make([]bool, len(s.nodes))
	for n, b := range r.bind {
		pinned[n] = b >= 0 && n != root
	}
	seen := make([]bool, len(s.edges))
	var walk func(n int) (pin, ans bool)
	walk = func(n int) (pin, ans bool) {
		for _, ei := range s.adj[n] {
			if seen[ei] {
				continue
			}
			seen[ei] = true
			far := s.edges[ei].from(n).to
			p, a := walk(far)
			r.join[ei] = p || pinned[far]
			toAnswer[ei] = a || far == s.answer
			pin, ans = pin || r.join[ei], ans || toAnswer[ei]
		}
		return pin, ans
	}
	walk(root)
	r.adj = make([][]int, len(s.adj))
	rank := func(ei int) int {
		switch {
		case r.join[ei] && !toAnswer[ei]:
			return 0
		case r.join[ei]:
			return 1
		}
		return 2
	}
	for n, es := range s.adj {
		r.adj[n] = slices.Clone(es)
		slices.SortStableFunc(r.adj[n], func(a, b int) int { return cmp.Compare(rank(a), rank(b)) })
	}
}

// match is Algorithm 1's MATCH: every schema edge at n not yet matched on
// this branch is matched in turn from n. S is threaded through the edges,
// so the value returned is the cumulative score of the best completion of
// the subgraph below n (Algorithm 1 hands every edge the same S and never
// uses S to choose, and the authors' released code computes S but never
// uses it to choose between results). dead says a join edge at n matched
// nothing: n's binding cannot reach a pinned node, and the branch ends.
func (r *run) match(ctx context.Context, n int, S float32, depth int) (float32, bool, error) {
	adj := r.s.adj[n]
	if r.adj != nil {
		adj = r.adj[n]
	}
	for _, ei := range adj {
		if r.usedSchema[ei] {
			continue
		}
		var (
			dead bool
			err  error
		)
		if S, dead, err = r.step(ctx, n, ei, S, depth); err != nil || dead {
			return S, dead, err
		}
	}
	return S, false, nil
}

// reusable reports whether KG triple tid may match a schema edge leaving
// node n under the configured EdgeReuse rule. A self-loop may always be
// matched again: walking it does not retrace a step back to where the walk
// came from, which is what the Contradict check exists to stop, and KGs that
// merge namesakes have gold paths walking such a loop twice (PQL-2H:
// "Indiana -recording-> Indiana -recording-> Indiana").
func (r *run) reusable(n int, tid int32, selfLoop bool) bool {
	if selfLoop {
		return true
	}
	if r.t.cfg.Reuse == ReuseNever {
		return !r.used(tid)
	}
	return r.arrival[n] != tid
}

func (r *run) used(tid int32) bool {
	for _, u := range r.usedKG {
		if u == tid {
			return true
		}
	}
	return false
}

// step is Algorithm 2: score every unused KG edge at n's entity against
// schema edge ei, keep the selected ones and recurse from their far ends.
// It returns the best completed S over the kept edges, S when none is
// kept, and whether ei is a join edge none of whose kept edges reaches
// the pinned nodes beyond it (their evidence is then dropped).
func (r *run) step(ctx context.Context, n, ei int, S float32, depth int) (float32, bool, error) {
	if err := ctx.Err(); err != nil {
		return S, false, err
	}
	join := r.join != nil && r.join[ei]
	w := r.s.edges[ei].from(n)
	cands, err := r.candidates(ctx, w, depth)
	if err != nil || len(cands) == 0 {
		return S, join && err == nil, err
	}
	if err := r.score(ctx, w, cands); err != nil {
		return S, false, err
	}
	r.bias.apply(cands)
	sel := r.keep(w, r.selectCands(w, cands))
	best := float32(math.Inf(-1))
	alive := 0
	for i, c := range sel {
		S2 := S + c.score
		mark := len(r.out.matches)
		r.out.matches = append(r.out.matches, Match{SchemaTriple: ei, Triple: c.tid, TScore: c.score, Bias: c.bias, Cum: S2})
		u := r.push(w, c)
		rev := r.reversed
		outer := r.out.spent.share(r.t.cfg.MaxKeep, len(sel)-i)
		end, dead, err := r.match(ctx, w.to, S2, depth+1)
		r.out.spent.limit = outer
		r.pop(u)
		if err != nil {
			return S, false, err
		}
		if dead {
			r.out.matches = r.out.matches[:mark]
			continue
		}
		alive++
		// An answer bound mid-graph is scored by its branch's completion,
		// so constraint edges below it count.
		if w.to == r.s.answer {
			r.bindAnswer(Answer{Entity: c.far, Score: end, Reversed: rev})
		}
		best = max(best, end)
	}
	if alive == 0 {
		return S, join, nil
	}
	return best, false, nil
}

// candidates returns the KG edges at the walk's entity that may match
// schema edge w, in the run's buffer for depth: unused on the branch
// (EdgeReuse), ending at the far node's entity when that is bound
// already, and of the relation the schema edge names where there are
// such edges (onPlan). It returns none when looking at them would pass
// the search's scan budget.
func (r *run) candidates(ctx context.Context, w *walk, depth int) ([]cand, error) {
	t := r.t
	x := r.bind[w.from]
	out, in, rels, err := r.pruned(ctx, w, depth, t.g.Out(x), t.g.In(x))
	if err != nil {
		return nil, err
	}
	if !r.out.spent.scan(r.maxScan, rels+len(out)+len(in)) {
		return nil, nil
	}
	cands := r.bufs[depth][:0]
	if n := len(out) + len(in); cap(cands) < n {
		// One allocation at a hub's size, not a chain of doublings, and
		// a hub's buffer from an earlier search where there is one.
		cands = pooled[cand](&t.bigCands, n)
	}
	runs := r.pruneRuns(depth, rels > 0)
	cands = r.collect(cands, w, out, runs[0], kg.Outgoing)
	cands = r.collect(cands, w, in, runs[1], kg.Incoming)
	if rel := r.s.edges[w.edge].rel; rel >= 0 && !t.cfg.SoftSymbols {
		cands = onPlan(cands, rel)
	}
	r.bufs[depth] = cands
	return cands, nil
}

// bigBuf is the capacity from which a search's buffers are recycled.
const bigBuf = 1 << 16

// pooled returns an empty slice of capacity n or more, from pool when it
// holds one that large.
func pooled[T any](pool *sync.Pool, n int) []T {
	b, ok := pool.Get().(*[]T)
	if ok && cap(*b) >= n {
		return (*b)[:0]
	}
	if ok {
		pool.Put(b)
	}
	return make([]T, 0, n)
}

// release hands the search's hub-sized buffers back to the tracer for
// the next search. The run must not be used after.
func (r *run) release() {
	for i, b := range r.bufs {
		if cap(b) >= bigBuf {
			b = b[:0]
			r.t.bigCands.Put(&b)
			r.bufs[i] = nil
		}
	}
	for i, b := range r.rows {
		if cap(b) >= bigBuf {
			b = b[:0]
			r.t.bigRows.Put(&b)
			r.rows[i] = nil
		}
	}
}

// collect appends to cands the edges of row, the walk's entity's edges
// in direction d, that the walk may take. A self-loop is in both rows
// and taken from the out-row.
func (r *run) collect(cands []cand, w *walk, row []int32, runs []relRun, d kg.Dir) []cand {
	if len(runs) > 0 && r.t.tails != nil {
		// A pruned row: each run's relation is known, so only the far
		// end is read from the KG's columns.
		for _, rr := range runs {
			cands = r.collectRun(cands, w, row[:rr.n], rr.rel, d)
			row = row[rr.n:]
		}
		return cands
	}
	s := r.site(w, d)
	for _, tid := range row {
		far, rel := r.t.end(tid, d)
		cands = r.admit(cands, &s, tid, far, rel)
	}
	return cands
}

// site is where collect reads edges: the walk, its entity x, the entity
// fixed (>= 0) its far node is bound to, and the direction d of the row.
type site struct {
	w        *walk
	x, fixed int32
	aligned  bool
	d        kg.Dir
}

func (r *run) site(w *walk, d kg.Dir) site {
	return site{w: w, x: r.bind[w.from], fixed: r.bind[w.to], aligned: d == w.dir, d: d}
}

// admit appends edge tid (far end far, relation rel) at s to cands when
// the walk may take it: not a self-loop's second sighting, ending at the
// far node's entity s.fixed when that is bound (>= 0), and reusable.
func (r *run) admit(cands []cand, s *site, tid, far, rel int32) []cand {
	loop := far == s.x
	if loop && s.d == kg.Incoming { // a self-loop was seen in Out
		return cands
	}
	if (s.fixed >= 0 && far != s.fixed) || !r.reusable(s.w.from, tid, loop) {
		return cands
	}
	return append(cands, cand{tid: tid, far: far, rel: rel, aligned: s.aligned})
}

// collectRun is collect over a run of edges of relation rel: only the
// far ends are read, from the tracer's farCache when the run is a hub's.
func (r *run) collectRun(cands []cand, w *walk, row []int32, rel int32, d kg.Dir) []cand {
	s := r.site(w, d)
	x := s.x
	col := r.t.tails
	if d == kg.Incoming {
		col = r.t.heads
	}
	var fs []int32
	if len(row) >= farCacheMin {
		if fs = r.t.fars.get(x, rel, d); fs == nil && r.t.fars.room(len(row)) {
			fs = make([]int32, len(row))
			for i, tid := range row {
				fs[i] = col[tid]
			}
			r.t.fars.put(x, rel, d, fs)
		}
	}
	for i, tid := range row {
		var far int32
		if fs != nil {
			far = fs[i]
		} else {
			far = col[tid]
		}
		cands = r.admit(cands, &s, tid, far, rel)
	}
	return cands
}

// score sets each candidate's similarity to the walked schema edge.
func (r *run) score(ctx context.Context, w *walk, cands []cand) error {
	if r.t.add != nil {
		return r.scoreAdditive(ctx, w, cands)
	}
	return r.scoreTexts(ctx, w, cands)
}

// undo is what push changed on the branch, for pop to restore.
type undo struct {
	w             *walk
	aligned       bool
	arrival, bind int32
}

// push extends the branch by KG edge c matched to the walked schema edge,
// binding its far node.
func (r *run) push(w *walk, c cand) undo {
	u := undo{w: w, aligned: c.aligned, arrival: r.arrival[w.to], bind: r.bind[w.to]}
	r.usedSchema[w.edge] = true
	r.usedKG = append(r.usedKG, c.tid)
	r.bind[w.to] = c.far
	r.arrival[w.to] = c.tid
	r.out.bound[w.to] = true
	if !c.aligned {
		r.reversed++
	}
	return u
}

// pop undoes the push that returned u.
func (r *run) pop(u undo) {
	if !u.aligned {
		r.reversed--
	}
	r.arrival[u.w.to] = u.arrival
	r.bind[u.w.to] = u.bind
	r.usedKG = r.usedKG[:len(r.usedKG)-1]
	r.usedSchema[u.w.edge] = false
}

// bindAnswer records a, bound to the answer node, where it beats what
// the search bound that entity with before.
func (r *run) bindAnswer(a Answer) {
	if old, ok := r.out.answers[a.Entity]; !ok || a.better(old) {
		r.out.answers[a.Entity] = a
	}
}

// bias is how guidance biases the scores of one search's KG edges,
// decided once per run: the step's scoring applies it and pruning asks
// it whether a relation's edges all score alike, so the two cannot
// disagree (pruning would then stop being exact).
type bias struct {
	kind     biasKind
	adaptive bool    // biasScore only at steps where no edge's similarity reaches theta
	gate     float32 // the similarity an edge needs to be biased (-Inf: none)
	tau      float32
	theta    float32
	scores   map[int32]float32 // biasScore: the model's entity scores
	triples  map[int32]bool    // biasSet: the guidance graph's triples
}

// biasKind is what bias adds to an edge's score.
type biasKind uint8

const (
	biasNone  biasKind = iota // nothing
	biasSet                   // tau on the guidance graph's triples (eq. 12)
	biasScore                 // tau x the model's score of the edge's far end
)

// newBias returns the bias cfg asks for with guidance g (nil: none).
func newBias(cfg Config, g *Guidance) bias {
	b := bias{tau: cfg.Tau, theta: cfg.Theta, gate: float32(math.Inf(-1))}
	if cfg.GateTripleBias {
		b.gate = cfg.Theta
	}
	switch {
	case g == nil || cfg.NoTripleBias:
	case cfg.TripleBias != BiasSet && len(g.Scores) > 0:
		b.kind, b.scores, b.adaptive = biasScore, g.Scores, cfg.TripleBias == BiasAdaptive
	case len(g.Triples) > 0:
		b.kind, b.triples = biasSet, g.Triples
	}
	return b
}

// perEdge reports whether the bias is added edge by edge (then a
// relation's edges do not all score the same).
func (b *bias) perEdge() bool { return b.kind != biasNone }

// apply adds the bias to the candidates' scores.
func (b *bias) apply(cands []cand) {
	switch b.kind {
	case biasScore:
		gate := b.gate
		if b.adaptive {
			// Where relation text matches some edge, it decides alone
			// (edges tied on it stay tied: the model's whole-chain scores
			// would pick one of several right children); where it matches
			// none, it cannot tell the edges apart and the model decides.
			for i := range cands {
				if cands[i].score >= b.theta {
					gate = float32(math.Inf(1))
					break
				}
			}
		}
		for i := range cands {
			if p, ok := b.scores[cands[i].far]; ok && cands[i].score >= gate {
				v := b.tau * p
				cands[i].bias = v
				cands[i].score += v
			}
		}
	case biasSet:
		for i := range cands {
			if b.triples[cands[i].tid] && cands[i].score >= b.gate {
				cands[i].bias = b.tau
				cands[i].score += b.tau
			}
		}
	}
}

// onPlan keeps, of cands, the edges of relation rel when there are any,
// compacting in place; otherwise it returns cands whole. A schema edge that
// names a KG relation says which edges it means: another relation that
// only resembles it (a country's currency_used for its languages_spoken,
// both "location.country ...") must not bind answers beside it. Where the
// entity has no edge of rel, the plan's relation may still be stored the
// other way round or under a sibling name, and similarity decides.
func onPlan(cands []cand, rel int32) []cand {
	k := 0
	for _, c := range cands {
		if c.rel == rel {
			cands[k] = c
			k++
		}
	}
	if k == 0 {
		return cands
	}
	return cands[:k]
}

// selectCands applies the strategy, compacting cands in place: Precision
// keeps the edges tied at the best score, Breadth those reaching Theta (or,
// when none does and StrictTheta is off, the best tied edges).
func (r *run) selectCands(w *walk, cands []cand) []cand {
	best := cands[0].score
	for _, c := range cands[1:] {
		best = max(best, c.score)
	}
	k := 0
	breadth := r.strat == schema.Breadth
	if breadth {
		for _, c := range cands {
			if c.score >= r.t.cfg.Theta {
				cands[k] = c
				k++
			}
		}
	}
	if k == 0 && (!breadth || !r.t.cfg.StrictTheta) {
		for _, c := range cands {
			if c.score >= best-tieEps {
				cands[k] = c
				k++
			}
		}
		// Breadth's fallback is a best guess where no edge matches; a guess
		// tied over more edges than MaxFallback is a hub's flood, not a
		// guess, and the branch ends here.
		if mf := r.t.cfg.MaxFallback; breadth && mf > 0 && k > mf {
			k = 0
		}
	}
	sel := dropReversedTies(cands[:k])
	if mw := r.t.cfg.MaxWeak; breadth && mw > 0 && len(sel) > mw {
		sel = r.capWeak(w, sel, best, mw)
	}
	if mb := r.t.cfg.MaxBranch; mb > 0 && len(sel) > mb {
		slices.SortStableFunc(sel, func(a, b cand) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return r.t.byName(a.tid, b.tid)
		})
		sel = sel[:mb]
	}
	return sel
}

// capWeak keeps, of sel, every edge tied at the best score and the max
// best of the others (by score, then by the triples' names, which name
// gives, so that the edges kept do not depend on how a backend numbered
// the KG), in sel's order. The max-th best is found with a heap of max
// edges, not by sorting all the others: at a hub they are hundreds of
// thousands. An edge's names are read only where its score ties with the
// edge it is compared with, and once.
func capWeak(sel []cand, best float32, max int, name func(c cand) tripleName) []cand {
	worse := func(a, b *namedCand) bool { // a ranks after b
		if a.c.score != b.c.score {
			return a.c.score < b.c.score
		}
		return compareNamed(*a, *b) > 0
	}
	heap := make([]namedCand, 0, max) // the best max weak edges so far, the worst on top
	n := 0
	for _, c := range sel {
		if c.score >= best-tieEps {
			continue
		}
		n++
		if len(heap) < max {
			heap = append(heap, namedCand{c, name(c)})
			for i := len(heap) - 1; i > 0; { // sift up
				p := (i - 1) / 2
				if !worse(&heap[i], &heap[p]) {
					break
				}
				heap[i], heap[p] = heap[p], heap[i]
				i = p
			}
			continue
		}
		if c.score < heap[0].c.score {
			continue
		}
		x := namedCand{c, name(c)}
		if c.score == heap[0].c.score && !worse(&heap[0], &x) {
			continue
		}
		heap[0] = x
		for i := 0; ; { // sift down
			l, w := 2*i+1, i
			if l < len(heap) && worse(&heap[l], &heap[w]) {
				w = l
			}
			if l+1 < len(heap) && worse(&heap[l+1], &heap[w]) {
				w = l + 1
			}
			if w == i {
				break
			}
			heap[i], heap[w] = heap[w], heap[i]
			i = w
		}
	}
	if n <= max {
		return sel
	}
	cut := heap[0]
	k := 0
	for _, c := range sel {
		if c.score >= best-tieEps || c.score > cut.c.score || (c.score == cut.c.score && compareNamed(namedCand{c, name(c)}, cut) <= 0) {
			sel[k] = c
			k++
		}
	}
	return sel[:k]
}

// candName returns the names of a candidate edge of walk w's step, as
// Tracer.tripleName gives them, from the candidate's own far end and
// relation and the walk's entity: no read of the KG's triple columns per
// edge of a hub.
func (r *run) candName(w *walk) func(c cand) tripleName {
	g := r.t.g
	x := r.bind[w.from]
	xn := g.EntityName(x)
	return func(c cand) tripleName {
		d := w.dir
		if !c.aligned {
			d = d.Reverse()
		}
		if d == kg.Incoming {
			return tripleName{g.EntityName(c.far), g.RelationName(c.rel), xn, c.tid}
		}
		return tripleName{xn, g.RelationName(c.rel), g.EntityName(c.far), c.tid}
	}
}

// scoreAdditive sets each candidate's cosine from the precomputed parts.
// When the far end is not part of the text the score depends on the
// relation alone, and Out/In rows are sorted by relation, so a run of one
// relation is scored once.
func (r *run) scoreAdditive(ctx context.Context, w *walk, cands []cand) error {
	t := r.t
	d := t.dim
	x, sv, inclFar := r.bind[w.from], w.vec, w.text.far
	if t.lazyParts {
		if err := r.encodeParts(ctx, x, w.text, cands); err != nil {
			return err
		}
	}
	part := func(e int32) []float32 {
		if t.lazyParts {
			return r.parts[e]
		}
		return t.entParts[int(e)*d : int(e+1)*d]
	}
	var near []float32
	if w.text.near {
		near = part(x)
	}
	lastRel, last := int32(-1), float32(0)
	for i := range cands {
		rel := cands[i].rel
		if !inclFar && rel == lastRel {
			cands[i].score = last
			continue
		}
		rv := t.relParts[int(rel)*d : int(rel+1)*d]
		var c float32
		switch {
		case inclFar && near != nil:
			c = cos3(sv, rv, near, part(cands[i].far))
		case inclFar:
			c = cos2(sv, rv, part(cands[i].far))
		case near != nil:
			c = cos2(sv, rv, near)
		default:
			c = cos1(sv, rv)
		}
		cands[i].score = c
		lastRel, last = rel, c
	}
	return nil
}

// encodeParts puts in r.parts the encoder parts scoreAdditive will read
// (x's when incl.near, the candidates' far ends when incl.far) that are
// not there yet, encoded in one batch.
func (r *run) encodeParts(ctx context.Context, x int32, incl ends, cands []cand) error {
	var ids []int32
	want := func(e int32) {
		if _, ok := r.parts[e]; !ok {
			r.parts[e] = nil // claimed: listed once
			ids = append(ids, e)
		}
	}
	if incl.near {
		want(x)
	}
	if incl.far {
		for _, c := range cands {
			want(c.far)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	g, d := r.t.g, r.t.dim
	texts := make([]string, len(ids))
	for i, e := range ids {
		texts[i] = kg.EntityTextOf(g, e)
	}
	buf := make([]float32, len(ids)*d)
	if err := r.t.add.EncodeParts(ctx, texts, buf); err != nil {
		for _, e := range ids {
			delete(r.parts, e)
		}
		return fmt.Errorf("tracing: encode %d entities: %w", len(ids), err)
	}
	for i, e := range ids {
		r.parts[e] = buf[i*d : (i+1)*d : (i+1)*d]
	}
	return nil
}

// scoreTexts scores candidates with a non-additive encoder: the KG triple
// texts missing from the run's cache are encoded in one batch.
func (r *run) scoreTexts(ctx context.Context, w *walk, cands []cand) error {
	t := r.t
	x := r.bind[w.from]
	texts := make([]string, len(cands))
	var missing []string
	pending := map[string]bool{}
	var sb strings.Builder
	for i, c := range cands {
		tr := t.triple(c.tid)
		inclH, inclT := w.text.near, w.text.far
		if tr.Head != x {
			inclH, inclT = inclT, inclH
		}
		sb.Reset()
		if inclH {
			sb.WriteString(kg.EntityTextOf(t.g, tr.Head))
			sb.WriteByte(' ')
		}
		sb.WriteString(kg.RelationTextOf(t.g, tr.Rel))
		if inclT {
			sb.WriteByte(' ')
			sb.WriteString(kg.EntityTextOf(t.g, tr.Tail))
		}
		texts[i] = sb.String()
		if _, ok := r.cache[texts[i]]; !ok && !pending[texts[i]] {
			pending[texts[i]] = true
			missing = append(missing, texts[i])
		}
	}
	if len(missing) > 0 {
		vecs := make([]float32, len(missing)*t.dim)
		if err := t.enc.Encode(ctx, missing, vecs); err != nil {
			return fmt.Errorf("encode %d KG triples with %s: %w", len(missing), t.enc.Name(), err)
		}
		for i, s := range missing {
			r.cache[s] = vecs[i*t.dim : (i+1)*t.dim]
		}
	}
	for i := range cands {
		cands[i].score = dot(w.vec, r.cache[texts[i]])
	}
	return nil
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// cos1..cos3 return the cosine of unit vector s with the sum of the parts,
// in one pass and without allocating; 0 for a zero sum.
func cos1(s, a []float32) float32 {
	a = a[:len(s)]
	var d, nn float32
	for i, v := range s {
		x := a[i]
		d += v * x
		nn += x * x
	}
	return finish(d, nn)
}

func cos2(s, a, b []float32) float32 {
	a, b = a[:len(s)], b[:len(s)]
	var d, nn float32
	for i, v := range s {
		x := a[i] + b[i]
		d += v * x
		nn += x * x
	}
	return finish(d, nn)
}

func cos3(s, a, b, c []float32) float32 {
	a, b, c = a[:len(s)], b[:len(s)], c[:len(s)]
	var d, nn float32
	for i, v := range s {
		x := a[i] + b[i] + c[i]
		d += v * x
		nn += x * x
	}
	return finish(d, nn)
}

func finish(d, nn float32) float32 {
	if nn == 0 {
		return 0
	}
	return d / float32(math.Sqrt(float64(nn)))
}

// dropReversedTies removes kept edges that point against the schema edge
// when an aligned kept edge has the same score. Matching is undirected, so
// under relation text "London located_in United_Kingdom" and
// "University_College_London located_in London" tie exactly; direction is
// the one thing the schema still says about them, so it breaks the tie.
// Reversed edges without an aligned equal stay: a KG may store a fact the
// other way round from the schema.
func dropReversedTies(sel []cand) []cand {
	var al []float32
	for _, c := range sel {
		if c.aligned {
			al = append(al, c.score)
		}
	}
	if len(al) == 0 || len(al) == len(sel) {
		return sel
	}
	slices.Sort(al)
	k := 0
	for _, c := range sel {
		if !c.aligned {
			i, _ := slices.BinarySearch(al, c.score-tieEps)
			if i < len(al) && al[i] <= c.score+tieEps {
				continue
			}
		}
		sel[k] = c
		k++
	}
	return sel[:k]
}
