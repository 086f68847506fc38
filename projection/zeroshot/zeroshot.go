// Package zeroshot is the schema planner that needs no training data: it
// enumerates the relation paths that leave the question's anchored entity
// in the KG (up to MaxHops hops, each relation walked forward or backward)
// and ranks them against the question with the text encoder.
//
// # Ranking
//
// A path's text is its relations' readable texts joined (kg.RelationText:
// "film.film.directed_by" -> "film film directed by"); its score is the
// cosine similarity between the question with its entity mention masked
// out and that text, minus LengthPenalty per hop beyond the first, so that a
// longer path must earn its extra relations. Relation texts do not say which
// way a relation is walked; where both directions leave the entity, the one
// reaching fewer entities ranks first (a question usually narrows).
//
// # Strategy
//
// The strategy follows the number of entities the best path reaches from
// the entity: Breadth when it reaches more than one, else Precision, which
// is the labelling rule (Breadth iff several gold answers) applied to the
// path's own answer set.
//
// # Hubs
//
// Enumeration is capped so that a hub entity cannot make planning slow: at
// most FrontierCap entities of each partial path are expanded (the rest
// still count towards its reach, up to ReachCap), and at most MaxPaths paths
// are kept per hop count, those reaching the fewest entities first.
package zeroshot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
)

// Config tunes the planner; zero fields take the defaults.
type Config struct {
	// Beam is the number of candidate paths (B); 0 means projection.DefaultBeam.
	Beam int
	// MaxHops is the longest path enumerated; 0 means 3.
	MaxHops int
	// LengthPenalty is subtracted per hop beyond the first; 0 means
	// DefaultLengthPenalty, negative means none.
	LengthPenalty float32
	// FrontierCap is the most entities expanded per partial path; 0 means
	// 200.
	FrontierCap int
	// MaxPaths is the most partial paths kept per hop count; 0 means 400.
	MaxPaths int
}

// DefaultLengthPenalty was chosen on the dev splits.
const DefaultLengthPenalty = 0.05

// DefaultMaxHops is the default Config.MaxHops: the longest path planned.
const DefaultMaxHops = 3

// reachCap bounds the entities counted per path.
const reachCap = 10000

// Planner is the zero-shot schema planner over one KG. It implements
// projection.Planner and is safe for concurrent use.
type Planner struct {
	g    kg.Reader
	enc  models.Encoder
	cfg  Config
	rels [][]float32 // un-normalised parts (Additive) or unit vectors, per relation id
	add  bool
}

var _ projection.Planner = (*Planner)(nil)

// New returns a planner over g, encoding every relation's text once.
func New(ctx context.Context, g kg.Reader, enc models.Encoder, cfg Config) (*Planner, error) {
	if g == nil || enc == nil {
		return nil, errors.New("zeroshot: new planner: nil graph or encoder")
	}
	if cfg.Beam <= 0 {
		cfg.Beam = projection.DefaultBeam
	}
	if cfg.MaxHops <= 0 {
		cfg.MaxHops = DefaultMaxHops
	}
	if cfg.LengthPenalty == 0 {
		cfg.LengthPenalty = DefaultLengthPenalty
	} else if cfg.LengthPenalty < 0 {
		cfg.LengthPenalty = 0
	}
	if cfg.FrontierCap <= 0 {
		cfg.FrontierCap = 200
	}
	if cfg.MaxPaths <= 0 {
		cfg.MaxPaths = 400
	}
	n, d := g.NumRelations(), enc.Dim()
	texts := make([]string, n)
	for i := range n {
		texts[i] = kg.RelationTextOf(g, int32(i))
	}
	buf := make([]float32, n*d)
	p := &Planner{g: g, enc: enc, cfg: cfg, rels: make([][]float32, n)}
	var err error
	if a, ok := enc.(models.Additive); ok {
		p.add = true
		err = a.EncodeParts(ctx, texts, buf)
	} else {
		err = enc.Encode(ctx, texts, buf)
	}
	if err != nil {
		return nil, fmt.Errorf("zeroshot: encode relation texts: %w", err)
	}
	for i := range n {
		p.rels[i] = buf[i*d : (i+1)*d]
	}
	return p, nil
}

// Prediction is the planner's ranked paths and strategy.
type Prediction struct {
	Paths    []projection.ScoredPath
	Strategy schema.Strategy
	Notes    []string
	// Anchor is the entity the paths leave.
	Anchor string
}

type step struct {
	rel int32
	inv bool
}

type partial struct {
	steps []step
	front []int32
	reach int
}

