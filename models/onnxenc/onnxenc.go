//go:build gomlx

package onnxenc

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/onnx-gomlx/onnx"
	"github.com/gomlx/onnx-gomlx/onnx/parser"

	"github.com/stem-kgqa/stem/models"
)

// Pooling says how the per-token vectors of a text become one vector.
type Pooling int

const (
	// PoolMean averages the vectors of the text's tokens (special tokens
	// included, padding excluded): what sentence-transformers models such as
	// all-MiniLM-L6-v2 are trained with.
	PoolMean Pooling = iota
	// PoolCLS takes the vector of the first token ([CLS]): what the bge
	// family is trained with.
	PoolCLS
)

// String returns "mean" or "cls"; it is part of Encoder.Name.
func (p Pooling) String() string {
	switch p {
	case PoolMean:
		return "mean"
	case PoolCLS:
		return "cls"
	}
	return fmt.Sprintf("Pooling(%d)", int(p))
}

// Options configures New. The zero value is usable: mean pooling, the
// tokenizer's own length limit, batches of 32.
type Options struct {
	// Pooling is PoolMean (the default) or PoolCLS.
	Pooling Pooling
	// MaxLen caps the tokens per text, special tokens included; longer
	// texts are cut at the end. 0 takes tokenizer.json's truncation
	// max_length, or 128 when it has none. It must not exceed the model's
	// number of position embeddings.
	MaxLen int
	// BatchSize is the number of texts per forward pass; 0 means 32.
	BatchSize int
}

// defaultBatchSize balances the per-call overhead of the Go backend against
// padding waste and memory: at 32 short texts the overhead is amortised.
const defaultBatchSize = 32

// GoMLX compiles one program per input shape, and onnx-gomlx cannot build a
// graph with symbolic dimensions, so shapes are bucketed: the sequence
// length is rounded up to a multiple of seqBucket (at most MaxLen) and the
// batch to a power of two (at most BatchSize). That bounds the programs to
// about log2(BatchSize) x MaxLen/seqBucket (a hundred at 32 x 128), each
// compiled once, for at most seqBucket-1 padded tokens per text and one
// half-empty batch per call. Padding is masked, so vectors do not change.
const seqBucket = 8

// maxCompiled bounds the compiled programs kept; it is above the bucket
// count of the defaults so that steady use never recompiles.
const maxCompiled = 256

// Input and output names of HuggingFace's ONNX exports of BertModel.
const (
	inputIDs      = "input_ids"
	attentionMask = "attention_mask"
	tokenTypeIDs  = "token_type_ids"
	hiddenOutput  = "last_hidden_state"
)

// Encoder embeds texts with an ONNX transformer. It implements
// models.Encoder and is safe for concurrent use.
type Encoder struct {
	name    string
	dim     int
	pooling Pooling
	batch   int
	tok     *tokenizer
	exec    *model.Exec
	// withTypes records whether the graph takes token_type_ids.
	withTypes bool
}

var _ models.Encoder = (*Encoder)(nil)

