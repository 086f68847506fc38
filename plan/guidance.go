package plan

import (
	"context"
	"fmt"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/tracing"
	"github.com/stem-kgqa/stem/train"
	"github.com/stem-kgqa/stem/tripgnn"
)

// GNNGuider is the Guider backed by a Triple-GNN (paper section 3.3): it
// builds the question's subgraph around its entities with the rule the
// model was trained with (train.Subgraph, hops = the plan's number of
// schema triples), scores it, and returns the top K = 4 x |schema triples|
// entities with the KG triples among them. It is safe for concurrent use.
type GNNGuider struct {
	graph *kg.Graph
	model *tripgnn.Model
	b     *train.Builder
}

// NewGNNGuider returns a guider over g. enc must be the encoder the model
// was trained with (tripgnn.Load checks its name and dimension); opt should
// be the subgraph caps of training (the zero value gives train's defaults,
// which `stem train gnn` uses by default).
func NewGNNGuider(g *kg.Graph, model *tripgnn.Model, enc models.Encoder, opt train.SubgraphOptions) (*GNNGuider, error) {
	if g == nil || model == nil || enc == nil {
		return nil, fmt.Errorf("plan: GNN guider needs a graph, a model and an encoder")
	}
	if cfg := model.Config(); cfg.EncoderDim != enc.Dim() {
		return nil, fmt.Errorf("plan: the Triple-GNN reads %d-dimensional vectors (%s), the encoder gives %d (%s)",
			cfg.EncoderDim, cfg.EncoderName, enc.Dim(), enc.Name())
	}
	return &GNNGuider{graph: g, model: model, b: train.NewBuilder(enc, opt)}, nil
}

// Guide implements Guider on the plan's best candidate. A plan with no
// candidate gives no guidance (nil, nil); question entities missing from
// the KG are an error wrapping train.ErrNoQuestionEntity.
func (gd *GNNGuider) Guide(ctx context.Context, in projection.Input, p projection.Projection) (*tracing.Guidance, error) {
	if len(p.Candidates) == 0 || len(p.Candidates[0].Graph.Triples) == 0 {
		return nil, nil
	}
	sg := p.Candidates[0].Graph
	it, err := gd.b.Build(ctx, gd.graph, in.Entities, sg, in.Question)
	if err != nil {
		return nil, fmt.Errorf("plan: guidance graph: %w", err)
	}
	probs, err := train.Predict(ctx, gd.model, it.Example)
	if err != nil {
		return nil, fmt.Errorf("plan: guidance graph: %w", err)
	}
	top := tripgnn.TopK(probs, gd.model.K(it.NumSchema))
	ents, edges := tripgnn.GuidanceEdges(it.Example.NumEntities, it.Example.Heads, it.Example.Tails, top)
	gu := &tracing.Guidance{Entities: make(map[int32]bool, len(ents)), Triples: make(map[int32]bool, len(edges))}
	for _, e := range ents {
		gu.Entities[it.Entities[e]] = true
	}
	for _, j := range edges {
		gu.Triples[it.Triples[j]] = true
	}
	return gu, nil
}
