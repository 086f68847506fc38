//go:build gomlx

package onnxenc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/models"
)

// The tiny models and reference.json are made by testdata/gen/gen.py.
const (
	tinyDir       = "testdata/tiny"        // input_ids, attention_mask, token_type_ids
	tinyNoTypeDir = "testdata/tiny-notype" // input_ids, attention_mask
	tolerance     = 1e-4
)

type reference struct {
	Dim       int         `json:"dim"`
	MaxLen    int         `json:"max_len"`
	Sentences []string    `json:"sentences"`
	TokenIDs  [][]int     `json:"token_ids"`
	Mean      [][]float32 `json:"mean"`
	CLS       [][]float32 `json:"cls"`
	Truncated struct {
		MaxLen   int         `json:"max_len"`
		TokenIDs [][]int     `json:"token_ids"`
		Mean     [][]float32 `json:"mean"`
		CLS      [][]float32 `json:"cls"`
	} `json:"truncated"`
}

func loadReference(t testing.TB) *reference {
	t.Helper()
	b, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Sentences) == 0 || len(ref.Mean) != len(ref.Sentences) || len(ref.CLS) != len(ref.Sentences) {
		t.Fatal("reference.json is incomplete")
	}
	return &ref
}

// encoders caches one Encoder per configuration: loading compiles graphs,
// and the tests share them as real callers would.
var (
	encMu    sync.Mutex
	encCache = map[string]*Encoder{}
)

func encoder(t testing.TB, dir string, opts Options) *Encoder {
	t.Helper()
	key, _ := json.Marshal(struct {
		Dir string
		O   Options
	}{dir, opts})
	encMu.Lock()
	defer encMu.Unlock()
	if e, ok := encCache[string(key)]; ok {
		return e
	}
	e, err := New(dir, opts)
	if err != nil {
		t.Fatalf("New(%s, %+v): %v", dir, opts, err)
	}
	encCache[string(key)] = e
	return e
}

func maxAbsDiff(a, b []float32) float64 {
	var m float64
	for i := range a {
		m = max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}

func TestTokenizerMatchesReference(t *testing.T) {
	ref := loadReference(t)
	for _, tc := range []struct {
		name   string
		maxLen int
		want   [][]int
	}{
		{"full", ref.MaxLen, ref.TokenIDs},
		{"truncated", ref.Truncated.MaxLen, ref.Truncated.TokenIDs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := encoder(t, tinyDir, Options{MaxLen: tc.maxLen})
			for i, s := range ref.Sentences {
				if got := e.tok.encode(s); !slices.Equal(got, tc.want[i]) {
					t.Errorf("encode(%q)\n got %v\nwant %v", s, got, tc.want[i])
				}
			}
		})
	}
}

func TestEncodeMatchesReference(t *testing.T) {
	ref := loadReference(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		dir     string
		pooling Pooling
		maxLen  int
		want    [][]float32
	}{
		{"mean", tinyDir, PoolMean, 0, ref.Mean},
		{"cls", tinyDir, PoolCLS, 0, ref.CLS},
		{"mean/no-token-types", tinyNoTypeDir, PoolMean, 0, ref.Mean},
		{"cls/no-token-types", tinyNoTypeDir, PoolCLS, 0, ref.CLS},
		{"mean/truncated", tinyDir, PoolMean, ref.Truncated.MaxLen, ref.Truncated.Mean},
		{"cls/truncated", tinyDir, PoolCLS, ref.Truncated.MaxLen, ref.Truncated.CLS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := encoder(t, tc.dir, Options{Pooling: tc.pooling, MaxLen: tc.maxLen})
			if e.Dim() != ref.Dim {
				t.Fatalf("Dim() = %d, want %d", e.Dim(), ref.Dim)
			}
			dim := e.Dim()
			check := func(how string, got []float32) {
				t.Helper()
				var worst float64
				for i, s := range ref.Sentences {
					d := maxAbsDiff(got[i*dim:(i+1)*dim], tc.want[i])
					if d > tolerance {
						t.Errorf("%s: %q: max abs diff %.3g > %g", how, s, d, tolerance)
					}
					worst = max(worst, d)
				}
				t.Logf("%s: max abs diff from torch %.2g", how, worst)
			}
			// All sentences in one padded batch.
			batched, err := models.EncodeAll(ctx, e, ref.Sentences)
			if err != nil {
				t.Fatal(err)
			}
			check("batched", batched)
			// One at a time: no padding at all.
			single := make([]float32, len(batched))
			for i, s := range ref.Sentences {
				if err := e.Encode(ctx, []string{s}, single[i*dim:(i+1)*dim]); err != nil {
					t.Fatal(err)
				}
			}
			check("one-by-one", single)
			// Small batches: sorting by length must not mix up rows.
			small := encoder(t, tc.dir, Options{Pooling: tc.pooling, MaxLen: tc.maxLen, BatchSize: 3})
			got, err := models.EncodeAll(ctx, small, ref.Sentences)
			if err != nil {
				t.Fatal(err)
			}
			check("batches of 3", got)
		})
	}
}

