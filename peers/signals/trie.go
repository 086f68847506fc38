package signals

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/stem-kgqa/stem/kg"
)

// Step is one step of a relation path: relation Rel walked along its
// direction (head to tail) or, with Inverse, against it. It is
// schema.Step's Forward/Inverse over relation ids: "directed_by" and
// "directed_by walked backwards" are distinct steps, as they are distinct
// questions.
type Step struct {
	Rel     int32
	Inverse bool
}

// less orders steps by relation id, forward before inverse, so that a
// node's children are in one fixed order whatever order edges came in.
func (t Step) less(u Step) bool {
	if t.Rel != u.Rel {
		return t.Rel < u.Rel
	}
	return !t.Inverse && u.Inverse
}

// Far is the end of triple id a walk along s arrives at: its tail, or
// its head when s walks against the triple.
func Far(g kg.Reader, id int32, s Step) int32 {
	t := g.Triple(id)
	if s.Inverse {
		return t.Head
	}
	return t.Tail
}

// Near is the end of triple id a walk along s leaves.
func Near(g kg.Reader, id int32, s Step) int32 {
	t := g.Triple(id)
	if s.Inverse {
		return t.Tail
	}
	return t.Head
}

// Node is one node of a KG-Trie: the relation path from the root to it
// and the KG entities that path reaches from the trie's anchors.
type Node struct {
	// Parent is the parent's index in Trie.Nodes, -1 for the root.
	Parent int32
	// Step is the step from Parent; zero for the root.
	Step  Step
	Depth int
	// Children are indices in Trie.Nodes, in Step order.
	Children []int32
	// Reach holds the entities the path reaches, sorted and distinct, at
	// most Limits.MaxReach of them (the lowest ids when cut).
	Reach []int32
	// Capped says Reach was cut: the path reaches more entities than it
	// lists.
	Capped bool
}

// Trie is the KG-Trie of a set of anchor entities (GCR, section 4.2):
// every relation path of up to Hops steps that leaves an anchor, as a
// prefix tree over Steps, each node holding the entities its path reaches.
// GCR builds one trie per question entity and tokenises entity names too;
// here the anchors of a question share one trie over relation steps, and
// a path's entity paths are read off the KG along it (the entities of a
// node are its Reach). GCR decodes over it; SimGRAG's stand-in pattern
// graph is chosen among its paths. A Trie is immutable once built and may
// be shared between goroutines.
type Trie struct {
	// Anchors are the root's entities, sorted and distinct.
	Anchors []int32
	Hops    int
	// Nodes[0] is the root; a node's children come after it.
	Nodes []Node
	// Capped says nodes were left out at Limits.MaxNodes, so some paths
	// of the KG are missing from the trie.
	Capped bool
	// Took is how long the build took.
	Took time.Duration
}

// Path returns the steps from the root to node n.
func (t *Trie) Path(n int32) []Step {
	out := make([]Step, t.Nodes[n].Depth)
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = t.Nodes[n].Step
		n = t.Nodes[n].Parent
	}
	return out
}

// Child returns the child of node n reached by st, if the trie has it.
func (t *Trie) Child(n int32, st Step) (int32, bool) {
	kids := t.Nodes[n].Children
	i, ok := slices.BinarySearchFunc(kids, st, func(c int32, st Step) int {
		switch ct := t.Nodes[c].Step; {
		case ct == st:
			return 0
		case ct.less(st):
			return -1
		}
		return 1
	})
	if !ok {
		return -1, false
	}
	return kids[i], true
}

// Find returns the node of path toks, if the trie has it.
func (t *Trie) Find(path []Step) (int32, bool) {
	n := int32(0)
	for _, st := range path {
		c, ok := t.Child(n, st)
		if !ok {
			return -1, false
		}
		n = c
	}
	return n, true
}

// Limits bound a trie built over a KG with hubs (MetaQA's genre Drama has
// 4,030 edges, its language English tens of thousands).
type Limits struct {
	// MaxReach caps the entities a node keeps; the raw neighbours gathered
	// for a node stop at 4x MaxReach, so an edge list is still scanned
	// once but copied only that far.
	MaxReach int
	// MaxNodes caps the trie's nodes; nodes past it are left out and the
	// trie is marked Capped.
	MaxNodes int
}

