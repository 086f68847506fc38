//go:build gomlx

package tripgnn

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// haveGoMLX says whether this build holds the GoMLX engine.
const haveGoMLX = true

// reference is the GoMLX engine's state, built the first time it runs.
type reference struct {
	backend compute.Backend
	predict *programs
	train   *programs
	// cached holds the weights as tensors between updates so that
	// Predict does not copy them every call.
	cached []*tensors.Tensor
}

// stale drops the cached weight tensors after an update.
func (r *reference) stale() { r.cached = nil }

// gomlxPredict returns the logits of p by the GoMLX engine. The caller
// holds m.mu.
func (m *Model) gomlxPredict(p *packed) ([]float32, error) {
	if err := m.gomlx(); err != nil {
		return nil, err
	}
	args := append(p.inputs(m.cfg.EncoderDim), m.weights()...)
	out, err := m.call("predict", m.ref.predict.Call, args)
	if err != nil {
		return nil, err
	}
	return flat(out[0])
}

// gomlxStep returns the loss of p and its gradients by the GoMLX engine,
// checked to be finite. The caller holds m.mu.
func (m *Model) gomlxStep(p *packed) (float32, [][]float32, error) {
	if err := m.gomlx(); err != nil {
		return 0, nil, err
	}
	args := append(p.inputs(m.cfg.EncoderDim), p.lossInputs()...)
	args = append(args, m.weights()...)
	out, err := m.call("train step", m.ref.train.Call, args)
	if err != nil {
		return 0, nil, err
	}
	lossv, err := flat(out[0])
	if err != nil {
		return 0, nil, err
	}
	loss := lossv[0]
	if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
		return loss, nil, fmt.Errorf("tripgnn: train step %d: loss is %v", m.step+1, loss)
	}
	grads := make([][]float32, len(m.params))
	for i := range m.params {
		g, err := flat(out[1+i])
		if err != nil {
			return 0, nil, err
		}
		if err := finite("gradient of "+m.params[i].name, g); err != nil {
			return loss, nil, fmt.Errorf("tripgnn: train step %d: %w", m.step+1, err)
		}
		grads[i] = g
	}
	return loss, grads, nil
}

// maxCompiled bounds the programs kept per graph function: one per
// (entities, edges, relations, graphs) bucket met. A long run over varied
// graphs meets more; then all are dropped and compiled again as needed
// (see programs), which costs time but never fails.
const maxCompiled = 256

// programs is a graph function and its compiled programs, one per input
// shape. GoMLX's Exec refuses new shapes once its cache is full; programs
// starts a fresh Exec instead, so callers need not limit their shapes.
type programs struct {
	backend compute.Backend
	fn      func([]*graph.Node) []*graph.Node
	limit   int // programs kept; maxCompiled
	exec    *graph.Exec
	seen    map[string]bool // input shapes compiled by exec
}

// Call runs the program for args' shapes, compiling it if needed.
func (p *programs) Call(args ...any) ([]*tensors.Tensor, error) {
	var key strings.Builder
	for _, a := range args {
		if t, ok := a.(*tensors.Tensor); ok {
			key.WriteString(t.Shape().String())
		}
	}
	k := key.String()
	if p.exec == nil || !p.seen[k] && len(p.seen) >= p.limit {
		exec, err := graph.NewExec(p.backend, p.fn)
		if err != nil {
			return nil, err
		}
		exec.SetMaxCache(p.limit)
		if p.exec != nil {
			p.exec.Finalize()
		}
		p.exec, p.seen = exec, make(map[string]bool)
	}
	out, err := p.exec.Call(args...)
	if err == nil {
		p.seen[k] = true
	}
	return out, err
}

// maxOneHot is the most relation rows (forward and inverse, padded) for
// which layers read relation vectors through a one-hot matrix product
// rather than a Gather. The product's cost grows with the row count, the
// Gather's does not; at 128 rows, width 256 and 18,000 edges the product
// is the faster both ways (Predict 0.60 -> 0.50 s with that change alone).
const maxOneHot = 256

