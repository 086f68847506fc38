package wordvec

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"

	"github.com/stem-kgqa/stem/models"
)

// Options tunes the encoder. The zero value selects the defaults, which
// were chosen by measurement on MetaQA and PathQuestion (see quality_test.go).
type Options struct {
	// NGramDims is the number of hashed character n-gram dimensions
	// appended after the word-vector dimensions. 0 selects
	// DefaultNGramDims; a negative value disables the n-gram part, so
	// unknown words then contribute nothing.
	NGramDims int
	// NGramWeight is the length of a token's n-gram part relative to its
	// unit word vector; 0 selects DefaultNGramWeight. Larger values make
	// texts compare more by spelling and less by meaning.
	NGramWeight float32
	// SIF is the smoothing constant a of frequency weighting ("smooth
	// inverse frequency"): a known word of estimated corpus frequency p
	// weighs a/(a+p), so "the", "of" and "has" count little next to
	// "director". p comes from the word's rank under Zipf's law, which
	// assumes the vectors file lists words most frequent first, as GloVe,
	// word2vec and fastText files do. 0 selects DefaultSIF; a negative value
	// weights every word 1.
	SIF float64
}

// Defaults for Options, chosen by measurement (see quality_test.go).
const (
	DefaultNGramDims   = 128
	DefaultNGramWeight = 1
	DefaultSIF         = 1e-3
)

// N-gram lengths, counted in bytes of the lowercased word framed by '<' and
// '>' (so "zoo" gives "<zo", "zoo", "oo>", "<zoo", "zoo>", "<zoo>").
const (
	minN = 3
	maxN = 5
)

// Encoder embeds texts as the normalised sum of their tokens' contributions,
// each a word-vector block followed by an n-gram block:
//
//	known word of weight f:  [ f * unit(word vector) ; f * NGramWeight * unit(n-grams) ]
//	unknown word:            [ 0 ; sqrt(1 + NGramWeight^2) * unit(n-grams) ]
//
// where f is the SIF frequency weight and unit(n-grams) is the token's
// signed, feature-hashed bag of character n-grams scaled to length 1. An
// unknown word gets the length a rare known word has, so a misspelt name
// weighs as much as the correct one would (this measured 3 to 4 points
// better nearest-neighbour accuracy on misspelt MetaQA entity names than
// leaving it at NGramWeight, with no loss on relation matching). A text with
// no tokens (empty, or punctuation only) encodes as the zero vector.
//
// Because the sum runs over tokens, the encoder is Additive: the parts of
// "a", "b" and "c" sum to the part of "a b c". It is safe for concurrent use.
type Encoder struct {
	vec   *Vectors  // nil: n-gram block only
	wordW []float32 // per vocabulary row: f/|row| (0 for a zero row)
	gramW []float32 // per vocabulary row: f * NGramWeight
	oovW  float32   // n-gram length of an unknown word
	wdim  int       // word-vector dimensions
	ndim  int       // n-gram dimensions
	name  string
	pool  sync.Pool // *scratch
}

// scratch holds per-call buffers so encoding does not allocate.
type scratch struct {
	buf  []byte
	toks []span
	gram []byte
	ng   []float32
}

// New returns an encoder over v. v may be nil for an encoder that compares
// texts by spelling only (its Dim is then the n-gram dimension alone); with
// v nil the n-gram part cannot be disabled, since the encoder would have no
// dimensions, and a negative NGramDims is then read as the default.
func New(v *Vectors, opts Options) *Encoder {
	if opts.NGramDims == 0 || (opts.NGramDims < 0 && v == nil) {
		opts.NGramDims = DefaultNGramDims
	}
	if opts.NGramDims < 0 {
		opts.NGramDims = 0
	}
	if opts.NGramWeight == 0 {
		opts.NGramWeight = DefaultNGramWeight
	}
	if opts.SIF == 0 {
		opts.SIF = DefaultSIF
	}
	ngw := opts.NGramWeight
	e := &Encoder{vec: v, ndim: opts.NGramDims, oovW: ngw}
	id := "none"
	if v != nil {
		e.wdim = v.Dim()
		id = v.ID()
		e.oovW = float32(math.Sqrt(1 + float64(ngw)*float64(ngw)))
		e.wordW = make([]float32, v.Len())
		e.gramW = make([]float32, v.Len())
		// Zipf: the word of rank r (from 1) has frequency 1/(r * H_n).
		var harmonic float64
		for r := range v.Len() {
			harmonic += 1 / float64(r+1)
		}
		for i := range v.Len() {
			f := 1.0
			if opts.SIF > 0 {
				p := 1 / (float64(i+1) * harmonic)
				f = opts.SIF / (opts.SIF + p)
			}
			var s float64
			for _, x := range v.Row(i) {
				s += float64(x) * float64(x)
			}
			if s > 0 {
				e.wordW[i] = float32(f / math.Sqrt(s))
			}
			e.gramW[i] = float32(f) * ngw
		}
	}
	// Every setting that changes the output is in the name, so caches keyed
	// on it never mix vectors from different configurations.
	e.name = "wordvec:" + id + "+ng" + strconv.Itoa(e.ndim)
	if e.ndim > 0 {
		e.name += "w" + strconv.FormatFloat(float64(ngw), 'g', -1, 32)
	}
	if v != nil && opts.SIF > 0 {
		e.name += "+sif" + strconv.FormatFloat(opts.SIF, 'g', -1, 64)
	}
	e.pool.New = func() any {
		return &scratch{ng: make([]float32, e.ndim)}
	}
	return e
}

