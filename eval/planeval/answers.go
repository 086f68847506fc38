package planeval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ReadAnswerCounts reads the gold answer count of every question of a
// JSONL file whose rows carry an "id" and a "ground_truth" list (the
// GNN-RAG result files gnnrag_*_test.jsonl), keyed by id; name labels
// errors (name:line). Rows without an id are skipped.
func ReadAnswerCounts(ctx context.Context, r io.Reader, name string) (map[string]int, error) {
	out := map[string]int{}
	err := eachRow(ctx, r, name, func(_ int, b []byte) error {
		var row struct {
			ID          string   `json:"id"`
			GroundTruth []string `json:"ground_truth"`
		}
		if err := json.Unmarshal(b, &row); err != nil {
			return err
		}
		if row.ID != "" {
			out[row.ID] = len(row.GroundTruth)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LoadAnswerCounts reads the answer counts of the files at paths, later
// files overriding earlier ones for the same id.
func LoadAnswerCounts(ctx context.Context, paths []string) (map[string]int, error) {
	out := map[string]int{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("load answer counts: %w", err)
		}
		m, err := ReadAnswerCounts(ctx, f, filepath.Base(p))
		f.Close()
		if err != nil {
			return nil, err
		}
		for id, n := range m {
			out[id] = n
		}
	}
	return out, nil
}
