package assets

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
)

// DataOptions filter a benchmark's questions and say how its KG opens
// (stem eval, compare and bench serve).
type DataOptions struct {
	// AnswerableOnly keeps the questions whose answers all lie within the
	// question's hop count of its entity (metaqa, pq; a KG in memory).
	AnswerableOnly bool
	// IDs names a file of question ids to keep ("" keeps all).
	IDs string
	// Limit keeps the first Limit questions (0 keeps all).
	Limit int
	// Open says how the shared KG opens (the backends' settings).
	Open kg.OpenOptions
}

// Data is a benchmark's questions and the KG they are asked of.
type Data struct {
	Questions []benchmark.Question
	// KG is the shared KG, nil when each question brings its own; Graph
	// is KG when it is held in memory.
	KG    kg.Reader
	Graph *kg.Graph
	// Dropped counts the questions AnswerableOnly left out.
	Dropped int
}

// LoadData loads src's questions and opens its shared KG with the built-in
// backends, then filters the questions as o says, saying on log what each
// filter kept.
func LoadData(ctx context.Context, src benchmark.Source, o DataOptions, log io.Writer) (*Data, error) {
	if o.AnswerableOnly && src.Format != "metaqa" && src.Format != "pq" {
		return nil, fmt.Errorf("--answerable-only needs a shared KG (--format metaqa or pq)")
	}
	ds, err := benchmark.Load(ctx, src, backends.Default().Opener(o.Open))
	if err != nil {
		return nil, err
	}
	d := &Data{Questions: ds.Questions, KG: ds.KG, Graph: ds.Graph}
	if o.AnswerableOnly {
		if d.Graph == nil {
			return nil, fmt.Errorf("--answerable-only needs the KG in memory, not a SPARQL endpoint")
		}
		if d.Questions, d.Dropped, err = benchmark.Answerable(ctx, d.Graph, d.Questions); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "answerable-only: kept %d questions, dropped %d whose answers are not all within reach\n", len(d.Questions), d.Dropped)
	}
	if d.Questions, err = KeepIDs(d.Questions, o.IDs, log); err != nil {
		return nil, err
	}
	if o.Limit > 0 && o.Limit < len(d.Questions) {
		d.Questions = d.Questions[:o.Limit]
	}
	if len(d.Questions) == 0 {
		return nil, fmt.Errorf("no questions to evaluate in %s", strings.Join(src.Questions, ","))
	}
	return d, nil
}

// KeepIDs keeps the questions whose ids the file at path lists (all of
// them when path is ""), saying on log how many it kept.
func KeepIDs(qs []benchmark.Question, path string, log io.Writer) ([]benchmark.Question, error) {
	if path == "" {
		return qs, nil
	}
	ids, err := benchmark.ReadIDs(path)
	if err != nil {
		return nil, fmt.Errorf("--ids: %w", err)
	}
	kept, err := benchmark.KeepIDs(qs, ids, path)
	if err != nil {
		return nil, fmt.Errorf("--ids: %w", err)
	}
	fmt.Fprintf(log, "ids: kept the %d of %d questions %s lists\n", len(kept), len(qs), path)
	return kept, nil
}

// SettingsDiffer reports whether a and b set the backend that opens spec
// otherwise, so that a KG opened with a must be opened again for b (a
// stem compare configuration of its own page size, say); false for a KG
// whose backend has no settings.
func SettingsDiffer(spec string, a, b kg.BackendSettings) bool {
	if spec == "" {
		return false
	}
	bk, err := backends.Default().Choose(spec, kg.OpenOptions{})
	if err != nil {
		return false
	}
	return !reflect.DeepEqual(a.Of(bk.Name), b.Of(bk.Name))
}
