//go:build gomlx

package tripgnn

// The GoMLX reference engine's tests: it against the native engine, and
// its fast graph paths against GoMLX's plain ops. They run with -tags
// gomlx (CI does).

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
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
		ref, err := graph.NewExec(m.ref.backend, m.trainGraph(pathPlain))
		if err != nil {
			t.Fatal(err)
		}
		p, err := pack(append(toyData(12, 3), hubExample(testDim)), packing{testDim, !c.noBoundary, true})
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
	m.ref.stale()
}

// The training graph's fast gathers (int64 rows with a hand-written
// gradient, one-hot products for relations, segSum) must give GoMLX's
// own Gather/ScatterSum gradients up to rounding.
func TestFastGradientsMatchPlain(t *testing.T) {
	for _, c := range []struct {
		mix   float64
		width int // odd: gatherRows' plain path
	}{{0, 16}, {0.7, 16}, {0.7, 15}} {
		mix := c.mix
		m := newTest(t, Config{Seed: 3, LossMix: mix, Width: c.width, Layers: 3})
		mustGoMLX(t, m)
		ref, err := graph.NewExec(m.ref.backend, m.trainGraph(pathPlain))
		if err != nil {
			t.Fatal(err)
		}
		p, err := pack(append(toyData(11, 3), hubExample(testDim)), packing{testDim, true, true})
		if err != nil {
			t.Fatal(err)
		}
		args := append(p.inputs(testDim), p.lossInputs()...)
		args = append(args, m.weights()...)
		fast, err := m.call("fast", m.ref.train.Call, args)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := m.call("plain", ref.Call, args)
		if err != nil {
			t.Fatal(err)
		}
		var worst float64 // |fast - plain| / max(1, |plain|)
		for i := range fast {
			a, _ := flat(fast[i])
			b, _ := flat(plain[i])
			for j := range a {
				worst = max(worst, math.Abs(float64(a[j]-b[j]))/max(1, math.Abs(float64(b[j]))))
			}
		}
		if worst > 1e-5 {
			t.Errorf("LossMix %v, width %d: fast and plain loss/gradients differ by up to %g (relative above 1)", mix, c.width, worst)
		}
	}
}

// hubExample has what segSum must get right: an entity whose incoming
// edges span several chunks (degree 70, over segLen), entities with no
// incoming edge, duplicate edges and a self-loop.
func hubExample(dEnc int) *Example {
	rng := rand.New(rand.NewPCG(12, 12))
	const n = 40
	ex := &Example{
		NumEntities: n,
		RelVecs:     randVecs(rng, 4, dEnc),
		SchemaVecs:  randVecs(rng, 3, dEnc),
		Question:    []int32{0, 5},
		Labels:      make([]float32, n),
	}
	add := func(h, r, t int32) {
		ex.Heads, ex.Rels, ex.Tails = append(ex.Heads, h), append(ex.Rels, r), append(ex.Tails, t)
	}
	for i := range 70 {
		add(int32(1+i%30), int32(i%2), 7) // entity 7: 70 incoming, with duplicates
	}
	add(3, 1, 3)
	for range 20 {
		add(int32(rng.IntN(30)), int32(rng.IntN(2)), int32(rng.IntN(30))) // entities 30..39 have no edge
	}
	ex.Labels[7], ex.Labels[3] = 1, 1
	return ex
}

// segSum must equal the ScatterSum it replaces, up to rounding (the sums
// run in another order). Its gradient is aggregate's, tested with the
// model's in TestFastGradientsMatchPlain.
func TestSegSumMatchesScatterSum(t *testing.T) {
	p, err := pack([]*Example{hubExample(testDim), toyData(13, 1)[0]}, packing{testDim, true, false})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.segContOn, 1) {
		t.Fatal("test graph has no entity spanning two chunks")
	}
	const d = 6
	rng := rand.New(rand.NewPCG(14, 14))
	msg := randVecs(rng, p.ep, d)
	w := randVecs(rng, p.np, d)
	b, err := gobackend.New("ops_sequential")
	if err != nil {
		t.Fatal(err)
	}
	for _, wide := range []bool{false, true} {
		exec, err := graph.NewExec(b, func(in []*graph.Node) []*graph.Node {
			x, wt := in[numInputs], in[numInputs+1]
			return []*graph.Node{segSum(x, in, wide), graph.ScatterSum(graph.ZerosLike(wt), in[inDst], x, true, false)}
		})
		if err != nil {
			t.Fatal(err)
		}
		args := append(p.inputs(testDim), tensors.FromFlatDataAndDimensions(msg, p.ep, d), tensors.FromFlatDataAndDimensions(w, p.np, d))
		out, err := exec.Exec(args...)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := flat(out[0])
		want, _ := flat(out[1])
		for i := range want {
			if math.Abs(float64(a[i]-want[i])) > 1e-5 {
				t.Fatalf("wide %v: sum[%d, %d] = %v, ScatterSum gives %v", wide, i/d, i%d, a[i], want[i])
			}
		}
	}
}

