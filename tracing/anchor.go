package tracing

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/internal/editdist"
	"github.com/stem-kgqa/stem/kg"
)

// anchor fills res.Anchors from req (see the package doc, "Anchoring").
func (t *Tracer) anchor(ctx context.Context, req Request, sgs []*sGraph, res *Result) error {
	entBias := func(e int32) float32 {
		if !t.cfg.NoEntityBias && req.Guidance != nil && req.Guidance.Entities[e] {
			return t.cfg.Lambda
		}
		return 1
	}
	if len(req.Anchors) > 0 {
		n := int32(t.g.NumEntities())
		for i, e := range req.Anchors {
			if e < 0 || e >= n {
				res.Problems = append(res.Problems, fmt.Sprintf("explicit anchor %d is not a KG entity id", e))
				continue
			}
			m := t.g.EntityName(e)
			if len(req.Mentions) == len(req.Anchors) {
				m = req.Mentions[i]
			}
			res.Anchors = append(res.Anchors, Anchor{Mention: m, Entity: e, Name: t.g.EntityName(e), Score: entBias(e)})
		}
		return nil
	}
	mentions := req.Mentions
	if len(mentions) == 0 {
		seen := map[string]bool{}
		for _, s := range sgs {
			if s == nil {
				continue
			}
			for _, n := range s.mentionNodes() {
				if !seen[s.nodes[n]] {
					seen[s.nodes[n]] = true
					mentions = append(mentions, s.nodes[n])
				}
			}
		}
	}
	for _, m := range mentions {
		a, ok, err := t.anchorOne(ctx, m, entBias)
		if err != nil {
			return fmt.Errorf("tracing: anchor %q: %w", m, err)
		}
		if !ok {
			res.Problems = append(res.Problems, fmt.Sprintf("no KG entity found for mention %q", m))
			continue
		}
		res.Anchors = append(res.Anchors, a)
	}
	return nil
}

func (t *Tracer) anchorOne(ctx context.Context, mention string, bias func(int32) float32) (Anchor, bool, error) {
	norm := kg.Normalize(mention)
	if strings.TrimSpace(mention) == "" {
		return Anchor{}, false, nil
	}
	type cand struct {
		e     int32
		score float32
	}
	var cands []cand
	seen := map[int32]bool{}
	for _, e := range t.g.EntitiesByNorm(mention) {
		seen[e] = true
		cands = append(cands, cand{e, bias(e)})
	}
	if t.ents != nil && t.cfg.TopN > 0 {
		hits, err := t.ents.Nearest(ctx, kg.EntityText(mention), t.cfg.TopN)
		if err != nil {
			return Anchor{}, false, err
		}
		w := t.cfg.StringWeight
		for _, h := range hits {
			if seen[h.Entity] {
				continue
			}
			seen[h.Entity] = true
			s := (1-w)*h.Score + w*editdist.Ratio(kg.Normalize(t.g.EntityName(h.Entity)), norm)
			cands = append(cands, cand{h.Entity, s * bias(h.Entity)})
		}
	}
	if len(cands) == 0 {
		return Anchor{}, false, nil
	}
	best := cands[0]
	for _, c := range cands[1:] {
		switch {
		case c.score > best.score:
			best = c
		case c.score == best.score:
			dc, db := t.g.Degree(c.e), t.g.Degree(best.e)
			if dc > db || (dc == db && c.e < best.e) {
				best = c
			}
		}
	}
	return Anchor{Mention: mention, Entity: best.e, Name: t.g.EntityName(best.e), Score: best.score}, true, nil
}

// assign pairs anchors with schema nodes: each anchor goes to the schema
// mention it matches best, and a schema mention keeps only its best-matching
// anchors, so a question entity is not traced from a node that names another.
func (t *Tracer) assign(sgs []*sGraph, anchors []Anchor) []job {
	var jobs []job
	for gi, s := range sgs {
		if s == nil {
			continue
		}
		nodes := make([]int, len(anchors))
		ratios := make([]float32, len(anchors))
		bestAt := map[int]float32{}
		for ai, a := range anchors {
			n, r := s.bestNode(a.Mention, kg.EntityTextOf(t.g, a.Entity))
			nodes[ai], ratios[ai] = n, r
			if n >= 0 && r > bestAt[n] {
				bestAt[n] = r
			}
		}
		var mine []job
		for ai := range anchors {
			if nodes[ai] < 0 || ratios[ai] < bestAt[nodes[ai]] {
				continue
			}
			mine = append(mine, job{graph: gi, anchor: ai, node: nodes[ai]})
		}
		jobs = append(jobs, t.join(mine, anchors)...)
	}
	return jobs
}

// join turns the searches of one schema graph whose mentions are anchored
// at two or more of its nodes (a conjunction: "the film directed by A in
// language B", or two anchors meeting at a CVT) into one search: from the
// anchor of fewest edges, with every other anchored node pinned to its
// anchor (the best-scored one where a node has several), so that the
// branches towards them intersect instead of each search binding
// whatever its own anchor reaches. A graph anchored at one node keeps
// its searches as they are.
func (t *Tracer) join(jobs []job, anchors []Anchor) []job {
	best := map[int]int{} // node -> its best anchor
	for _, j := range jobs {
		if b, ok := best[j.node]; !ok || anchors[j.anchor].Score > anchors[b].Score {
			best[j.node] = j.anchor
		}
	}
	if len(best) < 2 {
		return jobs
	}
	start := -1
	for _, j := range jobs {
		if best[j.node] != j.anchor {
			continue
		}
		if start < 0 {
			start = j.node
			continue
		}
		d, ds := t.g.Degree(anchors[j.anchor].Entity), t.g.Degree(anchors[best[start]].Entity)
		if d < ds || (d == ds && j.node < start) {
			start = j.node
		}
	}
	var pins []pin
	for n, a := range best {
		if n != start {
			pins = append(pins, pin{node: n, entity: anchors[a].Entity})
		}
	}
	slices.SortFunc(pins, func(a, b pin) int { return cmp.Compare(a.node, b.node) })
	return []job{{graph: jobs[0].graph, anchor: best[start], node: start, pins: pins}}
}
