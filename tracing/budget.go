package tracing

import (
	"cmp"
	"fmt"
	"slices"
)

// Defaults of the search budget (Config.MaxScan, Config.MaxKeep). A step
// at an entity with thousands of edges scores its relations first and
// looks only at the edges of those it can select (prune.go), a random
// read or two each, tens of nanoseconds: 2 million of them are about a
// tenth of a second even at 100M triples, where a country is an entity
// with millions of edges. A kept edge costs more, since it is recursed
// into, recorded, sorted and flattened into chains; 10,000 of them are
// more evidence than any answer rests on (the benchmarks' questions have
// at most hundreds of answers) and still milliseconds to merge. With
// these, Hits@1 with gold paths stays 100 at 10M and 100M synthetic
// triples, and PathQuestion, MetaQA and WebQSP answer as without them.
const (
	DefaultMaxScan = 2_000_000
	DefaultMaxKeep = 10_000
)

// budget is what one search (a schema graph traced from one anchor) has
// used: edges scored and edges kept. Each search has its own, so results
// do not depend on how searches are spread over workers.
type budget struct {
	scanned, kept int
	hit           bool // a step was cut short or not taken
	// limit is what kept may reach in the branch being searched: MaxKeep
	// at the top, and a share of what remains below a step that kept
	// several edges (share). 0 is MaxKeep.
	limit int
	// Scratch of order.
	keys []rankKey
	tmp  []cand
}

// scan charges the n edges (and relations) a step is about to score
// against max (0 is no bound). It reports false, charging nothing, when
// they would pass it: the step is not taken and its branch ends there,
// whatever the entity. (At a large entity, pruned has already narrowed the
// step to the best relations that fit.)
func (b *budget) scan(max, n int) bool {
	if max > 0 && b.scanned+n > max {
		b.hit = true
		return false
	}
	b.scanned += n
	return true
}

// keep charges the edges a step selected against the branch's limit
// (none when max, the search's MaxKeep, is 0) and returns them best first
// (higher T-Score, then edges pointing the schema edge's way, then in the
// entity's edge order), so that the branches most like the schema graph
// are searched first. When they would pass the limit, only the best are
// kept, as many as remain. The order changes nothing else: a search's
// answers and evidence do not depend on the order its branches are
// searched in.
func (b *budget) keep(max int, sel []cand) []cand {
	if max <= 0 {
		return sel
	}
	b.order(sel)
	if b.limit == 0 {
		b.limit = max
	}
	if room := b.limit - b.kept; len(sel) > room {
		b.hit = true
		sel = sel[:min(len(sel), room)]
	}
	b.kept += len(sel)
	return sel
}

// order sorts sel best first, stably. A step's scores take few values
// (one per relation, when the far end is not in the text), so a hub's
// hundreds of thousands of tied edges are bucketed in two passes rather
// than compared.
func (b *budget) order(sel []cand) {
	if len(sel) < 2 {
		return
	}
	keys := b.keys[:0]
	for _, c := range sel {
		k := rankKey{c.score, c.aligned}
		if !slices.Contains(keys, k) {
			if len(keys) == maxBuckets {
				slices.SortStableFunc(sel, bestFirst)
				return
			}
			keys = append(keys, k)
		}
	}
	b.keys = keys
	if len(keys) == 1 {
		return
	}
	slices.SortFunc(keys, func(x, y rankKey) int {
		return bestFirst(cand{score: x.score, aligned: x.aligned}, cand{score: y.score, aligned: y.aligned})
	})
	b.tmp = append(b.tmp[:0], sel...)
	k := 0
	for _, key := range keys {
		for _, c := range b.tmp {
			if c.score == key.score && c.aligned == key.aligned {
				sel[k] = c
				k++
			}
		}
	}
}

// rankKey is what orders candidate edges besides their place.
type rankKey struct {
	score   float32
	aligned bool
}

// maxBuckets is the most distinct scores order buckets by.
const maxBuckets = 16

// share gives the branch about to be searched, the first of siblings
// still to search below a step, an equal share of what the limit leaves
// (what a sibling does not use goes to the next), and returns the limit
// to restore after it: a flood under one edge cannot starve the others,
// at any depth.
func (b *budget) share(max, siblings int) (outer int) {
	outer = b.limit
	if max <= 0 || siblings <= 1 {
		return outer
	}
	b.limit = b.kept + (b.limit-b.kept)/siblings
	return outer
}

// bestFirst orders candidate edges: higher T-Score, then edges pointing
// the schema edge's way (ties keep their order: sort stably).
func bestFirst(x, y cand) int {
	if c := cmp.Compare(y.score, x.score); c != 0 {
		return c
	}
	if x.aligned != y.aligned {
		if x.aligned {
			return -1
		}
		return 1
	}
	return 0
}

// budgetProblem reports the searches that ran out of budget, "" when
// none did.
func budgetProblem(cfg Config, outs []runOut) string {
	n := 0
	for _, o := range outs {
		if o.spent.hit {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("search budget reached in %d of %d searches (--max-scan %d edges scored, --max-keep %d kept): answers may be incomplete", n, len(outs), cfg.MaxScan, cfg.MaxKeep)
}
