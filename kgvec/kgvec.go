// Package kgvec holds the vectors of a knowledge graph's entities under one
// encoder, with an exact index over them, so that a question's entity
// mentions can be anchored to KG entities by meaning as well as by name.
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

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/vecindex"
)

// batch is how many entity texts go to the encoder at once: large enough to
// amortise a remote encoder's round trip, small enough for steady progress.
const batch = 2048

// Entities is an exact cosine index over a KG's entity vectors; hit IDs are
// entity ids of the graph it was built for.
type Entities struct {
	g     kg.Reader
	enc   models.Encoder
	index vecindex.Index
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
// indexes the vectors. Progress is drawn on log when it is not nil.
func Build(ctx context.Context, g kg.Reader, enc models.Encoder, log io.Writer) (*Entities, error) {
	e, _, err := build(ctx, g, enc, log)
	return e, err
}

// build is Build, also returning the flat index to save.
func build(ctx context.Context, g kg.Reader, enc models.Encoder, log io.Writer) (*Entities, *vecindex.Flat, error) {
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
	ix := vecindex.NewFlat(dim)
	if err := ix.Add(vecs); err != nil {
		return nil, nil, fmt.Errorf("index entity vectors: %w", err)
	}
	return &Entities{g: g, enc: enc, index: ix}, ix, nil
}

// CachePath is where the entity index of the KG file kgPath under enc is
// kept in cacheDir: named by a SHA-256 of the file's content and the
// encoder's name and dimension, so an edited KG or another encoder never
// reuses stale vectors, and a KG moved or copied elsewhere reuses them.
func CachePath(cacheDir, kgPath string, enc models.Encoder) (string, error) {
	f, err := os.Open(kgPath)
	if err != nil {
		return "", fmt.Errorf("entity index for %s: %w", kgPath, err)
	}
	defer f.Close()
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", enc.Name(), enc.Dim())
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("entity index for %s: hash the KG file: %w", kgPath, err)
	}
	return filepath.Join(cacheDir, "entities", hex.EncodeToString(h.Sum(nil))[:32]+".vx"), nil
}

// LoadOrBuild returns the entity index of g, which was loaded from kgPath:
// read from its cache file in cacheDir (see CachePath) when that exists and
// is whole, else built and saved there (atomically). A cache file that
// cannot be read back whole is rebuilt, never trusted; one that cannot be
// written is reported on log and skipped.
func LoadOrBuild(ctx context.Context, g kg.Reader, kgPath, cacheDir string, enc models.Encoder, log io.Writer) (*Entities, error) {
	path, err := CachePath(cacheDir, kgPath, enc)
	if err != nil {
		return nil, err
	}
	if ix, err := vecindex.Load(path); err == nil {
		if e, err := New(g, enc, ix); err == nil {
			return e, nil
		}
	}
	e, flat, err := build(ctx, g, enc, log)
	if err != nil {
		return nil, err
	}
	err = os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = flat.Save(path)
	}
	if err != nil && log != nil {
		fmt.Fprintf(log, "note: entity index not cached: %v\n", err)
	}
	return e, nil
}

// Len is the number of indexed entities.
func (e *Entities) Len() int { return e.index.Len() }

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
	hits, err := e.index.Search(ctx, q, k)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{Entity: h.ID, Name: e.g.EntityName(h.ID), Score: h.Score}
	}
	return out, nil
}
