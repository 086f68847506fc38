package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/compose"
	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/projection/oracle"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/projection/zeroshot"
)

// PlannerEnv is what a planner is built from: the settings (--beam,
// --planner-model, ...), what the pipeline has loaded, where questions'
// graphs come from, and the chat client, opened once on first use.
type PlannerEnv struct {
	Settings Settings
	Assets   Assets
	Source   Source
	Chat     func() (*llm.Client, error)
	// Learnt, when not nil, is called with the trained planner model
	// --planner-model loads (pattern, both), so that plan selection can
	// weigh readings against its training (selection.PathFit).
	Learnt func(*pattern.Model)
}

// PlannerFactory builds a planner from env.
type PlannerFactory func(ctx context.Context, env PlannerEnv) (projection.Planner, error)

// Planners finds planners by name, as Registry finds retrieval strategies
// and kg.Registry KG backends: a value built in one place
// (DefaultPlanners), naming each planner with its --planner help and
// what it needs among the settings; no global map.
type Planners struct {
	named[plannerEntry]
}

// plannerEntry is one registered planner.
type plannerEntry struct {
	doc   string                 // its words in --planner's help; "" for none
	needs func(s Settings) error // refuses settings it cannot work with; nil for none
	open  PlannerFactory
}

// DefaultPlanners returns the built-in planners, in the order --planner's
// help lists them.
func DefaultPlanners() *Planners {
	r := &Planners{}
	// Registering fixed, distinct names cannot fail.
	_ = r.Register("auto", "pattern with --planner-model, else compose", nil, r.openAuto)
	_ = r.Register("oracle", "the gold path; eval only", nil, func(_ context.Context, env PlannerEnv) (projection.Planner, error) {
		return oracle.Planner{Beam: env.Settings.Beam.Value()}, nil
	})
	_ = r.Register("pattern", "", needsModel, openPattern)
	_ = r.Register("compose", "zero-shot, composes relation words", nil, func(ctx context.Context, env PlannerEnv) (projection.Planner, error) {
		return openCompose(ctx, env, compose.Config{Beam: env.Settings.Beam.Value()})
	})
	_ = r.Register("schema", "zero-shot, whole-question similarity", nil, openSchema)
	_ = r.Register("llm", "", needsChat, openLLM)
	_ = r.Register("both", "pattern with --planner-model and compose, their beams merged for --selector to choose among", needsModelForBoth, openBoth)
	return r
}

// Register adds a planner: its name, its words in --planner's help, a
// check of the settings it needs (nil for none) and its constructor.
// Names are lowercase words; a name already registered is an error.
func (r *Planners) Register(name, doc string, needs func(Settings) error, open PlannerFactory) error {
	if open == nil {
		return fmt.Errorf("planner %q: no constructor", name)
	}
	return r.add("planner", name, plannerEntry{doc: doc, needs: needs, open: open})
}

// Names lists the planners in registration order.
func (r *Planners) Names() []string { return slices.Clone(r.names) }

// Help is --planner's help: every planner, with its words.
func (r *Planners) Help() string {
	items := make([]string, len(r.names))
	for i, n := range r.names {
		items[i] = n
		if d := r.entries[n].doc; d != "" {
			items[i] += " (" + d + ")"
		}
	}
	last := len(items) - 1
	if last > 0 {
		items[last-1] += " or " + items[last]
		items = items[:last]
	}
	return "where schema graphs come from: " + strings.Join(items, ", ")
}

// Check reports whether name is registered, with an error that lists the
// planners and suggests the nearest name.
func (r *Planners) Check(name string) error { return r.check("planner", name) }

// checkSettings reports settings the planner s names cannot work with.
func (r *Planners) checkSettings(s Settings) error {
	if err := r.Check(string(s.Planner)); err != nil {
		return fmt.Errorf("--planner: %w", err)
	}
	if needs := r.entries[string(s.Planner)].needs; needs != nil {
		return needs(s)
	}
	return nil
}

// Open builds the planner env.Settings names.
func (r *Planners) Open(ctx context.Context, env PlannerEnv) (projection.Planner, error) {
	name := string(env.Settings.Planner)
	if err := r.Check(name); err != nil {
		return nil, fmt.Errorf("--planner: %w", err)
	}
	return r.entries[name].open(ctx, env)
}

