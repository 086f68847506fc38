package tracing

import (
	"sort"
	"strings"
)

// chains flattens the evidence by depth-first search from each anchor
// (paper 3.6): every maximal simple path is one line, an edge walked along
// its direction written "A -> relation -> B" and against it "A <- relation
// <- B". Edges at an entity are taken in triple-id order, so the lines are
// deterministic.
func (t *Tracer) chains(res *Result) []string {
	adj := map[int32][]int32{}
	for _, m := range res.Evidence {
		tr := t.g.Triple(m.Triple)
		adj[tr.Head] = append(adj[tr.Head], m.Triple)
		if tr.Tail != tr.Head {
			adj[tr.Tail] = append(adj[tr.Tail], m.Triple)
		}
	}
	for _, l := range adj {
		sort.Slice(l, func(a, b int) bool { return l[a] < l[b] })
	}
	var (
		out     []string
		visited = map[int32]bool{}
		parts   []string
		limit   = t.cfg.MaxChains
	)
	var dfs func(e int32)
	dfs = func(e int32) {
		extended := false
		for _, tid := range adj[e] {
			if limit > 0 && len(out) >= limit {
				return
			}
			tr := t.g.Triple(tid)
			other, arrow := tr.Tail, " -> "
			if tr.Head != e {
				other, arrow = tr.Head, " <- "
			}
			if visited[other] {
				continue
			}
			extended = true
			visited[other] = true
			n := len(parts)
			parts = append(parts, arrow, t.g.RelationName(tr.Rel), arrow, t.g.EntityName(other))
			dfs(other)
			parts = parts[:n]
			visited[other] = false
		}
		if !extended && len(parts) > 1 && (limit == 0 || len(out) < limit) {
			out = append(out, strings.Join(parts, ""))
		}
	}
	started := map[int32]bool{}
	for _, a := range res.Anchors {
		if started[a.Entity] {
			continue
		}
		started[a.Entity] = true
		visited[a.Entity] = true
		parts = append(parts[:0], a.Name)
		dfs(a.Entity)
		visited[a.Entity] = false
	}
	return out
}
