package tracing

import (
	"cmp"
	"slices"
	"strings"
)

// byName orders triples by head, relation and tail name, then id: ids are
// numbered by the backend (a SPARQL KG numbers them as it meets them), so
// whatever is printed in order must not follow them.
func (t *Tracer) byName(a, b int32) int {
	x, y := t.g.Triple(a), t.g.Triple(b)
	if c := strings.Compare(t.g.EntityName(x.Head), t.g.EntityName(y.Head)); c != 0 {
		return c
	}
	if c := strings.Compare(t.g.RelationName(x.Rel), t.g.RelationName(y.Rel)); c != 0 {
		return c
	}
	if c := strings.Compare(t.g.EntityName(x.Tail), t.g.EntityName(y.Tail)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// tripleName returns triple tid's names, for ordering many triples as
// byName does with each one's names read once.
func (t *Tracer) tripleName(tid int32) tripleName {
	x := t.triple(tid)
	return tripleName{t.g.EntityName(x.Head), t.g.RelationName(x.Rel), t.g.EntityName(x.Tail), tid}
}

// chains flattens the evidence by depth-first search from each anchor
// (paper 3.6): every maximal simple path is one line, an edge walked along
// its direction written "A -> relation -> B" and against it "A <- relation
// <- B". Edges at an entity are taken in the order of their triples' names
// (t.byName), so the lines are deterministic and the same whichever
// backend numbered the triples.
func (t *Tracer) chains(res *Result) []string {
	adj := make(map[int32][]int32, len(res.Evidence))
	for _, m := range res.Evidence {
		tr := t.g.Triple(m.Triple)
		adj[tr.Head] = append(adj[tr.Head], m.Triple)
		if tr.Tail != tr.Head {
			adj[tr.Tail] = append(adj[tr.Tail], m.Triple)
		}
	}
	// Each entity's edges are sorted when the search first reaches it:
	// with MaxChains, a hub's evidence is mostly never walked.
	sorted := make(map[int32]bool, len(adj))
	// on holds the entities of the path walked so far: a simple path is
	// a few hops long, so a scan finds one faster than a map. line is the
	// path written so far, each leaf's line copied from it once.
	var (
		out   []string
		on    []int32
		line  []byte
		limit = t.cfg.MaxChains
	)
	var dfs func(e int32)
	dfs = func(e int32) {
		extended := false
		if !sorted[e] {
			sorted[e] = true
			t.sortTriples(adj[e])
		}
		for _, tid := range adj[e] {
			if limit > 0 && len(out) >= limit {
				return
			}
			tr := t.g.Triple(tid)
			other, arrow := tr.Tail, " -> "
			if tr.Head != e {
				other, arrow = tr.Head, " <- "
			}
			if slices.Contains(on, other) {
				continue
			}
			extended = true
			on = append(on, other)
			n := len(line)
			line = append(line, arrow...)
			line = append(line, t.g.RelationName(tr.Rel)...)
			line = append(line, arrow...)
			line = append(line, t.g.EntityName(other)...)
			dfs(other)
			line = line[:n]
			on = on[:len(on)-1]
		}
		if !extended && len(on) > 1 && (limit == 0 || len(out) < limit) {
			out = append(out, string(line))
		}
	}
	started := map[int32]bool{}
	for _, a := range res.Anchors {
		if started[a.Entity] {
			continue
		}
		started[a.Entity] = true
		on = append(on[:0], a.Entity)
		line = append(line[:0], a.Name...)
		dfs(a.Entity)
	}
	return out
}