// Predict's graph (one-hot relations, int64 gathers, segSum) scores as
// the plain Gather/ScatterSum graph does.
func TestPredictMatchesPlain(t *testing.T) {
	m := newTest(t, Config{Seed: 4, Width: 16, Layers: 3})
	mustGoMLX(t, m)
	ref, err := graph.NewExec(m.ref.backend, func(in []*graph.Node) []*graph.Node {
		return []*graph.Node{m.forward(in[:numInputs], in[numInputs:], pathPlain)}
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pack([]*Example{hubExample(testDim)}, packing{testDim, true, false})
	if err != nil {
		t.Fatal(err)
	}
	args := append(p.inputs(testDim), m.weights()...)
	fast, err := m.call("fast", m.ref.predict.Call, args)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := m.call("plain", ref.Call, args)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := flat(fast[0])
	want, _ := flat(plain[0])
	for i := range 40 {
		if math.Abs(float64(a[i]-want[i])) > 1e-5 {
			t.Errorf("entity %d: logit %v, plain graph %v", i, a[i], want[i])
		}
	}
}

// A model keeps working past its compiled-program limit: it drops its
// programs and compiles again, with the same results.
func TestMoreShapesThanCompiledPrograms(t *testing.T) {
	ctx := context.Background()
	m := newTest(t, Config{Seed: 2})
	mustGoMLX(t, m)
	m.ref.predict.limit, m.ref.train.limit = 2, 2
	ref := newTest(t, Config{Seed: 2})
	data := toyData(15, 8) // 12 to 23 entities: several buckets
	shapes := map[int]bool{}
	for _, ex := range data {
		p, err := pack([]*Example{ex}, packing{testDim, true, false})
		if err != nil {
			t.Fatal(err)
		}
		shapes[p.np*100000+p.ep] = true
	}
	if len(shapes) <= 2 {
		t.Fatalf("test data has %d shapes, want more than the limit 2", len(shapes))
	}
	for round := range 2 {
		for i, ex := range data {
			got, err := m.Predict(ctx, ex)
			if err != nil {
				t.Fatalf("round %d, graph %d: %v", round, i, err)
			}
			want, err := ref.Predict(ctx, ex)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, graph %d: scores %v, want %v", round, i, got, want)
			}
			if _, err := m.TrainStep(ctx, data[i:i+1]); err != nil {
				t.Fatalf("round %d, graph %d: train: %v", round, i, err)
			}
			if _, err := ref.TrainStep(ctx, data[i:i+1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(m.ref.predict.seen) > 2 || len(m.ref.train.seen) > 2 {
		t.Errorf("%d and %d programs kept, limit 2", len(m.ref.predict.seen), len(m.ref.train.seen))
	}
}

// mustGoMLX builds the GoMLX reference engine of m, for tests that reach
// into it.
func mustGoMLX(t testing.TB, m *Model) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.gomlx(); err != nil {
		t.Fatal(err)
	}
}

func TestGoMLXOnlyWhenAskedFor(t *testing.T) {
	m, err := New(Config{EncoderName: "t", EncoderDim: testDim, Layers: 2, Width: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ex := toyData(1, 1)[0]
	if _, err := m.Predict(context.Background(), ex); err != nil {
		t.Fatal(err)
	}
	if m.ref.backend != nil || m.ref.predict != nil {
		t.Fatal("the native engine built the GoMLX backend")
	}
	m.SetEngine(GoMLX)
	if _, err := m.Predict(context.Background(), ex); err != nil {
		t.Fatal(err)
	}
	if m.ref.backend == nil {
		t.Error("the GoMLX engine ran without its backend")
	}
}
