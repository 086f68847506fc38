package plan

import (
	"context"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/tracing"
	"github.com/stem-kgqa/stem/tripgnn"
)

// GNNGuider is the Guider backed by a Triple-GNN (paper section 3.3): it
// guides with the plan's best schema graph and hands tracing the selected
// entities and triples as its biases' sets. It is safe for concurrent use.
type GNNGuider struct{ g *tripgnn.Guider }

// NewGNNGuider returns a guider with a trained model (see
// tripgnn.NewGuider). The model is loaded once; each question is guided
// over the KG it is answered over, the shared KG or its own graph.
func NewGNNGuider(model *tripgnn.Model, enc models.Encoder, opt tripgnn.SubgraphOptions) (*GNNGuider, error) {
	gd, err := tripgnn.NewGuider(model, enc, opt)
	if err != nil {
		return nil, err
	}
	return &GNNGuider{gd}, nil
}

// Guide implements Guider on the plan's best candidate over g. A plan with
// no candidate gives no guidance (nil, nil); question entities missing
// from g are an error wrapping tripgnn.ErrNoQuestionEntity.
func (gd *GNNGuider) Guide(ctx context.Context, g kg.Reader, in projection.Input, p projection.Projection) (*tracing.Guidance, error) {
	if len(p.Candidates) == 0 || len(p.Candidates[0].Graph.Triples) == 0 {
		return nil, nil
	}
	sel, err := gd.g.Guide(ctx, g, in.Question, in.Entities, p.Candidates[0].Graph)
	if err != nil {
		return nil, err
	}
	gu := &tracing.Guidance{Entities: make(map[int32]bool, len(sel.Entities)), Triples: make(map[int32]bool, len(sel.Triples)), Scores: sel.Scores}
	for _, e := range sel.Entities {
		gu.Entities[e] = true
	}
	for _, t := range sel.Triples {
		gu.Triples[t] = true
	}
	return gu, nil
}
