package tripgnn

import (
	"fmt"
	"math"
)

// Defaults applied by New to zero fields of Config.
const (
	// DefaultLayers is the paper's depth (appendix B.2): six hops of
	// message passing cover the 1-4 hop questions of WebQSP and CWQ with
	// room for detours through CVT nodes.
	DefaultLayers = 6
	// DefaultWidth is the CPU default. The paper uses 512; 256 keeps a
	// 2,000-entity forward pass within the latency budget on two cores
	// (see the package benchmarks) at a quarter of the weights.
	DefaultWidth = 256
	// DefaultLR is gfm-rag's AdamW learning rate for training from scratch;
	// the paper's 1e-5 (C.1) assumes a pretrained GNN being fine-tuned.
	DefaultLR = 5e-4
	// DefaultKFactor is the paper's guidance graph size: K = 4 x |T|.
	DefaultKFactor = 4
)

// Config describes a model. Zero fields take the defaults above, except
// WeightDecay, LossMix and NoBoundary, whose zero values are meaningful.
type Config struct {
	// EncoderName and EncoderDim identify the text encoder whose vectors
	// the model reads (models.Encoder's Name and Dim). A checkpoint
	// remembers them so that it is never used with another encoder's
	// vectors. EncoderDim is required.
	EncoderName string
	EncoderDim  int
	// Layers is the number of message-passing layers (default 6).
	Layers int
	// Width is the hidden size d of entities and relations (default 256).
	Width int
	// LR is the AdamW learning rate (default 5e-4).
	LR float64
	// WeightDecay is AdamW's decoupled weight decay, applied to weight
	// matrices only (not to biases or LayerNorm parameters).
	WeightDecay float64
	// LossMix is the weight of gfm-rag's listwise loss ListCE in
	// (1-LossMix) BCE + LossMix ListCE. 0 is the paper's plain BCE;
	// gfm-rag uses 0.7.
	LossMix float64
	// NoBoundary drops gfm-rag's boundary self-loop (h0 added to every
	// layer's aggregate), leaving the paper's plain mean over incoming
	// messages. The boundary keeps the question signal alive at every
	// layer and is the default.
	NoBoundary bool
	// KFactor sets the guidance graph size K = KFactor x |schema triples|
	// (default 4); see Model.K.
	KFactor int
	// Seed makes initialisation, and hence training, reproducible.
	Seed uint64
}

func (c Config) withDefaults() (Config, error) {
	if c.EncoderDim <= 0 {
		return c, fmt.Errorf("tripgnn: EncoderDim %d: need the text encoder's dimension", c.EncoderDim)
	}
	if c.Layers == 0 {
		c.Layers = DefaultLayers
	}
	if c.Width == 0 {
		c.Width = DefaultWidth
	}
	if c.LR == 0 {
		c.LR = DefaultLR
	}
	if c.KFactor == 0 {
		c.KFactor = DefaultKFactor
	}
	switch {
	case c.Layers < 0 || c.Layers > 64:
		return c, fmt.Errorf("tripgnn: Layers %d out of range 1..64", c.Layers)
	case c.Width < 0 || c.Width > 8192:
		return c, fmt.Errorf("tripgnn: Width %d out of range 1..8192", c.Width)
	case c.EncoderDim > 1<<16:
		return c, fmt.Errorf("tripgnn: EncoderDim %d too large", c.EncoderDim)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return c, fmt.Errorf("tripgnn: LR %v must be a positive number", c.LR)
	case !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 0):
		return c, fmt.Errorf("tripgnn: WeightDecay %v must be a non-negative number", c.WeightDecay)
	case !(c.LossMix >= 0 && c.LossMix <= 1):
		return c, fmt.Errorf("tripgnn: LossMix %v outside [0, 1]", c.LossMix)
	case c.KFactor < 0:
		return c, fmt.Errorf("tripgnn: KFactor %d is negative", c.KFactor)
	}
	return c, nil
}