// openAuto opens the planner auto resolves to (resolvePlanner): the
// assets' own planner (the demo's) as it is, any other by its name.
func (r *Planners) openAuto(ctx context.Context, env PlannerEnv) (projection.Planner, error) {
	name := resolvePlanner(env.Settings, env.Assets)
	if name == "demo" {
		// The demo's pattern planner was learnt before the beam was
		// resolved (a selector's recorded beam): it plans at this one.
		if pp, ok := env.Assets.AutoPlanner.(*pattern.Planner); ok {
			return pp.WithBeam(env.Settings.Beam.Value()), nil
		}
		return env.Assets.AutoPlanner, nil
	}
	env.Settings.Planner = PlannerName(name)
	return r.Open(ctx, env)
}

func needsModel(s Settings) error {
	if s.PlannerModel == "" {
		return fmt.Errorf("--planner pattern needs --planner-model FILE (train one with 'stem train planner')")
	}
	return nil
}

func needsModelForBoth(s Settings) error {
	if s.PlannerModel == "" {
		return fmt.Errorf("--planner both needs --planner-model FILE (train one with 'stem train planner'): it plans with it and with compose")
	}
	return nil
}

func needsChat(s Settings) error {
	if s.Chat.Model == "" {
		return fmt.Errorf("--planner llm and --generator llm need --llm-model NAME (and --llm-base-url of an OpenAI-compatible server)")
	}
	return nil
}

// openPattern loads --planner-model: a pattern model, or one trained from
// its KG alone, which plans beside the zero-shot planner its Prior names.
func openPattern(ctx context.Context, env PlannerEnv) (projection.Planner, error) {
	s, a := env.Settings, env.Assets
	m, err := pattern.Load(s.PlannerModel, a.Encoder)
	if err != nil {
		return nil, err
	}
	if env.Learnt != nil {
		env.Learnt(m)
	}
	if pr := m.Prior(); pr.Planner != "" {
		return openWithPrior(ctx, env, m, pr)
	}
	return pattern.New(m, a.Encoder, pattern.Config{Beam: s.Beam.Value(), Graph: a.Graph, Options: pattern.Options{Variants: s.Variants}})
}

// openBoth builds the planner that plans each question with the trained
// planner (--planner-model) and the zero-shot compose planner and merges
// their beams (projection.Merge): a trained planner knows only the
// relation paths its training showed, compose reads any the question's
// words name, and plan selection (--selector) weighs the readings of
// both by their evidence.
func openBoth(ctx context.Context, env PlannerEnv) (projection.Planner, error) {
	trained, err := openPattern(ctx, env)
	if err != nil {
		return nil, err
	}
	zero, err := openCompose(ctx, env, compose.Config{Beam: env.Settings.Beam.Value()})
	if err != nil {
		return nil, err
	}
	return mergedPlanner{first: trained, second: zero}, nil
}

// mergedPlanner plans with two planners at once and merges their beams
// (projection.Merge). Where one of them fails, the other's beam is the
// answer, with a note; where both fail, the first's error.
type mergedPlanner struct {
	first, second projection.Planner
}

// Plan implements projection.Planner.
func (m mergedPlanner) Plan(ctx context.Context, in projection.Input) (projection.Projection, error) {
	type planned struct {
		p   projection.Projection
		err error
	}
	done := make(chan planned, 1)
	go func() {
		p, err := m.second.Plan(ctx, in)
		done <- planned{p, err}
	}()
	p1, err1 := m.first.Plan(ctx, in)
	r := <-done
	switch {
	case err1 != nil && r.err != nil:
		return projection.Projection{}, err1
	case err1 != nil:
		p1 = projection.Projection{Notes: []string{"trained planner failed: " + err1.Error()}}
	case r.err != nil:
		r.p = projection.Projection{Notes: []string{"zero-shot planner failed: " + r.err.Error()}}
	}
	return projection.Merge(p1, r.p), nil
}

// Reach implements Reacher: the deeper of the two planners' reaches.
func (m mergedPlanner) Reach() int {
	reach := 0
	for _, p := range []projection.Planner{m.first, m.second} {
		if r, ok := p.(Reacher); ok {
			reach = max(reach, r.Reach())
		}
	}
	return reach
}

// openSchema builds the zero-shot schema planner. It encodes every
// relation of its KG up front: over an endpoint, or where each question
// brings its graph, that is the question's graph.
func openSchema(ctx context.Context, env PlannerEnv) (projection.Planner, error) {
	cfg := zeroshot.Config{Beam: env.Settings.Beam.Value()}
	enc := env.Assets.Encoder
	return overGraphs(ctx, env.Source, func(ctx context.Context, g kg.Reader) (projection.Planner, error) {
		return zeroshot.New(ctx, g, enc, cfg)
	})
}