// Name identifies the vectors (by checksum) and the settings, e.g.
// "wordvec:111aa6d40fa3+ng128w1+sif0.001".
func (e *Encoder) Name() string { return e.name }

// Dim is the word-vector dimension plus the n-gram dimension.
func (e *Encoder) Dim() int { return e.wdim + e.ndim }

// Encode writes the unit-length vector of each text into dst (zero for a
// text without tokens). Large batches are split over GOMAXPROCS goroutines.
func (e *Encoder) Encode(ctx context.Context, texts []string, dst []float32) error {
	return e.run(ctx, texts, dst, true)
}

// EncodeParts writes the un-normalised sum of token contributions of each
// text into dst; Normalize(parts(a)+parts(b)) equals Encode("a b").
func (e *Encoder) EncodeParts(ctx context.Context, texts []string, dst []float32) error {
	return e.run(ctx, texts, dst, false)
}

const (
	// parallelMin is the batch size from which Encode uses several
	// goroutines; below it the spawn costs more than it saves.
	parallelMin = 512
	// ctxEvery is how many texts are encoded between context checks.
	ctxEvery = 256
)

func (e *Encoder) run(ctx context.Context, texts []string, dst []float32, norm bool) error {
	if err := models.CheckDst(e.name, len(texts), e.Dim(), dst); err != nil {
		return err
	}
	workers := min(runtime.GOMAXPROCS(0), len(texts)/(parallelMin/2))
	if workers <= 1 {
		return e.serial(ctx, texts, dst, norm)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ferr error
	)
	d := e.Dim()
	per := (len(texts) + workers - 1) / workers
	for lo := 0; lo < len(texts); lo += per {
		hi := min(lo+per, len(texts))
		wg.Go(func() {
			if err := e.serial(ctx, texts[lo:hi], dst[lo*d:hi*d], norm); err != nil {
				mu.Lock()
				if ferr == nil {
					ferr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ferr
}

func (e *Encoder) serial(ctx context.Context, texts []string, dst []float32, norm bool) error {
	sc := e.pool.Get().(*scratch)
	defer e.pool.Put(sc)
	d := e.Dim()
	for i, t := range texts {
		if i%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("encoder %s: %w", e.name, err)
			}
		}
		out := dst[i*d : (i+1)*d]
		e.parts(sc, t, out)
		if norm {
			models.Normalize(out)
		}
	}
	return nil
}

// parts writes the sum of the token contributions of text into out.
func (e *Encoder) parts(sc *scratch, text string, out []float32) {
	clear(out)
	sc.buf, sc.toks = tokenize(text, sc.buf[:0], sc.toks[:0])
	words, grams := out[:e.wdim], out[e.wdim:]
	for _, t := range sc.toks {
		tok := sc.buf[t.start:t.end]
		length := e.oovW
		if e.vec != nil {
			if row, ok := e.vec.index[string(tok)]; ok {
				axpy(words, e.vec.Row(int(row)), e.wordW[row])
				length = e.gramW[row]
			}
		}
		if e.ndim > 0 {
			e.addNGrams(sc, tok, grams, length)
		}
	}
}

// addNGrams adds the token's n-gram part, scaled to length, to dst.
// Each n-gram is hashed (FNV-1a, then a mixer for the low bits) to a bucket
// and a sign; the signs make hash collisions cancel on average instead of
// piling up, the usual feature-hashing trick.
func (e *Encoder) addNGrams(sc *scratch, tok []byte, dst []float32, length float32) {
	g := append(append(append(sc.gram[:0], '<'), tok...), '>')
	sc.gram = g
	ng := sc.ng
	clear(ng)
	nb := uint64(e.ndim)
	for i := 0; i+minN <= len(g); i++ {
		h := uint64(fnvOffset)
		for j := i; j < len(g) && j < i+maxN; j++ {
			h ^= uint64(g[j])
			h *= fnvPrime
			if j-i+1 >= minN {
				x := mix64(h)
				b := (x & (1<<63 - 1)) % nb
				if x>>63 == 0 {
					ng[b]++
				} else {
					ng[b]--
				}
			}
		}
	}
	var s float64
	for _, x := range ng {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	axpy(dst, ng, length/float32(math.Sqrt(s)))
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// mix64 is the MurmurHash3 finaliser: FNV-1a alone mixes the last byte
// poorly into the low bits, which pick the bucket.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// axpy adds a*x to y.
func axpy(y, x []float32, a float32) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] += a * v
	}
}

var _ models.Additive = (*Encoder)(nil)
