// Package kgvec holds the vectors of a knowledge graph's entities under one
// encoder, with an exact index over them, so that a question's entity
// mentions can be anchored to KG entities by meaning as well as by name.
//
// The index is exact (vecindex.Flat) for graphs below IVFThreshold entities
// and approximate above, where scanning every vector per query gets slow:
// an HNSW graph (vecindex.HNSW), which at a million entities keeps recall@50
// above 0.95 at far more than IVF's speedup. Options.Kind forces any of
// Exact, IVF or HNSW.
//
// Encoding every entity of a large KG takes seconds, so the index is saved
// in the cache directory, named by a hash of the KG file's content and the
// encoder's identity, and reused while both are unchanged. Nothing is ever
// written beside the KG, so stem works on a read-only data folder.
package kgvec

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/vecindex"
)

// batch is how many entity texts go to the encoder at once: large enough to
// amortise a remote encoder's round trip, small enough for steady progress.
const batch = 2048

// Entities is a cosine index over a KG's entity vectors; hit IDs are
// entity ids of the graph it was built for.
type Entities struct {
	g   kg.Reader
	enc models.Encoder
	// index is nil until a deferred index is opened; mu guards it then.
	mu    sync.Mutex
	index vecindex.Index
	open  func(context.Context) (*Entities, error)
}

// DeferThreshold is the entity count from which the commands defer the
// entity index (Deferred): encoding millions of names takes minutes and
// gigabytes, which a run whose mentions all match a name exactly (the
// oracle planner, or linking by name) never needs.
const DeferThreshold = 1_000_000

// Deferred returns g's entity index opened by open (Build, LoadOrBuild)
// the first time a search needs it, not before. Searches wait for the
// opening; one that fails is returned to the search that asked and tried
// again by the next.
func Deferred(g kg.Reader, enc models.Encoder, open func(context.Context) (*Entities, error)) *Entities {
	return &Entities{g: g, enc: enc, open: open}
}

// current returns the index, opening a deferred one.
func (e *Entities) current(ctx context.Context) (vecindex.Index, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.index == nil && e.open != nil {
		x, err := e.open(ctx)
		if err != nil {
			return nil, fmt.Errorf("open the deferred entity index: %w", err)
		}
		if x.g != e.g || x.enc != e.enc {
			return nil, fmt.Errorf("deferred entity index: opened for another graph or encoder")
		}
		e.index = x.index
	}
	return e.index, nil
}

// Kind selects the entity index implementation.
type Kind string

// The index kinds.
const (
	// Auto is Exact below the IVF threshold and HNSW from it on.
	Auto Kind = "auto"
	// Exact compares a query with every entity (vecindex.Flat).
	Exact Kind = "exact"
	// IVF scans only the entity lists nearest the query (vecindex.IVF):
	// about 20x faster at a million entities, missing a few percent of
	// the exact top 50.
	IVF Kind = "ivf"
	// HNSW walks a neighbour graph of the entities (vecindex.HNSW): a few
	// thousand comparisons per query, so much faster than IVF at a million
	// entities at the same recall, but slower to build.
	HNSW Kind = "hnsw"
)

// UnmarshalText accepts auto, exact, ivf or hnsw (the --entity-index flag).
func (k *Kind) UnmarshalText(b []byte) error {
	switch v := Kind(b); v {
	case Auto, Exact, IVF, HNSW:
		*k = v
		return nil
	}
	return fmt.Errorf("want auto, exact, ivf or hnsw")
}

// DefaultIVFThreshold is the entity count from which Auto picks an
// approximate index (HNSW). Below
// it an exact search takes under about 2 ms on 2 cores (BenchmarkIVF at
// 200,000 x 128 measured 1.7-2.9 ms per query), fast enough that losing any
// recall is not worth it; above it exact search grows linearly (about 10 ms
// and more at 1M) while IVF stays well under a millisecond.
const DefaultIVFThreshold = 200_000

// Options choose and tune the entity index; the zero value is Auto with the
// defaults.
type Options struct {
	// Kind is Auto (also when empty), Exact or IVF.
	Kind Kind
	// IVFThreshold is the entity count from which Auto picks IVF; 0 means
	// DefaultIVFThreshold.
	IVFThreshold int
	// IVF tunes the IVF index (its Log defaults to Build's log).
	IVF vecindex.IVFOptions
	// HNSW tunes the HNSW index (its Log defaults to Build's log).
	HNSW vecindex.HNSWOptions
}

// Resolve returns the kind used for n entities: Exact, IVF or HNSW, never
// Auto.
func (o Options) Resolve(n int) Kind {
	switch o.Kind {
	case Exact, IVF, HNSW:
		return o.Kind
	}
	t := o.IVFThreshold
	if t <= 0 {
		t = DefaultIVFThreshold
	}
	if n >= t {
		return HNSW
	}
	return Exact
}

