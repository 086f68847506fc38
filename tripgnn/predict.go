package tripgnn

import (
	"context"
)

// PredictPadded is Predict with the example padded to power-of-two entity and
// edge counts. GoMLX compiles one program per input shape and a Model's
// cache holds 256; the finer buckets tripgnn pads to run out of room over
// a few thousand MetaQA subgraphs of varied sizes. The padding is one
// isolated entity carrying self-loops, so it changes no real entity's
// score; the returned slice holds the real entities only.
func (m *Model) PredictPadded(ctx context.Context, ex *Example) ([]float32, error) {
	n, e := ex.NumEntities, len(ex.Heads)
	np := pow2(n+1, 16)
	ep := e
	if e > 0 {
		ep = pow2(e, 16)
	}
	if n <= 0 || np == n && ep == e {
		return m.Predict(ctx, ex)
	}
	p := *ex
	p.NumEntities = np
	pad := int32(np - 1)
	p.Heads = append(ex.Heads[:e:e], make([]int32, ep-e)...)
	p.Rels = append(ex.Rels[:e:e], make([]int32, ep-e)...)
	p.Tails = append(ex.Tails[:e:e], make([]int32, ep-e)...)
	for i := e; i < ep; i++ {
		p.Heads[i], p.Tails[i] = pad, pad
	}
	p.Labels = nil
	probs, err := m.Predict(ctx, &p)
	if err != nil {
		return nil, err
	}
	return probs[:n], nil
}
