package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
	// Peers are the peer strategies' parameters.
	Peers PeerSettings
	// Chat opens, once, the LLM client the settings name, for strategies
	// that score with an LLM; it fails when no model is configured. The
	// pipeline closes it and counts its usage (Pipeline.Usage).
	Chat func() (*llm.Client, error)
}

// Factory builds a retrieval strategy.
type Factory func(ctx context.Context, env Env) (Retriever, error)

// Registry finds retrieval strategies by name. It is a value, built in one
// place (DefaultRetrievers) and passed where it is needed: no init-time
// registration, no global map.
type Registry struct {
	names []string
	docs  map[string]string
	make  map[string]Factory
}

// DefaultStrategy names the retrieval strategy used when none is chosen.
const DefaultStrategy = "stem"

// DefaultRetrievers returns the registry of the built-in strategies.
func DefaultRetrievers() *Registry {
	r := &Registry{}
	// Registering a fixed, distinct name cannot fail.
	_ = r.Register(DefaultStrategy, "STEM: guidance graph (with --gnn) and structure tracing of the planner's schema graphs",
		func(ctx context.Context, env Env) (Retriever, error) {
			return NewTracing(ctx, env.Graph, env.Entities, env.Encoder, env.Tracing, env.Guider)
		})
	return r
}

// Register adds a strategy. Names are lowercase words; a name already
// registered is an error.
func (r *Registry) Register(name, doc string, f Factory) error {
	if name == "" || strings.ToLower(name) != name || strings.ContainsAny(name, " ,") {
		return fmt.Errorf("retrieval strategy name %q: want a lowercase word", name)
	}
	if f == nil {
		return fmt.Errorf("retrieval strategy %q: no constructor", name)
	}
	if _, ok := r.make[name]; ok {
		return fmt.Errorf("retrieval strategy %q is registered twice", name)
	}
	if r.make == nil {
		r.make, r.docs = map[string]Factory{}, map[string]string{}
	}
	r.names = append(r.names, name)
	r.make[name], r.docs[name] = f, doc
	return nil
}

// Names lists the registered strategies in registration order.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Doc returns the one-line description a strategy was registered with.
func (r *Registry) Doc(name string) string { return r.docs[name] }

// Check reports whether name is registered, with an error that lists the
// strategies and suggests the nearest name.
func (r *Registry) Check(name string) error {
	if _, ok := r.make[name]; ok {
		return nil
	}
	msg := fmt.Sprintf("unknown retrieval strategy %q (have %s)", name, strings.Join(r.names, ", "))
	if near := settings.Nearest(name, r.names); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return fmt.Errorf("%s", msg)
}

// New builds the strategy registered as name.
func (r *Registry) New(ctx context.Context, name string, env Env) (Retriever, error) {
	if err := r.Check(name); err != nil {
		return nil, err
	}
	ret, err := r.make[name](ctx, env)
	if err != nil {
		return nil, fmt.Errorf("retrieval strategy %s: %w", name, err)
	}
	return ret, nil
}