// New returns the entity index of g made of index, whose row i is entity
// i's vector under enc: the way to plug in another vecindex.Index (an
// approximate or remote one).
func New(g kg.Reader, enc models.Encoder, index vecindex.Index) (*Entities, error) {
	if index.Dim() != enc.Dim() || index.Len() != g.NumEntities() {
		return nil, fmt.Errorf("entity index: %d vectors of %d dimensions for %d entities under %s (%d dimensions)",
			index.Len(), index.Dim(), g.NumEntities(), enc.Name(), enc.Dim())
	}
	return &Entities{g: g, enc: enc, index: index}, nil
}

// Hit is an entity and its cosine similarity with a query.
type Hit struct {
	Entity int32
	Name   string
	Score  float32
}

// Build encodes every entity of g (by its readable text, kg.EntityText) and
// indexes the vectors with the default Options (exact below
// DefaultIVFThreshold entities, HNSW above). Progress is drawn on log when
// it is not nil.
func Build(ctx context.Context, g kg.Reader, enc models.Encoder, log io.Writer) (*Entities, error) {
	return BuildWith(ctx, g, enc, Options{}, log)
}

// BuildWith is Build with the index chosen and tuned by opts.
func BuildWith(ctx context.Context, g kg.Reader, enc models.Encoder, opts Options, log io.Writer) (*Entities, error) {
	e, _, err := build(ctx, g, enc, opts, log)
	return e, err
}

// saver is an index that can be written to the cache.
type saver interface{ Save(path string) error }

// build is BuildWith, also returning the index to save.
func build(ctx context.Context, g kg.Reader, enc models.Encoder, opts Options, log io.Writer) (*Entities, saver, error) {
	n := g.NumEntities()
	var bar *progress.Bar
	if log != nil && n > batch {
		bar = progress.New(log, "encoding entities", int64(n))
	}
	dim := enc.Dim()
	vecs := make([]float32, n*dim)
	texts := make([]string, 0, batch)
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		texts = texts[:0]
		for id := lo; id < hi; id++ {
			texts = append(texts, kg.EntityTextOf(g, int32(id)))
		}
		if err := enc.Encode(ctx, texts, vecs[lo*dim:hi*dim]); err != nil {
			return nil, nil, fmt.Errorf("encode entities %d-%d with %s: %w", lo, hi-1, enc.Name(), err)
		}
		bar.Add(int64(hi - lo))
	}
	bar.Finish()
	if opts.Resolve(n) == HNSW {
		hOpts := opts.HNSW
		if hOpts.Log == nil && n > batch {
			hOpts.Log = log
		}
		ix, err := vecindex.BuildHNSW(ctx, dim, vecs, hOpts)
		if err != nil {
			return nil, nil, fmt.Errorf("index entity vectors: %w", err)
		}
		return &Entities{g: g, enc: enc, index: ix}, ix, nil
	}
	if opts.Resolve(n) == IVF {
		ivfOpts := opts.IVF
		if ivfOpts.Log == nil && n > batch {
			ivfOpts.Log = log
		}
		ix, err := vecindex.BuildIVF(ctx, dim, vecs, ivfOpts)
		if err != nil {
			return nil, nil, fmt.Errorf("index entity vectors: %w", err)
		}
		return &Entities{g: g, enc: enc, index: ix}, ix, nil
	}
	ix := vecindex.NewFlat(dim)
	if err := ix.Add(vecs); err != nil {
		return nil, nil, fmt.Errorf("index entity vectors: %w", err)
	}
	return &Entities{g: g, enc: enc, index: ix}, ix, nil
}

// CachePath is where the exact entity index of the KG file kgPath under enc
// is kept in cacheDir: named by a SHA-256 of the file's content and the
// encoder's name and dimension, so an edited KG or another encoder never
// reuses stale vectors, and a KG moved or copied elsewhere reuses them.
func CachePath(cacheDir, kgPath string, enc models.Encoder) (string, error) {
	return CachePathKind(cacheDir, kgPath, enc, Exact)
}

// CachePathKind is CachePath for an index of kind k (Exact, IVF or HNSW;
// Auto is read as Exact): the kinds have different extensions (.vx, .ivf,
// .hnsw) and file magics, so a cache of one kind is never read as another.
func CachePathKind(cacheDir, kgPath string, enc models.Encoder, k Kind) (string, error) {
	ext := ".vx"
	switch k {
	case IVF:
		ext = ".ivf"
	case HNSW:
		ext = ".hnsw"
	}
	sum, err := hashKG(fmt.Sprintf("%s\x00%d\x00", enc.Name(), enc.Dim()), kgPath)
	if err != nil {
		return "", err
	}
	return filepath.Join(cacheDir, "entities", sum[:32]+ext), nil
}