func TestEncodeUnitLength(t *testing.T) {
	e := encoder(t, tinyDir, Options{})
	texts := []string{"", "a", "the movie", strings.Repeat("knowledge graph ", 200)}
	got, err := models.EncodeAll(context.Background(), e, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		var s float64
		for _, v := range got[i*e.Dim() : (i+1)*e.Dim()] {
			s += float64(v) * float64(v)
		}
		if math.Abs(s-1) > 1e-5 {
			t.Errorf("text %d: squared norm %g, want 1", i, s)
		}
	}
}

func TestEncodeEmptyInputs(t *testing.T) {
	e := encoder(t, tinyDir, Options{})
	if err := e.Encode(context.Background(), nil, nil); err != nil {
		t.Errorf("Encode(no texts) = %v, want nil", err)
	}
}

func TestNameAndDefaults(t *testing.T) {
	mean := encoder(t, tinyDir, Options{})
	cls := encoder(t, tinyDir, Options{Pooling: PoolCLS})
	notype := encoder(t, tinyNoTypeDir, Options{})
	short := encoder(t, tinyDir, Options{MaxLen: 12})
	if mean.MaxLen() != 128 { // tokenizer.json's truncation.max_length
		t.Errorf("MaxLen() = %d, want 128", mean.MaxLen())
	}
	names := map[string]bool{}
	for _, e := range []*Encoder{mean, cls, notype, short} {
		if !strings.HasPrefix(e.Name(), "onnx:") {
			t.Errorf("Name() = %q, want prefix onnx:", e.Name())
		}
		names[e.Name()] = true
	}
	if len(names) != 4 {
		t.Errorf("names not distinct: %v", names)
	}
	if !strings.Contains(mean.Name(), ":mean:") || !strings.Contains(cls.Name(), ":cls:") {
		t.Errorf("pooling missing from names %q, %q", mean.Name(), cls.Name())
	}
}

