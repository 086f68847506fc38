package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	prog "github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/oracle"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tripgnn"
)

// Item is one question's Triple-GNN input with the maps back to its KG.
type Item struct {
	// ID and Text identify the question.
	ID, Text string
	// Graph is the KG the ids below refer to.
	Graph *kg.Graph
	// Example is the model input; its entity i is KG entity Entities[i]
	// and its edge j is KG triple Triples[j].
	Example  *tripgnn.Example
	Entities []int32
	Triples  []int32
	// Gold holds the KG ids of the gold-chain entities, including those
	// the subgraph cap left out (nil at inference time).
	Gold []int32
	// NumSchema is the number of schema triples (K = 4 x NumSchema).
	NumSchema int
}

// Builder turns questions into Items. It caches text encodings, so one
// Builder should serve a whole dataset. It is safe for concurrent use.
type Builder struct {
	Enc models.Encoder
	Opt SubgraphOptions

	mu    sync.Mutex
	cache map[string][]float32
}

// NewBuilder returns a Builder encoding with enc.
func NewBuilder(enc models.Encoder, opt SubgraphOptions) *Builder {
	return &Builder{Enc: enc, Opt: opt, cache: map[string][]float32{}}
}

// Encode returns the encodings of texts, n x Dim values, from the cache
// where it can.
func (b *Builder) Encode(ctx context.Context, texts []string) ([]float32, error) {
	d := b.Enc.Dim()
	b.mu.Lock()
	if b.cache == nil {
		b.cache = map[string][]float32{}
	}
	var missing []string
	seen := map[string]bool{}
	for _, t := range texts {
		if _, ok := b.cache[t]; !ok && !seen[t] {
			seen[t] = true
			missing = append(missing, t)
		}
	}
	b.mu.Unlock()
	if len(missing) > 0 {
		vecs, err := models.EncodeAll(ctx, b.Enc, missing)
		if err != nil {
			return nil, fmt.Errorf("train: encode %d texts: %w", len(missing), err)
		}
		b.mu.Lock()
		for i, t := range missing {
			b.cache[t] = vecs[i*d : (i+1)*d : (i+1)*d]
		}
		b.mu.Unlock()
	}
	out := make([]float32, 0, len(texts)*d)
	b.mu.Lock()
	for _, t := range texts {
		out = append(out, b.cache[t]...)
	}
	b.mu.Unlock()
	return out, nil
}

// errNoGold marks a question whose gold path is missing or not in the KG.
var errNoGold = errors.New("no gold path in the KG")

