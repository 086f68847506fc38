package kgvec

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/vecindex/qdrant"
)

// OpenQdrant returns the entity index of g (loaded from the file kgPath)
// kept in the Qdrant server that url names (qdrant://HOST:PORT, see
// qdrant.ParseURL): in the collection for the KG file's content and the
// encoder, uploaded there the first time, entity by entity in batches with
// progress on log, and reused by every later process on any machine. The
// returned close releases the connection.
func OpenQdrant(ctx context.Context, g kg.Reader, kgPath string, enc models.Encoder, url string, log io.Writer) (*Entities, func() error, error) {
	cfg, err := qdrant.ParseURL(url)
	if err != nil {
		return nil, nil, fmt.Errorf("--vector-store: %w", err)
	}
	kgID, err := contentID(kgPath)
	if err != nil {
		return nil, nil, err
	}
	st, err := qdrant.Open(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("entity index in %s: %w", cfg, err)
	}
	n, dim := g.NumEntities(), enc.Dim()
	var bar *progress.Bar
	if log != nil {
		bar = progress.New(log, "uploading entity vectors", int64(n))
	}
	texts := make([]string, 0, batch)
	vectors := func(lo, hi int) ([]float32, error) {
		texts = texts[:0]
		for id := lo; id < hi; id++ {
			texts = append(texts, kg.EntityTextOf(g, int32(id)))
		}
		out := make([]float32, (hi-lo)*dim)
		if err := enc.Encode(ctx, texts, out); err != nil {
			return nil, fmt.Errorf("encode entities %d-%d with %s: %w", lo, hi-1, enc.Name(), err)
		}
		return out, nil
	}
	names := func(i int) string { return g.EntityName(int32(i)) }
	coll, err := st.Ensure(ctx, st.CollectionFor(kgID, enc.Name()+"-"+strconv.Itoa(dim)), dim, n, vectors, names,
		func(done, total int) { bar.Set(int64(done)) })
	bar.Finish()
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("entity index of %s in %s: %w", kgPath, cfg, err)
	}
	e, err := New(g, enc, coll)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return e, st.Close, nil
}

// contentID names the KG file by its content, as the cache files are
// named, so a moved or copied KG finds its collection.
func contentID(kgPath string) (string, error) {
	sum, err := hashKG("", kgPath)
	if err != nil {
		return "", err
	}
	return sum[:16], nil
}