func TestEncodeErrors(t *testing.T) {
	e := encoder(t, tinyDir, Options{})
	ctx := context.Background()
	if err := e.Encode(ctx, []string{"a", "b"}, make([]float32, e.Dim())); err == nil {
		t.Error("dst too short: no error")
	}
	if err := e.Encode(ctx, []string{"a"}, make([]float32, e.Dim()+1)); err == nil {
		t.Error("dst too long: no error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err := e.Encode(cancelled, []string{"a"}, make([]float32, e.Dim()))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
}

// copyDir copies the files of src into a new temporary directory, minus
// skip, and returns it.
func copyDir(t *testing.T, src string, skip string) string {
	t.Helper()
	dst := t.TempDir()
	for _, name := range []string{"model.onnx", "tokenizer.json"} {
		if name == skip {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestNewErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T) string
		opts    Options
		wantErr string // substring of the error
	}{
		{"missing dir", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, Options{}, "model.onnx"},
		{"missing model", func(t *testing.T) string { return copyDir(t, tinyDir, "model.onnx") }, Options{}, "model.onnx"},
		{"missing tokenizer", func(t *testing.T) string { return copyDir(t, tinyDir, "tokenizer.json") }, Options{}, "tokenizer.json"},
		{"corrupt model", func(t *testing.T) string {
			d := copyDir(t, tinyDir, "")
			if err := os.WriteFile(filepath.Join(d, "model.onnx"), garbage, 0o644); err != nil {
				t.Fatal(err)
			}
			return d
		}, Options{}, "model.onnx"},
		{"truncated model", func(t *testing.T) string {
			d := copyDir(t, tinyDir, "")
			b, _ := os.ReadFile(filepath.Join(tinyDir, "model.onnx"))
			if err := os.WriteFile(filepath.Join(d, "model.onnx"), b[:len(b)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			return d
		}, Options{}, "model.onnx"},
		{"op GoMLX cannot run", func(t *testing.T) string {
			d := copyDir(t, tinyDir, "model.onnx")
			b, err := os.ReadFile("testdata/unsupported-op/model.onnx")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "model.onnx"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			return d
		}, Options{}, "Hardmax"},
		{"not an encoder", func(t *testing.T) string {
			// A well-formed ONNX graph whose inputs are not named as
			// HuggingFace names them.
			d := copyDir(t, tinyDir, "model.onnx")
			b, err := os.ReadFile("testdata/unsupported-op/model.onnx")
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.ReplaceAll(b, []byte("attention_mask"), []byte("attention_MASK"))
			if err := os.WriteFile(filepath.Join(d, "model.onnx"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			return d
		}, Options{}, `no input "attention_mask"`},
		{"corrupt tokenizer", func(t *testing.T) string {
			d := copyDir(t, tinyDir, "")
			if err := os.WriteFile(filepath.Join(d, "tokenizer.json"), []byte(`{"model": {"type": "WordPiece", "vocab": {`), 0o644); err != nil {
				t.Fatal(err)
			}
			return d
		}, Options{}, "tokenizer.json"},
		{"tokenizer without vocab", func(t *testing.T) string {
			d := copyDir(t, tinyDir, "")
			if err := os.WriteFile(filepath.Join(d, "tokenizer.json"), []byte(`{"model": {"type": "WordPiece"}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			return d
		}, Options{}, "vocab"},
		{"MaxLen beyond position embeddings", func(t *testing.T) string { return tinyDir }, Options{MaxLen: 200}, "MaxLen"},
		{"MaxLen too small", func(t *testing.T) string { return tinyDir }, Options{MaxLen: 2}, "MaxLen"},
		{"bad pooling", func(t *testing.T) string { return tinyDir }, Options{Pooling: 7}, "pooling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(tc.setup(t), tc.opts)
			if err == nil {
				t.Fatalf("New succeeded (%s), want error", e.Name())
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not mention %q", err, tc.wantErr)
			}
		})
	}
}

func TestEncodeConcurrent(t *testing.T) {
	ref := loadReference(t)
	e := encoder(t, tinyDir, Options{})
	dim := e.Dim()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			// Each goroutine encodes a different rotation, so batches (and
			// compiled shapes) differ between goroutines.
			texts := append(slices.Clone(ref.Sentences[g%len(ref.Sentences):]), ref.Sentences[:g%len(ref.Sentences)]...)
			got, err := models.EncodeAll(context.Background(), e, texts)
			if err != nil {
				errs <- err
				return
			}
			for i, s := range texts {
				j := slices.Index(ref.Sentences, s)
				if d := maxAbsDiff(got[i*dim:(i+1)*dim], ref.Mean[j]); d > tolerance {
					errs <- errors.New("concurrent encode of " + s + " differs from reference")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// FuzzTokenize checks that any text tokenises within the cap, framed by
// [CLS] ... [SEP], without panicking.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "Hello, world!", "naïve CAFÉ", "x42y [SEP] [CLS]", "\x00\ufffd\t", "日本語のテキスト", strings.Repeat("ab", 80)} {
		f.Add(s)
	}
	e := encoder(f, tinyDir, Options{MaxLen: 16})
	cls, sep := 2, 3 // ids of [CLS] and [SEP] in testdata/tiny/tokenizer.json
	f.Fuzz(func(t *testing.T, s string) {
		ids := e.tok.encode(s)
		if len(ids) < 2 || len(ids) > 16 {
			t.Fatalf("encode(%q) has %d tokens, want 2..16", s, len(ids))
		}
		if ids[0] != cls || ids[len(ids)-1] != sep {
			t.Fatalf("encode(%q) = %v, not framed by [CLS] [SEP]", s, ids)
		}
	})
}

// BenchmarkEncode encodes 32 short sentences per op with the tiny model.
func BenchmarkEncode(b *testing.B) {
	ref := loadReference(b)
	texts := make([]string, 32)
	for i := range texts {
		texts[i] = ref.Sentences[i%len(ref.Sentences)]
	}
	e := encoder(b, tinyDir, Options{})
	dst := make([]float32, len(texts)*e.Dim())
	ctx := context.Background()
	if err := e.Encode(ctx, texts, dst); err != nil { // compile outside the timer
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := e.Encode(ctx, texts, dst); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeOne encodes a single question, the latency of the query
// path.
func BenchmarkEncodeOne(b *testing.B) {
	e := encoder(b, tinyDir, Options{})
	texts := []string{"who directed the films that brad pitt starred in?"}
	dst := make([]float32, e.Dim())
	ctx := context.Background()
	if err := e.Encode(ctx, texts, dst); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := e.Encode(ctx, texts, dst); err != nil {
			b.Fatal(err)
		}
	}
}
