package main

import (
	"context"

	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/schema"
)

// llmExamples loads the llm planner's few-shot examples from the training
// questions --llm-examples names.
func llmExamples(ctx context.Context, s plan.ExampleSettings) ([]llmplan.Example, error) {
	qs, err := loadPlanQuestions(ctx, s.ExamplesFormat, s.Examples, s.ExamplesQType, "")
	if err != nil {
		return nil, err
	}
	var recs []llmplan.PathRecord
	for _, q := range qs {
		if len(q.Gold) == 0 || len(q.Entities) == 0 {
			continue
		}
		r := llmplan.PathRecord{Question: q.Text, Entity: q.Entities[0], Answers: q.Answers}
		for _, st := range q.Gold[0] {
			r.Relations = append(r.Relations, st.Rel)
			r.Inverse = append(r.Inverse, st.Dir == schema.Inverse)
		}
		recs = append(recs, r)
	}
	exs, _ := llmplan.ExamplesFromPaths(recs)
	return exs, nil
}
