package simgrag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/stem-kgqa/stem/kg"
)

// noRel marks a KG relation that is not among a pattern edge's candidates.
var noRel = math.Inf(1)

// cand is a KG entity a known pattern node may map to, with its distance.
type cand struct {
	entity int32
	dist   float64
}

// pattern is a schema graph compiled for the search: nodes are numbered,
// known nodes (entity mentions) carry their candidate entities, and every
// edge carries the distance of each KG relation to its own relation text.
type pattern struct {
	// known[n] says node n names an entity; placeholders map to any entity
	// at distance 0 (eq. 3).
	known []bool
	// cands[n] are node n's candidates by distance ascending, then entity;
	// byEnt[n] the same by entity, for lookup while expanding.
	cands, byEnt [][]cand
	// heads and tails are the edges' end nodes, as the schema wrote them.
	heads, tails []int
	// relDist[e][r] is 1 - cos(edge e's relation, KG relation r), noRel
	// when r is not among the edge's top-k(r); relCands[e] lists the
	// candidate relations.
	relDist  [][]float64
	relCands [][]int32
}

// step is one move of the search: seed a component at node to (edge < 0),
// or match edge from the already mapped node from, mapping to when
// closure is false (a closing edge joins two mapped nodes).
type step struct {
	edge     int
	from, to int
	closure  bool
}

// searchPlan is the search order over a pattern with its lower-bound tables:
// restNode[i] and restEdge[i] are the sums of the least possible
// distances of the nodes still unmapped before step i and of the edges of
// steps i onward (X and Y of eqs. 9-10).
type searchPlan struct {
	steps              []step
	restNode, restEdge []float64
}

// order builds the search order of Algorithm 1: start at the known node
// with the fewest candidates and list the edges in depth-first order from
// it; a component not reached seeds again at its own known node with the
// fewest candidates. A component without a known node cannot be searched
// (every KG entity would be a start), which is an error.
func order(p *pattern) (searchPlan, error) {
	n := len(p.known)
	adj := make([][]int, n)
	for e := range p.heads {
		adj[p.heads[e]] = append(adj[p.heads[e]], e)
		if p.tails[e] != p.heads[e] {
			adj[p.tails[e]] = append(adj[p.tails[e]], e)
		}
	}
	visited := make([]bool, n)
	placed := make([]bool, len(p.heads))
	var pl searchPlan
	var dfs func(u int)
	dfs = func(u int) {
		for _, e := range adj[u] {
			if placed[e] {
				continue
			}
			placed[e] = true
			v := p.tails[e]
			if v == u {
				v = p.heads[e]
			}
			pl.steps = append(pl.steps, step{edge: e, from: u, to: v, closure: visited[v]})
			if !visited[v] {
				visited[v] = true
				dfs(v)
			}
		}
	}
	for {
		start := -1
		for v := 0; v < n; v++ {
			if visited[v] || len(adj[v]) == 0 && start >= 0 {
				continue
			}
			if p.known[v] && (start < 0 || !p.known[start] || len(p.cands[v]) < len(p.cands[start])) {
				start = v
			} else if start < 0 {
				start = v
			}
		}
		if start < 0 {
			break
		}
		if !p.known[start] {
			return searchPlan{}, fmt.Errorf("pattern node %d is in a part of the pattern that names no entity", start)
		}
		visited[start] = true
		pl.steps = append(pl.steps, step{edge: -1, to: start})
		dfs(start)
	}
	// Lower-bound tables. The nodes mapped before step i are fixed by the
	// order, so the bounds are precomputed per step.
	minNode := make([]float64, n)
	for v := range n {
		if p.known[v] && len(p.cands[v]) > 0 {
			minNode[v] = p.cands[v][0].dist
		}
	}
	ns := len(pl.steps)
	pl.restNode = make([]float64, ns+1)
	pl.restEdge = make([]float64, ns+1)
	mapped := make([]bool, n)
	for i := 0; i <= ns; i++ {
		for v := range n {
			if !mapped[v] {
				pl.restNode[i] += minNode[v]
			}
		}
		if i < ns {
			if s := pl.steps[i]; !s.closure {
				mapped[s.to] = true
			}
		}
	}
	for i := ns - 1; i >= 0; i-- {
		pl.restEdge[i] = pl.restEdge[i+1]
		if e := pl.steps[i].edge; e >= 0 {
			m := noRel
			for _, r := range p.relCands[e] {
				m = min(m, p.relDist[e][r])
			}
			pl.restEdge[i] += m
		}
	}
	return pl, nil
}

