// Package oracle is the planner that reads the answer sheet: its schema
// graphs are the question's gold relation paths (projection.Input.Gold), so
// a benchmark run with it measures retrieval alone, with planning errors
// taken out. Outside evaluation there is no answer sheet and it refuses to
// plan.
package oracle

import (
	"context"
	"errors"
	"fmt"

	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// ErrNoGold is returned for a question without an answer sheet.
var ErrNoGold = errors.New("the oracle planner needs the question's gold paths (use it with stem eval on a benchmark)")

// Planner plans a question as its gold paths. Its strategy is what a
// perfect strategy predictor picks: Breadth for a question with more than
// one gold answer, else Precision (the paper's labelling rule); the
// pipeline's strategy override forces either.
type Planner struct {
	// Beam caps the graphs per question; 0 means projection.DefaultBeam.
	Beam int
}

// Plan returns the gold schema graphs where the benchmark gives them, else
// one schema graph per distinct gold path (and topic entity, for gold
// paths that do not name theirs), up to Beam, unranked: every gold path
// is equally right.
func (o Planner) Plan(ctx context.Context, in projection.Input) (projection.Projection, error) {
	if err := ctx.Err(); err != nil {
		return projection.Projection{}, err
	}
	if in.Gold == nil {
		return projection.Projection{}, fmt.Errorf("oracle: %q: %w", in.Question, ErrNoGold)
	}
	beam := o.Beam
	if beam <= 0 {
		beam = projection.DefaultBeam
	}
	p := projection.Projection{Unranked: true}
	if in.Gold.Answers > 1 {
		p.Strategy = schema.Breadth
	}
	if len(in.Gold.Graphs) > 0 {
		// Gold schema graphs (a conjunction's anchors, its constraint
		// edges) say more than the paths read off them.
		for _, g := range in.Gold.Graphs[:min(beam, len(in.Gold.Graphs))] {
			p.Candidates = append(p.Candidates, projection.Candidate{Graph: g, Score: 1})
		}
		return p, nil
	}
	seen := map[string]bool{}
	for _, gp := range in.Gold.Paths {
		if len(gp.Steps) == 0 {
			continue
		}
		starts := in.Entities
		if gp.Start != "" {
			starts = []string{gp.Start}
		}
		for _, s := range starts {
			key := schema.GoldPath{Start: s, Steps: gp.Steps}.Key()
			if seen[key] {
				continue
			}
			seen[key] = true
			p.Candidates = append(p.Candidates, projection.Candidate{Graph: schema.PathGraph(s, gp.Steps), Score: 1})
			if len(p.Candidates) == beam {
				return p, nil
			}
		}
	}
	return p, nil
}
