package planeval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/compose"
	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/projection/zeroshot"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/settings"
)

// Planners are the planners Run scores.
var Planners = []string{"pattern", "compose", "schema", "llm", "rog-reference"}

// Config is one run of stem eval-plans: the planner and its parameters.
type Config struct {
	// Planner is one of Planners.
	Planner string
	// Format is the questions' format; rog-reference needs webqsp-paths,
	// or webqsp-mini with GoldPaths.
	Format    string
	GoldPaths bool
	// Graph is the shared KG (nil for none): compose and schema enumerate
	// its paths, pattern drops paths absent from it and counts reach.
	Graph *kg.Graph
	Beam  int
	// PlannerModel is pattern's model file.
	PlannerModel string
	// VoteStrategy and Pattern override the pattern model's own values.
	VoteStrategy bool
	Pattern      pattern.Options
	// LengthPenalty and MaxHops are the zero-shot planners'.
	LengthPenalty float32
	MaxHops       int
	Encoder       catalog.EncoderSettings
	Chat          catalog.ChatSettings
	Examples      plan.ExampleSettings
	// Out, when set, receives every question's plans, one JSON line each.
	Out string
	// Log receives the first planning errors and the models' messages.
	Log io.Writer
}

// Result is what stem eval-plans prints.
type Result struct {
	Report
	Planner string `json:"planner"`
	Failed  int    `json:"failed"`
}

// planned is one question's plan as Run scores it.
type planned struct {
	paths [][]schema.Step
	// triples are the candidates' schema graphs as relation steps; nil
	// means paths.
	triples    [][]schema.Step
	strategy   schema.Strategy
	strategies []schema.Strategy
}

// pathPlan is a path planner's plan.
func pathPlan(paths [][]schema.Step, st schema.Strategy) planned {
	return planned{paths: paths, strategy: st}
}

// projectionPlan reads a planner's projection: each candidate's path
// (nil when its graph is not a path, which then matches no gold path),
// its triples, and the top candidate's and each candidate's strategy.
func projectionPlan(p projection.Projection) planned {
	out := planned{strategy: p.StrategyOf(0), strategies: p.Strategies()}
	for _, c := range p.Candidates {
		steps, ok := StepsOf(c.Graph)
		if !ok {
			steps = nil
		}
		out.paths = append(out.paths, steps)
		out.triples = append(out.triples, GraphSteps(c.Graph))
	}
	return out
}

// predictor plans one question.
type predictor func(q Question) (planned, error)

