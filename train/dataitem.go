package train

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/stem-kgqa/stem/kg"
	prog "github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/train/dataset"
	"github.com/stem-kgqa/stem/tripgnn"
)

// ErrDropped marks a data-file item that was dropped when it was made
// (dataset.Item.Dropped): it has no evidence to learn from.
var ErrDropped = errors.New("item was dropped")

// LabeledData builds the training example of a data-file item (written by
// stem data chains or stem data synth) on g, as Labeled does for a
// benchmark question: the schema graph is the item's masked triples
// (it.Schema(): placeholders as written, question entities and relations
// as KG names, which Build encodes as the oracle's gold-path graphs are
// encoded), the question entities are it.Entities, and the labels are 1
// on it.SubgraphEntities when set (a sampled subgraph, C.2), else on the
// entities of its evidence triples. The subgraph is it.Hops deep unless
// Opt.Hops is set: an item's masked triples are the union of several
// chains, so their number is not the reasoning depth. A dropped item is
// ErrDropped; one with no triples, or no labelled entity in g, is
// errNoGold (skipped by LabeledDataAll).
func LabeledData(ctx context.Context, b *tripgnn.Builder, g *kg.Graph, it *dataset.Item) (*tripgnn.Input, error) {
	if it.Dropped != "" {
		return nil, fmt.Errorf("train: item %s: %w (%s)", it.ID, ErrDropped, it.Dropped)
	}
	if g == nil || g.NumEntities() == 0 {
		return nil, fmt.Errorf("train: item %s: empty graph", it.ID)
	}
	sg := it.Schema()
	if len(sg.Triples) == 0 {
		return nil, fmt.Errorf("train: item %s: %w", it.ID, errNoGold)
	}
	hops := b.Opt.Hops
	if hops <= 0 {
		hops = it.Hops
	}
	out, err := b.BuildHops(ctx, g, it.Entities, sg, it.Question, hops)
	if err != nil {
		return nil, fmt.Errorf("train: item %s: %w", it.ID, err)
	}
	out.ID = it.ID
	names := it.SubgraphEntities
	if len(names) == 0 {
		names = it.EvidenceEntities()
	}
	if err := label(g, out, names); err != nil {
		return nil, fmt.Errorf("train: item %s: %w", it.ID, err)
	}
	return out, nil
}

// LabeledDataAll builds the examples of items on g, skipping (and
// counting) dropped items and those with no question entity or no
// labelled entity in g. Any other error stops. progress, when not nil,
// receives a bar.
func LabeledDataAll(ctx context.Context, b *tripgnn.Builder, g *kg.Graph, items []dataset.Item, progress io.Writer) (out []*tripgnn.Input, skipped int, err error) {
	var bar *prog.Bar
	if progress != nil {
		bar = prog.New(progress, "build examples", int64(len(items)))
	}
	defer bar.Finish()
	for i := range items {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		it, err := LabeledData(ctx, b, g, &items[i])
		bar.Add(1)
		if err != nil {
			if errors.Is(err, ErrDropped) || errors.Is(err, tripgnn.ErrNoQuestionEntity) || errors.Is(err, errNoGold) {
				skipped++
				continue
			}
			return nil, 0, err
		}
		out = append(out, it)
	}
	return out, skipped, nil
}
