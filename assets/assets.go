// Package assets opens, once per command, what a pipeline is built over:
// the KG (by the backends registry, kg/backends: a file read into memory or
// a remote endpoint), the encoder and the lexicon (models/catalog), the
// KG's entity index (kgvec: in the cache directory, in a Qdrant server, or
// deferred on a KG of millions of entities), the Triple-GNN opener and the
// retrieval strategies (peers.Retrievers). stem ask, eval, compare, bench
// serve, serve and search open their environment with Open, and a
// benchmark's questions with LoadData, so that a question is answered the
// same way by every command.
//
// It sits above the pipeline and the peers, beside cmd/stem: it may import
// plan, peers, eval/planeval (the llm planner's examples) and the KG
// backends, and nothing below it imports it.
package assets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/peers"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/tripgnn"
)

// Config says what Open opens.
type Config struct {
	// KG names the KG, a file or a URL (kg.Registry.Open); "" means none
	// (every question brings its own graph), or the embedded demo KG with
	// Demo.
	KG string
	// Graph, when not nil, is the KG KG names, opened already (LoadData
	// opened it with the questions).
	Graph kg.Reader
	// Demo makes an empty KG the embedded demo KG, with the demo's
	// pattern planner (of Beam candidates) as --planner auto.
	Demo bool
	Beam int
	// Open says how a KG file is read (its format) and the backends'
	// settings.
	Open    kg.OpenOptions
	Encoder catalog.EncoderSettings
	// Log receives the models' and the index's messages.
	Log io.Writer
}

// Env is what Open opened: the pipeline's assets and what the commands
// report from.
type Env struct {
	// Graph is the KG (nil when every question brings its own).
	Graph kg.Reader
	// Plan are the pipeline's assets (plan.Open builds pipelines over
	// them).
	Plan plan.Assets
	// Search finds entities by free text: the entity index in memory,
	// names and the text index at an endpoint; nil without a KG.
	Search  func(ctx context.Context, query string, k int) ([]kgvec.Hit, error)
	closers []func() error
}

// Err reports a failed lookup of a KG whose methods cannot fail (a remote
// one, kg.Failer): nil in memory.
func (e *Env) Err() error { return kg.Err(e.Graph) }

// Close releases what Open opened: the entity index and the encoder.
func (e *Env) Close() error {
	var errs []error
	for i := len(e.closers) - 1; i >= 0; i-- {
		errs = append(errs, e.closers[i]())
	}
	e.closers = nil
	return errors.Join(errs...)
}

// OpenKG opens the KG spec names with the built-in backends (kg/backends).
func OpenKG(ctx context.Context, spec string, o kg.OpenOptions) (kg.Reader, error) {
	return backends.Default().Open(ctx, spec, o)
}

