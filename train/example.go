package train

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	prog "github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/oracle"
	"github.com/stem-kgqa/stem/tripgnn"
)

// errNoGold marks a question whose gold path is missing or not in the KG.
var errNoGold = errors.New("no gold path in the KG")

// Labeled builds the training example of q on g (q.Graph when g is nil):
// the schema graph of q's first gold path, the subgraph around its entities
// and the gold-chain labels. A question without a gold path, or whose
// entities are not in the KG, is an error.
func Labeled(ctx context.Context, b *tripgnn.Builder, g *kg.Graph, q benchmark.Question) (*tripgnn.Input, error) {
	if q.Graph != nil {
		g = q.Graph
	}
	if g == nil || g.NumEntities() == 0 {
		// An empty graph holds no question entity: LabeledAll skips it.
		return nil, fmt.Errorf("train: question %s: empty graph: %w", q.ID, tripgnn.ErrNoQuestionEntity)
	}
	pl, err := oracle.Planner{Beam: 1}.Plan(ctx, projection.Input{Question: q.Text, Entities: q.Entities,
		Gold: &projection.Gold{Paths: q.Gold, Answers: len(q.Answers)}})
	if err != nil {
		return nil, fmt.Errorf("train: question %s: %w", q.ID, err)
	}
	if len(pl.Candidates) == 0 || len(pl.Candidates[0].Graph.Triples) == 0 {
		return nil, fmt.Errorf("train: question %s: %w", q.ID, errNoGold)
	}
	it, err := b.Build(ctx, g, q.Entities, pl.Candidates[0].Graph, q.Text)
	if err != nil {
		return nil, fmt.Errorf("train: question %s: %w", q.ID, err)
	}
	it.ID = q.ID
	var names []string
	for _, tr := range benchmark.GoldTriples(g, q) {
		names = append(names, tr[0], tr[2])
	}
	if err := label(g, it, names); err != nil {
		return nil, fmt.Errorf("train: question %s: %w", q.ID, err)
	}
	for _, a := range q.Answers {
		if id, ok := g.Entity(a); ok {
			it.Answers = append(it.Answers, id)
		}
	}
	it.Ends = benchmark.GoldEnds(g, q)
	return it, nil
}

// AnswerLabels relabels examples LabeledAll built with their gold answers
// alone: 1 on the answers in the subgraph, 0 on the rest of the gold
// chain (its topic entities, CVTs and the entities between), and Gold
// set to those answers. A chain label says "on the gold path", which a
// reading's plan already says; an answer label is what judging a
// reading's answers needs. Examples with no answer in their subgraph
// are dropped, and counted.
func AnswerLabels(items []*tripgnn.Input) ([]*tripgnn.Input, int) {
	kept := items[:0:0]
	for _, it := range items {
		answers := map[int32]bool{}
		for _, a := range it.Answers {
			answers[a] = true
		}
		labels := make([]float32, len(it.Example.Labels))
		var gold []int32
		for i, e := range it.Entities {
			if answers[e] && i < len(labels) {
				labels[i] = 1
				gold = append(gold, e)
			}
		}
		if len(gold) == 0 {
			continue
		}
		ex := *it.Example
		ex.Labels = labels
		out := *it
		out.Example, out.Gold = &ex, gold
		kept = append(kept, &out)
	}
	return kept, len(items) - len(kept)
}

// label sets it.Gold to the KG ids of the named entities (repeats and
// names g does not hold are skipped) and labels them 1 in the example;
// none in g is errNoGold.
func label(g *kg.Graph, it *tripgnn.Input, names []string) error {
	gold := map[int32]bool{}
	for _, name := range names {
		if id, ok := g.Entity(name); ok && !gold[id] {
			gold[id] = true
			it.Gold = append(it.Gold, id)
		}
	}
	if len(it.Gold) == 0 {
		return errNoGold
	}
	ex := it.Example
	ex.Labels = make([]float32, ex.NumEntities)
	for i, e := range it.Entities {
		if gold[e] {
			ex.Labels[i] = 1
		}
	}
	return nil
}

// LabeledAll builds the examples of qs on g, skipping (and counting) the
// questions that have no gold path in the KG or no question entity in it,
// which the datasets do hold (MetaQA's rebuilt KB is lossy). Any other error
// stops. progress, when not nil, receives a bar.
func LabeledAll(ctx context.Context, b *tripgnn.Builder, g *kg.Graph, qs []benchmark.Question, progress io.Writer) (items []*tripgnn.Input, skipped int, err error) {
	var bar *prog.Bar
	if progress != nil {
		bar = prog.New(progress, "build examples", int64(len(qs)))
	}
	defer bar.Finish()
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		it, err := Labeled(ctx, b, g, q)
		bar.Add(1)
		if err != nil {
			if errors.Is(err, tripgnn.ErrNoQuestionEntity) || errors.Is(err, errNoGold) {
				skipped++
				continue
			}
			return nil, 0, err
		}
		items = append(items, it)
	}
	return items, skipped, nil
}