// gomlx creates the GoMLX backend and the two graph functions the first
// time the GoMLX engine runs: the native engine, the default, never needs
// them, and starting the backend costs every model that never uses it.
// The caller holds m.mu.
func (m *Model) gomlx() error {
	if m.ref.backend != nil {
		return nil
	}
	// Ops run one after another, each one multi-threaded inside. GoMLX's
	// default (ops in parallel when nothing else runs) deadlocks in this
	// version of the Go backend: a large SIMD matrix product waits on the
	// worker pool's condition variable while the op scheduler waits on it
	// too, and one wake-up is lost (seen at 2,000 entities, width 256,
	// GOEXPERIMENT=simd). One op at a time is also what a GNN needs: its
	// ops depend on each other in a chain.
	b, err := gobackend.New("ops_sequential")
	if err != nil {
		return fmt.Errorf("tripgnn: start GoMLX Go backend: %w", err)
	}
	m.ref.backend = b
	np := len(m.params)
	m.ref.predict = &programs{backend: b, limit: maxCompiled, fn: func(in []*graph.Node) []*graph.Node {
		return []*graph.Node{m.forward(in[:numInputs], in[len(in)-np:], pathPredict)}
	}}
	m.ref.train = &programs{backend: b, limit: maxCompiled, fn: m.trainGraph(pathTrain)}
	return nil
}

// trainGraph returns the training graph function: the loss and its
// gradients with respect to the weights.
func (m *Model) trainGraph(how path) func(in []*graph.Node) []*graph.Node {
	return func(in []*graph.Node) []*graph.Node {
		ws := in[len(in)-len(m.params):]
		logits := m.forward(in[:numInputs], ws, how)
		loss := m.loss(logits, in[:numInputs], in[numInputs:numInputs+numLossInputs])
		return append([]*graph.Node{loss}, graph.Gradient(loss, ws...)...)
	}
}

// Inputs of the graph functions, in order (see packed).
const (
	inSchema = iota
	inRelVec
	inGidx
	inQmask
	inSrc
	inRel
	inDst
	inInvdeg
	inSegOH
	inSegFirst
	inSegHas
	inSegCont
	inSegContOn
	numInputs
)

// Loss inputs, after the model inputs.
const (
	inLabels = iota
	inBceW
	inListW
	inReal
	numLossInputs
)

func (p *packed) inputs(dEnc int) []any {
	f := tensors.FromFlatDataAndDimensions[float32]
	i := tensors.FromFlatDataAndDimensions[int32]
	return []any{
		f(p.schema, p.nb, 3*dEnc),
		f(p.relvec, p.rp, dEnc),
		i(p.gidx, p.np, 1),
		f(p.qmask, p.np, 1),
		i(p.src, p.ep, 1),
		i(p.rel, p.ep, 1),
		i(p.dst, p.ep, 1),
		f(p.invdeg, p.np, 1),
		f(p.segOH, p.ep/segLen, segLen, segLen),
		i(p.segFirst, p.np, 1),
		f(p.segHas, p.np, 1),
		i(p.segCont, p.ep/segLen, 1),
		f(p.segContOn, p.ep/segLen, 1),
	}
}

func (p *packed) lossInputs() []any {
	f := tensors.FromFlatDataAndDimensions[float32]
	return []any{f(p.labels, p.np, 1), f(p.bceW, p.np, 1), f(p.listW, p.np, 1), f(p.real, p.np, 1)}
}

// dense is x W + b.
func dense(x, w, b *graph.Node) *graph.Node {
	return graph.Add(graph.MatMul(x, w), graph.InsertAxes(b, 0))
}

func relu(x *graph.Node) *graph.Node { return graph.Max(x, graph.ZerosLike(x)) }

