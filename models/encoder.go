// Package models holds the interfaces stem's stages use to turn text into
// vectors (encoders) and, later, to talk to language models. Implementations
// live in sub-packages so that a binary only links the backends it uses:
// wordvec (the embedded default), onnxenc (transformer encoders run in pure
// Go), openaiembed (a remote /v1/embeddings server) and embedcache (an on-disk
// cache in front of any of them).
package models

import (
	"context"
	"fmt"
	"math"
)

// Encoder turns texts into unit-length vectors of a fixed dimension.
//
// Encode writes the vector of texts[i] into dst[i*Dim():(i+1)*Dim()], so dst
// must hold exactly len(texts)*Dim() values. Writing into a caller's buffer
// keeps hot loops free of allocation, in the manner of gonum. Implementations
// must be safe for concurrent use.
type Encoder interface {
	// Name identifies the encoder and its weights (for example
	// "wordvec:wink-sg-100d+ngram3-5" or "onnx:<sha256 of model.onnx>").
	// Caches and model checkpoints key on it, so two encoders that can give
	// different vectors for the same text must not share a name.
	Name() string
	// Dim is the length of every vector Encode writes.
	Dim() int
	// Encode writes one unit-normalised vector per text into dst.
	Encode(ctx context.Context, texts []string, dst []float32) error
}

// EncodeAll encodes texts into a newly allocated row-major matrix of
// len(texts) rows and enc.Dim() columns.
func EncodeAll(ctx context.Context, enc Encoder, texts []string) ([]float32, error) {
	dst := make([]float32, len(texts)*enc.Dim())
	if err := enc.Encode(ctx, texts, dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// CheckDst reports an error when dst cannot hold n vectors of dimension dim.
// Implementations call it first so a caller's shape mistake is an error, not a
// panic deep inside a backend.
func CheckDst(name string, n, dim int, dst []float32) error {
	if len(dst) != n*dim {
		return fmt.Errorf("encoder %s: destination holds %d values, want %d texts x %d dims = %d", name, len(dst), n, dim, n*dim)
	}
	return nil
}

// Normalize scales v to unit Euclidean length in place. A zero vector is left
// as it is: it has no direction, and its cosine with anything is 0.
func Normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// Cosine returns the cosine similarity of two vectors of equal length, 0 when
// either is zero.
func Cosine(a, b []float32) float32 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float32(dot / math.Sqrt(na*nb))
}

// Additive is an Encoder whose vector for a text made by joining several texts
// with spaces is the normalised sum of the texts' un-normalised parts. Tracing
// uses it to compose the vector of a KG triple "head relation tail" from
// vectors precomputed once per entity and relation, instead of encoding a new
// string for every edge of a hub node.
type Additive interface {
	Encoder
	// EncodeParts writes the un-normalised part of each text into dst, laid
	// out as for Encode. Normalising the sum of the parts of a, b and c gives
	// exactly the vector Encode returns for "a b c".
	EncodeParts(ctx context.Context, texts []string, dst []float32) error
}
