package compose

import (
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// cvtJoin returns the best path's graph with a second entity the question
// names joined to the path's node it links to in one hop
// (projection.JoinMention):
// "who played X in film Y" composes actor -> performance -> character,
// and the film links to the performance (a CVT), which a conjunction
// joined at the answer misses. Of the question's other entities, the one
// leaving the fewest answers wins. ok is false when none narrows the
// path's answers.
func (p *Planner) cvtJoin(in projection.Input, best projection.ScoredPath, anchor string) (projection.Candidate, string, bool) {
	// The question's entities alone, not every linked span: over a
	// remote KG the question's graph is fetched around them, so a join
	// found in memory is found there too. In one hop only: a second
	// thing two hops from the answer is the conjunction's branch, whose
	// relations are aligned to the question's words; a join through an
	// entity is blind to them (on the shared WebQSP KG it changed two
	// questions' answers, both for the worse: Hit 40.36 -> 40.29).
	j, found := projection.BestJoin(p.g, anchor, best.Steps, in.Entities, projection.JoinOptions{OneHop: true})
	if !found {
		return projection.Candidate{}, "", false
	}
	return projection.Candidate{Graph: j.Attach(schema.PathGraph(anchor, best.Steps)), Score: best.Score}, j.Note(), true
}
