package pattern

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/kg"
)

// classifier is a fastText-style path classifier: the question's sparse
// features (words, word pairs and triples, and words tagged with their side
// of and distance from the masked entity) are averaged into a hidden vector,
// to which a learnt projection of the encoder vector is added; a softmax
// over the model's paths follows. A path's output vector is its own vector
// plus one vector per relation-at-hop and per relation, so paths that share
// relations share evidence, which rare paths need.
//
// Why next to the neighbour vote: the vote cannot learn that "parent"
// before the entity and "parent" after it ask for different paths, nor
// weigh the one word that decides a template; a trained softmax can.
type classifier struct {
	Hidden int
	// Feats is the feature vocabulary; feature i owns In[i*Hidden:].
	Feats []string
	In    []float32
	// Proj maps the encoder vector (Dim) into the hidden space, Hidden*Dim.
	Proj []float32
	// Out and Bias are the paths' own output vectors and biases.
	Out  []float32
	Bias []float32
	// Parts are the shared path parts ("r:rel", "h1:rel"); PathParts the
	// part ids of every path.
	Parts     []string
	PartVec   []float32
	PathParts [][]int32
}

// trainExample is one question as the classifier sees it.
type trainExample struct {
	feats  []int32
	vec    []float32
	target []int32 // path ids, uniform target over them
}

// features are the classifier's sparse features of a masked text.
func features(text string) []string {
	ws := strings.Fields(kg.Normalize(text))
	ent := -1
	for i, w := range ws {
		if w == MaskToken {
			ent = i
			break
		}
	}
	out := make([]string, 0, 6*len(ws)+2)
	for _, w := range ws {
		out = append(out, "w:"+w)
	}
	padded := make([]string, 0, len(ws)+2)
	padded = append(padded, "<s>")
	padded = append(padded, ws...)
	padded = append(padded, "</s>")
	for i := 0; i+1 < len(padded); i++ {
		out = append(out, "b:"+padded[i]+" "+padded[i+1])
	}
	for i := 0; i+2 < len(padded); i++ {
		out = append(out, "t:"+padded[i]+" "+padded[i+1]+" "+padded[i+2])
	}
	if ent >= 0 {
		for i, w := range ws {
			if i == ent {
				continue
			}
			side, d := "L", ent-i
			if i > ent {
				side, d = "R", i-ent
			}
			d = min(d, 4)
			out = append(out, "p"+side+":"+w, "p"+side+strconv.Itoa(d)+":"+w)
		}
	}
	return out
}

// pathParts are the shared output parts of a path: its relations, its
// relations at their hop, and the words of its relation names (the last two
// dot-separated parts of a Freebase name), which let a path seen once
// borrow from every path that says "nationality" or "time zone".
func pathParts(p Path) []string {
	out := make([]string, 0, 2*len(p))
	seen := map[string]bool{}
	for i, s := range p {
		r := s.Rel + "/" + strconv.Itoa(int(s.Dir))
		out = append(out, "r:"+r, "h"+strconv.Itoa(i)+"/"+strconv.Itoa(len(p))+":"+r)
		segs := strings.Split(s.Rel, ".")
		if len(segs) > 2 {
			// Freebase's domain.type.property: the domain and the type
			// are parts too, so a path shares with the paths of its type.
			for _, h := range []string{"d:" + segs[0], "t:" + segs[0] + "." + segs[1]} {
				if !seen[h] {
					seen[h] = true
					out = append(out, h)
				}
			}
			segs = segs[len(segs)-2:]
		}
		for _, w := range strings.Fields(kg.Normalize(strings.Join(segs, " "))) {
			if !seen[w] {
				seen[w] = true
				out = append(out, "rw:"+w)
			}
		}
	}
	return out
}

