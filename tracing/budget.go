package tracing

import (
	"cmp"
	"fmt"
	"slices"
)

// Defaults of the search budget (Config.MaxScan, Config.MaxKeep). A step
// scores every edge of the entity it stands on, a few nanoseconds each,
// so 20 million scored edges are a few hundred milliseconds: a hub of
// millions of edges (Freebase's largest countries, a gender) can be
// entered many times over, but not without end. A kept edge costs more,
// since it is recursed into, recorded, sorted and flattened into chains;
// 10,000 of them are more evidence than any answer rests on (the
// benchmarks' questions have at most hundreds of answers) and still
// milliseconds to merge.
const (
	DefaultMaxScan = 20_000_000
	DefaultMaxKeep = 10_000
)

// budget is what one search (a schema graph traced from one anchor) has
// used: edges scored and edges kept. Each search has its own, so results
// do not depend on how searches are spread over workers.
type budget struct {
	scanned, kept int
	hit           bool // a step was cut short or not taken
}

// scan charges the n edges a step is about to score against max (0 is no
// bound). It reports false, charging nothing, when they would pass it:
// the step is not taken and its branch ends there, whatever the entity.
func (b *budget) scan(max, n int) bool {
	if max > 0 && b.scanned+n > max {
		b.hit = true
		return false
	}
	b.scanned += n
	return true
}

// keep charges the edges a step selected against max (0 is no bound).
// When they would pass it, only the best are kept (higher T-Score, then
// edges pointing the schema edge's way, then lower triple id), in their
// order, as many as remain.
func (b *budget) keep(max int, sel []cand) []cand {
	if max <= 0 || b.kept+len(sel) <= max {
		b.kept += len(sel)
		return sel
	}
	b.hit = true
	room := max - b.kept
	if room <= 0 {
		return sel[:0]
	}
	best := slices.Clone(sel)
	slices.SortFunc(best, func(x, y cand) int {
		if c := cmp.Compare(y.score, x.score); c != 0 {
			return c
		}
		if x.aligned != y.aligned {
			if x.aligned {
				return -1
			}
			return 1
		}
		return cmp.Compare(x.tid, y.tid)
	})
	cut := best[room-1]
	k := 0
	for _, c := range sel {
		if c.score > cut.score || c.score == cut.score && (c.aligned && !cut.aligned || c.aligned == cut.aligned && c.tid <= cut.tid) {
			sel[k] = c
			k++
		}
	}
	b.kept += k
	return sel[:k]
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
