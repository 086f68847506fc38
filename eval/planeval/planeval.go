// Package planeval scores planners' relation paths and strategies against
// the gold reasoning paths of benchmark questions (plan quality, before any
// retrieval): whether any of the B planned paths is a gold path (any-hit),
// whether the first one is (top-1), how many of the gold paths were planned
// (path recall), and whether the strategy is the labelling rule's (Breadth
// iff the question has more than one gold answer).
package planeval

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/schema"
)

// Item is one question's plan next to its gold data.
type Item struct {
	// Gold are the question's gold relation paths; a question without any
	// is not scored.
	Gold [][]schema.Step
	// Answers is the number of gold answers, or -1 when the dataset does
	// not give them (strategy accuracy then leaves the question out).
	Answers int
	// Paths are the planned relation paths, best first.
	Paths [][]schema.Step
	// Strategy is the planned strategy.
	Strategy schema.Strategy
	// Latency is the planner's time for the question.
	Latency time.Duration
}

// Report holds plan-quality figures in percent over N questions.
type Report struct {
	N          int     `json:"n"`
	AnyHit     float64 `json:"any_hit"`
	Top1       float64 `json:"top1"`
	PathRecall float64 `json:"path_recall"`
	// StrategyAcc is nil when no question has a known answer count.
	StrategyAcc *float64 `json:"strategy_acc,omitempty"`
	StrategyN   int      `json:"strategy_n"`
	// NoGold counts questions left out for having no gold path.
	NoGold int `json:"no_gold"`
	// Beam is the most paths any question was allowed (for the record).
	Beam         int     `json:"beam"`
	LatencyP50MS float64 `json:"latency_p50_ms"`
	LatencyP95MS float64 `json:"latency_p95_ms"`
	LatencyMean  float64 `json:"latency_mean_ms"`
}

// SameSteps reports whether a planned path equals a gold path: the same
// relations in the same order, and the same direction at every step where
// both sides know it (a gold step walked Either, as WebQSP's are, matches
// a step in either direction).
func SameSteps(pred, gold []schema.Step) bool {
	if len(pred) != len(gold) {
		return false
	}
	for i := range pred {
		if pred[i].Rel != gold[i].Rel {
			return false
		}
		if pred[i].Dir != schema.Either && gold[i].Dir != schema.Either && pred[i].Dir != gold[i].Dir {
			return false
		}
	}
	return true
}

// Score computes the report over items; beam only labels it.
func Score(items []Item, beam int) Report {
	r := Report{Beam: beam}
	var hit, top1, recall, strat float64
	var lat []float64
	for _, it := range items {
		lat = append(lat, float64(it.Latency)/float64(time.Millisecond))
		if len(it.Gold) == 0 {
			r.NoGold++
			continue
		}
		r.N++
		found := 0
		for _, g := range it.Gold {
			for _, p := range it.Paths {
				if SameSteps(p, g) {
					found++
					break
				}
			}
		}
		recall += float64(found) / float64(len(it.Gold))
		if found > 0 {
			hit++
		}
		if len(it.Paths) > 0 && slices.ContainsFunc(it.Gold, func(g []schema.Step) bool { return SameSteps(it.Paths[0], g) }) {
			top1++
		}
		if it.Answers >= 0 {
			r.StrategyN++
			want := schema.Precision
			if it.Answers > 1 {
				want = schema.Breadth
			}
			if it.Strategy == want {
				strat++
			}
		}
	}
	if r.N > 0 {
		n := float64(r.N)
		r.AnyHit, r.Top1, r.PathRecall = round(100*hit/n), round(100*top1/n), round(100*recall/n)
	}
	if r.StrategyN > 0 {
		a := round(100 * strat / float64(r.StrategyN))
		r.StrategyAcc = &a
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		r.LatencyP50MS = round(quantile(lat, 0.5))
		r.LatencyP95MS = round(quantile(lat, 0.95))
		var s float64
		for _, x := range lat {
			s += x
		}
		r.LatencyMean = round(s / float64(len(lat)))
	}
	return r
}

func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func round(x float64) float64 { return math.Round(x*100) / 100 }

// StepsOf reads a path-shaped schema graph back into relation steps: from
// its entity mention, a triple (previous, rel, next) is a Forward step and
// (next, rel, previous) an Inverse one, as schema.PathGraph writes them.
// ok is false when g is not a simple path from one mention.
func StepsOf(g schema.Graph) (steps []schema.Step, ok bool) {
	ms := g.Mentions()
	if len(ms) != 1 || len(g.Triples) == 0 {
		return nil, false
	}
	cur := ms[0]
	used := make([]bool, len(g.Triples))
	for range g.Triples {
		next := -1
		for i, t := range g.Triples {
			if used[i] {
				continue
			}
			switch {
			case t.Head == cur:
				steps = append(steps, schema.Step{Rel: t.Rel, Dir: schema.Forward})
				cur, next = t.Tail, i
			case t.Tail == cur:
				steps = append(steps, schema.Step{Rel: t.Rel, Dir: schema.Inverse})
				cur, next = t.Head, i
			}
			if next >= 0 {
				break
			}
		}
		if next < 0 {
			return nil, false
		}
		used[next] = true
	}
	return steps, true
}

// Format writes a path as "rel1 > rel2 <" (">" forward, "<" inverse, "~"
// either), for logs and notes.
func Format(steps []schema.Step) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		d := ">"
		switch s.Dir {
		case schema.Inverse:
			d = "<"
		case schema.Either:
			d = "~"
		}
		parts[i] = s.Rel + " " + d
	}
	return strings.Join(parts, " ")
}

// String renders the report on one line.
func (r Report) String() string {
	s := fmt.Sprintf("n=%d any_hit=%.2f top1=%.2f path_recall=%.2f", r.N, r.AnyHit, r.Top1, r.PathRecall)
	if r.StrategyAcc != nil {
		s += fmt.Sprintf(" strategy_acc=%.2f (n=%d)", *r.StrategyAcc, r.StrategyN)
	}
	return s + fmt.Sprintf(" latency_p50=%.3fms", r.LatencyP50MS)
}