// Subgraph is one KG subgraph isomorphic to the pattern: Nodes[n] is the
// entity pattern node n maps to, Triples[e] the KG triple pattern edge e
// maps to, Reversed[e] whether that triple runs against the edge.
type Subgraph struct {
	GSD      float64
	Nodes    []int32
	Triples  []int32
	Reversed []bool
	// NRev counts the reversed edges; among subgraphs of equal GSD the one
	// with fewer ranks first, direction being all the schema still says.
	NRev int
}

// before is the total order of subgraphs: GSD, then fewer reversed edges,
// then node and triple ids, so that ties break the same way whatever
// order the search met them in.
func (a *Subgraph) before(b *Subgraph) bool {
	if a.GSD != b.GSD {
		return a.GSD < b.GSD
	}
	if a.NRev != b.NRev {
		return a.NRev < b.NRev
	}
	if c := slices.Compare(a.Nodes, b.Nodes); c != 0 {
		return c < 0
	}
	return slices.Compare(a.Triples, b.Triples) < 0
}

// Stats counts the work of one search.
type Stats struct {
	// Expansions counts partial mappings extended by one node or edge
	// (the calls of Expand in Algorithm 1 beyond the first).
	Expansions int64
	// Pruned counts extensions skipped because their lower bound (eq. 11)
	// exceeded the k-th best GSD found so far.
	Pruned int64
	// Complete counts full isomorphic mappings reached.
	Complete int64
	// Capped says the search stopped at the expansion cap, so its top-k
	// is the best found rather than the best there is.
	Capped bool
}

// Add sums s and o.
func (s *Stats) Add(o Stats) {
	s.Expansions += o.Expansions
	s.Pruned += o.Pruned
	s.Complete += o.Complete
	s.Capped = s.Capped || o.Capped
}

// nb is a KG edge a search step may take.
type nb struct {
	triple int32
	other  int32
	dist   float64 // node distance of other (0 when closing) + relation distance
	rdist  float64
	ndist  float64
	rev    bool
}

// searcher holds one search's state; every slice is sized once, so the
// expansion loop allocates nothing.
type searcher struct {
	ctx      context.Context
	g        kg.Reader
	p        *pattern
	pl       searchPlan
	k        int
	prune    bool
	directed bool
	maxExp   int64

	nodes   []int32
	ndist   []float64
	triples []int32
	rdist   []float64
	rev     []bool
	bufs    [][]nb
	top     []*Subgraph // best first, at most k
	spare   *Subgraph
	stats   Stats
	err     error
}

// errCapped stops the search at the expansion cap.
var errCapped = errors.New("expansion cap reached")