// layerNorm normalises the last axis (eps as PyTorch's 1e-5).
func layerNorm(x, gain, bias *graph.Node) *graph.Node {
	mean := graph.ReduceAndKeep(x, graph.ReduceMean, -1)
	c := graph.Sub(x, mean)
	v := graph.ReduceAndKeep(graph.Square(c), graph.ReduceMean, -1)
	return graph.Add(graph.Mul(graph.Div(c, graph.Sqrt(graph.AddScalar(v, 1e-5))), graph.InsertAxes(gain, 0)), graph.InsertAxes(bias, 0))
}

// path selects how forward moves rows between entities, relations and
// edges. The results agree to rounding; the speed differs.
type path int

const (
	// pathTrain: the fast ops (see aggregate) with a hand-written gradient.
	pathTrain path = iota
	// pathPredict: the fast ops, no gradient.
	pathPredict
	// pathPlain: GoMLX's Gather and ScatterSum with their own gradients;
	// the reference the tests hold the other paths to.
	pathPlain
)

// forward builds the logits [np, 1].
func (m *Model) forward(in, ws []*graph.Node, how path) *graph.Node {
	w := func(i int) *graph.Node { return ws[i] }
	d := m.cfg.Width
	g := in[inSchema].Graph()
	np := in[inGidx].Shape().Dimensions[0]

	eq := dense(in[inSchema], w(pTripleW), w(pTripleB))        // [nb, d]
	h0 := graph.Mul(graph.Gather(eq, in[inGidx]), in[inQmask]) // [np, d]
	z := dense(in[inRelVec], w(pRelW), w(pRelB))               // [rp, d]
	h := h0
	var onehot, onehotT *graph.Node
	if rp := in[inRelVec].Shape().Dimensions[0]; rp <= maxOneHot && how != pathPlain {
		ep := in[inRel].Shape().Dimensions[0]
		onehot = graph.OneHot(graph.Reshape(in[inRel], ep), rp, dtypes.Float32)
		if how == pathTrain {
			// Built as such, not transposed: the Go backend's Transpose
			// is slow too.
			onehotT = graph.ConvertDType(graph.Equal(
				graph.Iota(g, shapes.Make(dtypes.Int32, rp, ep), 0),
				graph.Reshape(in[inRel], 1, ep)), dtypes.Float32)
		}
	}
	for l := range m.cfg.Layers {
		k := layerBase(l)
		r := dense(relu(dense(z, w(k+lRel1W), w(k+lRel1B))), w(k+lRel2W), w(k+lRel2B))
		var agg *graph.Node
		switch how {
		case pathPlain:
			msg := graph.Mul(graph.Gather(h, in[inSrc]), graph.Gather(r, in[inRel]))
			agg = graph.ScatterSum(graph.Zeros(g, shapes.Make(dtypes.Float32, np, d)), in[inDst], msg, true, false)
		default:
			agg = aggregate(h, r, in, onehot, onehotT, how == pathTrain)
		}
		if !m.cfg.NoBoundary {
			agg = graph.Add(agg, h0)
		}
		agg = graph.Mul(agg, in[inInvdeg])
		u := dense(graph.Concatenate([]*graph.Node{h, agg}, -1), w(k+lUpdW), w(k+lUpdB))
		h = graph.Add(h, relu(layerNorm(u, w(k+lLNGain), w(k+lLNBias))))
	}
	o := readout(m.cfg.Layers)
	return dense(h, w(o+oW), w(o+oB))
}

// gatherRows is Gather(x, idx) for a matrix x. The Go backend's Gather
// copies one element at a time, and the message gathers are most of a
// forward pass; with wide it moves 8-byte elements (2 floats viewed as an
// int64). (complex128, 4 floats, fails in Bitcast in this backend.)
// Bitcast has no gradient: training graphs use it under withGrad.
func gatherRows(x, idx *graph.Node, wide bool) *graph.Node {
	n, d := x.Shape().Dimensions[0], x.Shape().Dimensions[1]
	if !wide || d%2 != 0 {
		return graph.Gather(x, idx)
	}
	xb := graph.Bitcast(graph.Reshape(x, n, d/2, 2), dtypes.Int64)
	gb := graph.Gather(xb, idx)
	return graph.Reshape(graph.Bitcast(gb, dtypes.Float32), idx.Shape().Dimensions[0], d)
}