// overGraphs builds a planner that prepares per KG with open: over the
// shared KG, or over each question's graph where the source gives each
// question its own (a remote KG's neighbourhood, or the question's graph).
func overGraphs(ctx context.Context, src Source, open func(ctx context.Context, g kg.Reader) (projection.Planner, error)) (projection.Planner, error) {
	if src.PerQuestion() {
		return questionPlanner{reach: zeroshot.DefaultMaxHops, open: open}, nil
	}
	return open(ctx, src.Graph())
}

// openLLM builds the llm planner, grounded in the shared KG's relations
// or, where each question brings its graph, in that graph's.
func openLLM(ctx context.Context, env PlannerEnv) (projection.Planner, error) {
	c, err := env.Chat()
	if err != nil {
		return nil, err
	}
	a := env.Assets
	cfg := llmplan.Config{Chat: c, Samples: env.Settings.Beam.Value(), Encoder: a.Encoder, Examples: a.Examples}
	cfg.Relations = relationNames(a.Graph)
	pl, err := llmplan.New(ctx, cfg)
	if err != nil || a.Graph != nil {
		return pl, err
	}
	return questionPlanner{base: pl, open: func(ctx context.Context, g kg.Reader) (projection.Planner, error) {
		return pl.WithRelations(ctx, relationNames(g))
	}}, nil
}

// openCompose builds the compose planner over the shared KG, or over each
// question's graph where the KG is remote or each question brings one.
func openCompose(ctx context.Context, env PlannerEnv, cfg compose.Config) (projection.Planner, error) {
	cfg.Lexicon = env.Assets.Lexicon
	enc := env.Assets.Encoder
	return overGraphs(ctx, env.Source, func(ctx context.Context, g kg.Reader) (projection.Planner, error) {
		return compose.New(ctx, g, enc, cfg)
	})
}

// openWithPrior builds the planner of a pattern model trained from its KG
// alone (stem train planner --from-kg): the zero-shot planner its Prior
// names, with the model's path scores added to its own.
func openWithPrior(ctx context.Context, env PlannerEnv, m *pattern.Model, pr pattern.Prior) (projection.Planner, error) {
	s := env.Settings
	if pr.Planner != compose.Name {
		return nil, fmt.Errorf("planner model %s: it plans beside planner %q, which this build does not know (it knows %q)", s.PlannerModel, pr.Planner, compose.Name)
	}
	learnt, err := pattern.New(m, env.Assets.Encoder, pattern.Config{Beam: s.Beam.Value(), Options: pattern.Options{Variants: s.Variants}})
	if err != nil {
		return nil, err
	}
	return openCompose(ctx, env, compose.Config{Beam: s.Beam.Value(), Learnt: learnt, LearntWeight: pr.Weight})
}

// relationNames lists g's relations (none for a nil g).
func relationNames(g kg.Reader) []string {
	if g == nil {
		return nil
	}
	out := make([]string, g.NumRelations())
	for r := range out {
		out[r] = g.RelationName(int32(r))
	}
	return out
}

// questionPlanner builds a planner over each question's own graph, for
// planners that prepare per KG and run over a remote KG or over
// per-question graphs.
type questionPlanner struct {
	reach int                // hops of the graph the planner explores by itself
	base  projection.Planner // plans a question with no graph; nil: an error
	open  func(ctx context.Context, g kg.Reader) (projection.Planner, error)
}

// Plan implements projection.Planner.
func (q questionPlanner) Plan(ctx context.Context, in projection.Input) (projection.Projection, error) {
	if in.Graph == nil {
		if q.base != nil {
			return q.base.Plan(ctx, in)
		}
		return projection.Projection{}, errors.New("plan: this planner needs the question's graph")
	}
	p, err := q.open(ctx, in.Graph)
	if err != nil {
		return projection.Projection{}, err
	}
	return p.Plan(ctx, in)
}

// Reach implements Reacher.
func (q questionPlanner) Reach() int { return q.reach }

// Reacher is an optional projection.Planner capability: a planner that
// explores the question's graph by itself says how many hops of it it
// needs, and a remote KG's neighbourhood is fetched that deep before it
// plans. A Retriever that plans for itself (PlanUser) may say the same
// of its own walk.
type Reacher interface {
	Reach() int
}