// search returns the top-cfg.K subgraphs of g isomorphic to p by GSD,
// best first. It runs the optimized algorithm of section 5.2 (greedy
// candidate order and the eq. 11 bound), or with cfg.NoPrune Algorithm 1
// as written, which the tests use as the brute-force reference. Edge
// direction is ignored unless cfg.Directed, as the paper's isomorphism
// does. cfg.MaxExpansions caps expansions (0 = none).
func search(ctx context.Context, g kg.Reader, p *pattern, cfg Config) ([]*Subgraph, Stats, error) {
	k, prune, directed, maxExp := cfg.K, !cfg.NoPrune, cfg.Directed, cfg.MaxExpansions
	if k <= 0 || len(p.heads) == 0 {
		return nil, Stats{}, nil
	}
	pl, err := order(p)
	if err != nil {
		return nil, Stats{}, err
	}
	nn, ne := len(p.known), len(p.heads)
	s := &searcher{ctx: ctx, g: g, p: p, pl: pl, k: k, prune: prune, directed: directed, maxExp: maxExp,
		nodes: make([]int32, nn), ndist: make([]float64, nn), triples: make([]int32, ne),
		rdist: make([]float64, ne), rev: make([]bool, ne), bufs: make([][]nb, len(pl.steps))}
	for i := range s.nodes {
		s.nodes[i] = -1
	}
	for i := range s.triples {
		s.triples[i] = -1
	}
	newSub := func() *Subgraph {
		return &Subgraph{Nodes: make([]int32, nn), Triples: make([]int32, ne), Reversed: make([]bool, ne)}
	}
	s.top = make([]*Subgraph, 0, k)
	for range k {
		s.top = append(s.top, newSub())
	}
	s.top = s.top[:0]
	s.spare = newSub()
	s.expand(0, 0)
	if s.err != nil && !errors.Is(s.err, errCapped) {
		return nil, s.stats, s.err
	}
	s.stats.Capped = errors.Is(s.err, errCapped)
	return s.top, s.stats, nil
}

// full reports whether k subgraphs are held, and the worst one's GSD.
func (s *searcher) worst() (float64, bool) {
	if len(s.top) < s.k {
		return 0, false
	}
	return s.top[len(s.top)-1].GSD, true
}

// boundEps absorbs float rounding between a bound summed in step order and
// a GSD summed in node and edge order, so pruning never drops a subgraph
// that ties the k-th best.
const boundEps = 1e-9

func (s *searcher) cut(bound float64) bool {
	if !s.prune {
		return false
	}
	w, full := s.worst()
	return full && bound > w+boundEps
}

func (s *searcher) tick() bool {
	s.stats.Expansions++
	if s.stats.Expansions&1023 == 0 {
		if err := s.ctx.Err(); err != nil {
			s.err = err
			return false
		}
	}
	if s.maxExp > 0 && s.stats.Expansions > s.maxExp {
		s.err = errCapped
		return false
	}
	return true
}

func (s *searcher) used(e int32) bool {
	return slices.Contains(s.nodes, e)
}

// expand is Expand of Algorithm 1 at step i with the partial mapping's
// distance cur.
func (s *searcher) expand(i int, cur float64) {
	if s.err != nil {
		return
	}
	if i == len(s.pl.steps) {
		s.complete()
		return
	}
	st := s.pl.steps[i]
	rest := s.pl.restNode[i+1] + s.pl.restEdge[i+1]
	if st.edge < 0 {
		for j, c := range s.p.cands[st.to] {
			if s.used(c.entity) {
				continue
			}
			// Candidates are by distance ascending, so once one is cut
			// every later one is too.
			if s.cut(cur + c.dist + rest) {
				s.stats.Pruned += int64(len(s.p.cands[st.to]) - j)
				return
			}
			if !s.tick() {
				return
			}
			s.nodes[st.to], s.ndist[st.to] = c.entity, c.dist
			s.expand(i+1, cur+c.dist)
			s.nodes[st.to], s.ndist[st.to] = -1, 0
		}
		return
	}
	buf := s.neighbours(i, st)
	for j := range buf {
		n := &buf[j]
		if s.cut(cur + n.dist + rest) {
			if s.prune {
				// Greedy order sorts buf by dist, so the rest are cut too.
				s.stats.Pruned += int64(len(buf) - j)
				return
			}
		}
		if !s.tick() {
			return
		}
		e := st.edge
		s.triples[e], s.rdist[e], s.rev[e] = n.triple, n.rdist, n.rev
		if !st.closure {
			s.nodes[st.to], s.ndist[st.to] = n.other, n.ndist
		}
		s.expand(i+1, cur+n.dist)
		s.triples[e], s.rdist[e], s.rev[e] = -1, 0, false
		if !st.closure {
			s.nodes[st.to], s.ndist[st.to] = -1, 0
		}
		if s.err != nil {
			return
		}
	}
}

