package pattern

import (
	"slices"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// anchored is the schema graph of path steps for a question naming
// entities: the path leaves the first of them it leads anywhere from in g
// (a path learnt from "who did A play in B" leaves the actor, whichever
// entity the question's list gives first), and the other entity that
// narrows its answers most is joined to the path's node it links to
// (projection.JoinMention: the film at the performance, a CVT), so that
// tracing intersects the two branches. hops > 0 says g is a neighbourhood
// that deep: a longer path is anchored on entities[0] and joined to
// nothing, as a graph it cannot walk says nothing of either; one step
// deep, a join through an intermediate entity is not looked for, and
// deeper is 2 where no join in one hop was found, the depth that would
// show one. notes says what was joined.
func anchored(g kg.Reader, hops int, entities []string, steps []schema.Step) (graph schema.Graph, notes []string, deeper int) {
	anchor := entities[0]
	if g == nil || len(entities) < 2 || hops > 0 && len(steps) > hops {
		return schema.PathGraph(anchor, steps), nil, 0
	}
	if Reach(g, startsIn(g, entities[:1]), steps, 1) == 0 {
		for _, e := range entities[1:] {
			if Reach(g, startsIn(g, []string{e}), steps, 1) > 0 {
				anchor = e
				break
			}
		}
	}
	graph = schema.PathGraph(anchor, steps)
	// Over a neighbourhood one step deep, the second thing's neighbours'
	// edges are not there: a join through one is not looked for.
	best, found := projection.BestJoin(g, anchor, steps, entities, projection.JoinOptions{OneHop: hops == 1})
	if !found {
		if hops == 1 {
			deeper = 2
		}
		return graph, nil, deeper
	}
	return best.Attach(graph), []string{best.Note()}, 0
}

// joinedFirst moves the candidates a second entity was joined to
// (joined[i]) before the others, each group in its order: a reading that
// meets everything the question names is the more specific one, as
// compose plans its conjunction first. A conjunction path's graph counts
// as joined: it stays where the planner ranked it. A moved candidate is
// no variant of the first path.
func joinedFirst(cands []projection.Candidate, joined []bool) []projection.Candidate {
	if len(joined) != len(cands) || len(cands) == 0 || joined[0] || !slices.Contains(joined, true) {
		return cands
	}
	out := make([]projection.Candidate, 0, len(cands))
	for _, first := range [2]bool{true, false} {
		for i, c := range cands {
			if joined[i] == first {
				c.Variant = false
				out = append(out, c)
			}
		}
	}
	return out
}
