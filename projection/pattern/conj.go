package pattern

import (
	"slices"
	"strconv"

	"github.com/stem-kgqa/stem/schema"
)

// JoinRel is the relation of the step that separates the parts of a
// conjunction path: a question naming two entities whose paths meet
// ("which film has directed by A and language B ?") is learnt and planned
// as one label, A's path to the answer, JoinRel, B's path to it, so that
// the vote and the classifier choose both parts together. Plan builds the
// two-anchor schema graph from it (ConjunctionGraph), anchored on the
// question's entities in the order its text names them.
const JoinRel = "&"

// ConjunctionPath is the label of gold graph g for a question naming
// entities in that order: each entity's path to the answer
// (schema.Graph.PathTo), joined by JoinRel steps; ok is false for fewer
// than two entities or an entity that does not reach the answer.
func ConjunctionPath(g schema.Graph, entities []string) (steps []schema.Step, ok bool) {
	if len(entities) < 2 {
		return nil, false
	}
	for i, e := range entities {
		p, ok := g.PathTo(e)
		if !ok {
			return nil, false
		}
		if i > 0 {
			steps = append(steps, schema.Step{Rel: JoinRel})
		}
		steps = append(steps, p...)
	}
	return steps, true
}

// parts splits a path at its JoinRel steps.
func parts(steps []schema.Step) [][]schema.Step {
	var out [][]schema.Step
	start := 0
	for i, s := range steps {
		if s.Rel == JoinRel {
			out = append(out, steps[start:i])
			start = i + 1
		}
	}
	return append(out, steps[start:])
}

// isConjunction reports whether steps is a conjunction path.
func isConjunction(steps []schema.Step) bool {
	return slices.ContainsFunc(steps, func(s schema.Step) bool { return s.Rel == JoinRel })
}

// ConjunctionGraph builds the schema graph of conjunction path steps
// anchored on entities (one per part, in order): the first part as
// schema.PathGraph, and each other part from its entity to the first
// part's node where the two paths' last steps agree (at the answer, or
// at a CVT when they share the steps after it). ok is false when steps
// has more parts than entities or an empty part.
func ConjunctionGraph(entities []string, steps []schema.Step) (schema.Graph, bool) {
	ps := parts(steps)
	if len(ps) > len(entities) || slices.ContainsFunc(ps, func(p []schema.Step) bool { return len(p) == 0 }) {
		return schema.Graph{}, false
	}
	g := schema.PathGraph(entities[0], ps[0])
	first := ps[0]
	nodes := []string{entities[0]}
	for i := range first {
		nodes = append(nodes, "[ENT"+strconv.Itoa(i+1)+"]")
	}
	next := len(first) + 1
	for k, p := range ps[1:] {
		// The longest shared suffix that leaves each path a step of its
		// own: the other path joins the first at that node.
		s := 0
		for s < len(p)-1 && s < len(first)-1 && p[len(p)-1-s] == first[len(first)-1-s] {
			s++
		}
		prev := entities[k+1]
		for i, st := range p[:len(p)-s] {
			to := nodes[len(first)-s]
			if i < len(p)-s-1 {
				to = "[ENT" + strconv.Itoa(next) + "]"
				next++
			}
			if st.Dir == schema.Inverse {
				g.Triples = append(g.Triples, schema.Triple{Head: to, Rel: st.Rel, Tail: prev})
			} else {
				g.Triples = append(g.Triples, schema.Triple{Head: prev, Rel: st.Rel, Tail: to})
			}
			prev = to
		}
	}
	return g, true
}