// New loads dir/model.onnx and dir/tokenizer.json and runs the model once on
// MaxLen tokens, so that a model that GoMLX cannot run, or a MaxLen the
// model cannot take, is reported here and not at the first Encode.
func New(dir string, opts Options) (enc *Encoder, err error) {
	if opts.Pooling != PoolMean && opts.Pooling != PoolCLS {
		return nil, fmt.Errorf("onnxenc: unknown pooling %v", opts.Pooling)
	}
	if opts.MaxLen < 0 || opts.BatchSize < 0 {
		return nil, fmt.Errorf("onnxenc: negative MaxLen %d or BatchSize %d", opts.MaxLen, opts.BatchSize)
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = defaultBatchSize
	}
	modelPath := filepath.Join(dir, "model.onnx")
	tokPath := filepath.Join(dir, "tokenizer.json")
	modelBytes, err := os.ReadFile(modelPath)
	if err != nil {
		return nil, fmt.Errorf("onnxenc: read model: %w", err)
	}
	tokBytes, err := os.ReadFile(tokPath)
	if err != nil {
		return nil, fmt.Errorf("onnxenc: read tokenizer: %w", err)
	}
	tok, err := newTokenizer(tokPath, tokBytes, opts.MaxLen)
	if err != nil {
		return nil, err
	}

	// onnx-gomlx and GoMLX report many errors by panicking; a bad file
	// must come back as an error.
	defer func() {
		if r := recover(); r != nil {
			enc, err = nil, fmt.Errorf("onnxenc: load %s: %w", modelPath, panicError(r))
		}
	}()
	om, err := parser.Parse(modelBytes)
	if err != nil {
		return nil, fmt.Errorf("onnxenc: parse %s: %w", modelPath, err)
	}
	withTypes, err := checkSignature(om)
	if err != nil {
		return nil, fmt.Errorf("onnxenc: %s: %w", modelPath, err)
	}
	store := model.NewStore()
	if err := om.VariablesToScope(store.RootScope()); err != nil {
		return nil, fmt.Errorf("onnxenc: load weights of %s: %w", modelPath, err)
	}
	backend, err := newBackend()
	if err != nil {
		return nil, err
	}
	// onnx-gomlx's converter keeps per-model state while it builds a graph;
	// GoMLX may build graphs for two shapes at once, so building is
	// serialised. Running compiled graphs is not.
	var buildMu sync.Mutex
	exec, err := model.NewExec(backend, store, func(scope *model.Scope, in []*graph.Node) *graph.Node {
		buildMu.Lock()
		defer buildMu.Unlock()
		feeds := map[string]*graph.Node{inputIDs: in[0], attentionMask: in[1]}
		if withTypes {
			feeds[tokenTypeIDs] = in[2]
		}
		out := om.CallGraph(scope, in[0].Graph(), feeds, hiddenOutput)[0]
		return graph.ConvertDType(out, dtypes.Float32)
	})
	if err != nil {
		return nil, fmt.Errorf("onnxenc: %s: %w", modelPath, err)
	}
	exec.SetMaxCache(maxCompiled)

	sum := sha256.Sum256(modelBytes)
	tokSum := sha256.Sum256(tokBytes)
	e := &Encoder{
		// The tokenizer and the length cap change vectors as much as the
		// weights do, so they are part of the name caches key on.
		name: fmt.Sprintf("onnx:%s:%s:tok%s:max%d", hex.EncodeToString(sum[:6]), opts.Pooling,
			hex.EncodeToString(tokSum[:4]), tok.maxLen),
		pooling:   opts.Pooling,
		batch:     opts.BatchSize,
		tok:       tok,
		exec:      exec,
		withTypes: withTypes,
	}
	// Probe with the longest input Encode can make: it proves the graph
	// runs, catches a MaxLen beyond the model's position embeddings now
	// rather than at the first long text, and gives the hidden size.
	// The token values do not matter.
	probe := slices.Repeat([]int{tok.padID}, tok.maxLen)
	copy(probe, tok.encode(""))
	h, s, dim, err := e.forward([][]int{probe})
	if err != nil {
		return nil, fmt.Errorf("onnxenc: test run of %s on %d tokens (MaxLen): %w", modelPath, tok.maxLen, err)
	}
	if len(h) != s*dim || dim == 0 {
		return nil, fmt.Errorf("onnxenc: %s: %s has %d values for 1 x %d tokens", modelPath, hiddenOutput, len(h), s)
	}
	e.dim = dim
	return e, nil
}

// checkSignature verifies the graph's inputs and outputs by name and reports
// whether it takes token_type_ids (MiniLM exports often do not).
func checkSignature(om onnx.Model) (withTypes bool, err error) {
	names, _ := om.Inputs()
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, n := range []string{inputIDs, attentionMask} {
		if !have[n] {
			return false, fmt.Errorf("graph has no input %q (inputs: %q)", n, names)
		}
	}
	withTypes = have[tokenTypeIDs]
	want := 2
	if withTypes {
		want = 3
	}
	if len(names) != want {
		return false, fmt.Errorf("graph takes inputs %q; only %s, %s and %s are supported", names, inputIDs, attentionMask, tokenTypeIDs)
	}
	outs, outShapes := om.Outputs()
	i := slices.Index(outs, hiddenOutput)
	if i < 0 {
		return false, fmt.Errorf("graph has no output %q (outputs: %q)", hiddenOutput, outs)
	}
	if r := outShapes[i].Rank(); r != 3 && r != 0 {
		return false, fmt.Errorf("output %q has rank %d, want 3 ([batch, sequence, hidden])", hiddenOutput, r)
	}
	return withTypes, nil
}

// newBackend returns a fresh pure-Go GoMLX backend. Each encoder owns one
// instead of sharing the package's singleton, whose constructor panics.
func newBackend() (compute.Backend, error) {
	b, err := gobackend.New("")
	if err != nil {
		return nil, fmt.Errorf("onnxenc: start GoMLX Go backend: %w", err)
	}
	return b, nil
}

// panicError turns a recovered panic value into an error.
func panicError(r any) error {
	if err, ok := r.(error); ok {
		return err
	}
	return fmt.Errorf("%v", r)
}

// Name identifies the weights, tokenizer, pooling and length cap, e.g.
// "onnx:1f0c3a9be2d4:mean:tok8a71c20e:max128".
func (e *Encoder) Name() string { return e.name }

// Dim is the model's hidden size.
func (e *Encoder) Dim() int { return e.dim }

// MaxLen is the token cap in force (after defaults).
func (e *Encoder) MaxLen() int { return e.tok.maxLen }

