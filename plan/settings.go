package plan

import (
	"context"
	"errors"
	"fmt"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/generation"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/selection"
	"github.com/stem-kgqa/stem/tracing"
)

// Settings is everything that decides how a question is answered: the
// planner, the strategy, the retrieval strategy and its parameters, the
// guidance model and the generator. `stem ask`, `stem eval` and `stem
// compare` read their flags, `--config` files and compare configurations
// into it (package settings); adding a setting is adding a tagged field.
type Settings struct {
	// Planner names the planner among DefaultPlanners, which also
	// writes its help.
	Planner      PlannerName `flag:"planner" category:"planner"`
	PlannerModel string      `flag:"planner-model" placeholder:"FILE" category:"planner" usage:"pattern: model FILE written by 'stem train planner'"`
	// Beam is the readings traced per question; auto (AutoBeam) is the
	// --selector's recorded beam, else projection.DefaultBeam.
	Beam BeamSize `flag:"beam" placeholder:"B" category:"planner" usage:"candidate schema graphs (readings) per question, B, from 1 to 64, or auto: the beam the --selector was trained at when its file records one (stem train selector), else 4"`
	// Variants overrides the pattern model's variant threshold
	// (pattern.Options.Variants).
	Variants float32 `flag:"variants" category:"planner" usage:"pattern: how often two paths must be gold together in training for a Breadth question to read them as one fact (0 = the model's, 0.1 unless trained otherwise; negative = never)"`
	ExampleSettings

	Strategy StrategyChoice `flag:"strategy" usage:"auto (the planner's choice), precision or breadth"`
	// Retriever names the retrieval strategy in the Registry.
	Retriever string `flag:"retriever" placeholder:"NAME" usage:"retrieval strategy, by NAME: stem (guidance + structure tracing), simgrag, gcr, dog or graphraft (the peer systems, see docs/rivals.md)"`
	// GNN is the Triple-GNN model file whose guidance graph biases
	// tracing; "" means none.
	GNN OptionalFile `flag:"gnn" placeholder:"MODEL" category:"guidance" usage:"Triple-GNN MODEL file (from 'stem train gnn') whose guidance graph biases tracing"`
	// Selector is the plan selector file (stem train selector); "" means
	// the default heuristic, which keeps the planner's choice and rates
	// it.
	Selector OptionalFile `flag:"selector" placeholder:"FILE" category:"selection" usage:"plan selector FILE (from 'stem train selector') that chooses among the planner's readings by their evidence and calibrates the confidence; default: keep the planner's choice, rated by a fixed heuristic"`
	// MinConfidence is the confidence below which the answer is "no
	// answer" (Pipeline.MinConfidence); auto by default, 0 in
	// EvalSettings.
	MinConfidence ConfidenceFloor `flag:"min-confidence" placeholder:"P" category:"selection" usage:"answer \"no answer\" when the answer's confidence is below P: auto (the default of ask and serve) is 0.5, so that a KG without the evidence a question needs abstains with no flag to learn; stem eval and compare default to 0 (score every answer; give P to measure abstention); 0 = always answer"`
	Generator     GeneratorName   `flag:"generator" usage:"structural (the entities bound to the answer slot) or llm (prompt P3 over the chains)"`

	// MaxQuestion is the longest question answered, in characters.
	MaxQuestion int `flag:"max-question" min:"1" usage:"longest question answered, in characters"`
	// NoConstraints is the ablation of the constraint check.
	NoConstraints bool `flag:"no-constraints" usage:"ablation: leave the time, gender and type constraints a question states unchecked (see package constraint; the peer systems never check them)"`
	// MaxHops caps the reach of a question's graph over a SPARQL KG.
	MaxHops int `flag:"kg-hops" min:"1" max:"6" category:"sparql" usage:"SPARQL KGs: the farthest hop from a question's entities its graph is fetched to (as far as its plans reach, up to this)"`

	// PlanWeight is the planner help a peer system gets (Env.PlanWeight):
	// 0, the default, runs each peer standing alone (its paper's
	// algorithm, an encoder standing in for its LLM); above 0 is the
	// labelled planner-assisted mode.
	PlanWeight float32 `flag:"peer-plan-weight" min:"0" max:"100" category:"peers" usage:"peer systems: weight of the planner's relation paths in a peer's score (0 = each peer stands alone, reading nothing of STEM's planner; above 0 = planner-assisted mode, labelled in stem compare)"`

	Tracing tracing.Config
	Chat    catalog.ChatSettings
	// Retrievers holds each registered strategy's own settings (the peer
	// systems' flags), filled by Registry.NewSettings; empty, every
	// strategy runs with its defaults.
	Retrievers RetrieverSettings
}

// Clone returns a copy of s that shares no settings struct with it, for a
// caller that changes the copy (each stem compare configuration).
func (s Settings) Clone() Settings {
	s.Retrievers = s.Retrievers.Clone()
	return s
}

