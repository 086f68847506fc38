package compose

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// maxEnds caps the entities a path's ends are collected to: a hub's path
// is no second branch worth intersecting.
const maxEnds = 5000

// maxBranch is the most hops the second mention's path walks to the
// answer: a longer one meets some answer by chance, whatever the words
// ("what genres do the films starred by X fall under": the film Fall's
// actors' films' genres).
const maxBranch = 2

// conjunction returns the two-anchor schema graph for a question that
// names a second thing beside its topic entity ("which company in lyon
// does bob work for"), when the best path from the topic reaches several
// answers: the best-aligned path from the second mention (its nearest
// relation words, the topic's mention left out) whose ends meet those
// answers and narrow them, joined at the answer node, so that tracing
// intersects the branches. ok is false when nothing narrows.
func (p *Planner) conjunction(ctx context.Context, in projection.Input, best projection.ScoredPath, anchor string) (projection.Candidate, string, bool) {
	a, ok := p.g.Entity(anchor)
	if !ok {
		return projection.Candidate{}, "", false
	}
	answers := ends(p.g, a, best.Steps)
	if len(answers) < 2 {
		return projection.Candidate{}, "", false
	}
	q := in.Question
	for _, m := range in.Mentions {
		q = strings.ReplaceAll(q, m, " ")
	}
	for _, m := range in.Linked {
		// A second topic entity counts too: the paths leave the first.
		if m.Entity == "" || m.Entity == anchor {
			continue
		}
		b, ok := p.g.Entity(m.Entity)
		if !ok {
			continue
		}
		pred, err := p.Predict(ctx, q, []string{m.Entity}, []string{m.Text})
		if err != nil {
			continue
		}
		for _, c := range pred.Paths {
			if len(c.Steps) > maxBranch {
				continue
			}
			meet := ends(p.g, b, c.Steps)
			n := 0
			for _, e := range answers {
				// The mention's own entity is no answer it narrows to.
				if _, ok := slices.BinarySearch(meet, e); ok && e != b {
					n++
				}
			}
			if n == 0 || n == len(answers) {
				continue
			}
			g := schema.PathGraph(anchor, best.Steps)
			g.Triples = append(g.Triples, branch(m.Entity, c.Steps, g.Answer, len(best.Steps))...)
			note := fmt.Sprintf("conjunction: %q (%s) narrows %d answers to %d by %s", m.Text, m.Entity, len(answers), n, stepsText(c.Steps))
			return projection.Candidate{Graph: g, Score: best.Score + c.Score}, note, true
		}
	}
	return projection.Candidate{}, "", false
}

// branch is the triples of a path from entity to the node answer, its
// inner nodes numbered after the first path's used ones.
func branch(entity string, steps []schema.Step, answer string, used int) []schema.Triple {
	out := make([]schema.Triple, 0, len(steps))
	prev := entity
	for i, s := range steps {
		to := answer
		if i < len(steps)-1 {
			used++
			to = "[ENT" + strconv.Itoa(used) + "]"
		}
		if s.Dir == schema.Inverse {
			out = append(out, schema.Triple{Head: to, Rel: s.Rel, Tail: prev})
		} else {
			out = append(out, schema.Triple{Head: prev, Rel: s.Rel, Tail: to})
		}
		prev = to
	}
	return out
}

// ends returns the entities steps reach from e in g, sorted, at most
// maxEnds of them per hop.
func ends(g kg.Reader, e int32, steps []schema.Step) []int32 {
	front := []int32{e}
	for _, s := range steps {
		r, ok := g.Relation(s.Rel)
		if !ok {
			return nil
		}
		var next []int32
		for _, x := range front {
			if s.Dir == schema.Inverse {
				for _, tid := range g.InRel(x, r) {
					next = append(next, g.Triple(tid).Head)
				}
			} else {
				for _, tid := range g.OutRel(x, r) {
					next = append(next, g.Triple(tid).Tail)
				}
			}
			if len(next) > maxEnds {
				return nil
			}
		}
		slices.Sort(next)
		front = slices.Compact(next)
	}
	return front
}

// stepsText writes a path's relations, an inverse one with a leading "~".
func stepsText(steps []schema.Step) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.Rel
		if s.Dir == schema.Inverse {
			parts[i] = "~" + s.Rel
		}
	}
	return strings.Join(parts, " ")
}
