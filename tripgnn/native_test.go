package tripgnn

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
)

// The native engine's logits and gradients match GoMLX's automatic
// differentiation of the plain graph, for both losses, with and without
// the boundary term, at widths that exercise the kernels' SIMD blocks
// (32, 64) and their scalar tails (15, 40).
func TestNativeMatchesGoMLX(t *testing.T) {
	for _, c := range []struct {
		mix        float64
		width      int
		noBoundary bool
	}{{0, 32, false}, {0.7, 32, false}, {0, 15, true}, {0.7, 40, false}, {0, 64, false}} {
		m := newTest(t, Config{Seed: 5, LossMix: c.mix, Width: c.width, Layers: 3, NoBoundary: c.noBoundary})
		jitterBiases(m, 8)
		mustGoMLX(t, m)
		ref, err := graph.NewExec(m.backend, m.trainGraph(pathPlain))
		if err != nil {
			t.Fatal(err)
		}
		p, err := pack(append(toyData(12, 3), hubExample(testDim)), testDim, !c.noBoundary, true)
		if err != nil {
			t.Fatal(err)
		}
		args := append(p.inputs(testDim), p.lossInputs()...)
		args = append(args, m.weights()...)
		plain, err := m.call("plain", ref.Call, args)
		if err != nil {
			t.Fatal(err)
		}
		run := m.nativeForward(p, true)
		loss, dl := m.nativeLoss(run)
		grads := m.nativeBackward(run, dl)
		wantLoss, _ := flat(plain[0])
		if math.Abs(loss-float64(wantLoss[0])) > 1e-5*max(1, math.Abs(loss)) {
			t.Errorf("%+v: loss %v, GoMLX %v", c, loss, wantLoss[0])
		}
		for i, g := range grads {
			want, _ := flat(plain[1+i])
			var scale float64
			for _, v := range want {
				scale = max(scale, math.Abs(float64(v)))
			}
			for j := range g {
				if math.Abs(float64(g[j]-want[j])) > 1e-4*max(scale, 1e-3) {
					t.Errorf("%+v: gradient of %s[%d] = %v, GoMLX %v (largest %v)", c, m.params[i].name, j, g[j], want[j], scale)
					break
				}
			}
		}
	}
}

func TestNativePredictMatchesGoMLX(t *testing.T) {
	ctx := context.Background()
	m := newTest(t, Config{Seed: 6, Width: 48, Layers: 3})
	for _, ex := range append(toyData(13, 2), hubExample(testDim)) {
		m.SetEngine(GoMLX)
		want, err := m.Predict(ctx, ex)
		if err != nil {
			t.Fatal(err)
		}
		m.SetEngine(Native)
		got, err := m.Predict(ctx, ex)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-5 {
				t.Fatalf("entity %d: native %v, GoMLX %v", i, got[i], want[i])
			}
		}
	}
}

// Training with either engine from the same seed follows the same
// trajectory (to rounding) over several AdamW steps.
func TestNativeTrainsLikeGoMLX(t *testing.T) {
	ctx := context.Background()
	data := toyData(14, 4)
	a := newTest(t, Config{Seed: 7, Width: 32, Layers: 2})
	b := newTest(t, Config{Seed: 7, Width: 32, Layers: 2})
	jitterBiases(a, 9)
	jitterBiases(b, 9)
	b.SetEngine(GoMLX)
	for step := range 5 {
		la, err := a.TrainStep(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		lb, err := b.TrainStep(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(la-lb)) > 1e-4*max(1, math.Abs(float64(lb))) {
			t.Fatalf("step %d: native loss %v, GoMLX %v", step, la, lb)
		}
	}
}

// jitterBiases sets biases and LayerNorm parameters away from their
// initial 0 and 1. With zero biases, entities the question signal has not
// reached have constant update rows, so LayerNorm outputs exactly 0 and
// ReLU sits on its kink, where GoMLX's Max passes the gradient and the
// native engine (like PyTorch) does not.
func jitterBiases(m *Model, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, p := range m.params {
		if p.decay {
			continue
		}
		for j := range p.data {
			p.data[j] += float32(rng.NormFloat64() * 0.1)
		}
	}
	m.cached = nil
}