// Run plans every question with the planner cfg names and scores the plans
// against the questions' gold paths. A question whose planning fails is
// scored with no plan and the default Precision strategy, and counted in
// Result.Failed.
func Run(ctx context.Context, qs []Question, cfg Config) (*Result, error) {
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	predict, closeP, err := open(ctx, qs, cfg, log)
	if err != nil {
		return nil, err
	}
	defer closeP()
	items := make([]Item, 0, len(qs))
	var lines []planLine
	failed := 0
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		pl, err := predict(q)
		lat := time.Since(t0)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			failed++
			if failed <= 3 {
				fmt.Fprintf(log, "plan %q: %v\n", q.Text, err)
			}
			pl = planned{} // no plan, the default Precision strategy
		}
		items = append(items, Item{Gold: q.Gold, Answers: q.Answers, Paths: pl.paths, Triples: pl.triples,
			Strategy: pl.strategy, Strategies: pl.strategies, Latency: lat})
		if cfg.Out != "" {
			lines = append(lines, newPlanLine(q, pl, err))
		}
	}
	if failed > 3 {
		fmt.Fprintf(log, "... and %d more questions could not be planned (--out lists each with its error)\n", failed-3)
	}
	if cfg.Out != "" {
		err := atomicfile.Write(cfg.Out, 0o644, func(w io.Writer) error {
			e := json.NewEncoder(w)
			e.SetEscapeHTML(false) // paths read "a > b"
			for _, l := range lines {
				if err := e.Encode(l); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
	}
	if cfg.Planner == "rog-reference" {
		// The reference has no strategy: leave strategy accuracy out.
		for i := range items {
			items[i].Answers = -1
		}
	}
	return &Result{Report: Score(items, cfg.Beam), Planner: cfg.Planner, Failed: failed}, nil
}

// open builds the planner cfg names as a predictor; close releases what
// it opened.
func open(ctx context.Context, qs []Question, cfg Config, log io.Writer) (predictor, func() error, error) {
	closers := []func() error{}
	close := func() error {
		var first error
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	encoder := func() (models.Encoder, error) {
		enc, closeEnc, err := catalog.OpenEncoder(ctx, cfg.Encoder, log)
		if err == nil {
			closers = append(closers, closeEnc)
		}
		return enc, err
	}
	var p predictor
	var err error
	switch cfg.Planner {
	case "rog-reference":
		p, err = rogReference(cfg)
	case "llm":
		p, err = llmPredictor(ctx, cfg, encoder, &closers)
	case "pattern":
		p, err = patternPredictor(ctx, cfg, encoder, &closers, log)
	case "schema", "compose":
		p, err = zeroShotPredictor(ctx, qs, cfg, encoder, log)
	default:
		err = fmt.Errorf("--planner %q: want pattern, compose, schema, llm or rog-reference", cfg.Planner)
	}
	if err != nil {
		close()
		return nil, nil, err
	}
	return p, close, nil
}

// rogReference scores the RoG predictions of a rog_paths file.
func rogReference(cfg Config) (predictor, error) {
	if cfg.Format != "webqsp-paths" && !(cfg.Format == "webqsp-mini" && cfg.GoldPaths) {
		return nil, fmt.Errorf("--planner rog-reference needs --format webqsp-paths, or webqsp-mini with --gold-paths (it scores the RoG predictions of the rog_paths file)")
	}
	return func(q Question) (planned, error) {
		ps := q.Reference
		if len(ps) > cfg.Beam {
			ps = ps[:cfg.Beam]
		}
		return pathPlan(ps, schema.Precision), nil
	}, nil
}

// planWith plans through a projection.Planner, with the question's own
// graph when keepGraph.
func planWith(ctx context.Context, pl projection.Planner, keepGraph bool) predictor {
	return func(q Question) (planned, error) {
		in := projection.Input{Question: q.Text, Entities: q.Entities, Mentions: q.Mentions}
		if keepGraph {
			in.Graph = q.Graph
		}
		pr, err := pl.Plan(ctx, in)
		if err != nil {
			return planned{}, err
		}
		return projectionPlan(pr), nil
	}
}

func llmPredictor(ctx context.Context, cfg Config, encoder func() (models.Encoder, error), closers *[]func() error) (predictor, error) {
	enc, err := encoder()
	if err != nil {
		return nil, err
	}
	s := plan.DefaultSettings()
	s.Planner, s.Beam, s.Chat, s.ExampleSettings = "llm", plan.BeamSize(cfg.Beam), cfg.Chat, cfg.Examples
	a := plan.Assets{Graph: kg.Of(cfg.Graph), Encoder: enc}
	if cfg.Examples.Examples != "" {
		if a.Examples, err = LLMExamples(ctx, cfg.Examples); err != nil {
			return nil, err
		}
	}
	pl, closePl, err := plan.OpenPlanner(ctx, s, a)
	*closers = append(*closers, closePl)
	if err != nil {
		return nil, err
	}
	return planWith(ctx, pl, true), nil
}

func patternPredictor(ctx context.Context, cfg Config, encoder func() (models.Encoder, error), closers *[]func() error, log io.Writer) (predictor, error) {
	if cfg.PlannerModel == "" {
		return nil, fmt.Errorf("--planner pattern needs --planner-model FILE (see `stem train planner`)")
	}
	enc, err := encoder()
	if err != nil {
		return nil, err
	}
	m, err := pattern.Load(cfg.PlannerModel, enc)
	if err != nil {
		return nil, err
	}
	if m.Prior().Planner != "" {
		// Trained from the KG alone: it plans beside the zero-shot
		// planner it names, as stem eval and stem ask plan with it.
		if cfg.Graph == nil {
			return nil, fmt.Errorf("--planner-model %s was trained from a KG alone (--from-kg) and plans beside the %s planner: give --kg", cfg.PlannerModel, m.Prior().Planner)
		}
		lex, err := catalog.OpenLexicon(ctx, cfg.Encoder, log)
		if err != nil {
			return nil, err
		}
		s := plan.DefaultSettings()
		s.Planner, s.PlannerModel, s.Beam = "pattern", cfg.PlannerModel, plan.BeamSize(cfg.Beam)
		pl, closePl, err := plan.OpenPlanner(ctx, s, plan.Assets{Graph: kg.Of(cfg.Graph), Encoder: enc, Lexicon: lex})
		*closers = append(*closers, closePl)
		if err != nil {
			return nil, err
		}
		return planWith(ctx, pl, false), nil
	}
	pl, err := pattern.New(m, enc, pattern.Config{Beam: cfg.Beam, Graph: kg.Of(cfg.Graph), VoteStrategy: cfg.VoteStrategy, Options: cfg.Pattern})
	if err != nil {
		return nil, err
	}
	withGraph := planWith(ctx, pl, true)
	return func(q Question) (planned, error) {
		// A question whose graph names none of its entities (62 of
		// WebQSP-mini's have an empty graph) is planned from its text
		// alone, as with no graph: plans are relation paths, which need
		// no anchor to be scored.
		if q.Graph != nil && len(q.Entities) > 0 {
			return withGraph(q)
		}
		pr, err := pl.Predict(ctx, q.Text, q.Entities, q.Mentions)
		if err != nil {
			return planned{}, err
		}
		return pathPlan(projection.Steps(pr.Paths), pr.Strategy), nil
	}, nil
}

// zeroShotPredictor builds compose or schema over the shared KG, or over
// each question's own graph.
func zeroShotPredictor(ctx context.Context, qs []Question, cfg Config, encoder func() (models.Encoder, error), log io.Writer) (predictor, error) {
	name := cfg.Planner
	ownGraphs := len(qs) > 0 && qs[0].Graph != nil
	if cfg.Graph == nil && !ownGraphs {
		return nil, fmt.Errorf("--planner %s needs --kg FILE, or questions with their own graphs (webqsp-mini, rog): it enumerates the KG's paths from the question's entity", name)
	}
	enc, err := encoder()
	if err != nil {
		return nil, err
	}
	lex, err := catalog.OpenLexicon(ctx, cfg.Encoder, log)
	if err != nil {
		return nil, err
	}
	// open builds the zero-shot planner over a KG, as a function from a
	// question to its ranked paths.
	type pathFunc func(q Question) ([]projection.ScoredPath, schema.Strategy, error)
	open := func(g kg.Reader) (pathFunc, error) {
		if name == "compose" {
			pl, err := compose.New(ctx, g, enc, compose.Config{Beam: cfg.Beam, MaxHops: cfg.MaxHops, Lexicon: lex})
			return func(q Question) ([]projection.ScoredPath, schema.Strategy, error) {
				pr, err := pl.Predict(ctx, q.Text, q.Entities, q.Mentions)
				return pr.Paths, pr.Strategy, err
			}, err
		}
		pl, err := zeroshot.New(ctx, g, enc, zeroshot.Config{Beam: cfg.Beam, MaxHops: cfg.MaxHops, LengthPenalty: cfg.LengthPenalty})
		return func(q Question) ([]projection.ScoredPath, schema.Strategy, error) {
			pr, err := pl.Predict(ctx, q.Text, q.Entities, q.Mentions)
			return pr.Paths, pr.Strategy, err
		}, err
	}
	var shared pathFunc
	if cfg.Graph != nil {
		if shared, err = open(cfg.Graph); err != nil {
			return nil, err
		}
	}
	return func(q Question) (planned, error) {
		pl := shared
		if q.Graph != nil {
			// The question's own graph is its KG: its relations are
			// encoded for it alone.
			var err error
			if pl, err = open(q.Graph); err != nil {
				return planned{}, err
			}
		}
		if pl == nil {
			return planned{}, fmt.Errorf("--planner %s: question %q has no graph and there is no --kg", name, q.Text)
		}
		paths, strat, err := pl(q)
		if err != nil {
			return planned{}, err
		}
		return pathPlan(projection.Steps(paths), strat), nil
	}, nil
}

// planLine is one question's plans in an --out file.
type planLine struct {
	ID       string   `json:"id,omitempty"`
	Question string   `json:"question"`
	Gold     []string `json:"gold"`
	Paths    []string `json:"paths"`
	// HitRank is the 1-based rank of the first planned path equal to a
	// gold path; 0 when none is.
	HitRank  int    `json:"hit_rank"`
	Strategy string `json:"strategy"`
	Error    string `json:"error,omitempty"`
}

func newPlanLine(q Question, pl planned, err error) planLine {
	l := planLine{ID: q.ID, Question: q.Text, Gold: []string{}, Paths: []string{}, HitRank: HitRank(pl.paths, q.Gold),
		Strategy: pl.strategy.String()}
	for _, g := range q.Gold {
		l.Gold = append(l.Gold, Format(g))
	}
	for _, p := range pl.paths {
		l.Paths = append(l.Paths, Format(p))
	}
	if err != nil {
		l.Error = err.Error()
	}
	return l
}

// SetAnswers gives each question its gold answer count from counts (by
// id) and returns how many questions had none.
func SetAnswers(qs []Question, counts map[string]int) (missing int) {
	for i, q := range qs {
		if n, ok := counts[q.ID]; ok {
			qs[i].Answers = n
		} else {
			missing++
		}
	}
	return missing
}

// LLMExamples loads the llm planner's few-shot examples from the training
// questions s names.
func LLMExamples(ctx context.Context, s plan.ExampleSettings) ([]llmplan.Example, error) {
	qs, err := Load(ctx, benchmark.Source{Format: s.ExamplesFormat, Questions: settings.SplitList(s.Examples), QTypes: settings.SplitList(s.ExamplesQType)})
	if err != nil {
		return nil, err
	}
	var recs []llmplan.PathRecord
	for _, q := range qs {
		if len(q.Gold) == 0 || len(q.Entities) == 0 {
			continue
		}
		r := llmplan.PathRecord{Question: q.Text, Entity: q.Entities[0], Answers: q.Answers}
		for _, st := range q.Gold[0] {
			r.Relations = append(r.Relations, st.Rel)
			r.Inverse = append(r.Inverse, st.Dir == schema.Inverse)
		}
		recs = append(recs, r)
	}
	exs, _ := llmplan.ExamplesFromPaths(recs)
	return exs, nil
}
