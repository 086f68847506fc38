package simgrag

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/kg"
)

// randomGraph builds a KG of n entities e0.. and triples over nr relations
// r0.., self-loops and parallel edges included.
func randomGraph(t *testing.T, rng *rand.Rand, n, nr, m int) *kg.Graph {
	t.Helper()
	var ts [][3]string
	for range m {
		ts = append(ts, [3]string{fmt.Sprintf("e%d", rng.IntN(n)), fmt.Sprintf("r%d", rng.IntN(nr)), fmt.Sprintf("e%d", rng.IntN(n))})
	}
	g, err := kg.GraphOf(ts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// quarter draws a distance in {0, .25, ..., 1.5}: coarse, so that ties are
// common and the tie-break is exercised.
func quarter(rng *rand.Rand) float64 { return float64(rng.IntN(7)) / 4 }

// randomPattern builds a connected pattern of 1-4 nodes: a random tree,
// sometimes with an extra edge closing a cycle or a self-loop, each node
// known with a random candidate set (at least one known node).
func randomPattern(rng *rand.Rand, g kg.Reader) *pattern {
	nn := 1 + rng.IntN(4)
	p := &pattern{known: make([]bool, nn), cands: make([][]cand, nn), byEnt: make([][]cand, nn)}
	for v := 1; v < nn; v++ {
		u := rng.IntN(v)
		if rng.IntN(2) == 0 {
			p.heads, p.tails = append(p.heads, u), append(p.tails, v)
		} else {
			p.heads, p.tails = append(p.heads, v), append(p.tails, u)
		}
	}
	if extra := rng.IntN(3); extra > 0 || len(p.heads) == 0 {
		p.heads, p.tails = append(p.heads, rng.IntN(nn)), append(p.tails, rng.IntN(nn))
	}
	p.known[rng.IntN(nn)] = true
	for v := range nn {
		if rng.IntN(3) == 0 {
			p.known[v] = true
		}
		if !p.known[v] {
			continue
		}
		seen := map[int32]bool{}
		for range 1 + rng.IntN(g.NumEntities()) {
			e := int32(rng.IntN(g.NumEntities()))
			if !seen[e] {
				seen[e] = true
				p.cands[v] = append(p.cands[v], cand{entity: e, dist: quarter(rng)})
			}
		}
		slices.SortFunc(p.cands[v], func(a, b cand) int {
			if c := cmp.Compare(a.dist, b.dist); c != 0 {
				return c
			}
			return cmp.Compare(a.entity, b.entity)
		})
		p.byEnt[v] = slices.SortedFunc(slices.Values(p.cands[v]), func(a, b cand) int { return cmp.Compare(a.entity, b.entity) })
	}
	nr := g.NumRelations()
	for range p.heads {
		d := make([]float64, nr)
		var cs []int32
		for r := range nr {
			d[r] = noRel
			if rng.IntN(3) > 0 {
				d[r] = quarter(rng)
				cs = append(cs, int32(r))
			}
		}
		p.relDist, p.relCands = append(p.relDist, d), append(p.relCands, cs)
	}
	return p
}

// bruteForce enumerates every injective node mapping and every choice of
// distinct KG triples for the edges, independently of search: the
// reference the property test holds the search to.
func bruteForce(g kg.Reader, p *pattern, k int, directed bool) []*Subgraph {
	nn, ne := len(p.known), len(p.heads)
	var all []*Subgraph
	nodes := make([]int32, nn)
	ndist := make([]float64, nn)
	triples := make([]int32, ne)
	rev := make([]bool, ne)
	var edges func(e int)
	edges = func(e int) {
		if e == ne {
			s := &Subgraph{Nodes: slices.Clone(nodes), Triples: slices.Clone(triples), Reversed: slices.Clone(rev)}
			for _, d := range ndist {
				s.GSD += d
			}
			for e, t := range triples {
				s.GSD += p.relDist[e][g.Triple(t).Rel]
				if rev[e] {
					s.NRev++
				}
			}
			all = append(all, s)
			return
		}
		h, tl := nodes[p.heads[e]], nodes[p.tails[e]]
		for t := range int32(g.NumTriples()) {
			tr := g.Triple(t)
			if p.relDist[e][tr.Rel] == noRel || slices.Contains(triples[:e], t) {
				continue
			}
			fwd := tr.Head == h && tr.Tail == tl
			back := tr.Head == tl && tr.Tail == h && h != tl
			if back && directed {
				back = false
			}
			for _, r := range []bool{false, true} {
				if (!r && fwd) || (r && back) {
					triples[e], rev[e] = t, r
					edges(e + 1)
				}
			}
		}
	}
	var nodesAt func(v int)
	nodesAt = func(v int) {
		if v == nn {
			edges(0)
			return
		}
		for e := range int32(g.NumEntities()) {
			if slices.Contains(nodes[:v], e) {
				continue
			}
			d := 0.0
			if p.known[v] {
				var ok bool
				if d, ok = lookup(p.byEnt[v], e); !ok {
					continue
				}
			}
			nodes[v], ndist[v] = e, d
			nodesAt(v + 1)
		}
	}
	nodesAt(0)
	slices.SortFunc(all, func(a, b *Subgraph) int {
		if a.before(b) {
			return -1
		}
		if b.before(a) {
			return 1
		}
		return 0
	})
	return all[:min(k, len(all))]
}

// TestSearchMatchesBruteForce is the property test of section 5.2's claim:
// the pruned, greedily ordered search returns exactly the top-k of the
// exhaustive enumeration (same subgraphs, same distances, same order),
// and so does the unpruned Algorithm 1.
func TestSearchMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var saved, brute, nonEmpty int64
	for trial := range 600 {
		g := randomGraph(t, rng, 3+rng.IntN(5), 1+rng.IntN(3), 4+rng.IntN(14))
		p := randomPattern(rng, g)
		k := 1 + rng.IntN(4)
		directed := rng.IntN(4) == 0
		want := bruteForce(g, p, k, directed)
		if len(want) > 0 {
			nonEmpty++
		}
		for _, prune := range []bool{true, false} {
			got, st, err := search(context.Background(), g, p, Config{K: k, NoPrune: !prune, Directed: directed})
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			if len(got) != len(want) {
				t.Fatalf("trial %d prune=%v: %d subgraphs, want %d\npattern %+v", trial, prune, len(got), len(want), p)
			}
			for i := range got {
				g, w := got[i], want[i]
				if g.GSD != w.GSD || g.NRev != w.NRev || !slices.Equal(g.Nodes, w.Nodes) || !slices.Equal(g.Triples, w.Triples) || !slices.Equal(g.Reversed, w.Reversed) {
					t.Fatalf("trial %d prune=%v: subgraph %d = %+v, want %+v", trial, prune, i, *g, *w)
				}
			}
			if prune {
				saved -= st.Expansions
			} else {
				saved += st.Expansions
				brute += st.Expansions
			}
		}
	}
	if saved < 0 {
		t.Errorf("pruning made the searches expand %d more partial mappings", -saved)
	}
	if nonEmpty < 100 {
		t.Errorf("only %d of the random patterns match anything: the property is barely tested", nonEmpty)
	}
	t.Logf("pruning saved %d of %d expansions (%.1f%%)", saved, brute, 100*float64(saved)/float64(brute))
}

// TestSearchOddPatterns covers patterns the search must refuse or answer
// empty without panicking.
func TestSearchOddPatterns(t *testing.T) {
	g, err := kg.GraphOf([][3]string{{"a", "r", "b"}, {"b", "r", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := g.Entity("a")
	r, _ := g.Relation("r")
	rel := func() ([][]float64, [][]int32) {
		d := make([]float64, g.NumRelations())
		d[r] = 0
		return [][]float64{d}, [][]int32{{r}}
	}
	known := []cand{{entity: a}}
	tests := []struct {
		name    string
		p       pattern
		k       int
		wantN   int
		wantErr bool
	}{
		{name: "no edges", p: pattern{known: []bool{true}, cands: [][]cand{known}, byEnt: [][]cand{known}}, k: 3},
		{name: "k zero", p: pattern{known: []bool{true, false}, cands: [][]cand{known, nil}, byEnt: [][]cand{known, nil}, heads: []int{0}, tails: []int{1}}, k: 0},
		{name: "no known node", p: pattern{known: []bool{false, false}, cands: [][]cand{nil, nil}, byEnt: [][]cand{nil, nil}, heads: []int{0}, tails: []int{1}}, k: 3, wantErr: true},
		{name: "known node without candidates", p: pattern{known: []bool{true, false}, cands: [][]cand{nil, nil}, byEnt: [][]cand{nil, nil}, heads: []int{0}, tails: []int{1}}, k: 3},
		{name: "one edge", p: pattern{known: []bool{true, false}, cands: [][]cand{known, nil}, byEnt: [][]cand{known, nil}, heads: []int{0}, tails: []int{1}}, k: 3, wantN: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p
			if len(p.heads) > 0 {
				p.relDist, p.relCands = rel()
			}
			got, _, err := search(context.Background(), g, &p, Config{K: tt.k})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if len(got) != tt.wantN {
				t.Fatalf("%d subgraphs, want %d", len(got), tt.wantN)
			}
		})
	}
}

// TestSearchCancelled checks the search stops on a cancelled context.
func TestSearchCancelled(t *testing.T) {
	var ts [][3]string
	for i := range 3000 {
		ts = append(ts, [3]string{"hub", "r", fmt.Sprintf("x%d", i)})
	}
	g, err := kg.GraphOf(ts)
	if err != nil {
		t.Fatal(err)
	}
	hub, _ := g.Entity("hub")
	d := []float64{0}
	c := []cand{{entity: hub}}
	p := &pattern{known: []bool{true, false, false}, cands: [][]cand{c, nil, nil}, byEnt: [][]cand{c, nil, nil},
		heads: []int{0, 0}, tails: []int{1, 2}, relDist: [][]float64{d, d}, relCands: [][]int32{{0}, {0}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := search(ctx, g, p, Config{K: 3, NoPrune: true}); err == nil {
		t.Fatal("no error from a cancelled search")
	}
	_, st, err := search(context.Background(), g, p, Config{K: 3, NoPrune: true, MaxExpansions: 100})
	if err != nil || !st.Capped {
		t.Fatalf("capped search: err %v, stats %+v", err, st)
	}
}