// hashKG is the hex SHA-256 of prefix and then the KG file's content: what
// names a KG's entity vectors, in the cache and in a vector store, so an
// edited KG never reuses stale vectors and a moved or copied one does.
func hashKG(prefix, kgPath string) (string, error) {
	f, err := os.Open(kgPath)
	if err != nil {
		return "", fmt.Errorf("entity index for %s: %w", kgPath, err)
	}
	defer f.Close()
	h := sha256.New()
	io.WriteString(h, prefix)
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("entity index for %s: hash the KG file: %w", kgPath, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// LoadOrBuild returns the entity index of g, which was loaded from kgPath:
// read from its cache file in cacheDir (see CachePathKind) when that exists
// and is whole, else built and saved there (atomically). A cache file that
// cannot be read back whole is rebuilt, never trusted; one that cannot be
// written is reported on log and skipped. The index kind follows the
// default Options.
func LoadOrBuild(ctx context.Context, g kg.Reader, kgPath, cacheDir string, enc models.Encoder, log io.Writer) (*Entities, error) {
	return LoadOrBuildWith(ctx, g, kgPath, cacheDir, enc, Options{}, log)
}

// LoadOrBuildWith is LoadOrBuild with the index chosen and tuned by opts. A
// cached IVF index is reused without retraining unless opts asks for
// another number of lists; opts.IVF.NProbe, a search-time setting, is
// applied to the loaded index.
func LoadOrBuildWith(ctx context.Context, g kg.Reader, kgPath, cacheDir string, enc models.Encoder, opts Options, log io.Writer) (*Entities, error) {
	kind := opts.Resolve(g.NumEntities())
	path, err := CachePathKind(cacheDir, kgPath, enc, kind)
	if err != nil {
		return nil, err
	}
	if e := loadCache(g, enc, path, kind, opts); e != nil {
		return e, nil
	}
	e, ix, err := build(ctx, g, enc, opts, log)
	if err != nil {
		return nil, err
	}
	err = os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = ix.Save(path)
	}
	if err != nil && log != nil {
		fmt.Fprintf(log, "note: entity index not cached: %v\n", err)
	}
	return e, nil
}

// loadCache returns the entity index cached at path, or nil when there is
// none that fits g, enc and opts.
func loadCache(g kg.Reader, enc models.Encoder, path string, kind Kind, opts Options) *Entities {
	var ix vecindex.Index
	if kind == HNSW {
		// The graph's build parameters are fixed in the file; a cache is
		// reused whatever opts.HNSW says, as rebuilding costs minutes.
		x, err := vecindex.LoadHNSW(path)
		if err != nil {
			return nil
		}
		ix = x
	} else if kind == IVF {
		x, err := vecindex.LoadIVF(path)
		if err != nil {
			return nil
		}
		if nl := opts.IVF.NList; nl > 0 && x.NList() != min(nl, x.Len()) {
			return nil
		}
		if np := opts.IVF.NProbe; np > 0 {
			x = x.WithNProbe(np)
		}
		ix = x
	} else {
		x, err := vecindex.Load(path)
		if err != nil {
			return nil
		}
		ix = x
	}
	e, err := New(g, enc, ix)
	if err != nil {
		return nil
	}
	return e
}

// Kind reports the kind of the index: Exact, IVF, HNSW, or "" for an index
// plugged in through New that is neither or a deferred one not opened yet.
func (e *Entities) Kind() Kind {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch e.index.(type) {
	case *vecindex.Flat:
		return Exact
	case *vecindex.IVF:
		return IVF
	case *vecindex.HNSW:
		return HNSW
	}
	return ""
}

// Opened reports whether the index is ready to search without building:
// false for a deferred index (Deferred) not opened yet, which a caller
// that can do without it (a near-match of a name) leaves unopened.
func (e *Entities) Opened() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.index != nil
}

// Len is the number of indexed entities (of the graph, for a deferred
// index not opened yet).
func (e *Entities) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.index == nil {
		return e.g.NumEntities()
	}
	return e.index.Len()
}

// Nearest returns the k entities whose text is most similar to text.
func (e *Entities) Nearest(ctx context.Context, text string, k int) ([]Hit, error) {
	q := make([]float32, e.enc.Dim())
	if err := e.enc.Encode(ctx, []string{text}, q); err != nil {
		return nil, fmt.Errorf("encode %q: %w", text, err)
	}
	return e.NearestVector(ctx, q, k)
}

// NearestVector returns the k entities most similar to the vector q.
func (e *Entities) NearestVector(ctx context.Context, q []float32, k int) ([]Hit, error) {
	ix, err := e.current(ctx)
	if err != nil {
		return nil, err
	}
	hits, err := ix.Search(ctx, q, k)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{Entity: h.ID, Name: e.g.EntityName(h.ID), Score: h.Score}
	}
	return out, nil
}
