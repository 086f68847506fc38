package tripgnn

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/schema"
)

// Input is one question's Triple-GNN input with the maps back to its KG.
type Input struct {
	// ID and Text identify the question.
	ID, Text string
	// Graph is the KG the ids below refer to.
	Graph kg.Reader
	// Example is the model input; its entity i is KG entity Entities[i]
	// and its edge j is KG triple Triples[j].
	Example  *Example
	Entities []int32
	Triples  []int32
	// Gold holds the KG ids of the gold-chain entities, including those
	// the subgraph cap left out (nil at inference time).
	Gold []int32
	// Answers are the KG ids of the gold answers and Ends those of every
	// entity the gold relation paths reach (answers and their siblings);
	// nil at inference time.
	Answers, Ends []int32
	// NumSchema is the number of schema triples (K = 4 x NumSchema).
	NumSchema int
}

// Builder turns questions into Inputs. It caches text encodings, so one
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

// Build builds an unlabelled Input: the subgraph of g around the named
// question entities for the schema graph sg (hops = its number of triples
// unless Opt.Hops is set). Entities g does not hold are skipped; none at
// all gives ErrNoQuestionEntity.
func (b *Builder) Build(ctx context.Context, g kg.Reader, entities []string, sg schema.Graph, question string) (*Input, error) {
	return b.BuildHops(ctx, g, entities, sg, question, b.Opt.Hops)
}

// BuildHops is Build with the subgraph depth given (0 = the number of
// schema triples), for training items whose chains are longer than their
// schema graph.
func (b *Builder) BuildHops(ctx context.Context, g kg.Reader, entities []string, sg schema.Graph, question string, hops int) (*Input, error) {
	if g == nil || g.NumEntities() == 0 {
		return nil, fmt.Errorf("tripgnn: empty graph")
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
	ex := &Example{NumEntities: len(ents)}
	localR := map[int32]int32{}
	var relTexts []string
	for _, t := range triples {
		tr := g.Triple(t)
		r, ok := localR[tr.Rel]
		if !ok {
			r = int32(len(localR))
			localR[tr.Rel] = r
			relTexts = append(relTexts, kg.RelationTextOf(g, tr.Rel))
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
	return &Input{Text: question, Graph: g, Example: ex, Entities: ents, Triples: triples, NumSchema: len(sg.Triples)}, nil
}

// nodeText is what a schema triple's end is encoded as: a placeholder's
// canonical text, a KG entity's text, or the mention as written.
func (b *Builder) nodeText(g kg.Reader, s string) string {
	s = strings.TrimSpace(s)
	if c := schema.CanonicalPlaceholder(s); schema.IsPlaceholder(c) {
		return c
	}
	if id, ok := g.Entity(s); ok {
		return kg.EntityTextOf(g, id)
	}
	return s
}

// relText is a schema relation's text: the KG relation's text when it
// names one, else the planner's words.
func relText(g kg.Reader, r string) string {
	if id, ok := g.Relation(r); ok {
		return kg.RelationTextOf(g, id)
	}
	return r
}
