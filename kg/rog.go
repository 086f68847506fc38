package kg

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// RoGRow is one question of a RoG-style JSONL file (the rmanluo/RoG-webqsp
// and RoG-cwq releases): the question, its answers, and the Freebase
// subgraph retrieved for it, already built into a Graph of its own.
type RoGRow struct {
	ID       string
	Question string
	// Answers is the "answer" field (answer names); a single string is
	// accepted as a one-element list.
	Answers []string
	// QEntities and AEntities are "q_entity" and "a_entity": the topic
	// entities of the question and the answer entities, by name.
	QEntities []string
	AEntities []string
	// Graph is the row's "graph" field, a list of [head, relation, tail]
	// names, with duplicates dropped. A row with no triples gets an empty
	// Graph (zero entities) rather than nil, so callers need not special-case it.
	Graph *Graph
	// Line is the row's line in the file, for messages about it; rows read
	// from Parquet (package kg/rogparquet) carry their 1-based row number.
	Line int
}

// stringList decodes a JSON list of strings, or a single string, or null.
type stringList []string

func (s *stringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

type rogJSON struct {
	ID       string     `json:"id"`
	Question string     `json:"question"`
	Answer   stringList `json:"answer"`
	QEntity  stringList `json:"q_entity"`
	AEntity  stringList `json:"a_entity"`
	Graph    [][]string `json:"graph"`
}

// ReadRoG streams a RoG JSONL file, calling fn once per row in file order.
// Rows are decoded one at a time, so memory holds one row's subgraph, not
// the file's. An error from fn stops the read and is returned unchanged; a
// malformed row is reported as name:LINE. Blank lines are skipped.
func ReadRoG(ctx context.Context, r io.Reader, name string, fn func(RoGRow) error) error {
	lr := newLineReader(r, name)
	b := NewBuilder()
	for {
		line, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s:%d: %w", name, lr.line, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var row rogJSON
		if err := json.Unmarshal(line, &row); err != nil {
			return parseErr(name, lr.line, ErrSyntax, "%v: %v", ErrSyntax, err)
		}
		for i, t := range row.Graph {
			if len(t) != 3 {
				return parseErr(name, lr.line, ErrColumns, "graph triple %d: wrong number of columns (got %d columns, want 3)", i+1, len(t))
			}
			for j, what := range [3]string{"head", "relation", "tail"} {
				if t[j] == "" {
					return parseErr(name, lr.line, ErrEmptyField, "graph triple %d: empty %s", i+1, what)
				}
			}
			b.Add(t[0], t[1], t[2])
		}
		g, err := b.build(true)
		if err != nil {
			return parseErr(name, lr.line, err, "graph: %v", err)
		}
		err = fn(RoGRow{
			ID: row.ID, Question: row.Question,
			Answers: row.Answer, QEntities: row.QEntity, AEntities: row.AEntity,
			Graph: g, Line: lr.line,
		})
		if err != nil {
			return err
		}
	}
}