// trainClassifier fits the classifier by SGD on the softmax cross-entropy
// with a linearly decaying learning rate; the shuffle and the initial
// weights come from seed, so training is deterministic. A step too large
// makes the weights overflow; that is an error at the end of the epoch
// where it happens, not a model that plans nothing.
func trainClassifier(paths []Path, exs []trainExample, nfeat, dim int, o Options) (*classifier, error) {
	h := o.Hidden
	c := &classifier{Hidden: h}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	c.In = make([]float32, nfeat*h)
	for i := range c.In {
		c.In[i] = (rng.Float32()*2 - 1) / float32(h)
	}
	c.Proj = make([]float32, h*dim)
	c.Out = make([]float32, len(paths)*h)
	c.Bias = make([]float32, len(paths))
	partID := map[string]int32{}
	c.PathParts = make([][]int32, len(paths))
	for i, p := range paths {
		for _, s := range pathParts(p) {
			id, ok := partID[s]
			if !ok {
				id = int32(len(c.Parts))
				partID[s] = id
				c.Parts = append(c.Parts, s)
			}
			c.PathParts[i] = append(c.PathParts[i], id)
		}
	}
	c.PartVec = make([]float32, len(c.Parts)*h)

	np, nparts := len(paths), len(c.Parts)
	hid := make([]float32, h)
	gh := make([]float32, h)
	logits := make([]float32, np)
	partLogits := make([]float32, nparts)
	partGrad := make([]float32, nparts)
	order := make([]int, len(exs))
	for i := range order {
		order[i] = i
	}
	total := float32(o.Epochs * len(exs))
	step := 0
	for ep := 0; ep < o.Epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, idx := range order {
			ex := &exs[idx]
			lr := o.LearningRate * (1 - float32(step)/total)
			step++
			c.hidden(hid, ex.feats, ex.vec)
			// A path's logit is its own vector's plus its parts'; the parts'
			// dot products are shared, so they are computed once.
			for q := range nparts {
				partLogits[q] = dot(c.PartVec[q*h:(q+1)*h], hid)
			}
			for k := range np {
				l := dot(c.Out[k*h:(k+1)*h], hid) + c.Bias[k]
				for _, q := range c.PathParts[k] {
					l += partLogits[q]
				}
				logits[k] = l
			}
			softmax(logits)
			t := 1 / float32(len(ex.target))
			for _, k := range ex.target {
				logits[k] -= t
			}
			// logits now holds the gradient of the loss by the logits.
			clear(gh)
			clear(partGrad)
			for k, gk := range logits {
				if gk > -1e-7 && gk < 1e-7 {
					continue
				}
				axpy(gh, gk, c.Out[k*h:(k+1)*h])
				axpy(c.Out[k*h:(k+1)*h], -lr*gk, hid)
				c.Bias[k] -= lr * gk
				for _, q := range c.PathParts[k] {
					partGrad[q] += gk
				}
			}
			for q, gq := range partGrad {
				if gq == 0 {
					continue
				}
				pv := c.PartVec[q*h : (q+1)*h]
				axpy(gh, gq, pv)
				axpy(pv, -lr*gq, hid)
			}
			if len(ex.feats) > 0 {
				a := -lr / float32(len(ex.feats))
				for _, f := range ex.feats {
					axpy(c.In[int(f)*h:(int(f)+1)*h], a, gh)
				}
			}
			if ex.vec != nil {
				for j, gj := range gh {
					axpy(c.Proj[j*dim:(j+1)*dim], -lr*gj, ex.vec)
				}
			}
		}
		for _, w := range [][]float32{c.Bias, c.Out, c.PartVec, c.In, c.Proj} {
			if !finite(w) {
				return nil, fmt.Errorf("%w: non-finite weights after epoch %d of %d at learning rate %g; lower it", ErrDiverged, ep+1, o.Epochs, o.LearningRate)
			}
		}
	}
	return c, nil
}

// ErrDiverged is returned when the path classifier's SGD overflows.
var ErrDiverged = errors.New("pattern: train: the path classifier diverged")

func finite(xs []float32) bool {
	for _, x := range xs {
		if x-x != 0 { // NaN or ±Inf
			return false
		}
	}
	return true
}

// hidden computes the hidden vector of a question.
func (c *classifier) hidden(dst []float32, feats []int32, vec []float32) {
	h := c.Hidden
	clear(dst)
	if len(feats) > 0 {
		for _, f := range feats {
			axpy(dst, 1, c.In[int(f)*h:(int(f)+1)*h])
		}
		inv := 1 / float32(len(feats))
		for j := range dst {
			dst[j] *= inv
		}
	}
	if vec != nil {
		dim := len(c.Proj) / h
		for j := range dst {
			dst[j] += dot(c.Proj[j*dim:(j+1)*dim], vec)
		}
	}
}

// classVectors writes every path's effective output vector into dst.
func (c *classifier) classVectors(dst []float32) {
	h := c.Hidden
	copy(dst, c.Out)
	for k, parts := range c.PathParts {
		d := dst[k*h : (k+1)*h]
		for _, pp := range parts {
			axpy(d, 1, c.PartVec[int(pp)*h:(int(pp)+1)*h])
		}
	}
}

func dot(a, b []float32) float32 {
	var s float32
	b = b[:len(a)]
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// axpy adds a*x to y.
func axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

// softmax replaces x by its softmax.
func softmax(x []float32) { softmaxInto(x, x) }