// Encode writes the unit-length vector of each text into dst, Dim() values
// per text. Texts are tokenised, sorted by length and run in batches of
// Options.BatchSize, each padded to its longest text (rounded up to a shape
// bucket), so that short texts do not pay for long ones. ctx is checked
// between batches.
func (e *Encoder) Encode(ctx context.Context, texts []string, dst []float32) (err error) {
	if err := models.CheckDst(e.name, len(texts), e.dim, dst); err != nil {
		return err
	}
	// The tokenizer is third-party code fed arbitrary text: a panic in it
	// must not take the caller down. (forward guards GoMLX itself.)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("onnxenc: encode: %w", panicError(r))
		}
	}()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("onnxenc: encode: %w", err)
	}
	ids := make([][]int, len(texts))
	for i, t := range texts {
		ids[i] = e.tok.encode(t)
	}
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(ids[a]), len(ids[b])) })

	batch := make([][]int, 0, e.batch)
	for start := 0; start < len(order); start += e.batch {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("onnxenc: encode: %w", err)
		}
		rows := order[start:min(start+e.batch, len(order))]
		batch = batch[:0]
		for _, r := range rows {
			batch = append(batch, ids[r])
		}
		h, s, dim, err := e.forward(batch)
		if err != nil {
			// Rows are in length order, so name the first text by its index.
			return fmt.Errorf("onnxenc: encode batch of %d texts starting with text %d: %w", len(rows), rows[0], err)
		}
		if dim != e.dim {
			return fmt.Errorf("onnxenc: model returned %d-dim vectors, want %d", dim, e.dim)
		}
		for b, r := range rows {
			e.pool(h[b*s*dim:(b+1)*s*dim], len(ids[r]), dst[r*dim:(r+1)*dim])
		}
	}
	return nil
}

// pool reduces the [seq, dim] hidden states h of one text of n real tokens
// into out and normalises it.
func (e *Encoder) pool(h []float32, n int, out []float32) {
	dim := len(out)
	if e.pooling == PoolCLS {
		copy(out, h[:dim])
	} else {
		// The attention mask is 1 on exactly the first n positions, so the
		// masked mean is the plain mean of those rows.
		clear(out)
		for j := range n {
			row := h[j*dim : (j+1)*dim]
			for k, v := range row {
				out[k] += v
			}
		}
		inv := 1 / float32(n)
		for k := range out {
			out[k] *= inv
		}
	}
	models.Normalize(out)
}

// forward runs the graph on batch (token ids per text) padded to a bucketed
// shape and returns last_hidden_state flattened, with its sequence length
// and hidden size. Rows added to fill the batch copy the first text and are
// returned too; callers read only the first len(batch) rows.
func (e *Encoder) forward(batch [][]int) (h []float32, seq, dim int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("GoMLX: %w", panicError(r))
		}
	}()
	longest := 0
	for _, ids := range batch {
		longest = max(longest, len(ids))
	}
	seq = max(longest, min(roundUp(longest, seqBucket), e.tok.maxLen))
	n := min(nextPow2(len(batch)), max(e.batch, len(batch)))
	idsFlat := make([]int64, n*seq)
	maskFlat := make([]int64, n*seq)
	for b := range n {
		// Filler rows repeat the first text rather than being all padding:
		// a row with no unmasked token can turn into NaNs in models that
		// mask with -inf.
		ids := batch[0]
		if b < len(batch) {
			ids = batch[b]
		}
		row := idsFlat[b*seq : (b+1)*seq]
		for j := range row {
			if j < len(ids) {
				row[j] = int64(ids[j])
				maskFlat[b*seq+j] = 1
			} else {
				row[j] = int64(e.tok.padID)
			}
		}
	}
	args := []any{
		tensors.FromFlatDataAndDimensions(idsFlat, n, seq),
		tensors.FromFlatDataAndDimensions(maskFlat, n, seq),
	}
	if e.withTypes {
		// Single-segment input: every token is of type 0.
		args = append(args, tensors.FromFlatDataAndDimensions(make([]int64, n*seq), n, seq))
	}
	defer func() {
		for _, a := range args {
			_ = a.(*tensors.Tensor).FinalizeAll()
		}
	}()
	outs, err := e.exec.Exec(args...)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(outs) != 1 {
		return nil, 0, 0, fmt.Errorf("graph returned %d outputs, want 1", len(outs))
	}
	out := outs[0]
	defer func() { _ = out.FinalizeAll() }()
	shape := out.Shape()
	if shape.Rank() != 3 || shape.Dimensions[0] != n || shape.Dimensions[1] != seq {
		return nil, 0, 0, fmt.Errorf("%s has shape %s, want [%d, %d, hidden]", hiddenOutput, shape, n, seq)
	}
	dim = shape.Dimensions[2]
	h, err = tensors.CopyFlatData[float32](out)
	if err != nil {
		return nil, 0, 0, err
	}
	return h, seq, dim, nil
}

// roundUp rounds n up to a multiple of m.
func roundUp(n, m int) int { return (n + m - 1) / m * m }

// nextPow2 returns the smallest power of two >= n, for n >= 1.
func nextPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}
