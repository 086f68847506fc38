package plan

import (
	"context"
	"errors"
	"fmt"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
)

// EvalPlanner runs a projection planner over benchmark questions. The
// question's entities come from the dataset when it marks them, else from the
// linker (which may be nil when every dataset question has entities; a
// question with its own KG is linked against that KG).
// Strategy, when not nil, overrides the planner's strategy, as
// --strategy precision|breadth does.
type EvalPlanner struct {
	Planner  projection.Planner
	Linker   *linking.Linker
	Strategy *schema.Strategy
}

// Plan implements eval.Planner.
func (p EvalPlanner) Plan(ctx context.Context, q benchmark.Question) (eval.Plan, error) {
	in := projection.Input{Question: q.Text, Entities: q.Entities}
	for _, e := range q.Entities {
		if sp, ok := linking.Find(q.Text, e); ok {
			in.Mentions = append(in.Mentions, q.Text[sp.Start:sp.End])
		} else {
			in.Mentions = append(in.Mentions, e)
		}
	}
	linker := p.Linker
	if q.Graph != nil {
		linker = linking.New(q.Graph, nil)
	}
	if len(in.Entities) == 0 && linker != nil {
		links, err := linker.Link(ctx, q.Text)
		if errors.Is(err, linking.ErrNoEntity) {
			// Nothing to anchor a plan on: the question is scored as
			// unanswered rather than stopping the run.
			return eval.Plan{}, nil
		}
		if err != nil {
			return eval.Plan{}, fmt.Errorf("link entities of %q: %w", q.Text, err)
		}
		for _, l := range links {
			in.Entities = append(in.Entities, l.Entity)
			in.Mentions = append(in.Mentions, l.Mention)
		}
	}
	pl, err := p.Planner.Plan(ctx, in)
	if err != nil {
		return eval.Plan{}, err
	}
	out := eval.Plan{Graphs: pl.Graphs(), Strategy: pl.Strategy, Ranked: true}
	if p.Strategy != nil {
		out.Strategy = *p.Strategy
	}
	return out, nil
}
