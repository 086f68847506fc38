package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/stem-kgqa/stem/schema"
)

// synthRow is one line of a complex question file written by stem kg synth
// --complex (kg/synth.ComplexQuestion).
type synthRow struct {
	ID       string       `json:"id"`
	Kind     string       `json:"kind"`
	Question string       `json:"question"`
	Entities []string     `json:"entities"`
	Answers  []string     `json:"answers"`
	Graph    schema.Graph `json:"graph"`
}

// LoadSynth reads a complex question file (format "synth").
func LoadSynth(ctx context.Context, path string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load synth questions: %w", err)
	}
	defer f.Close()
	return ReadSynth(ctx, f, path)
}

// ReadSynth reads complex questions, JSON lines with a gold schema graph
// each: the graph is the question's GoldGraphs, its kind its Type, and
// its gold paths are the graph read from each entity to the answer
// (schema.Graph.PathTo), Hops the longest of them.
func ReadSynth(ctx context.Context, r io.Reader, name string) ([]Question, error) {
	var out []Question
	err := eachLine(ctx, r, name, func(n int, line string) error {
		var row synthRow
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			return fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		if err := row.Graph.Validate(); err != nil {
			return fmt.Errorf("%w: graph: %v", ErrSyntax, err)
		}
		if len(row.Entities) == 0 || len(row.Answers) == 0 {
			return fmt.Errorf("%w: no entities or no answers", ErrSyntax)
		}
		q := Question{ID: row.ID, Text: row.Question, Answers: row.Answers, Entities: row.Entities, Type: row.Kind,
			GoldGraphs: []schema.Graph{row.Graph}}
		if q.ID == "" {
			q.ID = fmt.Sprintf("%s:%d", name, n)
		}
		for _, e := range row.Entities {
			steps, ok := row.Graph.PathTo(e)
			if !ok {
				return fmt.Errorf("%w: entity %q does not reach the graph's answer", ErrSyntax, e)
			}
			q.Gold = append(q.Gold, schema.GoldPath{Start: e, Steps: steps})
			q.Hops = max(q.Hops, len(steps))
		}
		out = append(out, q)
		return nil
	})
	return out, err
}
