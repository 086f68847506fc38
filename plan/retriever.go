package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// Retriever is a retrieval strategy: it finds the KG evidence for a
// planned question. STEM's structure tracing is one; a peer system's
// retrieval (SimGRAG's subgraph matching, GCR's constrained decoding) is
// another, registered by name in a Registry. Implementations must be safe
// for concurrent use and must back every answer they return with returned
// triples (Result.Unbacked counts the ones that are not).
type Retriever interface {
	Retrieve(ctx context.Context, req Request) (*Evidence, error)
}

// Request is what a Retriever gets for one question.
type Request struct {
	Question string
	// Graph is the KG to search: the pipeline's shared KG, or the
	// question's own when Own is set.
	Graph kg.Reader
	Own   bool
	// Input is what the planner was given (entities and their mentions).
	Input projection.Input
	// Anchors are the question entities' ids in Graph, Mentions[i] the
	// text Anchors[i] is matched to schema graph nodes by. With no
	// anchors, Mentions (or, when empty, the schema graphs' own
	// mentions) are anchored by similarity.
	Anchors  []int32
	Mentions []string
	// Projection is the planner's candidate schema graphs; a strategy
	// that plans for itself may ignore it.
	Projection projection.Projection
	// Strategy is Precision or Breadth, after the pipeline's override.
	Strategy schema.Strategy
	// Strategies are the candidates' own strategies, parallel to
	// Projection.Candidates, when the planner chose one per candidate
	// and the pipeline does not override it; nil means Strategy for all.
	Strategies []schema.Strategy
}

// PlanUser is an optional Retriever capability. A strategy that plans for
// itself (a peer system standing alone) reports UsesPlan false, and the
// pipeline runs no planner for it: its Request has an empty Projection and
// the Strategy is the override (Precision without one), neither of which
// it may read. A strategy without the method reads the plan, as STEM's
// tracing does.
type PlanUser interface {
	UsesPlan() bool
}

// Moder is an optional Retriever capability: a short label of how the
// strategy runs (for a peer system, standing alone or planner-assisted,
// and what scores it), which stem compare prints beside each row.
type Moder interface {
	Mode() string
}

// ModeOf returns r's mode label, "" when it has none.
func ModeOf(r Retriever) string {
	if m, ok := r.(Moder); ok {
		return m.Mode()
	}
	return ""
}

// usesPlan reports whether r reads the planner's output.
func usesPlan(r Retriever) bool {
	if u, ok := r.(PlanUser); ok {
		return u.UsesPlan()
	}
	return true
}

// Evidence is what a Retriever found. Trace uses tracing's result type as
// the common evidence format: anchors, matched KG triples with their
// scores, the answers bound to the answer slot, reasoning chains and the
// faithfulness audit. A strategy without schema graphs leaves the
// schema-graph fields of its matches zero.
type Evidence struct {
	Trace *tracing.Result
	// Guidance names the guidance graph's entities, when one was used.
	Guidance []string
	// Timings holds the strategy's own stages (StageGuide, StageTrace).
	Timings map[string]time.Duration
	// Scores are the guidance model's probabilities of the question's
	// subgraph entities, nil without guidance; plan selection reads them.
	Scores map[int32]float32
}

// Guider builds the guidance graph for a question (the Triple-GNN's top-K
// entities and the KG edges among them) in g, the KG the question is
// answered over: the shared KG, or the question's own graph. It is
// optional: without one, tracing runs without the entity and triple
// biases.
type Guider interface {
	Guide(ctx context.Context, g kg.Reader, in projection.Input, p projection.Projection) (*tracing.Guidance, error)
}

// Tracing is STEM's retrieval strategy (paper sections 3.3-3.5): the
// guidance graph, when a Guider is set, then structure tracing of the
// candidate schema graphs. Questions on the shared KG reuse one Tracer
// (entity and relation vectors are computed once); a question with its own
// KG gets a Tracer built for that graph, and its guidance graph is chosen
// in that graph (the model is loaded once; a WebQSP question graph of a
// few dozen triples costs one small forward pass).
type Tracing struct {
	enc    models.Encoder
	cfg    tracing.Config
	shared *tracing.Tracer
	graph  kg.Reader
	guider Guider
}

// NewTracing prepares tracing over env.Graph (nil when every question has
// its own graph) with env.Tracing's parameters. env.Entities indexes the
// graph's entities for similarity anchoring; nil builds the index with
// env.Encoder. env.Guider may be nil; the other fields are not read.
func NewTracing(ctx context.Context, env Env) (*Tracing, error) {
	g, ents, enc := env.Graph, env.Entities, env.Encoder
	r := &Tracing{enc: enc, cfg: env.Tracing, graph: g, guider: env.Guider}
	if g == nil {
		return r, nil
	}
	if ents == nil && g.NumEntities() >= kgvec.DeferThreshold {
		ents = kgvec.Deferred(g, enc, func(ctx context.Context) (*kgvec.Entities, error) { return kgvec.Build(ctx, g, enc, nil) })
	} else if ents == nil {
		var err error
		if ents, err = kgvec.Build(ctx, g, enc, nil); err != nil {
			return nil, err
		}
	}
	t, err := tracing.New(g, enc, ents, env.Tracing)
	if err != nil {
		return nil, fmt.Errorf("prepare tracing: %w", err)
	}
	r.shared = t
	return r, nil
}

// Mode implements Moder: STEM's strategy always traces the planner's
// schema graphs.
func (r *Tracing) Mode() string {
	if r.guider != nil {
		return "planner + guidance"
	}
	return "planner"
}

// Retrieve implements Retriever.
func (r *Tracing) Retrieve(ctx context.Context, req Request) (*Evidence, error) {
	ev := &Evidence{Timings: map[string]time.Duration{}}
	t := r.shared
	if req.Own {
		// The entity index is built when tracing first anchors a mention
		// by similarity, not before: a question whose entities are in its
		// graph by name (every given entity over an endpoint) never
		// searches it, and encoding every entity of a graph fetched
		// around a hub was a quarter of a WebQSP question's CPU.
		g := req.Graph
		ents := kgvec.Deferred(g, r.enc, func(ctx context.Context) (*kgvec.Entities, error) { return kgvec.Build(ctx, g, r.enc, nil) })
		var err error
		if t, err = tracing.New(g, r.enc, ents, r.cfg); err != nil {
			return nil, fmt.Errorf("prepare tracing: %w", err)
		}
	}
	if t == nil {
		return nil, fmt.Errorf("no KG: give a shared KG or a per-question graph")
	}
	treq := tracing.Request{Graphs: req.Projection.Graphs(), Strategy: req.Strategy, Strategies: req.Strategies, Ranked: !req.Projection.Unranked,
		Groups: req.Projection.Groups(), Anchors: req.Anchors, Mentions: req.Mentions, Alternatives: true}
	if r.guider != nil {
		start := time.Now()
		gu, err := r.guider.Guide(ctx, req.Graph, req.Input, req.Projection)
		if err != nil {
			return nil, fmt.Errorf("guidance: %w", err)
		}
		ev.Timings[StageGuide] = time.Since(start)
		treq.Guidance = gu
		if gu != nil {
			ev.Scores = gu.Scores
			for e := range gu.Entities {
				ev.Guidance = append(ev.Guidance, req.Graph.EntityName(e))
			}
		}
	}
	start := time.Now()
	res, err := t.Trace(ctx, treq)
	if err != nil {
		return nil, err
	}
	ev.Timings[StageTrace] = time.Since(start)
	ev.Trace = res
	return ev, nil
}
