package tripgnn

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Example is one question's graph with its encoder inputs.
type Example struct {
	// NumEntities is the number of entities N; entity ids are 0..N-1.
	NumEntities int
	// Heads, Rels and Tails are the forward edges (KG triples) with
	// relation ids 0..R-1. The model adds the inverse edge
	// (tail, r+R, head) of each.
	Heads, Rels, Tails []int32
	// RelVecs holds 2R encoder vectors, R x EncoderDim values for the
	// forward relations' texts followed by R x EncoderDim for their
	// inverses' ("inverse of <relation text>").
	RelVecs []float32
	// SchemaVecs holds the T schema triples, 3 x EncoderDim values each:
	// the encodings of head, relation and tail, concatenated.
	SchemaVecs []float32
	// Question lists the question entities (at least one).
	Question []int32
	// Labels (length N, values in [0, 1]) marks gold-chain entities with
	// 1. Needed by TrainStep; ignored by Predict.
	Labels []float32
}

// validate checks ex against the encoder dimension and returns R.
func validate(ex *Example, dEnc int, needLabels bool) (numRel int, err error) {
	if ex == nil {
		return 0, fmt.Errorf("nil example")
	}
	n := ex.NumEntities
	if n <= 0 {
		return 0, fmt.Errorf("empty graph (%d entities)", n)
	}
	if n > math.MaxInt32/2 {
		return 0, fmt.Errorf("%d entities is too many", n)
	}
	if len(ex.Heads) != len(ex.Rels) || len(ex.Heads) != len(ex.Tails) {
		return 0, fmt.Errorf("edge columns differ in length: %d heads, %d relations, %d tails",
			len(ex.Heads), len(ex.Rels), len(ex.Tails))
	}
	if len(ex.RelVecs)%(2*dEnc) != 0 {
		return 0, fmt.Errorf("RelVecs has %d values, not a multiple of 2 x encoder dim %d (forward and inverse relations)",
			len(ex.RelVecs), dEnc)
	}
	numRel = len(ex.RelVecs) / (2 * dEnc)
	if len(ex.SchemaVecs) == 0 || len(ex.SchemaVecs)%(3*dEnc) != 0 {
		return 0, fmt.Errorf("SchemaVecs has %d values, not a positive multiple of 3 x encoder dim %d",
			len(ex.SchemaVecs), dEnc)
	}
	for i := range ex.Heads {
		h, r, t := ex.Heads[i], ex.Rels[i], ex.Tails[i]
		if h < 0 || int(h) >= n || t < 0 || int(t) >= n {
			return 0, fmt.Errorf("edge %d (%d, %d, %d): entity id outside 0..%d", i, h, r, t, n-1)
		}
		if r < 0 || int(r) >= numRel {
			return 0, fmt.Errorf("edge %d (%d, %d, %d): relation id outside 0..%d (RelVecs holds %d relations)",
				i, h, r, t, numRel-1, numRel)
		}
	}
	if len(ex.Question) == 0 {
		return 0, fmt.Errorf("no question entity")
	}
	for _, q := range ex.Question {
		if q < 0 || int(q) >= n {
			return 0, fmt.Errorf("question entity %d outside 0..%d", q, n-1)
		}
	}
	if err := finite("RelVecs", ex.RelVecs); err != nil {
		return 0, err
	}
	if err := finite("SchemaVecs", ex.SchemaVecs); err != nil {
		return 0, err
	}
	if needLabels {
		if len(ex.Labels) != n {
			return 0, fmt.Errorf("%d labels for %d entities", len(ex.Labels), n)
		}
		for i, y := range ex.Labels {
			if !(y >= 0 && y <= 1) {
				return 0, fmt.Errorf("label %d is %v, want a value in [0, 1]", i, y)
			}
		}
	}
	return numRel, nil
}

func finite(name string, xs []float32) error {
	for i, x := range xs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%s[%d] is %v", name, i, x)
		}
	}
	return nil
}

// bucket rounds n up to a size from a fixed ladder with 8 steps per
// doubling (so padding is at most 1/8 of n) and at least lo.
func bucket(n, lo int) int {
	if n <= lo {
		return lo
	}
	step := max(1<<(bits.Len(uint(n))-1)/8, 1)
	return (n + step - 1) / step * step
}

