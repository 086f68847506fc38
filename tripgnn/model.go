package tripgnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// param is one weight tensor, row-major.
type param struct {
	name  string
	dims  []int
	data  []float32
	decay bool // weight matrix: subject to weight decay
}

// Model is a Triple-GNN with its AdamW state. Its methods are safe for
// concurrent use; they run one at a time.
type Model struct {
	cfg    Config
	params []param

	mu     sync.Mutex
	engine Engine
	m, v   [][]float32 // AdamW moments, allocated at the first TrainStep
	step   int
	ref    reference // the GoMLX engine's state (gomlx.go); empty without the gomlx build tag
}

// Engine selects what computes a Model's forward and backward passes.
// Both give the same results to float32 rounding; the tests hold them to
// each other.
type Engine int

const (
	// Native runs hand-written kernels (kernel.go, native.go): SIMD
	// matrix products and row loops over the sorted edge list, with a
	// hand-written backward pass. The default: several times faster on a
	// CPU (see BenchmarkPredict and BenchmarkTrainStep).
	Native Engine = iota
	// GoMLX builds the model as a GoMLX graph run by its pure-Go backend,
	// with automatic differentiation: the reference the native engine is
	// checked against. It is compiled in only with the build tag gomlx
	// (go test -tags gomlx), so that stem's default build does not compile
	// GoMLX; without the tag, Predict and TrainStep on it return an error.
	GoMLX
)

// String returns "native" or "gomlx".
func (e Engine) String() string {
	if e == GoMLX {
		return "gomlx"
	}
	return "native"
}

// SetEngine selects the engine of later Predict and TrainStep calls.
func (m *Model) SetEngine(e Engine) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.engine = e
}

// New returns a model with weights initialised from cfg.Seed.
func New(cfg Config) (*Model, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, params: layout(cfg)}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x7472697067_6e6e))
	for i := range m.params {
		p := &m.params[i]
		switch {
		case p.decay:
			// PyTorch's nn.Linear default (what gfm-rag trains from):
			// uniform in +-1/sqrt(fan_in).
			a := 1 / math.Sqrt(float64(p.dims[0]))
			for j := range p.data {
				p.data[j] = float32((2*rng.Float64() - 1) * a)
			}
		case isGain(p.name):
			for j := range p.data {
				p.data[j] = 1
			}
		}
	}
	return m, nil
}

// The parameters' places in Model.params, in layout order: the two input
// MLPs, then one block of layerParams per message-passing layer, then the
// readout. The native engine and the GoMLX graph both index by these names.
const (
	pTripleW = iota // MLP_phi2: schema-triple text -> question vector, [3e, d]
	pTripleB
	pRelW // MLP_phi4: relation text -> relation feature, [e, d]
	pRelB
	pLayers // the first layer's block
)

// Offsets within a layer's block.
const (
	lRel1W  = iota // the layer's relation projection g^l, first linear map [d, d]
	lRel1B         //
	lRel2W         // its second linear map [d, d]
	lRel2B         //
	lUpdW          // update: [h, aggregate] -> h', [2d, d]
	lUpdB          //
	lLNGain        // LayerNorm of the update
	lLNBias        //
	layerParams
)

// Offsets within the readout block (MLP_phi1: h -> logit).
const (
	oW = iota // [d, 1]
	oB
)

// layerBase is the index of layer l's first parameter.
func layerBase(l int) int { return pLayers + layerParams*l }

// readout is the index of the readout's first parameter in a model with
// the given number of layers.
func readout(layers int) int { return layerBase(layers) }

// layout lists the parameters in their fixed order (the checkpoint order).
func layout(cfg Config) []param {
	d, e := cfg.Width, cfg.EncoderDim
	var ps []param
	add := func(name string, decay bool, dims ...int) {
		n := 1
		for _, x := range dims {
			n *= x
		}
		ps = append(ps, param{name: name, dims: dims, data: make([]float32, n), decay: decay})
	}
	add("triple/w", true, 3*e, d) // MLP_phi2
	add("triple/b", false, d)
	add("rel/w", true, e, d) // MLP_phi4
	add("rel/b", false, d)
	for l := range cfg.Layers {
		pre := fmt.Sprintf("layer%d/", l)
		add(pre+"rel1/w", true, d, d) // g^l, gfm-rag's relation projection
		add(pre+"rel1/b", false, d)
		add(pre+"rel2/w", true, d, d)
		add(pre+"rel2/b", false, d)
		add(pre+"upd/w", true, 2*d, d)
		add(pre+"upd/b", false, d)
		add(pre+"ln/gain", false, d)
		add(pre+"ln/bias", false, d)
	}
	add("out/w", true, d, 1) // MLP_phi1
	add("out/b", false, 1)
	return ps
}

func isGain(name string) bool {
	return len(name) >= 7 && name[len(name)-7:] == "ln/gain"
}

// Config returns the model's configuration, defaults filled in.
func (m *Model) Config() Config { return m.cfg }

// NumParams returns the number of trainable weights.
func (m *Model) NumParams() int {
	n := 0
	for _, p := range m.params {
		n += len(p.data)
	}
	return n
}

// K is the guidance graph size for a question with numSchemaTriples schema
// triples: KFactor x numSchemaTriples.
func (m *Model) K(numSchemaTriples int) int { return m.cfg.KFactor * numSchemaTriples }
