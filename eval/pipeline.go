package eval

import (
	"context"
	"errors"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
)

// Pipeline adapts stem's one pipeline to Answerer: a benchmark question
// becomes a plan.Query (its marked entities, its own graph when it has one,
// its gold paths for the oracle planner), and the pipeline's result becomes
// the prediction the metrics score. A question that names no KG entity is
// scored as unanswered rather than stopping the run. Generated answers
// that name no evidence entity are counted in Prediction.Unsupported and
// left out of the scored answers.
type Pipeline struct{ *plan.Pipeline }

// LLMUsage implements UsageReporter.
func (p Pipeline) LLMUsage() llm.Usage {
	if p.Usage == nil {
		return llm.Usage{}
	}
	return p.Usage()
}

// Answer implements Answerer.
func (p Pipeline) Answer(ctx context.Context, q benchmark.Question) (Prediction, error) {
	pred, _, err := p.AnswerResult(ctx, q)
	return pred, err
}

// AnswerResult is Answer with the pipeline's whole result beside the
// prediction (nil where nothing was linked), for a caller that reads
// more than the metrics do (training the plan selector reads every
// reading's answers).
func (p Pipeline) AnswerResult(ctx context.Context, q benchmark.Question) (Prediction, *plan.Result, error) {
	query := plan.Query{Question: q.Text, Entities: q.Entities, Gold: &projection.Gold{Paths: q.Gold, Answers: len(q.Answers), Graphs: q.GoldGraphs}, AnswersOnly: true}
	if q.Graph != nil {
		query.Graph = q.Graph
	}
	res, err := p.Pipeline.Answer(ctx, query)
	if errors.Is(err, plan.ErrNoEntity) {
		// Nothing was linked: an empty trace attributes the miss to
		// linking.
		return Prediction{Trace: &StageOutput{}}, nil, nil
	}
	if err != nil {
		return Prediction{}, nil, err
	}
	pred := Prediction{EvidenceTriples: res.EvidenceTriples(), Chains: res.Chains, Unbacked: res.Unsupported(),
		Stages: make(map[string]time.Duration, len(res.Timings))}
	for _, a := range res.Answers {
		// An answer no evidence backs (an LLM's guess) is counted, never
		// scored: a guess that happens to equal a gold answer is no hit.
		if !a.Supported {
			pred.Unsupported++
			continue
		}
		pred.Answers = append(pred.Answers, a.Name)
	}
	if sel := res.Selection; sel != nil {
		pred.Confidence, pred.Calibrated = sel.Confidence, sel.Calibrated
	}
	pred.Abstained, pred.Abstain = res.Abstained, res.Abstain
	pred.Trace = stageOutput(res)
	for k, d := range res.Timings {
		pred.Stages[k] = time.Duration(d)
	}
	return pred, res, nil
}

// stageOutput collects what res's stages produced, for Attribute.
func stageOutput(res *plan.Result) *StageOutput {
	_, planned := res.Timings[plan.StagePlan]
	out := &StageOutput{Unplanned: !planned}
	for _, l := range res.Links {
		out.Linked = append(out.Linked, l.Entity)
	}
	for _, m := range res.Mentions {
		if !m.Topic {
			sep := "="
			if m.Near {
				sep = "~"
			}
			out.Mentions = append(out.Mentions, m.Text+sep+m.Entity)
		}
	}
	for _, c := range res.Projection.Candidates {
		out.Plans = append(out.Plans, planRelations(c.Graph))
	}
	if ev := res.Evidence; ev != nil {
		for _, a := range ev.Anchors {
			out.Anchors = append(out.Anchors, a.Name)
		}
		for _, a := range ev.Answers {
			out.Candidates = append(out.Candidates, a.Name)
		}
	}
	return out
}