// ExampleSettings name the training questions the llm planner takes
// few-shot examples from (stem eval, ask, serve and eval-plans).
type ExampleSettings struct {
	Examples       string `flag:"llm-examples" placeholder:"FILE" category:"llm" usage:"llm: FILE of training questions for few-shot examples (same formats as 'stem train planner')"`
	ExamplesFormat string `flag:"llm-examples-format" category:"llm" usage:"llm: format of --llm-examples: pq, metaqa, webqsp-paths"`
	ExamplesQType  string `flag:"llm-examples-qtype" category:"llm" usage:"llm: qtype file(s) for metaqa --llm-examples"`
}

// DefaultExampleSettings reads --llm-examples as PathQuestion files.
func DefaultExampleSettings() ExampleSettings { return ExampleSettings{ExamplesFormat: "pq"} }

// DefaultSettings returns the paper's parameters with the auto planner,
// structural answers and STEM's retrieval.
func DefaultSettings() Settings {
	return Settings{MinConfidence: AutoConfidence, Planner: "auto", Beam: AutoBeam, ExampleSettings: DefaultExampleSettings(), Strategy: "auto",
		Retriever: DefaultStrategy, Generator: "structural", MaxQuestion: DefaultMaxQuestion, MaxHops: DefaultMaxHops, Tracing: tracing.DefaultConfig(), Chat: catalog.DefaultChatSettings()}
}

// PlannerName names a planner of DefaultPlanners.
type PlannerName string

// UnmarshalText accepts the name of a planner of DefaultPlanners.
func (p *PlannerName) UnmarshalText(b []byte) error {
	if err := DefaultPlanners().Check(string(b)); err != nil {
		return err
	}
	*p = PlannerName(b)
	return nil
}

// Usage is --planner's help, from DefaultPlanners (settings.Usager).
func (PlannerName) Usage() string { return DefaultPlanners().Help() }

// StrategyChoice is auto (the planner's strategy) or a forced one.
type StrategyChoice string

// UnmarshalText accepts auto, precision or breadth.
func (s *StrategyChoice) UnmarshalText(b []byte) error {
	switch v := StrategyChoice(b); v {
	case "auto", "precision", "breadth":
		*s = v
		return nil
	}
	return errors.New("want auto, precision or breadth")
}

// Override returns the forced strategy, nil for auto.
func (s StrategyChoice) Override() *schema.Strategy {
	st, err := schema.ParseStrategy(string(s))
	if err != nil {
		return nil
	}
	return &st
}

// OptionalFile is a file setting that "off" or "none" clears, so that a
// compare configuration can switch off what the command line turned on
// (gnn=off).
type OptionalFile string

// UnmarshalText reads a path; "off" and "none" mean no file.
func (f *OptionalFile) UnmarshalText(b []byte) error {
	switch s := string(b); s {
	case "off", "none":
		*f = ""
	default:
		*f = OptionalFile(s)
	}
	return nil
}

// GeneratorName names a generator.
type GeneratorName string

// UnmarshalText accepts structural or llm.
func (g *GeneratorName) UnmarshalText(b []byte) error {
	switch v := GeneratorName(b); v {
	case "structural", "llm":
		*g = v
		return nil
	}
	return errors.New("want structural or llm")
}

// Check reports settings that cannot work together, before any work
// starts: a pattern planner without its model, excluded ablations, an
// unknown retrieval strategy, an LLM stage without a model.
func (s Settings) Check(reg *Registry) error {
	if err := DefaultPlanners().checkSettings(s); err != nil {
		return err
	}
	if s.Generator == "llm" {
		if err := needsChat(s); err != nil {
			return err
		}
	}
	if err := s.Tracing.Check(); err != nil {
		return err
	}
	if reg != nil {
		if err := reg.Check(s.Retriever); err != nil {
			return fmt.Errorf("--retriever: %w", err)
		}
		if c, ok := reg.settingsOf(s.Retriever, s.Retrievers).(SettingsChecker); ok {
			if err := c.Check(s.Chat.Model != ""); err != nil {
				return fmt.Errorf("--retriever %s: %w", s.Retriever, err)
			}
		}
	}
	return nil
}

// Assets is what a pipeline is built over, loaded once and shared by every
// configuration that runs over the same data.
type Assets struct {
	// Graph is the shared KG; nil when every question brings its own.
	Graph kg.Reader
	// Entities indexes Graph's entities; nil builds it when needed.
	Entities *kgvec.Entities
	Encoder  models.Encoder
	// Lexicon, when not nil, is read by the compose planner beside the
	// encoder (catalog.OpenLexicon).
	Lexicon models.Lexicon
	// Retrievers finds the retrieval strategy; nil means
	// DefaultRetrievers.
	Retrievers *Registry
	// Examples are the llm planner's few-shot examples.
	Examples []llmplan.Example
	// AutoPlanner, when not nil, is what --planner auto resolves to
	// without a --planner-model (the demo's planner on the demo KG);
	// otherwise auto means the zero-shot compose planner.
	AutoPlanner projection.Planner
	// OpenGuider loads a Triple-GNN model file into a Guider, which
	// guides each question over the KG it is answered over (Graph, or
	// the question's own).
	OpenGuider func(path string) (Guider, error)
}

