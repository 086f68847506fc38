package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/samber/lo"
	"github.com/stem-kgqa/stem/internal/jsonl"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// ParseReasoningPath parses one line of a GNN-RAG "Reasoning Paths:"
// block, "A -> rel -> B -> rel -> C", into its triples as written
// ((A, rel, B), (B, rel, C)). The arrows are " -> " with single spaces;
// entity names are trimmed, since a few carry stray leading spaces.
func ParseReasoningPath(line string) ([][3]string, error) {
	line = strings.TrimRight(line, "\r\n")
	parts := strings.Split(line, " -> ")
	if len(parts) < 3 || len(parts)%2 == 0 {
		return nil, fmt.Errorf("%w: reasoning path %q is not A -> rel -> B[ -> rel -> C...]", ErrSyntax, clip(line))
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
		if parts[i] == "" {
			return nil, fmt.Errorf("%w: reasoning path %q has an empty element", ErrSyntax, clip(line))
		}
	}
	out := make([][3]string, 0, len(parts)/2)
	for i := 0; i+2 < len(parts); i += 2 {
		out = append(out, [3]string{parts[i], parts[i+1], parts[i+2]})
	}
	return out, nil
}

// ReasoningPaths extracts the evidence paths from a GNN-RAG prompt: the
// lines between "Reasoning Paths:" and the next blank line (the prompt then
// goes on with "Question:"). Blank lines inside are skipped. A prompt with
// no such block has no paths.
func ReasoningPaths(input string) ([][][3]string, error) {
	_, blk, ok := strings.Cut(input, "Reasoning Paths:")
	if !ok {
		return nil, nil
	}
	if i := strings.Index(blk, "\nQuestion:"); i >= 0 {
		blk = blk[:i]
	}
	var out [][][3]string
	for _, ln := range strings.Split(blk, "\n") {
		if strings.TrimSpace(ln) == "" {
			continue
		}
		p, err := ParseReasoningPath(ln)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// GNNRAGRow is one row of GNN-RAG's released result files
// (gnnrag_{sbert,lmsr}_test.jsonl).
type GNNRAGRow struct {
	ID, Question string
	// Prediction is the system's raw LLM output; SplitLines makes it the
	// prediction list the peers score.
	Prediction  string
	GroundTruth []string
	// Paths are the evidence paths of the prompt's "Reasoning Paths:" block.
	Paths [][][3]string
	Line  int
}

type gnnragJSON struct {
	ID          string        `json:"id"`
	Question    string        `json:"question"`
	Prediction  stringOrLines `json:"prediction"`
	GroundTruth []string      `json:"ground_truth"`
	Input       string        `json:"input"`
}

// stringOrLines accepts a string or a list of strings (joined by "\n", so
// SplitLines gives the list back).
type stringOrLines string

func (s *stringOrLines) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = stringOrLines(one)
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = stringOrLines(strings.Join(many, "\n"))
	return nil
}

// ReadGNNRAG streams a GNN-RAG result file, calling fn per row in file
// order; an error from fn stops the read and is returned unchanged.
func ReadGNNRAG(ctx context.Context, r io.Reader, name string, fn func(GNNRAGRow) error) error {
	return eachJSONLine(ctx, r, name, func(n int, line []byte) error {
		var j gnnragJSON
		if err := json.Unmarshal(line, &j); err != nil {
			return fmt.Errorf("%s:%d: %w: %w", name, n, ErrSyntax, err)
		}
		paths, err := ReasoningPaths(j.Input)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
		return fn(GNNRAGRow{ID: j.ID, Question: j.Question, Prediction: string(j.Prediction),
			GroundTruth: j.GroundTruth, Paths: paths, Line: n})
	})
}

// ReadGroundPaths reads a RoG path file (rog_paths_*.jsonl) into id ->
// gold relation paths ("ground_paths"). Empty paths are dropped.
func ReadGroundPaths(ctx context.Context, r io.Reader, name string) (map[string][][]string, error) {
	out := map[string][][]string{}
	err := eachJSONLine(ctx, r, name, func(n int, line []byte) error {
		var j struct {
			ID          string     `json:"id"`
			GroundPaths [][]string `json:"ground_paths"`
		}
		if err := json.Unmarshal(line, &j); err != nil {
			return fmt.Errorf("%s:%d: %w: %w", name, n, ErrSyntax, err)
		}
		if j.ID == "" {
			return fmt.Errorf("%s:%d: %w: row has no id", name, n, ErrSyntax)
		}
		var ps [][]string
		for _, p := range j.GroundPaths {
			if len(p) > 0 {
				ps = append(ps, p)
			}
		}
		out[j.ID] = ps
		return nil
	})
	return out, err
}

// LoadWebQSP builds the WebQSP-mini question set: the questions and gold
// answers of the first GNN-RAG file, each question's KG the union of the
// evidence-path triples of all the given files, its topic entities the
// paths' heads, and its gold paths the "ground_paths" of groundPaths (a
// rog_paths_*.jsonl file; "" for none), walked in either direction from
// any topic entity. A question with no evidence gets an empty graph.
func LoadWebQSP(ctx context.Context, gnnragFiles []string, groundPaths string) ([]Question, error) {
	if len(gnnragFiles) == 0 {
		return nil, fmt.Errorf("load WebQSP: no GNN-RAG result file given")
	}
	var qs []Question
	index := map[string]int{}
	triples := map[string][][3]string{}
	for fi, path := range gnnragFiles {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("load WebQSP: %w", err)
		}
		name := path
		err = ReadGNNRAG(ctx, f, name, func(row GNNRAGRow) error {
			i, ok := index[row.ID]
			if !ok {
				if fi > 0 {
					return fmt.Errorf("%s:%d: question %q is not in %s", name, row.Line, row.ID, gnnragFiles[0])
				}
				i = len(qs)
				index[row.ID] = i
				qs = append(qs, Question{ID: row.ID, Text: row.Question, Answers: row.GroundTruth})
			}
			for _, p := range row.Paths {
				triples[row.ID] = append(triples[row.ID], p...)
				qs[i].Entities = lo.Uniq(append(qs[i].Entities, p[0][0]))
			}
			return nil
		})
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("load WebQSP: %w", err)
		}
	}
	var gold map[string][][]string
	if groundPaths != "" {
		f, err := os.Open(groundPaths)
		if err != nil {
			return nil, fmt.Errorf("load WebQSP: %w", err)
		}
		gold, err = ReadGroundPaths(ctx, f, groundPaths)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("load WebQSP: %w", err)
		}
	}
	b := kg.NewBuilder()
	for i := range qs {
		q := &qs[i]
		for _, rels := range gold[q.ID] {
			gp := schema.GoldPath{Steps: make([]schema.Step, len(rels))}
			for k, r := range rels {
				gp.Steps[k] = schema.Step{Rel: r, Dir: schema.Either}
			}
			q.Gold = append(q.Gold, gp)
		}
		q.Hops = shortestHops(q.Gold)
		ts := triples[q.ID]
		if len(ts) == 0 {
			g, err := emptyGraph()
			if err != nil {
				return nil, err
			}
			q.Graph = g
			continue
		}
		for _, t := range ts {
			b.Add(t[0], t[1], t[2])
		}
		g, err := b.Build()
		if err != nil {
			return nil, fmt.Errorf("load WebQSP: question %s: %w", q.ID, err)
		}
		q.Graph = g
	}
	return qs, nil
}

// emptyGraph returns a graph with no triples; kg builds those only for RoG
// rows with an empty subgraph, so one is read from such a row.
func emptyGraph() (*kg.Graph, error) {
	var g *kg.Graph
	err := kg.ReadRoG(context.Background(), strings.NewReader(`{"id":"","question":"","graph":[]}`), "empty", func(r kg.RoGRow) error {
		g = r.Graph
		return nil
	})
	if err == nil && g == nil {
		err = fmt.Errorf("kg.ReadRoG gave no row for an empty subgraph")
	}
	return g, err
}

// eachJSONLine calls fn with each non-blank line and its 1-based number.
func eachJSONLine(ctx context.Context, r io.Reader, name string, fn func(n int, line []byte) error) error {
	return jsonl.Lines(ctx, r, name, fn)
}
