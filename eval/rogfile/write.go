package rogfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval"
)

// Prediction is one row of predictions.jsonl, its fields in the order
// RoG's predict_answer.py writes them. Prediction holds the answers one
// per line (RoG's evaluate_results.py splits it on "\n"); Input is the
// prompt the answers were asked with.
type Prediction struct {
	ID          string   `json:"id"`
	Question    string   `json:"question"`
	Prediction  string   `json:"prediction"`
	GroundTruth []string `json:"ground_truth"`
	Input       string   `json:"input"`
}

// PathsRow is one row of the retrieval-only export: the question, its
// topic entities and gold answers under RoG's names, the evidence as
// paths of KG triples (each [head, relation, tail] as the KG states it,
// in walking order), and Input, the prompt RoG builds from those paths.
// Its fields are a superset of what Reason reads from a row.
type PathsRow struct {
	ID          string        `json:"id"`
	Question    string        `json:"question"`
	QEntity     []string      `json:"q_entity"`
	GroundTruth []string      `json:"ground_truth"`
	Paths       [][][3]string `json:"paths"`
	Input       string        `json:"input"`
}

// Format is what an Exporter writes.
type Format string

const (
	// FormatPredictions is RoG's predictions.jsonl (Prediction rows).
	FormatPredictions Format = "rog"
	// FormatPaths is the retrieval-only export (PathsRow rows).
	FormatPaths Format = "paths"
)

// File is a JSON Lines file written one row at a time: each row is one
// write of one line, so a run stopped midway leaves whole rows (and at
// most one torn last line). It is not safe for concurrent use.
type File struct {
	f    *os.File
	path string
	n    int
}

// Create opens path for rows. Unless appending, a file that exists and
// is not empty is refused, so that an earlier run's rows are never
// overwritten by accident; appending continues it.
func Create(path string, appending bool) (*File, error) {
	flags := os.O_WRONLY | os.O_CREATE
	if appending {
		flags |= os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if !appending {
		st, err := f.Stat()
		if err == nil && st.Size() > 0 {
			err = fmt.Errorf("%s already holds rows: remove it, or give another file", path)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return &File{f: f, path: path}, nil
}

// Write appends row as one JSON line. HTML characters are not escaped,
// so paths read "A -> rel -> B" in the file as in the prompt.
func (f *File) Write(row any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(row); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if _, err := f.f.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	f.n++
	return nil
}

// Rows counts the rows written.
func (f *File) Rows() int { return f.n }

// Close syncs and closes the file; closing it again does nothing.
func (f *File) Close() error {
	if f.f == nil {
		return nil
	}
	serr := f.f.Sync()
	cerr := f.f.Close()
	f.f = nil
	if serr != nil {
		return fmt.Errorf("close %s: %w", f.path, serr)
	}
	if cerr != nil {
		return fmt.Errorf("close %s: %w", f.path, cerr)
	}
	return nil
}

// Exporter writes stem eval's answers as rows of Format, one per scored
// question, as the run goes (its OnAnswer is eval.Options.OnAnswer).
type Exporter struct {
	File     *File
	Format   Format
	Template Template
	// Unparsed counts the chains ParseChain could not read, which are
	// left out of the rows (none are expected: a chain is its evidence).
	Unparsed int
}

// OnAnswer writes q's row.
func (e *Exporter) OnAnswer(q benchmark.Question, p eval.Prediction, r eval.Result) error {
	paths := e.paths(p)
	input := Prompt(q.Text, paths, e.Template)
	gold := q.Answers
	if gold == nil {
		gold = []string{}
	}
	if e.Format == FormatPaths {
		row := PathsRow{ID: q.ID, Question: q.Text, QEntity: q.Entities, GroundTruth: gold, Paths: make([][][3]string, len(paths)), Input: input}
		if row.QEntity == nil {
			row.QEntity = []string{}
		}
		for i, pa := range paths {
			row.Paths[i] = pa.Triples()
		}
		return e.File.Write(row)
	}
	return e.File.Write(Prediction{ID: q.ID, Question: q.Text, Prediction: Lines(r.Answers), GroundTruth: gold, Input: input})
}

// paths reads p's chains, checked against its evidence.
func (e *Exporter) paths(p eval.Prediction) []Path {
	evidence := make(map[[3]string]bool, len(p.EvidenceTriples))
	for _, t := range p.EvidenceTriples {
		evidence[t] = true
	}
	out := make([]Path, 0, len(p.Chains))
	for _, c := range p.Chains {
		pa, err := ParseChain(c, evidence)
		if err != nil {
			// A retriever whose chains are not drawn from its
			// evidence triples still has its chains read.
			pa, err = ParseChain(c, nil)
		}
		if err != nil {
			e.Unparsed++
			continue
		}
		out = append(out, pa)
	}
	return out
}

// Lines joins answers one per line, the "prediction" RoG's scorer splits
// on "\n". A line break inside an answer becomes a space: the scorer
// would split it into two predictions, while the normalised text it
// matches on is the same.
func Lines(answers []string) string {
	clean := make([]string, len(answers))
	for i, a := range answers {
		clean[i] = strings.ReplaceAll(a, "\n", " ")
	}
	return strings.Join(clean, "\n")
}