// Open builds the pipeline s describes over a. close releases what it
// opened (a chat client); it is never nil.
func Open(ctx context.Context, s Settings, a Assets) (p *Pipeline, close func() error, err error) {
	var closers []func() error
	close = func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	reg := a.Retrievers
	if reg == nil {
		reg = DefaultRetrievers()
	}
	if err := s.Check(reg); err != nil {
		return nil, close, err
	}
	// One chat client serves the llm planner and the llm generator.
	var chat *llm.Client
	openChat := func() (*llm.Client, error) {
		if chat != nil {
			return chat, nil
		}
		c, err := catalog.OpenChat(s.Chat)
		if err != nil {
			return nil, err
		}
		chat = c
		closers = append(closers, c.Close)
		return c, nil
	}
	// The selector first: a beam the user left auto traces the beam it
	// was trained at (BeamSize.For), which the planner opens with.
	var sel *selection.Model
	if s.Selector != "" {
		if sel, err = selection.Load(string(s.Selector)); err != nil {
			return nil, close, err
		}
	}
	s.Beam = s.Beam.For(sel)
	src := SourceOf(a.Graph)
	var fit *selection.PathFit
	learnt := func(m *pattern.Model) { fit = selection.NewPathFit(m.EachExample) }
	planner, err := DefaultPlanners().Open(ctx, PlannerEnv{Settings: s, Assets: a, Source: src, Chat: openChat, Learnt: learnt})
	if err != nil {
		return nil, close, err
	}
	p = &Pipeline{Graph: a.Graph, src: &src, Planner: planner, Strategy: s.Strategy.Override(), Generator: generation.Structural{}, MaxQuestion: s.MaxQuestion, MaxHops: s.MaxHops,
		// The constraint check is STEM's stage: a peer system answers as
		// its paper describes, on its own signals.
		NoConstraints: s.NoConstraints || s.Retriever != DefaultStrategy, MinConfidence: s.MinConfidence.Value(), MinConfidenceAuto: s.MinConfidence.Auto(), Encoder: a.Encoder}
	p.Kinds, _ = a.Lexicon.(constraint.Instances)
	p.Lexicon = a.Lexicon
	p.PathFit = fit
	p.Selector, p.Beam = sel, s.Beam.Value()
	p.Usage = func() llm.Usage {
		if chat == nil {
			return llm.Usage{}
		}
		return chat.Usage()
	}
	env := Env{Graph: a.Graph, Entities: a.Entities, Encoder: a.Encoder, Tracing: s.Tracing, PlanWeight: s.PlanWeight, Chat: openChat}
	remote := src.Kind() == RemoteKG
	switch {
	case remote:
		// Each question is answered over its own neighbourhood: the
		// strategies prepare per question, and links are looked up by
		// name and text index at the endpoint, ranked by the encoder (no
		// vector for every entity).
		p.Linker = linking.New(a.Graph, nil)
		p.Linker.Encoder = a.Encoder
		env.Graph, env.Entities = nil, nil
	case a.Graph != nil:
		p.Linker = linking.New(a.Graph, a.Entities)
	}
	if s.GNN != "" {
		if remote {
			return nil, close, fmt.Errorf("--gnn needs a KG in memory: guidance over a SPARQL endpoint would score every entity of the KG")
		}
		if a.OpenGuider == nil {
			return nil, close, fmt.Errorf("--gnn: this command cannot load a Triple-GNN")
		}
		if env.Guider, err = a.OpenGuider(string(s.GNN)); err != nil {
			return nil, close, err
		}
	}
	if p.Retriever, err = reg.NewWith(ctx, s.Retriever, env, s.Retrievers); err != nil {
		return nil, close, err
	}
	p.Mode = ModeOf(p.Retriever)
	if usesPlan(p.Retriever) {
		p.PlannerName = resolvePlanner(s, a)
	}
	if s.Generator == "llm" {
		c, err := openChat()
		if err != nil {
			return nil, close, err
		}
		p.Generator = generation.LLM{Chat: c}
	}
	return p, close, nil
}

// OpenPlanner builds the planner s names over a, as Open does for its
// pipeline (eval-plans scores planners alone); close releases its chat
// client and is never nil.
func OpenPlanner(ctx context.Context, s Settings, a Assets) (pl projection.Planner, close func() error, err error) {
	close = func() error { return nil }
	if err := s.Check(nil); err != nil {
		return nil, close, err
	}
	var chat *llm.Client
	pl, err = DefaultPlanners().Open(ctx, PlannerEnv{Settings: s, Assets: a, Source: SourceOf(a.Graph), Chat: func() (*llm.Client, error) {
		c, err := catalog.OpenChat(s.Chat)
		chat = c
		return c, err
	}})
	if chat != nil {
		close = chat.Close
	}
	return pl, close, err
}

// resolvePlanner is the planner s names, --planner auto resolved: pattern
// with a planner model, else demo where a gives its AutoPlanner (the demo
// KG's), else compose.
func resolvePlanner(s Settings, a Assets) string {
	switch {
	case s.Planner != "auto":
		return string(s.Planner)
	case s.PlannerModel != "":
		return "pattern"
	case a.AutoPlanner != nil:
		return "demo"
	}
	return "compose"
}