// Labeled builds the training example of q on g (q.Graph when g is nil):
// the schema graph of q's first gold path, the subgraph around its entities
// and the gold-chain labels. A question without a gold path, or whose
// entities are not in the KG, is an error.
func (b *Builder) Labeled(ctx context.Context, g *kg.Graph, q benchmark.Question) (*Item, error) {
	if q.Graph != nil {
		g = q.Graph
	}
	if g == nil || g.NumEntities() == 0 {
		return nil, fmt.Errorf("train: question %s: empty graph", q.ID)
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
	return it, nil
}

// label sets it.Gold to the KG ids of the named entities (repeats and
// names g does not hold are skipped) and labels them 1 in the example;
// none in g is errNoGold.
func label(g *kg.Graph, it *Item, names []string) error {
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

// Build builds an unlabelled Item: the subgraph of g around the named
// question entities for the schema graph sg (hops = its number of triples
// unless Opt.Hops is set). Entities g does not hold are skipped; none at
// all gives ErrNoQuestionEntity.
func (b *Builder) Build(ctx context.Context, g *kg.Graph, entities []string, sg schema.Graph, question string) (*Item, error) {
	return b.build(ctx, g, entities, sg, question, b.Opt.Hops)
}

// build is Build with the subgraph depth given (0 = the number of schema
// triples).
func (b *Builder) build(ctx context.Context, g *kg.Graph, entities []string, sg schema.Graph, question string, hops int) (*Item, error) {
	if g == nil || g.NumEntities() == 0 {
		return nil, fmt.Errorf("empty graph")
	}
	if len(sg.Triples) == 0 {
		return nil, fmt.Errorf("schema graph has no triples")
	}
	var seeds []int32
	for _, name := range entities {
		if id, ok := g.Entity(name); ok {
			seeds = append(seeds, id)
		}
	}
	if len(seeds) == 0 {
		return nil, fmt.Errorf("%w (entities %q)", ErrNoQuestionEntity, entities)
	}
	if hops <= 0 {
		hops = len(sg.Triples)
	}
	ents, triples, err := Subgraph(g, seeds, hops, b.Opt)
	if err != nil {
		return nil, err
	}
	localE := make(map[int32]int32, len(ents))
	for i, e := range ents {
		localE[e] = int32(i)
	}
	ex := &tripgnn.Example{NumEntities: len(ents)}
	localR := map[int32]int32{}
	var relTexts []string
	for _, t := range triples {
		tr := g.Triple(t)
		r, ok := localR[tr.Rel]
		if !ok {
			r = int32(len(localR))
			localR[tr.Rel] = r
			relTexts = append(relTexts, g.RelationText(tr.Rel))
		}
		ex.Heads = append(ex.Heads, localE[tr.Head])
		ex.Rels = append(ex.Rels, r)
		ex.Tails = append(ex.Tails, localE[tr.Tail])
	}
	texts := relTexts
	for _, rt := range relTexts {
		texts = append(texts, "inverse of "+rt)
	}
	if len(texts) > 0 {
		if ex.RelVecs, err = b.Encode(ctx, texts); err != nil {
			return nil, err
		}
	}
	var st []string
	for _, t := range sg.Triples {
		st = append(st, b.nodeText(g, t.Head), relText(g, t.Rel), b.nodeText(g, t.Tail))
	}
	if ex.SchemaVecs, err = b.Encode(ctx, st); err != nil {
		return nil, err
	}
	for _, s := range seeds {
		ex.Question = append(ex.Question, localE[s])
	}
	return &Item{Text: question, Graph: g, Example: ex, Entities: ents, Triples: triples, NumSchema: len(sg.Triples)}, nil
}

// nodeText is what a schema triple's end is encoded as: a placeholder's
// canonical text, a KG entity's text, or the mention as written.
func (b *Builder) nodeText(g *kg.Graph, s string) string {
	s = strings.TrimSpace(s)
	if c := schema.CanonicalPlaceholder(s); schema.IsPlaceholder(c) {
		return c
	}
	if id, ok := g.Entity(s); ok {
		return g.EntityText(id)
	}
	return s
}

// relText is a schema relation's text: the KG relation's text when it
// names one, else the planner's words.
func relText(g *kg.Graph, r string) string {
	if id, ok := g.Relation(r); ok {
		return g.RelationText(id)
	}
	return r
}

// LabeledAll builds the examples of qs on g, skipping (and counting) the
// questions that have no gold path in the KG or no question entity in it,
// which the datasets do hold (MetaQA's rebuilt KB is lossy). Any other error
// stops. progress, when not nil, receives a bar.
func (b *Builder) LabeledAll(ctx context.Context, g *kg.Graph, qs []benchmark.Question, progress io.Writer) (items []*Item, skipped int, err error) {
	var bar *prog.Bar
	if progress != nil {
		bar = prog.New(progress, "build examples", int64(len(qs)))
	}
	defer bar.Finish()
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		it, err := b.Labeled(ctx, g, q)
		bar.Add(1)
		if err != nil {
			if errors.Is(err, ErrNoQuestionEntity) || errors.Is(err, errNoGold) {
				skipped++
				continue
			}
			return nil, 0, err
		}
		items = append(items, it)
	}
	return items, skipped, nil
}
