package tripgnn

import (
	"context"
	"fmt"
	"math"
)

// Predict returns the probability of each of ex's entities being on the
// reasoning chain (length ex.NumEntities). ex.Labels is ignored.
func (m *Model) Predict(ctx context.Context, ex *Example) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tripgnn: predict: %w", err)
	}
	p, err := pack([]*Example{ex}, packing{dEnc: m.cfg.EncoderDim, boundary: !m.cfg.NoBoundary})
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var logits []float32
	if m.engine == Native {
		logits = m.nativeForward(p, false).logits
	} else {
		if logits, err = m.gomlxPredict(p); err != nil {
			return nil, err
		}
	}
	probs := make([]float32, ex.NumEntities)
	for i := range probs {
		x := float64(logits[i])
		if math.IsNaN(x) {
			return nil, fmt.Errorf("tripgnn: predict: entity %d scored NaN (weights or inputs are corrupt)", i)
		}
		probs[i] = float32(1 / (1 + math.Exp(-x)))
	}
	return probs, nil
}

// TrainStep runs forward, backward and one AdamW update on a mini-batch of
// graphs (each with Labels) and returns the loss before the update. A
// non-finite loss or gradient is an error and leaves the weights as they
// were, so a training loop stops at the first NaN.
func (m *Model) TrainStep(ctx context.Context, batch []*Example) (float32, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("tripgnn: train step: %w", err)
	}
	p, err := pack(batch, packing{dEnc: m.cfg.EncoderDim, boundary: !m.cfg.NoBoundary, labels: true})
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.engine == Native {
		run := m.nativeForward(p, true)
		loss64, dlogits := m.nativeLoss(run)
		loss := float32(loss64)
		if math.IsNaN(loss64) || math.IsInf(loss64, 0) {
			return loss, fmt.Errorf("tripgnn: train step %d: loss is %v", m.step+1, loss)
		}
		grads := m.nativeBackward(run, dlogits)
		for i, g := range grads {
			if err := finite("gradient of "+m.params[i].name, g); err != nil {
				return loss, fmt.Errorf("tripgnn: train step %d: %w", m.step+1, err)
			}
		}
		m.adamW(grads)
		return loss, nil
	}
	loss, grads, err := m.gomlxStep(p)
	if err != nil {
		return loss, err
	}
	m.adamW(grads)
	return loss, nil
}

// AdamW hyper-parameters other than the learning rate: PyTorch's defaults.
const (
	beta1   = 0.9
	beta2   = 0.999
	adamEps = 1e-8
)

// adamW applies one decoupled-weight-decay Adam update.
func (m *Model) adamW(grads [][]float32) {
	if m.m == nil {
		m.m = make([][]float32, len(m.params))
		m.v = make([][]float32, len(m.params))
		for i, p := range m.params {
			m.m[i] = make([]float32, len(p.data))
			m.v[i] = make([]float32, len(p.data))
		}
	}
	m.step++
	lr := m.cfg.LR
	c1 := 1 - math.Pow(beta1, float64(m.step))
	c2 := 1 - math.Pow(beta2, float64(m.step))
	for i := range m.params {
		p := &m.params[i]
		wd := 0.0
		if p.decay {
			wd = m.cfg.WeightDecay
		}
		mi, vi, g := m.m[i], m.v[i], grads[i]
		for j, x := range p.data {
			gj := float64(g[j])
			mj := beta1*float64(mi[j]) + (1-beta1)*gj
			vj := beta2*float64(vi[j]) + (1-beta2)*gj*gj
			mi[j], vi[j] = float32(mj), float32(vj)
			upd := (mj/c1)/(math.Sqrt(vj/c2)+adamEps) + wd*float64(x)
			p.data[j] = float32(float64(x) - lr*upd)
		}
	}
	m.ref.stale()
}
