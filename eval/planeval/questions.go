package planeval

import (
	"context"
	"fmt"
	"strings"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/dataset"
	"github.com/stem-kgqa/stem/train/synth"
)

// Question is a question with what planning and plan scoring need, read
// from any format a planner trains on or is scored against (Load).
type Question struct {
	// ID is the dataset's question id, when it gives one.
	ID                 string
	Text               string
	Entities, Mentions []string
	Gold               [][]schema.Step
	// Answers is the gold answer count, -1 when unknown.
	Answers int
	// Reference are a peer's planned paths (webqsp-paths, and
	// webqsp-mini with --gold-paths: RoG's "prediction").
	Reference [][]schema.Step
	// Graph is the question's own KG (webqsp-mini, rog), nil for the
	// formats with a shared KG: planners plan over it.
	Graph kg.Reader
}

// Example is the question as the pattern planner trains on it.
func (q Question) Example() pattern.Example {
	return pattern.Example{Question: q.Text, Mentions: q.Mentions, Paths: q.Gold, Answers: q.Answers}
}

// FromBenchmark reads a benchmark question: its mentions are found from
// its entities, its gold paths are its gold relation paths.
func FromBenchmark(q benchmark.Question) Question {
	pq := Question{ID: q.ID, Text: q.Text, Entities: q.Entities, Answers: len(q.Answers), Mentions: linking.Mentions(q.Text, q.Entities)}
	if q.Graph != nil {
		pq.Graph = q.Graph
	}
	if len(q.Gold) > 0 {
		pq.Gold = q.GoldSteps()
	}
	if len(q.GoldGraphs) > 0 {
		// A gold graph with two anchors is one conjunction path.
		if steps, ok := pattern.ConjunctionPath(q.GoldGraphs[0], q.Entities); ok {
			pq.Gold = [][]schema.Step{steps}
		}
	}
	return pq
}

// Examples turns benchmark questions into the pattern planner's training
// examples (pattern.FromExamples, as the demo learns its planner).
func Examples(qs []benchmark.Question) []pattern.Example {
	out := make([]pattern.Example, len(qs))
	for i, q := range qs {
		out[i] = FromBenchmark(q).Example()
	}
	return out
}

// Formats are the formats Load reads beside the benchmark's.
var Formats = []string{"webqsp-paths", "items"}

// Load reads questions with gold relation paths in one of the formats
// stem train planner and eval-plans take: a benchmark format (src.KG is
// not read), webqsp-paths (RoG's path files) or items (stem data files).
func Load(ctx context.Context, src benchmark.Source) ([]Question, error) {
	files := src.Questions
	if len(files) == 0 {
		return nil, fmt.Errorf("--questions names no file")
	}
	var out []Question
	switch src.Format {
	case "pq", "metaqa", "webqsp-mini", "rog", "synth":
		f, err := benchmark.LookupFormat(src.Format)
		if err != nil {
			return nil, err
		}
		qs, err := f.LoadQuestions(ctx, benchmark.Source{Format: src.Format, Questions: files, QTypes: src.QTypes, GoldPaths: src.GoldPaths})
		if err != nil {
			return nil, err
		}
		// RoG's own planned paths, where the gold-path file has them,
		// are the rog-reference planner's plans.
		ref := map[string][][]schema.Step{}
		if src.GoldPaths != "" && src.Format == "webqsp-mini" {
			rows, err := LoadRoGPaths(ctx, src.GoldPaths)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				ref[r.ID] = r.Prediction
			}
		}
		for _, q := range qs {
			pq := FromBenchmark(q)
			pq.Reference = ref[q.ID]
			out = append(out, pq)
		}
	case "webqsp-paths":
		for _, f := range files {
			rows, err := LoadRoGPaths(ctx, f)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				out = append(out, Question{ID: r.ID, Text: r.Question, Gold: r.Gold, Answers: -1, Reference: r.Prediction})
			}
		}
	case "items":
		for _, f := range files {
			_, items, err := dataset.ReadFile(f)
			if err != nil {
				return nil, err
			}
			for i := range items {
				if pq, ok := ItemQuestion(&items[i]); ok {
					out = append(out, pq)
				}
			}
		}
	default:
		return nil, benchmark.UnknownFormat(src.Format, append(benchmark.FormatNames(), Formats...)...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no questions in %s", strings.Join(files, ","))
	}
	return out, nil
}

// ItemQuestion turns a data item into a training question. The gold path
// of a synth item is its chain from the question entity to the answer slot
// (the branches of a tree-shaped item left out); that of another item
// (stem data chains) is every shortest path from a question entity to an
// answer's placeholder. Dropped items, items with no question and items
// with no such path are skipped.
func ItemQuestion(it *dataset.Item) (Question, bool) {
	if !it.Usable() || it.Question == "" {
		return Question{}, false
	}
	var gold [][]schema.Step
	if it.Source == "synth" {
		steps, err := synth.Chain(it)
		if err != nil {
			return Question{}, false
		}
		gold = [][]schema.Step{steps}
	} else if gold = synth.GoldPaths(it); len(gold) == 0 {
		return Question{}, false
	}
	return Question{Text: it.Question, Entities: it.Entities, Mentions: linking.Mentions(it.Question, it.Entities),
		Gold: gold, Answers: len(it.Answers)}, true
}
