package benchmark

import (
	"slices"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// GoldTriples returns R, the triples of q's ground-truth reasoning paths.
// A gold path that names its entities (PathQuestion) contributes its own
// triples. Otherwise the relation pattern is grounded in g: every triple
// on a walk that starts at the path's start (or any topic entity when it
// has none), follows the steps in their directions, and ends at a gold
// answer. With g nil only named paths contribute. Triples are de-duplicated
// and returned in first-found order.
func GoldTriples(g *kg.Graph, q Question) [][3]string {
	var out [][3]string
	seen := map[[3]string]bool{}
	add := func(t [3]string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	var answers map[int32]bool
	for _, gp := range q.Gold {
		if ts := gp.Triples(); ts != nil {
			for _, t := range ts {
				add(t)
			}
			continue
		}
		if g == nil || len(gp.Steps) == 0 {
			continue
		}
		if answers == nil {
			answers = map[int32]bool{}
			for _, a := range q.Answers {
				if id, ok := g.Entity(a); ok {
					answers[id] = true
				}
			}
		}
		for _, id := range goldStarts(g, q, gp) {
			for _, t := range groundPath(g, id, gp.Steps, answers) {
				h, r, tl := g.Triple(t).Head, g.Triple(t).Rel, g.Triple(t).Tail
				add([3]string{g.EntityName(h), g.RelationName(r), g.EntityName(tl)})
			}
		}
	}
	return out
}

// hop is one edge walked at some step: triple id, from and to entity.
type hop struct{ t, from, to int32 }

// groundPath returns the ids of the triples on walks from start along
// steps that end in answers: a forward sweep collects each step's edges,
// a backward sweep keeps those leading to an answer.
func groundPath(g *kg.Graph, start int32, steps []schema.Step, answers map[int32]bool) []int32 {
	levels, frontier := sweep(g, start, steps)
	if levels == nil {
		return nil
	}
	keep := map[int32]bool{}
	for e := range frontier {
		if answers[e] {
			keep[e] = true
		}
	}
	var out []int32
	for k := len(steps) - 1; k >= 0; k-- {
		prev := map[int32]bool{}
		for _, h := range levels[k] {
			if keep[h.to] {
				out = append(out, h.t)
				prev[h.from] = true
			}
		}
		keep = prev
	}
	return out
}

// sweep follows steps from start and returns the edges walked at each step
// and the entities reached at the end; levels is nil when a step's relation
// is not in g.
func sweep(g *kg.Graph, start int32, steps []schema.Step) (levels [][]hop, frontier map[int32]bool) {
	heads, _, tails := g.Columns()
	frontier = map[int32]bool{start: true}
	levels = make([][]hop, len(steps))
	for k, s := range steps {
		r, ok := g.Relation(s.Rel)
		if !ok {
			return nil, nil
		}
		next := map[int32]bool{}
		for e := range frontier {
			if s.Dir != schema.Inverse {
				for _, t := range g.OutRel(e, r) {
					levels[k] = append(levels[k], hop{t, e, tails[t]})
					next[tails[t]] = true
				}
			}
			if s.Dir != schema.Forward {
				for _, t := range g.InRel(e, r) {
					levels[k] = append(levels[k], hop{t, e, heads[t]})
					next[heads[t]] = true
				}
			}
		}
		frontier = next
	}
	return levels, frontier
}

// PathExact reports whether following q's gold relation paths from its topic
// entities in g reaches gold answers only. Where it does not, the KG holds
// more entities at the end of the gold path than the dataset lists (MetaQA's
// rebuilt kb.txt merges namesake films), and no method that follows
// relations can tell them apart, so this bounds Hits@1 from the data's side.
// ok is false when no gold path can be followed in g.
func PathExact(g *kg.Graph, q Question) (exact, ok bool) {
	if g == nil {
		return false, false
	}
	gold := map[string]bool{}
	for _, a := range q.Answers {
		gold[a] = true
	}
	exact = true
	for _, gp := range q.Gold {
		for _, id := range goldStarts(g, q, gp) {
			if len(gp.Steps) == 0 {
				continue
			}
			levels, frontier := sweep(g, id, gp.Steps)
			if levels == nil || len(frontier) == 0 {
				continue
			}
			ok = true
			for e := range frontier {
				if !gold[g.EntityName(e)] {
					exact = false
				}
			}
		}
	}
	return exact && ok, ok
}

// Coverage is the paper's Equation 17, |R ∩ evidence| / |R|, with a gold
// triple covered when the evidence holds it in either orientation. ok is

// GoldEnds returns the ids of the entities in g that q's gold relation
// paths reach from its topic entities (each path from its start, when it
// names one), gold answers or not, sorted. Where it holds more than the
// answers, the answers have siblings that the relations alone cannot
// tell apart.
func GoldEnds(g *kg.Graph, q Question) []int32 {
	if g == nil {
		return nil
	}
	ends := map[int32]bool{}
	for _, gp := range q.Gold {
		if len(gp.Steps) == 0 {
			continue
		}
		for _, id := range goldStarts(g, q, gp) {
			if _, frontier := sweep(g, id, gp.Steps); frontier != nil {
				for e := range frontier {
					ends[e] = true
				}
			}
		}
	}
	out := make([]int32, 0, len(ends))
	for e := range ends {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// goldStarts returns the ids in g of the entities gold path gp leaves: its
// own start when it names one, else the question's entities.
func goldStarts(g kg.Reader, q Question, gp schema.GoldPath) []int32 {
	starts := q.Entities
	if gp.Start != "" {
		starts = []string{gp.Start}
	}
	var out []int32
	for _, s := range starts {
		if id, ok := g.Entity(s); ok {
			out = append(out, id)
		}
	}
	return out
}
