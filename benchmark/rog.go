package benchmark

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/rogparquet"
	"github.com/stem-kgqa/stem/schema"
)

// ReadRoG reads a RoG-style JSONL file (rmanluo/RoG-webqsp, RoG-cwq) into
// questions, each with its own subgraph as Graph, "q_entity" as Entities
// and "answer" as Answers. Gold paths are not in these rows; when
// groundPaths is not nil its entry for the row's id supplies them (see
// ReadGroundPaths), walked in either direction.
func ReadRoG(ctx context.Context, r io.Reader, name string, groundPaths map[string][][]string) ([]Question, error) {
	var qs []Question
	err := kg.ReadRoG(ctx, r, name, rogCollector(&qs, name, groundPaths))
	if err != nil {
		return nil, err
	}
	return qs, nil
}

// rogCollector turns RoG rows, from JSONL or Parquet, into questions
// appended to qs, so both forms give identical questions.
func rogCollector(qs *[]Question, name string, groundPaths map[string][][]string) func(kg.RoGRow) error {
	return func(row kg.RoGRow) error {
		q := Question{ID: row.ID, Text: row.Question, Answers: row.Answers, Entities: row.QEntities, Graph: row.Graph}
		if q.ID == "" {
			q.ID = fmt.Sprintf("%s:%d", filepath.Base(name), row.Line)
		}
		for _, rels := range groundPaths[row.ID] {
			gp := schema.GoldPath{Steps: make([]schema.Step, len(rels))}
			for k, rel := range rels {
				gp.Steps[k] = schema.Step{Rel: rel, Dir: schema.Either}
			}
			q.Gold = append(q.Gold, gp)
		}
		q.Hops = shortestHops(q.Gold)
		*qs = append(*qs, q)
		return nil
	}
}

// LoadRoG reads a RoG file, JSONL or Parquet (as HuggingFace serves the
// release): a ".parquet" name or the Parquet magic "PAR1" at the start
// selects Parquet (see rogparquet.Read), anything else is read as JSONL
// (see ReadRoG). For Parquet rows without an id, the fallback id is
// name:ROW with the 1-based row number.
func LoadRoG(ctx context.Context, path string, groundPaths map[string][][]string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load RoG: %w", err)
	}
	defer f.Close()
	var head [len(rogparquet.Magic)]byte
	n, _ := io.ReadFull(f, head[:])
	if !rogparquet.IsParquet(path, head[:n]) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("load RoG: %w", err)
		}
		return ReadRoG(ctx, f, path, groundPaths)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load RoG: %w", err)
	}
	var qs []Question
	if err := rogparquet.Read(ctx, f, st.Size(), path, rogCollector(&qs, path, groundPaths)); err != nil {
		return nil, fmt.Errorf("load RoG: %w", err)
	}
	return qs, nil
}