// Predict ranks the paths leaving the entities (the first one the graph
// knows anchors them) against the question.
func (p *Planner) Predict(ctx context.Context, question string, entities, mentions []string) (Prediction, error) {
	if len(linking.Words(question)) == 0 {
		return Prediction{}, errors.New("zeroshot: empty question")
	}
	var start []int32
	var anchor string
	for _, e := range entities {
		if id, ok := p.g.Entity(e); ok {
			start, anchor = []int32{id}, e
		} else if ids := p.g.EntitiesByNorm(e); len(ids) > 0 {
			start, anchor = ids, e
		}
		if start != nil {
			break
		}
	}
	if start == nil {
		return Prediction{}, fmt.Errorf("zeroshot: none of the question's entities %q is in the KG", entities)
	}
	if len(mentions) == 0 {
		mentions = linking.Mentions(question, entities)
	}
	d := p.enc.Dim()
	q := make([]float32, d)
	if err := p.enc.Encode(ctx, []string{linking.Mask(question, mentions)}, q); err != nil {
		return Prediction{}, fmt.Errorf("zeroshot: encode question: %w", err)
	}
	pred := Prediction{Anchor: anchor}
	var all []projection.ScoredPath
	level := []partial{{front: start, reach: len(start)}}
	vec := make([]float32, d)
	for hop := 1; hop <= p.cfg.MaxHops; hop++ {
		if err := ctx.Err(); err != nil {
			return Prediction{}, err
		}
		next := p.expand(level)
		if len(next) > p.cfg.MaxPaths {
			slices.SortStableFunc(next, func(a, b partial) int { return a.reach - b.reach })
			pred.Notes = append(pred.Notes, fmt.Sprintf("hub: kept %d of %d %d-hop paths", p.cfg.MaxPaths, len(next), hop))
			next = next[:p.cfg.MaxPaths]
		}
		for _, pa := range next {
			clear(vec)
			for _, s := range pa.steps {
				for j, x := range p.rels[s.rel] {
					vec[j] += x
				}
			}
			var dot, nn float32
			for j, x := range vec {
				dot += x * q[j]
				nn += x * x
			}
			cos := float32(0)
			if nn > 0 {
				cos = dot / float32(math.Sqrt(float64(nn)))
			}
			all = append(all, projection.ScoredPath{Steps: p.toSteps(pa.steps), Score: cos - p.cfg.LengthPenalty*float32(hop-1), Reach: pa.reach})
		}
		level = next
	}
	if len(all) == 0 {
		return Prediction{}, fmt.Errorf("zeroshot: entity %q has no edges in the KG", entities[0])
	}
	slices.SortFunc(all, func(a, b projection.ScoredPath) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		if a.Reach != b.Reach {
			return a.Reach - b.Reach
		}
		return compareSteps(a.Steps, b.Steps)
	})
	if len(all) > p.cfg.Beam {
		all = all[:p.cfg.Beam]
	}
	pred.Paths = all
	if all[0].Reach > 1 {
		pred.Strategy = schema.Breadth
	}
	return pred, nil
}

// expand extends every partial path by one step in every direction its
// frontier allows. Everything it keeps or cuts is chosen by names, never
// by ids, so that the paths do not depend on how a backend numbers the
// KG: a question's neighbourhood fetched from an endpoint is numbered
// otherwise than the same KG read from its file.
func (p *Planner) expand(level []partial) []partial {
	var out []partial
	for _, pa := range level {
		groups := map[step]map[int32]bool{}
		var order []step
		front := pa.front
		if len(front) > p.cfg.FrontierCap {
			front = slices.Clone(front)
			slices.SortFunc(front, func(a, b int32) int { return strings.Compare(p.g.EntityName(a), p.g.EntityName(b)) })
			front = front[:p.cfg.FrontierCap]
		}
		for _, e := range front {
			for _, t := range p.g.Out(e) {
				tr := p.g.Triple(t)
				add(groups, &order, step{tr.Rel, false}, tr.Tail)
			}
			for _, t := range p.g.In(e) {
				tr := p.g.Triple(t)
				add(groups, &order, step{tr.Rel, true}, tr.Head)
			}
		}
		slices.SortFunc(order, func(a, b step) int {
			if c := strings.Compare(p.g.RelationName(a.rel), p.g.RelationName(b.rel)); c != 0 {
				return c
			}
			return cmp.Compare(btoi(a.inv), btoi(b.inv))
		})
		for _, s := range order {
			set := groups[s]
			nf := make([]int32, 0, len(set))
			for e := range set {
				nf = append(nf, e)
			}
			slices.Sort(nf)
			out = append(out, partial{steps: append(slices.Clone(pa.steps), s), front: nf, reach: len(nf)})
		}
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compareSteps orders paths by their relations' names and directions.
func compareSteps(a, b []schema.Step) int {
	for i := range min(len(a), len(b)) {
		if c := strings.Compare(a[i].Rel, b[i].Rel); c != 0 {
			return c
		}
		if a[i].Dir != b[i].Dir {
			return cmp.Compare(a[i].Dir, b[i].Dir)
		}
	}
	return cmp.Compare(len(a), len(b))
}

func add(groups map[step]map[int32]bool, order *[]step, s step, e int32) {
	set, ok := groups[s]
	if !ok {
		set = map[int32]bool{}
		groups[s] = set
		*order = append(*order, s)
	}
	if len(set) < reachCap {
		set[e] = true
	}
}

func (p *Planner) toSteps(ss []step) []schema.Step {
	out := make([]schema.Step, len(ss))
	for i, s := range ss {
		out[i] = schema.Step{Rel: p.g.RelationName(s.rel), Dir: schema.Forward}
		if s.inv {
			out[i].Dir = schema.Inverse
		}
	}
	return out
}

// Plan implements projection.Planner.
func (p *Planner) Plan(ctx context.Context, in projection.Input) (projection.Projection, error) {
	if len(in.Entities) == 0 {
		return projection.Projection{}, errors.New("zeroshot: plan: the question has no linked entity to anchor the paths on")
	}
	pred, err := p.Predict(ctx, in.Question, in.Entities, in.Mentions)
	if err != nil {
		return projection.Projection{}, err
	}
	anchor := pred.Anchor
	out := projection.Projection{Strategy: pred.Strategy, Notes: pred.Notes}
	for _, c := range pred.Paths {
		out.Candidates = append(out.Candidates, projection.Candidate{Graph: schema.PathGraph(anchor, c.Steps), Score: c.Score})
	}
	return out, nil
}
