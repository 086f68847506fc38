package plan

import (
	"context"
	"fmt"
	"slices"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/settings"
	"github.com/stem-kgqa/stem/tracing"
)

// Env is what a retrieval strategy is built from: everything the pipeline
// has loaded once and shares between questions.
type Env struct {
	// Graph is the shared KG (nil when every question brings its own).
	Graph kg.Reader
	// Entities indexes Graph's entities for similarity search; may be nil.
	Entities *kgvec.Entities
	Encoder  models.Encoder
	// Tracing holds the structure-tracing parameters (θ, top-N, biases).
	Tracing tracing.Config
	// Guider builds guidance graphs; nil means none.
	Guider Guider
	// PlanWeight is how much a strategy that plans for itself (a peer
	// system) may lean on the pipeline's planner: 0 (the default) means
	// not at all, so the strategy reads neither Request.Projection nor
	// Request.Strategy; above 0 is the labelled planner-assisted mode.
	// STEM's own strategy always follows the planner and ignores it.
	PlanWeight float32
	// Chat opens, once, the LLM client the settings name, for strategies
	// that score with an LLM; it fails when no model is configured. The
	// pipeline closes it and counts its usage (Pipeline.Usage).
	Chat func() (*llm.Client, error)
}

// Factory builds a retrieval strategy that has no settings of its own.
type Factory func(ctx context.Context, env Env) (Retriever, error)

// Registry finds retrieval strategies by name. It is a value, built in one
// place (DefaultRetrievers, and the peers' registration list on top of it)
// and passed where it is needed: no init-time registration, no global map.
// A strategy registered with RegisterWith brings its own typed settings
// struct, which NewSettings collects into Settings.Retrievers, so its flags
// are the strategy's own and the pipeline names none of them.
type Registry struct {
	named[entry]
}

// entry is one registered strategy.
type entry struct {
	doc string
	// settings returns a pointer to a new settings struct holding the
	// strategy's defaults; nil for a strategy without settings.
	settings func() any
	// make builds the strategy from env and its settings (the pointer
	// settings returned, or nil).
	make func(ctx context.Context, env Env, settings any) (Retriever, error)
}

// DefaultStrategy names the retrieval strategy used when none is chosen.
const DefaultStrategy = "stem"

// DefaultRetrievers returns the registry of the built-in strategies.
func DefaultRetrievers() *Registry {
	r := &Registry{}
	// Registering a fixed, distinct name cannot fail.
	_ = r.Register(DefaultStrategy, "STEM: guidance graph (with --gnn) and structure tracing of the planner's schema graphs",
		func(ctx context.Context, env Env) (Retriever, error) {
			return NewTracing(ctx, env)
		})
	return r
}

// Register adds a strategy without settings of its own. Names are
// lowercase words; a name already registered is an error.
func (r *Registry) Register(name, doc string, f Factory) error {
	if f == nil {
		return fmt.Errorf("retrieval strategy %q: no constructor", name)
	}
	return r.add(name, entry{doc: doc, make: func(ctx context.Context, env Env, _ any) (Retriever, error) { return f(ctx, env) }})
}

// RegisterWith adds a strategy with a settings struct S of its own: a
// struct of tagged fields (package settings), whose flags, --config keys
// and stem compare keys then exist wherever the pipeline's settings are
// read. defaults returns S as the strategy's paper sets it; f builds the
// strategy from the values the user set. A value of S that implements
// SettingsChecker is checked with the pipeline's settings before any work
// starts.
func RegisterWith[S any](r *Registry, name, doc string, defaults func() S, f func(ctx context.Context, env Env, s S) (Retriever, error)) error {
	if f == nil || defaults == nil {
		return fmt.Errorf("retrieval strategy %q: no constructor or no defaults", name)
	}
	newPtr, value := settings.Typed(defaults)
	return r.add(name, entry{doc: doc, settings: newPtr,
		make: func(ctx context.Context, env Env, v any) (Retriever, error) { return f(ctx, env, value(v)) }})
}

func (r *Registry) add(name string, e entry) error { return r.named.add("retrieval strategy", name, e) }

// SettingsChecker is implemented by a strategy's settings struct that can
// tell, before any work starts, that it cannot work: an LLM mode without
// an LLM model (llm says whether one is configured), or values that
// contradict each other.
type SettingsChecker interface {
	Check(llm bool) error
}

// RetrieverSettings holds the registered strategies' own settings structs,
// one per strategy that has any, in registration order (Registry.
// NewSettings). Its zero value holds none: every strategy then runs with
// its defaults. Settings.Retrievers is one, and package settings walks it,
// so each strategy's fields are flags and keys like the pipeline's own.
// Copies share the structs: Clone before setting fields of a copy.
type RetrieverSettings = settings.Plugins

// NewSettings returns the defaults of every strategy that has settings.
func (r *Registry) NewSettings() RetrieverSettings {
	return settings.NewPlugins(r.names, func(n string) func() any { return r.entries[n].settings })
}

// Names lists the registered strategies in registration order.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Doc returns the one-line description a strategy was registered with.
func (r *Registry) Doc(name string) string { return r.entries[name].doc }

// Check reports whether name is registered, with an error that lists the
// strategies and suggests the nearest name.
func (r *Registry) Check(name string) error { return r.check("retrieval strategy", name) }

// settingsOf returns name's settings from s, or its defaults when s holds
// none; nil for a strategy without settings.
func (r *Registry) settingsOf(name string, s RetrieverSettings) any {
	if v := s.Of(name); v != nil {
		return v
	}
	if e := r.entries[name]; e.settings != nil {
		return e.settings()
	}
	return nil
}

// New builds the strategy registered as name with its default settings.
func (r *Registry) New(ctx context.Context, name string, env Env) (Retriever, error) {
	return r.NewWith(ctx, name, env, RetrieverSettings{})
}

// NewWith builds the strategy registered as name with its settings from
// s (its defaults when s holds none).
func (r *Registry) NewWith(ctx context.Context, name string, env Env, s RetrieverSettings) (Retriever, error) {
	if err := r.Check(name); err != nil {
		return nil, err
	}
	ret, err := r.entries[name].make(ctx, env, r.settingsOf(name, s))
	if err != nil {
		return nil, fmt.Errorf("retrieval strategy %s: %w", name, err)
	}
	return ret, nil
}
