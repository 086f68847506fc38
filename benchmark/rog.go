package benchmark

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// ReadRoG reads a RoG-style JSONL file (rmanluo/RoG-webqsp, RoG-cwq) into
// questions, each with its own subgraph as Graph, "q_entity" as Entities
// and "answer" as Answers. Gold paths are not in these rows; when
// groundPaths is not nil its entry for the row's id supplies them (see
// ReadGroundPaths), walked in either direction.
func ReadRoG(ctx context.Context, r io.Reader, name string, groundPaths map[string][][]string) ([]Question, error) {
	var qs []Question
	err := kg.ReadRoG(ctx, r, name, func(row kg.RoGRow) error {
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
		qs = append(qs, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return qs, nil
}

// LoadRoG reads a RoG-style JSONL file; see ReadRoG.
func LoadRoG(ctx context.Context, path string, groundPaths map[string][][]string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load RoG: %w", err)
	}
	defer f.Close()
	return ReadRoG(ctx, f, path, groundPaths)
}
