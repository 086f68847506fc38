package tracing

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
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

// DefaultFallbackScan is Config.FallbackScan: a ranked request's later
// readings, once an earlier one has bound the answers, score at most
// this many edges per search. A step at an entity of ordinary degree
// (tens of edges) is well within it, so their evidence and answers are
// as before unless they pass through a hub, where the full budget would
// read every tied edge's names to keep the first 10,000 by name
// (cutTies): seconds at 10M triples for answers no one returns. On the
// 10M synthetic KG (seed 5, pattern planner, 1,000 questions) 2,000 left
// every question's answer set, Hits@1, F1 and abstentions at confidence
// 0.5 as with the full budget; the order of answers tied on score
// changed on 35 questions (Answer.Bound counts the readings that bind an
// answer, and a cut reading binds fewer), the first answer on 6, each
// still a gold one.
const DefaultFallbackScan = 2_000

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
	keys  []rankKey
	tmp   []cand
	named []namedCand
	tids  []int32 // scratch of run.keep
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
// (higher T-Score, then edges pointing the schema edge's way, then by
// their triples' names), so that the branches most like the schema graph
// are searched first. When they would pass the limit, only the best are
// kept, as many as remain. Where the limit binds, what a branch may keep
// depends on what the branches searched before it left (share), so the
// order is by name, never by the backend's numbering of the edges: a
// SPARQL endpoint and a file then keep the same edges. Sorting by name
// costs at most MaxKeep edges per search, since only kept edges are
// sorted; a flood beyond the limit is cut by cutTies first.
func (b *budget) keep(max int, sel []cand, name func(c cand) tripleName) []cand {
	if max <= 0 {
		return sel
	}
	if b.limit == 0 {
		b.limit = max
	}
	room := b.limit - b.kept
	if len(sel) > room {
		b.order(sel)
		b.hit = true
		if room < 0 {
			room = 0
		}
		if room > 0 {
			cutTies(sel, room, name)
		}
		sel = sel[:room]
	}
	if len(sel) > 1 {
		// Best first, then each run of ties by name: the names of edges
		// that tie are read once each, not once per comparison.
		slices.SortFunc(sel, bestFirst)
		for i := 0; i < len(sel); {
			j := i + 1
			for j < len(sel) && bestFirst(sel[i], sel[j]) == 0 {
				j++
			}
			if j-i > 1 {
				b.named = sortByName(sel[i:j], name, b.named)
			}
			i = j
		}
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

// cutTies puts first, in name order, the edges of sel tied with the last
// one kept (sel[n-1]) that a cut at n keeps: the entity's edge order is
// the backend's numbering (a SPARQL KG numbers edges as it meets them),
// and which of a flood's tied edges a cut keeps must be the same on every
// backend. A hub's tie can hold millions of edges and the cut thousands,
// so those are selected with a heap of the kept ones, not by sorting all.
func cutTies(sel []cand, n int, name func(c cand) tripleName) {
	k := rankKey{sel[n-1].score, sel[n-1].aligned}
	lo, hi := n-1, n
	for lo > 0 && (rankKey{sel[lo-1].score, sel[lo-1].aligned}) == k {
		lo--
	}
	for hi < len(sel) && (rankKey{sel[hi].score, sel[hi].aligned}) == k {
		hi++
	}
	tied, keep := sel[lo:hi], sel[lo:n]
	if len(tied) > 4*len(keep) {
		// kept is a max-heap by name: an edge after it replaces its top
		// when it comes first by name. Each edge's names are read once.
		kept := make([]namedCand, len(keep))
		for i, c := range keep {
			kept[i] = namedCand{c, name(c)}
		}
		for i := len(kept)/2 - 1; i >= 0; i-- {
			siftDown(kept, i, compareNamed)
		}
		for _, c := range tied[len(keep):] {
			if x := (namedCand{c, name(c)}); compareNamed(x, kept[0]) < 0 {
				kept[0] = x
				siftDown(kept, 0, compareNamed)
			}
		}
		slices.SortFunc(kept, compareNamed)
		for i, x := range kept {
			keep[i] = x.c
		}
		return
	}
	sortByName(tied, name, nil)
}

// tripleName is a triple's names as Tracer.byName orders them, read once.
type tripleName struct {
	head, rel, tail string
	tid             int32
}

// namedCand is a candidate edge with its triple's names.
type namedCand struct {
	c cand
	n tripleName
}

// compareNamed orders candidates as Tracer.byName orders their triples.
func compareNamed(x, y namedCand) int {
	return compareTripleNames(x.n, y.n)
}

// compareTripleNames orders triples' names as Tracer.byName orders the
// triples.
func compareTripleNames(a, b tripleName) int {
	if c := strings.Compare(a.head, b.head); c != 0 {
		return c
	}
	if c := strings.Compare(a.rel, b.rel); c != 0 {
		return c
	}
	if c := strings.Compare(a.tail, b.tail); c != 0 {
		return c
	}
	return cmp.Compare(a.tid, b.tid)
}

// sortByName sorts cs by their triples' names (Tracer.byName), reading
// each one's names once, with buf as scratch; it returns buf grown.
func sortByName(cs []cand, name func(c cand) tripleName, buf []namedCand) []namedCand {
	buf = buf[:0]
	for _, c := range cs {
		buf = append(buf, namedCand{c, name(c)})
	}
	slices.SortFunc(buf, compareNamed)
	for i, x := range buf {
		cs[i] = x.c
	}
	return buf
}

// siftDown restores the max-heap h below i.
func siftDown[T any](h []T, i int, cmp func(x, y T) int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && cmp(h[c+1], h[c]) > 0 {
			c++
		}
		if cmp(h[c], h[i]) <= 0 {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
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
		// A later reading's smaller budget leaves the answers as they
		// are (Config.FallbackScan): not counted.
		if o.spent.hit && !o.fallback {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("search budget reached in %d of %d searches (--max-scan %d edges scored, --max-keep %d kept): answers may be incomplete", n, len(outs), cfg.MaxScan, cfg.MaxKeep)
}
