package rogfile

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/internal/jsonl"
)

// Row is what Reason and Score read from a row of a predictions.jsonl
// (RoG's, GNN-RAG's or stem's) or of a retrieval-only export: the fields
// they share. Other fields are ignored.
type Row struct {
	ID          string
	Question    string
	GroundTruth []string
	Input       string
	// Predictions are the row's predictions as RoG's evaluate_results.py
	// reads "prediction": a string split into lines (eval.SplitLines), or
	// a list with repeats folded, the most frequent first
	// (extract_topk_prediction). HasPrediction is false when the row has
	// none (an export).
	Predictions   []string
	HasPrediction bool
	// Line is the row's line in its file.
	Line int
}

type rowJSON struct {
	ID          string          `json:"id"`
	Question    string          `json:"question"`
	GroundTruth []string        `json:"ground_truth"`
	Input       string          `json:"input"`
	Prediction  json.RawMessage `json:"prediction"`
}

// ReadRows streams the rows of r, calling fn for each in file order; name
// labels errors (name:line). A row that is not a JSON object with a string
// id is an error wrapping benchmark.ErrSyntax. An error from fn stops the
// read and is returned unchanged.
func ReadRows(ctx context.Context, r io.Reader, name string, fn func(Row) error) error {
	return jsonl.Lines(ctx, r, name, func(n int, line []byte) error {
		var j rowJSON
		if err := json.Unmarshal(line, &j); err != nil {
			return fmt.Errorf("%s:%d: %w: %w", name, n, benchmark.ErrSyntax, err)
		}
		if j.ID == "" {
			return fmt.Errorf("%s:%d: %w: row has no \"id\"", name, n, benchmark.ErrSyntax)
		}
		row := Row{ID: j.ID, Question: j.Question, GroundTruth: j.GroundTruth, Input: j.Input, Line: n}
		if len(j.Prediction) > 0 && string(j.Prediction) != "null" {
			var err error
			if row.Predictions, err = predictions(j.Prediction); err != nil {
				return fmt.Errorf("%s:%d: %w: \"prediction\": %w", name, n, benchmark.ErrSyntax, err)
			}
			row.HasPrediction = true
		}
		return fn(row)
	})
}

// predictions reads a "prediction" value as evaluate_results.py does.
func predictions(raw json.RawMessage) ([]string, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return eval.SplitLines(text), nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("want a string or a list of strings")
	}
	return foldRepeats(list), nil
}

// foldRepeats is RoG's extract_topk_prediction with no k: each distinct
// prediction once, the most frequent first, ties in first-seen order.
func foldRepeats(list []string) []string {
	count := map[string]int{}
	var order []string
	for _, p := range list {
		if count[p] == 0 {
			order = append(order, p)
		}
		count[p]++
	}
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(count[b], count[a]) })
	return order
}

// FileScores is a predictions file scored with the peers' metrics.
type FileScores struct {
	eval.Scores
	// NoGold counts rows left out because they have no gold answer (RoG's
	// scorer divides by the gold count and stops on them).
	NoGold int `json:"no_gold"`
}

// Score scores every row of a predictions file with stem's metrics
// (eval.ScoreAnswers, averaged as eval.Run does): the Hit, F1, precision
// and recall RoG's evaluate_results.py prints (its "Accuracy" is the
// recall) and GNN-RAG's Hits@1. A row with no prediction is an error: an
// export is answered first (Reason).
func Score(ctx context.Context, r io.Reader, name string) (FileScores, error) {
	var (
		scores []eval.Score
		out    FileScores
	)
	err := ReadRows(ctx, r, name, func(row Row) error {
		if !row.HasPrediction {
			return fmt.Errorf("%s:%d: row %s has no \"prediction\" (an export is answered first: stem reason)", name, row.Line, row.ID)
		}
		if len(row.GroundTruth) == 0 {
			out.NoGold++
			return nil
		}
		scores = append(scores, eval.ScoreAnswers(row.Predictions, row.GroundTruth))
		return nil
	})
	if err != nil {
		return FileScores{}, err
	}
	out.Scores = eval.AverageScores(scores)
	return out, nil
}

// LoadRows reads the rows of the file at path.
func LoadRows(ctx context.Context, path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	defer f.Close()
	var rows []Row
	err = ReadRows(ctx, f, path, func(r Row) error {
		rows = append(rows, r)
		return nil
	})
	return rows, err
}

// ScoreFile is Score over the file at path.
func ScoreFile(ctx context.Context, path string) (FileScores, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileScores{}, fmt.Errorf("score: %w", err)
	}
	defer f.Close()
	return Score(ctx, f, path)
}