// aggregate is the sum over each entity's incoming edges of the DistMult
// messages h[src] * r[rel], built from what the Go backend runs fast: it
// runs Gather and ScatterSum one element at a time (4 bytes; 8 with
// gatherRows' int64 view), matrix products and element-wise ops in SIMD.
// Relation rows come from a one-hot product when onehot is set (relation
// rows x edges multiply-adds, cheaper than a Gather at a few hundred
// rows), the sum from segSum. With grad, the result carries a
// hand-written gradient (see withGrad), because GoMLX's would go through
// Bitcast (none) and transpose [ep, d] operands of the products.
func aggregate(h, r *graph.Node, in []*graph.Node, onehot, onehotT *graph.Node, grad bool) *graph.Node {
	ep := in[inSrc].Shape().Dimensions[0]
	n, d := h.Shape().Dimensions[0], h.Shape().Dimensions[1]
	hs := gatherRows(h, in[inSrc], true)
	var re *graph.Node
	if onehot != nil {
		re = graph.MatMul(onehot, r)
	} else {
		re = gatherRows(r, in[inRel], true)
	}
	agg := segSum(graph.Mul(hs, re), in, true)
	if !grad {
		return agg
	}
	return withGrad([]*graph.Node{h, r}, agg, func(v *graph.Node) []*graph.Node {
		g := v.Graph()
		nc := ep / segLen
		// Gradient of segSum's row reads: each entity's gradient goes to
		// the slot of its first edge and to slot 0 of each chunk its edges
		// continue into.
		idx := graph.Concatenate([]*graph.Node{
			in[inSegFirst],
			graph.MulScalar(graph.Iota(g, shapes.Make(dtypes.Int32, nc, 1), 0), segLen),
		}, 0)
		upd := graph.Concatenate([]*graph.Node{
			graph.Mul(v, in[inSegHas]),
			graph.Mul(graph.Gather(v, in[inSegCont]), in[inSegContOn]),
		}, 0)
		vslots := graph.ScatterSum(graph.Zeros(g, shapes.Make(dtypes.Float32, nc*segLen, d)), idx, upd, false, false)
		ohT := graph.Transpose(in[inSegOH], 1, 2) // [nc, edge, slot]: small
		vmsg := graph.Reshape(graph.Einsum("ces,csd->ced", ohT, graph.Reshape(vslots, nc, segLen, d)), ep, d)
		gh := graph.ScatterSum(graph.Zeros(g, shapes.Make(dtypes.Float32, n, d)), in[inSrc], graph.Mul(vmsg, re), false, false)
		vre := graph.Mul(vmsg, hs)
		var gr *graph.Node
		if onehotT != nil {
			gr = graph.MatMul(onehotT, vre)
		} else {
			gr = graph.ScatterSum(graph.ZerosLike(r), in[inRel], vre, false, false)
		}
		return []*graph.Node{gh, gr}
	})
}

// segSum is ScatterSum(zeros [np, d], dst, msg) for dst sorted, without
// a ScatterSum over edges (see packed.segOH): per chunk of segLen edges a
// one-hot matrix product sums messages into the chunk's slots; each
// entity then reads the slot of its first edge, plus slot 0 of every
// later chunk its edges continue into. Only that last step scatters, one
// row per chunk. wide is gatherRows'.
func segSum(msg *graph.Node, in []*graph.Node, wide bool) *graph.Node {
	ep, d := msg.Shape().Dimensions[0], msg.Shape().Dimensions[1]
	nc := ep / segLen
	slots := graph.Einsum("cse,ced->csd", in[inSegOH], graph.Reshape(msg, nc, segLen, d)) // [nc, segLen, d]
	first := gatherRows(graph.Reshape(slots, nc*segLen, d), in[inSegFirst], wide)
	first = graph.Mul(first, in[inSegHas])
	cont := graph.Mul(graph.Reshape(graph.Slice(slots, graph.AxisRange(), graph.AxisElem(0)), nc, d), in[inSegContOn])
	return graph.ScatterSum(first, in[inSegCont], cont, false, false)
}

