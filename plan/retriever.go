// Package plan runs STEM's stages for a question: projection (a planner's
// schema graphs and strategy), guidance, tracing and answer generation. This
// file holds the retrieval stage as the evaluation harness sees it: a
// tracing.Tracer behind the eval.Retriever interface, for a shared KG or for
// datasets where every question brings its own small KG.
package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/tracing"
)

// Retriever answers questions by structure tracing. For questions on the
// shared KG it reuses one Tracer (entity and relation vectors are computed
// once); a question that carries its own KG (WebQSP, RoG) gets a Tracer built
// for that graph.
type Retriever struct {
	enc    models.Encoder
	cfg    tracing.Config
	shared *tracing.Tracer
	g      *kg.Graph
	// Guider, when not nil, builds a guidance graph for questions on the
	// shared KG from the plan's first schema graph (questions with their
	// own KG are traced without one).
	Guider Guider
}

// NewRetriever prepares tracing over g (which may be nil when every question
// has its own graph). ents indexes g's entities for similarity anchoring; nil
// builds the index from g with enc.
func NewRetriever(ctx context.Context, g *kg.Graph, ents *kgvec.Entities, enc models.Encoder, cfg tracing.Config) (*Retriever, error) {
	r := &Retriever{enc: enc, cfg: cfg, g: g}
	if g == nil {
		return r, nil
	}
	if ents == nil {
		var err error
		if ents, err = kgvec.Build(ctx, g, enc, nil); err != nil {
			return nil, err
		}
	}
	t, err := tracing.New(g, enc, ents, cfg)
	if err != nil {
		return nil, fmt.Errorf("prepare tracing: %w", err)
	}
	r.shared = t
	return r, nil
}

// Answer traces the plan's schema graphs for q and returns the answers bound
// to the answer placeholder, best first, with the evidence triples.
func (r *Retriever) Answer(ctx context.Context, q benchmark.Question, p eval.Plan) (eval.Prediction, error) {
	stages := map[string]time.Duration{}
	res, g, err := r.trace(ctx, q, p, stages)
	if err != nil {
		return eval.Prediction{}, err
	}
	pred := Prediction(g, res)
	pred.Stages = stages
	return pred, nil
}

// Trace runs tracing for q and returns the raw result and the graph it ran
// on, for callers that want the whole trace (anchors, scores, problems).
func (r *Retriever) Trace(ctx context.Context, q benchmark.Question, p eval.Plan) (*tracing.Result, *kg.Graph, error) {
	return r.trace(ctx, q, p, map[string]time.Duration{})
}

// trace is Trace, recording the time of each stage (StageGuide,
// StageTrace) in stages.
func (r *Retriever) trace(ctx context.Context, q benchmark.Question, p eval.Plan, stages map[string]time.Duration) (*tracing.Result, *kg.Graph, error) {
	t, g := r.shared, r.g
	if q.Graph != nil {
		g = q.Graph
		ents, err := kgvec.Build(ctx, g, r.enc, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("question %s: %w", q.ID, err)
		}
		if t, err = tracing.New(g, r.enc, ents, r.cfg); err != nil {
			return nil, nil, fmt.Errorf("question %s: prepare tracing: %w", q.ID, err)
		}
	}
	if t == nil {
		return nil, nil, fmt.Errorf("question %s has no KG: give a shared KG or a per-question graph", q.ID)
	}
	req := tracing.Request{Graphs: p.Graphs, Strategy: p.Strategy, Ranked: p.Ranked}
	if r.Guider != nil && q.Graph == nil && len(p.Graphs) > 0 {
		pl := projection.Plan{Strategy: p.Strategy}
		for _, sg := range p.Graphs {
			pl.Candidates = append(pl.Candidates, projection.Candidate{Graph: sg})
		}
		start := time.Now()
		gu, err := r.Guider.Guide(ctx, projection.Input{Question: q.Text, Entities: q.Entities}, pl)
		if err != nil {
			return nil, nil, fmt.Errorf("question %s: %w", q.ID, err)
		}
		stages[StageGuide] = time.Since(start)
		req.Guidance = gu
	}
	// Datasets that mark the topic entity name it exactly: anchor on it
	// directly rather than by similarity.
	for _, name := range q.Entities {
		if id, ok := g.Entity(name); ok {
			req.Mentions = append(req.Mentions, name)
			req.Anchors = append(req.Anchors, id)
		}
	}
	if len(req.Anchors) == 0 {
		req.Mentions, req.Anchors = q.Entities, nil
	}
	start := time.Now()
	res, err := t.Trace(ctx, req)
	if err != nil {
		return nil, nil, fmt.Errorf("question %s: %w", q.ID, err)
	}
	stages[StageTrace] = time.Since(start)
	return res, g, nil
}

// Prediction turns a tracing result into what the metrics score: answer
// names best first, and the evidence as name triples.
func Prediction(g *kg.Graph, res *tracing.Result) eval.Prediction {
	p := eval.Prediction{Unbacked: res.Unbacked}
	for _, a := range res.Answers {
		p.Answers = append(p.Answers, a.Name)
	}
	for _, m := range res.Evidence {
		tr := g.Triple(m.Triple)
		p.EvidenceTriples = append(p.EvidenceTriples, [3]string{g.EntityName(tr.Head), g.RelationName(tr.Rel), g.EntityName(tr.Tail)})
	}
	return p
}