// Open opens the KG cfg names (unless given), the encoder, the lexicon and
// the KG's entity index. Over a remote KG nothing of the KG is loaded up
// front: each question's graph is fetched around its entities, and
// entities are found by name and the endpoint's text index.
func Open(ctx context.Context, cfg Config) (*Env, error) {
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	g := cfg.Graph
	if g == nil {
		var err error
		switch {
		case cfg.KG != "":
			g, err = OpenKG(ctx, cfg.KG, cfg.Open)
		case cfg.Demo:
			g, err = kg.ReadTSV(demo.KG(), demo.KGName)
		}
		if err != nil {
			return nil, err
		}
	}
	enc, closeEnc, err := catalog.OpenEncoder(ctx, cfg.Encoder, log)
	if err != nil {
		return nil, err
	}
	e := &Env{Graph: g, closers: []func() error{closeEnc}}
	lex, err := catalog.OpenLexicon(ctx, cfg.Encoder, log)
	if err != nil {
		e.Close()
		return nil, err
	}
	e.Plan = plan.Assets{Graph: g, Encoder: enc, Lexicon: lex, OpenGuider: GuiderOpener(enc), Retrievers: peers.Retrievers()}
	mem, inMemory := g.(*kg.Graph)
	switch {
	case g == nil:
	case !inMemory:
		e.Search = func(ctx context.Context, q string, k int) ([]kgvec.Hit, error) {
			hits, err := linking.Search(ctx, g, enc, q, k)
			out := make([]kgvec.Hit, len(hits))
			for i, h := range hits {
				out[i] = kgvec.Hit{Name: h.Entity, Score: h.Score}
			}
			return out, err
		}
	case cfg.KG == "" && cfg.Demo:
		if e.Plan.Entities, err = kgvec.Build(ctx, mem, enc, nil); err == nil {
			e.Plan.AutoPlanner, err = DemoPlanner(ctx, mem, enc, cfg.Beam)
		}
	default:
		var closeEnts func() error
		if e.Plan.Entities, closeEnts, err = EntityIndex(ctx, mem, enc, Config{KG: cfg.KG, Encoder: cfg.Encoder, Log: log}); err == nil {
			e.closers = append(e.closers, closeEnts)
		}
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	if e.Plan.Entities != nil {
		e.Search = e.Plan.Entities.Nearest
	}
	return e, nil
}

// Assets returns the pipeline's assets for s: Plan, with the llm planner's
// few-shot examples when s asks for them.
func (e *Env) Assets(ctx context.Context, s plan.Settings) (plan.Assets, error) {
	a := e.Plan
	if s.Planner == "llm" && s.Examples != "" {
		var err error
		if a.Examples, err = planeval.LLMExamples(ctx, s.ExampleSettings); err != nil {
			return plan.Assets{}, err
		}
	}
	return a, nil
}

// Pipeline builds the pipeline s describes over e (plan.Open). close
// releases what it opened; it is never nil.
func (e *Env) Pipeline(ctx context.Context, s plan.Settings) (*plan.Pipeline, func() error, error) {
	a, err := e.Assets(ctx, s)
	if err != nil {
		return nil, func() error { return nil }, err
	}
	return plan.Open(ctx, s, a)
}

// EntityIndex returns the entity index of g (loaded from cfg.KG) under
// encoder enc: in the Qdrant server cfg.Encoder names, or from the cache
// directory, built there the first time. On a KG of millions of entities
// it is deferred to the first search that needs it. Messages go to
// cfg.Log (not nil); cfg's other fields are not read. close releases it;
// it is never nil.
func EntityIndex(ctx context.Context, g *kg.Graph, enc models.Encoder, cfg Config) (ents *kgvec.Entities, close func() error, err error) {
	kgPath, encS, log := cfg.KG, cfg.Encoder, cfg.Log
	var closers []func() error
	close = func() error {
		var first error
		for _, c := range closers {
			if err := c(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	open := func(ctx context.Context) (*kgvec.Entities, error) {
		if encS.VectorStore != "" {
			e, c, err := kgvec.OpenQdrant(ctx, g, kgPath, enc, encS.VectorStore, log)
			if err == nil {
				closers = append(closers, c)
			}
			return e, err
		}
		dir, err := wordvec.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		return kgvec.LoadOrBuildWith(ctx, g, kgPath, dir, enc, kgvec.Options{Kind: kgvec.Kind(encS.EntityIndex)}, log)
	}
	if n := g.NumEntities(); n >= kgvec.DeferThreshold {
		fmt.Fprintf(log, "entity index: deferred: the %d entities are encoded only if a mention matches no name exactly\n", n)
		return kgvec.Deferred(g, enc, open), close, nil
	}
	ents, err = open(ctx)
	return ents, close, err
}

// DemoPlanner learns the pattern planner from the embedded demo questions:
// training is encoding 37 questions, a few milliseconds.
func DemoPlanner(ctx context.Context, g *kg.Graph, enc models.Encoder, beam int) (*pattern.Planner, error) {
	qs, err := benchmark.ReadPathQuestion(ctx, bytes.NewReader(demo.Questions()), demo.QuestionsName)
	if err != nil {
		return nil, err
	}
	return pattern.FromExamples(ctx, g, enc, planeval.Examples(qs), beam)
}

// GuiderOpener returns the function that loads a Triple-GNN model trained
// with enc and guides tracing with it, over the shared KG or each
// question's own graph.
func GuiderOpener(enc models.Encoder) func(string) (plan.Guider, error) {
	return func(path string) (plan.Guider, error) {
		m, err := tripgnn.Load(path, enc.Name(), enc.Dim())
		if err != nil {
			return nil, err
		}
		return plan.NewGNNGuider(m, enc, tripgnn.SubgraphOptions{})
	}
}