// withGrad returns y, a function of xs, with grad(v) as the gradients
// with respect to xs given the gradient v with respect to y, in place of
// what GoMLX would derive. GoMLX attaches custom gradients to identities
// only, so y carries a zero-valued scalar link to an identity of each x:
// y's custom gradient computes grad(v), and the identities return it in
// place of the link's zero gradient. The reverse pass visits y before the
// identities, which y depends on through the link.
func withGrad(xs []*graph.Node, y *graph.Node, grad func(v *graph.Node) []*graph.Node) *graph.Node {
	var gxs []*graph.Node
	var link *graph.Node
	for i, x := range xs {
		xi := graph.IdentityWithCustomGradient(x, func(_, v *graph.Node) *graph.Node {
			if gxs == nil {
				return v
			}
			return gxs[i]
		})
		s := graph.ReduceAllSum(xi)
		if link == nil {
			link = s
		} else {
			link = graph.Add(link, s)
		}
	}
	link = graph.MulScalar(link, 0)
	return graph.IdentityWithCustomGradient(graph.Add(graph.StopGradient(y), link), func(_, v *graph.Node) *graph.Node {
		gxs = grad(v)
		return v
	})
}

// loss builds the scalar training loss from logits [np, 1]; in are the
// model inputs and li the loss inputs.
func (m *Model) loss(x *graph.Node, in, li []*graph.Node) *graph.Node {
	y := li[inLabels]
	// Stable BCE with logits: max(x, 0) - x y + log(1 + exp(-|x|)).
	bce := graph.Add(graph.Sub(relu(x), graph.Mul(x, y)), graph.Log1p(graph.Exp(graph.Neg(graph.Abs(x)))))
	loss := graph.ReduceAllSum(graph.Mul(bce, li[inBceW]))
	mix := m.cfg.LossMix
	if mix == 0 {
		return loss
	}
	// gfm-rag's ListCE: -log(p / (sum of p over the graph + 1e-5) + 1e-5)
	// on the positives, with p = sigmoid(x).
	nb := in[inSchema].Shape().Dimensions[0]
	p := graph.Mul(graph.Sigmoid(x), li[inReal])
	sums := graph.ScatterSum(graph.Zeros(x.Graph(), shapes.Make(dtypes.Float32, nb, 1)), in[inGidx], p, true, false)
	ratio := graph.Div(p, graph.AddScalar(graph.Gather(sums, in[inGidx]), 1e-5))
	lce := graph.Neg(graph.Log(graph.AddScalar(ratio, 1e-5)))
	list := graph.ReduceAllSum(graph.Mul(lce, li[inListW]))
	return graph.Add(graph.MulScalar(loss, 1-mix), graph.MulScalar(list, mix))
}

// weights returns the parameters as tensors, cached until the next update.
func (m *Model) weights() []any {
	if m.ref.cached == nil {
		m.ref.cached = make([]*tensors.Tensor, len(m.params))
		for i, p := range m.params {
			m.ref.cached[i] = tensors.FromFlatDataAndDimensions(p.data, p.dims...)
		}
	}
	out := make([]any, len(m.ref.cached))
	for i, t := range m.ref.cached {
		out[i] = t
	}
	return out
}

// call runs a graph function, turning GoMLX's panics into errors.
func (m *Model) call(what string, fn func(...any) ([]*tensors.Tensor, error), args []any) (out []*tensors.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("tripgnn: %s: GoMLX: %v", what, r)
		}
	}()
	out, err = fn(args...)
	if err != nil {
		return nil, fmt.Errorf("tripgnn: %s: GoMLX: %w", what, err)
	}
	return out, nil
}

func flat(t *tensors.Tensor) ([]float32, error) {
	v, err := tensors.CopyFlatData[float32](t)
	if err != nil {
		return nil, fmt.Errorf("tripgnn: read output: %w", err)
	}
	return v, nil
}