// neighbours fills step i's buffer with the KG edges at the mapped end
// that the step may take: a candidate relation, a far end that is a
// candidate of the far node (or the far node's image, when closing) and
// not the image of another node, and a triple no other edge holds.
func (s *searcher) neighbours(i int, st step) []nb {
	buf := s.bufs[i][:0]
	e := st.edge
	from := s.nodes[st.from]
	fwdFromHead := s.p.heads[e] == st.from
	self := s.p.heads[e] == s.p.tails[e]
	for _, r := range s.p.relCands[e] {
		rd := s.p.relDist[e][r]
		for dir := 0; dir < 2; dir++ {
			// dir 0 walks from's out-edges, dir 1 its in-edges. An out-edge
			// follows the pattern edge when from is the edge's head.
			rev := (dir == 0) != fwdFromHead
			if self {
				// A self-loop lies in both lists; take it once, as it is.
				if dir == 1 {
					continue
				}
				rev = false
			}
			if rev && s.directed {
				continue
			}
			var ts []int32
			if dir == 0 {
				ts = s.g.OutRel(from, r)
			} else {
				ts = s.g.InRel(from, r)
			}
			for _, t := range ts {
				tr := s.g.Triple(t)
				other := tr.Tail
				if dir == 1 {
					other = tr.Head
				}
				var nd float64
				if st.closure {
					if other != s.nodes[st.to] {
						continue
					}
				} else {
					if s.used(other) {
						continue
					}
					if s.p.known[st.to] {
						d, ok := lookup(s.p.byEnt[st.to], other)
						if !ok {
							continue
						}
						nd = d
					}
				}
				if slices.Contains(s.triples, t) {
					continue
				}
				buf = append(buf, nb{triple: t, other: other, dist: nd + rd, rdist: rd, ndist: nd, rev: rev})
			}
		}
	}
	if s.prune {
		slices.SortFunc(buf, byDist)
	}
	s.bufs[i] = buf
	return buf
}

func byDist(a, b nb) int {
	if c := cmp.Compare(a.dist, b.dist); c != 0 {
		return c
	}
	return cmp.Compare(a.triple, b.triple)
}

func lookup(byEnt []cand, e int32) (float64, bool) {
	i, ok := slices.BinarySearchFunc(byEnt, e, func(c cand, e int32) int { return cmp.Compare(c.entity, e) })
	if !ok {
		return 0, false
	}
	return byEnt[i].dist, true
}

// complete offers the full mapping to the top-k. Its GSD is summed over
// nodes and then edges in index order, not in step order, so the same
// mapping gets the same GSD whichever search found it.
func (s *searcher) complete() {
	s.stats.Complete++
	sub := s.spare
	sub.GSD, sub.NRev = 0, 0
	for n, d := range s.ndist {
		sub.GSD += d
		sub.Nodes[n] = s.nodes[n]
	}
	for e, d := range s.rdist {
		sub.GSD += d
		sub.Triples[e], sub.Reversed[e] = s.triples[e], s.rev[e]
		if s.rev[e] {
			sub.NRev++
		}
	}
	if len(s.top) == s.k && !sub.before(s.top[len(s.top)-1]) {
		return
	}
	if len(s.top) == s.k {
		s.spare = s.top[len(s.top)-1]
		s.top = s.top[:len(s.top)-1]
	} else {
		s.spare = s.top[:len(s.top)+1][len(s.top)]
	}
	at, _ := slices.BinarySearchFunc(s.top, sub, func(x, y *Subgraph) int {
		if x.before(y) {
			return -1
		}
		return 1
	})
	s.top = slices.Insert(s.top, at, sub)
}