// pow2 rounds n up to a power of two, at least lo.
func pow2(n, lo int) int {
	p := lo
	for p < n {
		p *= 2
	}
	return p
}

// packed is a batch joined into one padded disjoint graph, laid out as
// the graph functions' inputs.
type packed struct {
	nb, np, ep, rp int   // padded graphs, entities, edges, relations
	off            []int // entity offset of each graph, len(batch)+1

	schema []float32 // [nb, 3 dEnc] mean schema-triple vector per graph
	relvec []float32 // [rp, dEnc]
	gidx   []int32   // [np] graph of each entity
	qmask  []float32 // [np] 1 on question entities
	src    []int32   // [ep]
	rel    []int32   // [ep]
	dst    []int32   // [ep], sorted
	invdeg []float32 // [np]

	// The sum of each entity's incoming messages, computed without a
	// ScatterSum over edges (see segSum): the sorted edges are cut into
	// chunks of segLen; within a chunk, edge e adds to local slot
	// slotOf(e) (its destination's rank among the chunk's destinations).
	segOH     []float32 // [ep/segLen, segLen, segLen]: 1 at [chunk, slot, edge]
	segFirst  []int32   // [np] flat slot (chunk*segLen+slot) of the entity's first edge; 0 if none
	segHas    []float32 // [np] 1 if the entity has an incoming edge
	segCont   []int32   // [ep/segLen] entity that chunk's slot 0 continues from the previous chunk, else 0
	segContOn []float32 // [ep/segLen] 1 if it does

	// Training only.
	labels, bceW, listW, real []float32 // [np]
}

type edge struct{ dst, src, rel int32 }

// segLen is the chunk length of segSum: its matrix products cost
// ep x segLen x width multiply-adds, a few milliseconds at 18,000 edges and
// width 256, against 40 ms for the ScatterSum they replace.
const segLen = 16

// segments fills the seg* inputs from the sorted dst (padding included).
func (p *packed) segments() {
	nc := p.ep / segLen
	p.segOH = make([]float32, nc*segLen*segLen)
	p.segFirst = make([]int32, p.np)
	p.segHas = make([]float32, p.np)
	p.segCont = make([]int32, nc)
	p.segContOn = make([]float32, nc)
	for c := range nc {
		slot := -1
		for e := range segLen {
			j := c*segLen + e
			d := p.dst[j]
			if e == 0 || d != p.dst[j-1] {
				slot++
				if j == 0 || d != p.dst[j-1] {
					p.segFirst[d] = int32(c*segLen + slot)
					p.segHas[d] = 1
				} else {
					p.segCont[c], p.segContOn[c] = d, 1
				}
			}
			p.segOH[(c*segLen+slot)*segLen+e] = 1
		}
	}
}

// packing is how pack joins a batch: the encoder's dimension, whether
// the model marks the subgraph's boundary, and whether the loss inputs
// (labels) are filled too.
type packing struct {
	dEnc     int
	boundary bool
	labels   bool
}