// Build builds the KG-Trie of anchors over g within hops steps by
// breadth-first expansion: a node's children are the (relation,
// direction) pairs of the edges at the entities it reaches, each child
// reaching those edges' other ends. Anchors g does not know are dropped;
// with none left the trie is a bare root.
func Build(ctx context.Context, g kg.Reader, anchors []int32, hops int, lim Limits) (*Trie, error) {
	if g == nil {
		return nil, fmt.Errorf("build KG-Trie: no KG")
	}
	if hops < 0 || lim.MaxReach <= 0 || lim.MaxNodes <= 0 {
		return nil, fmt.Errorf("build KG-Trie: hops %d, limits %+v: want hops >= 0 and positive limits", hops, lim)
	}
	start := time.Now()
	t := &Trie{Hops: hops, Anchors: DistinctAnchors(g, anchors)}
	t.Nodes = append(t.Nodes, Node{Parent: -1, Reach: t.Anchors})
	b := newExpander(g, lim.MaxReach)
	level := []int32{0}
	for d := 0; d < hops && len(level) > 0 && !t.Capped; d++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("build KG-Trie of %v: %w", anchors, err)
		}
		var next []int32
		for _, n := range level {
			kids := b.expand(t.Nodes[n].Reach)
			for _, k := range kids {
				if len(t.Nodes) >= lim.MaxNodes {
					t.Capped = true
					break
				}
				idx := int32(len(t.Nodes))
				t.Nodes = append(t.Nodes, Node{Parent: n, Step: k.tok, Depth: d + 1, Reach: k.reach, Capped: k.capped})
				t.Nodes[n].Children = append(t.Nodes[n].Children, idx)
				next = append(next, idx)
			}
			if t.Capped {
				break
			}
		}
		level = next
	}
	t.Took = time.Since(start)
	return t, nil
}

// DistinctAnchors returns the anchors g knows, sorted and distinct.
func DistinctAnchors(g kg.Reader, anchors []int32) []int32 {
	n := int32(g.NumEntities())
	out := make([]int32, 0, len(anchors))
	for _, a := range anchors {
		if a >= 0 && a < n {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// expander gathers a node's children. It reads edge ends from the KG's
// columns when the backend hands them out, the hot loop of the build.
type expander struct {
	g                  kg.Reader
	heads, rels, tails []int32
	maxReach, rawCap   int
	slot               map[Step]int
	kids               []child
}

// child is one child in the making.
type child struct {
	tok    Step
	reach  []int32
	capped bool
}

func newExpander(g kg.Reader, maxReach int) *expander {
	e := &expander{g: g, maxReach: maxReach, rawCap: 4 * maxReach, slot: map[Step]int{}}
	e.heads, e.rels, e.tails = kg.ColumnsOf(g)
	return e
}

func (e *expander) ends(id int32) (h, r, t int32) {
	if e.rels != nil {
		return e.heads[id], e.rels[id], e.tails[id]
	}
	tr := e.g.Triple(id)
	return tr.Head, tr.Rel, tr.Tail
}

// expand returns the children of a node reaching reach, in Step order.
func (e *expander) expand(reach []int32) []child {
	clear(e.slot)
	e.kids = e.kids[:0]
	for _, x := range reach {
		e.walk(e.g.Out(x), false)
		e.walk(e.g.In(x), true)
	}
	out := make([]child, len(e.kids))
	copy(out, e.kids)
	slices.SortFunc(out, func(a, b child) int {
		if a.tok.less(b.tok) {
			return -1
		}
		return 1
	})
	for i := range out {
		r := out[i].reach
		slices.Sort(r)
		r = slices.Compact(r)
		if len(r) > e.maxReach {
			r, out[i].capped = r[:e.maxReach], true
		}
		out[i].reach = slices.Clip(r)
	}
	return out
}

// walk adds the other ends of edges ids (one entity's out- or in-edges,
// sorted by relation) to the children of their tokens. The slot is looked
// up once per run of one relation, not once per edge.
func (e *expander) walk(ids []int32, inverse bool) {
	cur, last := -1, int32(-1)
	for _, id := range ids {
		h, r, t := e.ends(id)
		if cur < 0 || r != last {
			tok := Step{Rel: r, Inverse: inverse}
			i, ok := e.slot[tok]
			if !ok {
				i = len(e.kids)
				e.slot[tok] = i
				e.kids = append(e.kids, child{tok: tok})
			}
			cur, last = i, r
		}
		k := &e.kids[cur]
		if len(k.reach) >= e.rawCap {
			k.capped = true
			continue
		}
		if inverse {
			k.reach = append(k.reach, h)
		} else {
			k.reach = append(k.reach, t)
		}
	}
}
