package tripgnn

import (
	"context"
	"fmt"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/schema"
)

// Selection is a question's guidance graph (paper section 3.3) as KG ids:
// the top-K entities and the triples among them, both sorted, and the
// model's probability for every entity of the question's subgraph.
type Selection struct {
	Entities, Triples []int32
	Scores            map[int32]float32
}

// Guider builds guidance graphs with a trained model: the question's
// subgraph of the KG it is given by the rule the model was trained with
// (hops = the schema graph's triples), scored, its top K = KFactor x
// |schema triples| entities and the KG triples among them. The KG is an
// argument of Guide, so one Guider serves a shared KG and per-question
// graphs alike. It is safe for concurrent use.
type Guider struct {
	model *Model
	b     *Builder
}

// NewGuider returns a guider. enc must be the encoder the model was
// trained with; opt should be the subgraph caps of training (the zero
// value gives the defaults `stem train gnn` uses).
func NewGuider(m *Model, enc models.Encoder, opt SubgraphOptions) (*Guider, error) {
	if m == nil || enc == nil {
		return nil, fmt.Errorf("tripgnn: a guider needs a model and an encoder")
	}
	if cfg := m.Config(); cfg.EncoderDim != enc.Dim() {
		return nil, fmt.Errorf("tripgnn: the Triple-GNN reads %d-dimensional vectors (%s), the encoder gives %d (%s)",
			cfg.EncoderDim, cfg.EncoderName, enc.Dim(), enc.Name())
	}
	return &Guider{model: m, b: NewBuilder(enc, opt)}, nil
}

// Guide selects, in KG g, the guidance graph of a question whose entities
// are named in entities, for schema graph sg. A schema graph without
// triples gives an empty selection; entities missing from g are an error
// wrapping ErrNoQuestionEntity.
func (gd *Guider) Guide(ctx context.Context, g kg.Reader, question string, entities []string, sg schema.Graph) (Selection, error) {
	if len(sg.Triples) == 0 {
		return Selection{}, nil
	}
	if g == nil {
		return Selection{}, fmt.Errorf("tripgnn: guidance graph: no KG")
	}
	in, err := gd.b.Build(ctx, g, entities, sg, question)
	if err != nil {
		return Selection{}, fmt.Errorf("tripgnn: guidance graph: %w", err)
	}
	probs, err := gd.model.PredictPadded(ctx, in.Example)
	if err != nil {
		return Selection{}, fmt.Errorf("tripgnn: guidance graph: %w", err)
	}
	top := TopK(probs, gd.model.K(in.NumSchema))
	ents, edges := GuidanceEdges(in.Example.NumEntities, in.Example.Heads, in.Example.Tails, top)
	sel := Selection{Entities: make([]int32, len(ents)), Triples: make([]int32, len(edges)), Scores: make(map[int32]float32, len(in.Entities))}
	for i, e := range in.Entities {
		sel.Scores[e] = probs[i]
	}
	for i, e := range ents {
		sel.Entities[i] = in.Entities[e]
	}
	for i, j := range edges {
		sel.Triples[i] = in.Triples[j]
	}
	return sel, nil
}
