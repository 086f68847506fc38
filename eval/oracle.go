package eval

import (
	"context"
	"fmt"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/schema"
)

// DefaultBeam is the paper's SGDA beam size B: candidate plans per
// question.
const DefaultBeam = 4

// Plan is what a planner hands the retriever: candidate schema graphs, best
// first, and the tracing strategy.
type Plan struct {
	Graphs   []schema.Graph
	Strategy schema.Strategy
	// Ranked says Graphs are best first by a planner's confidence (the
	// oracle's gold paths are all equally right, so it leaves this false).
	Ranked bool
}

// Planner turns a question into a Plan.
type Planner interface {
	Plan(ctx context.Context, q benchmark.Question) (Plan, error)
}

// StrategyMode chooses how the oracle sets Plan.Strategy.
type StrategyMode int

const (
	// Auto picks Breadth for a question with more than one gold answer and
	// Precision otherwise, which is what a perfect strategy predictor does.
	Auto StrategyMode = iota
	// AlwaysPrecision forces Precision.
	AlwaysPrecision
	// AlwaysBreadth forces Breadth.
	AlwaysBreadth
)

// Oracle is the planner that reads the answer sheet: its schema graphs are
// the question's gold paths, so a run with it measures retrieval alone,
// with planning errors taken out.
type Oracle struct {
	// Beam caps the graphs per question; 0 means DefaultBeam.
	Beam     int
	Strategy StrategyMode
}

// Plan returns one schema graph per distinct gold path (and topic entity,
// for gold paths that do not name theirs), up to Beam.
func (o Oracle) Plan(ctx context.Context, q benchmark.Question) (Plan, error) {
	if err := ctx.Err(); err != nil {
		return Plan{}, err
	}
	beam := o.Beam
	if beam <= 0 {
		beam = DefaultBeam
	}
	var p Plan
	switch o.Strategy {
	case Auto:
		if len(q.Answers) > 1 {
			p.Strategy = schema.Breadth
		}
	case AlwaysPrecision:
	case AlwaysBreadth:
		p.Strategy = schema.Breadth
	default:
		return Plan{}, fmt.Errorf("oracle: unknown strategy mode %d", o.Strategy)
	}
	seen := map[string]bool{}
	for _, gp := range q.Gold {
		if len(gp.Steps) == 0 {
			continue
		}
		starts := q.Entities
		if gp.Start != "" {
			starts = []string{gp.Start}
		}
		for _, s := range starts {
			key := schema.GoldPath{Start: s, Steps: gp.Steps}.Key()
			if seen[key] {
				continue
			}
			seen[key] = true
			p.Graphs = append(p.Graphs, schema.PathGraph(s, gp.Steps))
			if len(p.Graphs) == beam {
				return p, nil
			}
		}
	}
	return p, nil
}
