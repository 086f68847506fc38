package planeval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/schema"
)

// RoGPathRow is one row of a RoG path file (rog_paths_*.jsonl): the
// question, its gold relation paths and the RoG path model's predicted
// paths (the peer's plans).
type RoGPathRow struct {
	ID       string
	Question string
	// Gold are the "ground_paths", walked Either way (RoG found them on an
	// undirected graph). Empty gold paths are kept (as empty slices, which
	// no plan matches) so that a question whose only gold path is empty
	// counts as a miss, as in the peers' figures over 1557 WebQSP test
	// questions.
	Gold [][]schema.Step
	// Prediction are RoG's planned paths, best first.
	Prediction [][]schema.Step
	Line       int
}

// ReadRoGPaths reads a RoG path file; name labels errors (name:line).
func ReadRoGPaths(ctx context.Context, r io.Reader, name string) ([]RoGPathRow, error) {
	var out []RoGPathRow
	err := eachRow(ctx, r, name, func(line int, b []byte) error {
		var row struct {
			ID          string     `json:"id"`
			Question    string     `json:"question"`
			GroundPaths [][]string `json:"ground_paths"`
			Prediction  [][]string `json:"prediction"`
		}
		if err := json.Unmarshal(b, &row); err != nil {
			return err
		}
		out = append(out, RoGPathRow{ID: row.ID, Question: row.Question, Gold: either(row.GroundPaths, true), Prediction: either(row.Prediction, false), Line: line})
		return nil
	})
	return out, err
}

// eachRow calls row with every non-blank line of the JSONL data r and its
// line number; name labels errors (name:line), a row's error being a
// syntax error of that line.
func eachRow(ctx context.Context, r io.Reader, name string, row func(line int, b []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		if err := row(line, b); err != nil {
			return fmt.Errorf("%s:%d: %w: %v", name, line, benchmark.ErrSyntax, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// LoadRoGPaths reads the RoG path file at path.
func LoadRoGPaths(ctx context.Context, path string) ([]RoGPathRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load RoG paths: %w", err)
	}
	defer f.Close()
	return ReadRoGPaths(ctx, f, filepath.Base(path))
}

func either(paths [][]string, keepEmpty bool) [][]schema.Step {
	var out [][]schema.Step
	for _, p := range paths {
		if len(p) == 0 && !keepEmpty {
			continue
		}
		s := make([]schema.Step, len(p))
		for i, r := range p {
			s[i] = schema.Step{Rel: r, Dir: schema.Either}
		}
		out = append(out, s)
	}
	return out
}