// pack validates and joins a batch as how says.
func pack(batch []*Example, how packing) (*packed, error) {
	dEnc, boundary, withLabels := how.dEnc, how.boundary, how.labels
	if len(batch) == 0 {
		return nil, fmt.Errorf("tripgnn: empty batch")
	}
	p := &packed{off: make([]int, len(batch)+1)}
	numRel := make([]int, len(batch))
	nEnt, nEdge, nRel := 0, 0, 0
	for i, ex := range batch {
		r, err := validate(ex, dEnc, withLabels)
		if err != nil {
			return nil, fmt.Errorf("tripgnn: example %d: %w", i, err)
		}
		numRel[i] = r
		nEnt += ex.NumEntities
		nEdge += 2 * len(ex.Heads)
		nRel += 2 * r
		p.off[i+1] = nEnt
	}
	if nEnt > math.MaxInt32/2 || nEdge > math.MaxInt32/2 {
		return nil, fmt.Errorf("tripgnn: batch of %d entities and %d edges is too large", nEnt, nEdge)
	}
	p.nb = pow2(len(batch), 1)
	// At least one padding entity: padding edges run from it to itself.
	p.np = bucket(nEnt+1, 16)
	p.ep = (bucket(nEdge, 16) + segLen - 1) / segLen * segLen
	p.rp = pow2(nRel, 8)

	p.schema = make([]float32, p.nb*3*dEnc)
	p.relvec = make([]float32, p.rp*dEnc)
	p.gidx = make([]int32, p.np)
	p.qmask = make([]float32, p.np)
	p.src = make([]int32, p.ep)
	p.rel = make([]int32, p.ep)
	p.dst = make([]int32, p.ep)
	p.invdeg = make([]float32, p.np)

	edges := make([]edge, 0, nEdge)
	relOff := 0
	for i, ex := range batch {
		eo := int32(p.off[i])
		for e := p.off[i]; e < p.off[i+1]; e++ {
			p.gidx[e] = int32(i)
		}
		for _, q := range ex.Question {
			p.qmask[eo+q] = 1
		}
		// The mean of the raw schema vectors: E_Q = mean(W x_t + b) =
		// W mean(x_t) + b because the triple map is linear.
		t := len(ex.SchemaVecs) / (3 * dEnc)
		row := p.schema[i*3*dEnc : (i+1)*3*dEnc]
		for j := range t {
			for k, v := range ex.SchemaVecs[j*3*dEnc : (j+1)*3*dEnc] {
				row[k] += v
			}
		}
		inv := 1 / float32(t)
		for k := range row {
			row[k] *= inv
		}
		copy(p.relvec[relOff*dEnc:], ex.RelVecs)
		r := int32(numRel[i])
		ro := int32(relOff)
		for j := range ex.Heads {
			h, rl, tl := ex.Heads[j]+eo, ex.Rels[j]+ro, ex.Tails[j]+eo
			edges = append(edges, edge{dst: tl, src: h, rel: rl}, edge{dst: h, src: tl, rel: rl + r})
		}
		relOff += 2 * numRel[i]
	}
	// Sorted by destination so that the scatter writes rows in order; the
	// full key makes the order, and so the summation order, deterministic.
	slices.SortFunc(edges, func(a, b edge) int {
		return cmp.Or(cmp.Compare(a.dst, b.dst), cmp.Compare(a.src, b.src), cmp.Compare(a.rel, b.rel))
	})
	deg := make([]int32, p.np)
	for j, e := range edges {
		p.dst[j], p.src[j], p.rel[j] = e.dst, e.src, e.rel
		deg[e.dst]++
	}
	// Padding edges loop on the last padding entity (keeping dst sorted),
	// which no real entity hears from and no loss reads; that is cheaper
	// than masking every message.
	for j := len(edges); j < p.ep; j++ {
		p.dst[j], p.src[j] = int32(p.np-1), int32(p.np-1)
	}
	for e := nEnt; e < p.np; e++ {
		p.gidx[e] = int32(len(batch) - 1) // keeps gidx sorted; masked everywhere
	}
	p.segments()
	for e := range p.np {
		switch {
		case e >= nEnt:
			p.invdeg[e] = 0
		case boundary:
			p.invdeg[e] = 1 / float32(deg[e]+1)
		default:
			p.invdeg[e] = 1 / float32(max(deg[e], 1))
		}
	}
	if !withLabels {
		return p, nil
	}
	p.labels = make([]float32, p.np)
	p.bceW = make([]float32, p.np)
	p.listW = make([]float32, p.np)
	p.real = make([]float32, p.np)
	withPos := 0
	for _, ex := range batch {
		if slices.ContainsFunc(ex.Labels, func(y float32) bool { return y > 0 }) {
			withPos++
		}
	}
	for i, ex := range batch {
		eo := p.off[i]
		n := ex.NumEntities
		var pos float64
		for _, y := range ex.Labels {
			pos += float64(y)
		}
		for j, y := range ex.Labels {
			p.labels[eo+j] = y
			p.real[eo+j] = 1
			// Per-graph mean BCE (paper eq. 37), then the mean over graphs.
			p.bceW[eo+j] = float32(1 / (float64(n) * float64(len(batch))))
			if pos > 0 {
				// ListCE (gfm-rag): per graph, the positives' mean of
				// -log(p / sum p), averaged over graphs with a positive.
				p.listW[eo+j] = float32(float64(y) / (pos * float64(withPos)))
			}
		}
	}
	return p, nil
}
