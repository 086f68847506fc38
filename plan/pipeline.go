package plan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// Guider builds the guidance graph for a question (the Triple-GNN's top-K
// entities and the KG edges among them). It is optional: without one,
// tracing runs without the entity and triple biases.
type Guider interface {
	Guide(ctx context.Context, in projection.Input, p projection.Plan) (*tracing.Guidance, error)
}

// Pipeline runs STEM's stages for one question at a time: entity linking,
// projection, guidance, tracing and generation. It is safe for concurrent
// use when its parts are.
type Pipeline struct {
	Graph   *kg.Graph
	Linker  *linking.Linker
	Planner projection.Planner
	// Guider may be nil (no guidance graph).
	Guider    Guider
	Tracer    *tracing.Tracer
	Generator Generator
	// Strategy, when not nil, overrides the planner's strategy.
	Strategy *schema.Strategy
}

// Stage names, in the order they run, as keys of Trace.Timings.
const (
	StageLink     = "link"
	StagePlan     = "plan"
	StageGuide    = "guide"
	StageTrace    = "trace"
	StageGenerate = "generate"
)

// Trace is everything the pipeline did for a question: the answers with
// their evidence, and, for --explain, every intermediate result.
type Trace struct {
	Question string
	Links    []linking.Link
	Plan     projection.Plan
	Strategy string
	// Guidance names the guidance graph's entities (with a Guider).
	Guidance []string
	Result   *tracing.Result
	Answers  []Answer
	Chains   []string
	Timings  map[string]Duration
}

// Duration marshals as milliseconds.
type Duration time.Duration

// MarshalJSON writes the duration in milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%.3f", float64(d)/1e6), nil
}

// ErrNoEntity is returned when a question names no entity of the KG.
var ErrNoEntity = errors.New("the question names no entity of the KG")

// Ask answers question. entities, when given, are the question's KG entity
// names (as --entity gives them); otherwise they are linked from the text.
func (p *Pipeline) Ask(ctx context.Context, question string, entities []string) (*Trace, error) {
	tr := &Trace{Question: question, Timings: map[string]Duration{}}
	stage := func(name string, start time.Time) { tr.Timings[name] = Duration(time.Since(start)) }

	start := time.Now()
	in := projection.Input{Question: question}
	if len(entities) > 0 {
		for _, e := range entities {
			name, err := p.resolve(e)
			if err != nil {
				return nil, err
			}
			l := linking.Link{Entity: name, Mention: e, Score: 1, Method: "given"}
			if sp, ok := linking.Find(question, e); ok {
				l.Start, l.End, l.Mention = sp.Start, sp.End, question[sp.Start:sp.End]
			}
			tr.Links = append(tr.Links, l)
		}
	} else {
		links, err := p.Linker.Link(ctx, question)
		if err != nil {
			if errors.Is(err, linking.ErrNoEntity) {
				return nil, fmt.Errorf("%q: %w (name it with --entity)", question, ErrNoEntity)
			}
			return nil, err
		}
		tr.Links = links
	}
	for _, l := range tr.Links {
		in.Entities = append(in.Entities, l.Entity)
		in.Mentions = append(in.Mentions, l.Mention)
	}
	stage(StageLink, start)

	start = time.Now()
	pl, err := p.Planner.Plan(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("plan %q: %w", question, err)
	}
	tr.Plan = pl
	strat := pl.Strategy
	if p.Strategy != nil {
		strat = *p.Strategy
	}
	tr.Strategy = strat.String()
	stage(StagePlan, start)

	var guide *tracing.Guidance
	if p.Guider != nil {
		start = time.Now()
		if guide, err = p.Guider.Guide(ctx, in, pl); err != nil {
			return nil, fmt.Errorf("guidance for %q: %w", question, err)
		}
		for e := range guide.Entities {
			tr.Guidance = append(tr.Guidance, p.Graph.EntityName(e))
		}
		stage(StageGuide, start)
	}

	start = time.Now()
	req := tracing.Request{Graphs: pl.Graphs(), Strategy: strat, Guidance: guide, Ranked: true}
	for _, l := range tr.Links {
		if id, ok := p.Graph.Entity(l.Entity); ok {
			req.Mentions = append(req.Mentions, l.Mention)
			req.Anchors = append(req.Anchors, id)
		}
	}
	res, err := p.Tracer.Trace(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("trace %q: %w", question, err)
	}
	tr.Result, tr.Chains = res, res.Chains
	stage(StageTrace, start)

	start = time.Now()
	if tr.Answers, err = p.Generator.Generate(ctx, question, p.Graph, res); err != nil {
		return nil, fmt.Errorf("generate an answer to %q: %w", question, err)
	}
	stage(StageGenerate, start)
	return tr, nil
}

// resolve maps a user-given entity to a KG name: exact, then normalised.
func (p *Pipeline) resolve(name string) (string, error) {
	if _, ok := p.Graph.Entity(name); ok {
		return name, nil
	}
	if ids := p.Graph.EntitiesByNorm(name); len(ids) > 0 {
		return p.Graph.EntityName(ids[0]), nil
	}
	return "", fmt.Errorf("entity %q is not in the KG (names match exactly, or ignoring case and punctuation)", name)
}

// New assembles a pipeline over g with structural generation and no
// guidance: the linker and tracer are built from g, ents and enc. Callers
// set Guider, Generator and Strategy on the result to change them.
func New(g *kg.Graph, enc models.Encoder, ents *kgvec.Entities, planner projection.Planner, cfg tracing.Config) (*Pipeline, error) {
	tr, err := tracing.New(g, enc, ents, cfg)
	if err != nil {
		return nil, fmt.Errorf("prepare tracing: %w", err)
	}
	return &Pipeline{Graph: g, Linker: linking.New(g, ents), Planner: planner, Tracer: tr, Generator: Structural{}}, nil
}
