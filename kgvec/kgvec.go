// Package kgvec holds the vectors of a knowledge graph's entities under one
// encoder, with an exact index over them, so that a question's entity
// mentions can be anchored to KG entities by meaning as well as by name.
//
// Encoding every entity of a large KG takes seconds, so the index is saved
// beside the KG file, named after the encoder, and reused while both the KG
// file and the encoder are unchanged.
package kgvec

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

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
	index *vecindex.Flat
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
			return nil, fmt.Errorf("encode entities %d-%d with %s: %w", lo, hi-1, enc.Name(), err)
		}
		bar.Add(int64(hi - lo))
	}
	bar.Finish()
	ix := vecindex.NewFlat(dim)
	if err := ix.Add(vecs); err != nil {
		return nil, fmt.Errorf("index entity vectors: %w", err)
	}
	return &Entities{g: g, enc: enc, index: ix}, nil
}

// CachePath is where the entity index of the KG file kgPath under enc is
// kept: beside the KG file, named by a hash of the encoder's name and the KG
// file's size and modification time, so a changed KG or encoder never reuses
// stale vectors.
func CachePath(kgPath string, enc models.Encoder) (string, error) {
	st, err := os.Stat(kgPath)
	if err != nil {
		return "", fmt.Errorf("entity index for %s: %w", kgPath, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d", enc.Name(), enc.Dim(), st.Size(), st.ModTime().UnixNano())
	return kgPath + "." + hex.EncodeToString(h.Sum(nil))[:12] + ".vx", nil
}

// LoadOrBuild returns the entity index of g, which was loaded from kgPath:
// read from the cache file beside kgPath when it exists and matches, else
// built and saved there (atomically). A cache file that cannot be written,
// for example in a read-only data folder, is reported on log and skipped.
func LoadOrBuild(ctx context.Context, g *kg.Graph, kgPath string, enc models.Encoder, log io.Writer) (*Entities, error) {
	path, err := CachePath(kgPath, enc)
	if err != nil {
		return nil, err
	}
	if ix, err := vecindex.Load(path); err == nil && ix.Dim() == enc.Dim() && ix.Len() == g.NumEntities() {
		return &Entities{g: g, enc: enc, index: ix}, nil
	}
	e, err := Build(ctx, g, enc, log)
	if err != nil {
		return nil, err
	}
	if err := e.index.Save(path); err != nil && log != nil {
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
