package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
	"github.com/urfave/cli/v2"
)

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "answer a benchmark's questions and score them as the peer systems do (Hit, Hits@1, F1, coverage, latency)",
		Description: "Formats:\n" +
			"  pq           PathQuestion: --questions Q.txt --kg KB.txt\n" +
			"  metaqa       MetaQA: --questions qa_test_2hop.txt --kg kb.txt --qtype qtype_test_2hop.txt [--answerable-only]\n" +
			"  webqsp-mini  WebQSP as released by GNN-RAG: --questions gnnrag_sbert_test.jsonl,gnnrag_lmsr_test.jsonl\n" +
			"               --gold-paths rog_paths_test.jsonl (each question's KG = the union of its evidence paths)\n" +
			"  rog          RoG rows with their own subgraphs: --questions ROWS.jsonl [--gold-paths P.jsonl]\n\n" +
			"Planner oracle builds the schema graphs from each question's gold path, so the run\n" +
			"measures retrieval alone. --strategy auto picks Breadth for questions with more than\n" +
			"one gold answer, else Precision (the paper's labelling rule).\n\n" +
			"Example:\n  stem eval --format pq --questions ../shared/data/pathquestion/splits/PQ-2H.test.txt \\\n" +
			"            --kg ../shared/data/pathquestion/2H-kb.txt --json",
		Flags: append(append(append(evalDataFlags(), evalSetupFlags()...),
			&cli.BoolFlag{Name: "keep-going", Usage: "score a question whose retrieval fails as unanswered instead of stopping"},
			configFlag,
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object instead of a table"},
			&cli.BoolFlag{Name: "per-question", Usage: "with --json: include every question's result"},
			&cli.IntFlag{Name: "workers", Value: 1, Usage: "questions answered at once (the report does not depend on it, except latency and throughput)"},
			&cli.StringFlag{Name: "out", Usage: "append every question's result to FILE as one JSON line as soon as it is scored (a header line records the configuration)"},
			&cli.BoolFlag{Name: "resume", Usage: "with --out: skip the questions FILE already holds and report over all of them (FILE's configuration must match)"},
		), append(encoderFlags(), plannerFlags()...)...),
		Before: applyConfig,
		Action: runEval,
	}
}

// evalDataFlags choose the questions and KG (stem eval, stem compare).
func evalDataFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Required: true, Usage: "dataset format: pq, metaqa, webqsp-mini, rog"},
		&cli.StringFlag{Name: "questions", Required: true, Usage: "question file(s), comma-separated"},
		&cli.StringFlag{Name: "kg", Usage: "the shared KG file (pq, metaqa)"},
		&cli.StringFlag{Name: "qtype", Usage: "metaqa: the question-type file, line by line with --questions"},
		&cli.StringFlag{Name: "gold-paths", Usage: "webqsp-mini, rog: rog_paths_*.jsonl with each question's gold relation paths"},
		&cli.BoolFlag{Name: "answerable-only", Usage: "metaqa: keep questions whose answers all lie within the question's hop count of the topic entity"},
		&cli.IntFlag{Name: "limit", Usage: "score only the first N questions (0 = all)"},
	}
}

// evalSetupFlags are the flags an evalSetup is read from; stem compare's
// --config keys have the same names.
func evalSetupFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "planner", Value: "oracle", Usage: "where schema graphs come from: oracle (the gold path), pattern, schema or llm"},
		&cli.StringFlag{Name: "strategy", Value: "auto", Usage: "auto, precision or breadth"},
		&cli.BoolFlag{Name: "no-entity-bias", Usage: "ablation: no guidance boost for anchor entities"},
		&cli.BoolFlag{Name: "no-triple-bias", Usage: "ablation: no guidance boost for KG triples"},
		&cli.BoolFlag{Name: "only-greedy", Usage: "ablation: greedy selection whatever the strategy"},
		&cli.BoolFlag{Name: "only-threshold", Usage: "ablation: threshold selection whatever the strategy"},
		&cli.StringFlag{Name: "reuse", Value: "not-back", Usage: "which matched KG edges a later schema edge may match again: not-back (all but the edge just walked) or never (the paper's Contradict read literally)"},
		&cli.StringFlag{Name: "triple-text", Value: "far-mention", Usage: "how schema and KG triples are written for the encoder: far-mention, known-ends, full or relation (see package tracing)"},
		&cli.IntFlag{Name: "max-branch", Usage: "cap on KG edges kept per tracing step (0 = none)"},
		&cli.StringFlag{Name: "gnn", Usage: "Triple-GNN model (from `stem train gnn`) whose guidance graph biases tracing"},
		&cli.Float64Flag{Name: "lambda", Value: float64(tracing.DefaultConfig().Lambda), Usage: "entity-level guidance bias, multiplicative (paper: 1.5)"},
		&cli.Float64Flag{Name: "tau", Value: float64(tracing.DefaultConfig().Tau), Usage: "triple-level guidance bias, additive (paper: 0.5)"},
		&cli.BoolFlag{Name: "gate-triple-bias", Usage: "add the triple-level bias only to edges whose similarity alone reaches theta (the paper adds it to every edge)"},
	}
}

// evalSetup is one resolved evaluation configuration: everything that
// decides how questions are planned and answered. stem eval reads one from
// its flags; stem compare starts from the same flags and applies each
// --config to a copy.
type evalSetup struct {
	// Name labels the configuration in stem compare's tables.
	Name         string
	Planner      string
	PlannerModel string
	Beam         int
	Strategy     string
	NoEntityBias bool
	NoTripleBias bool
	OnlyGreedy   bool
	// OnlyThreshold excludes OnlyGreedy.
	OnlyThreshold bool
	Reuse         string
	TripleText    string
	MaxBranch     int
	// GNN is the Triple-GNN model file that guides tracing; "" = none.
	GNN string
	// Lambda and Tau are the entity- and triple-level guidance biases.
	Lambda, Tau float64
	// GateTripleBias adds Tau only to edges that already reach theta.
	GateTripleBias bool
}

// setupFromFlags reads the evalSetup the command line names.
func setupFromFlags(c *cli.Context) evalSetup {
	return evalSetup{
		Planner:        c.String("planner"),
		PlannerModel:   c.String("planner-model"),
		Beam:           c.Int("beam"),
		Strategy:       c.String("strategy"),
		NoEntityBias:   c.Bool("no-entity-bias"),
		NoTripleBias:   c.Bool("no-triple-bias"),
		OnlyGreedy:     c.Bool("only-greedy"),
		OnlyThreshold:  c.Bool("only-threshold"),
		Reuse:          c.String("reuse"),
		TripleText:     c.String("triple-text"),
		MaxBranch:      c.Int("max-branch"),
		GNN:            c.String("gnn"),
		Lambda:         c.Float64("lambda"),
		Tau:            c.Float64("tau"),
		GateTripleBias: c.Bool("gate-triple-bias"),
	}
}

// config lists what the setup decides, as a results log's header records
// it; llm and encoder settings are added by evalConfig.
func (s evalSetup) config() map[string]string {
	b := strconv.FormatBool
	m := map[string]string{
		"planner": s.Planner, "beam": strconv.Itoa(s.Beam), "strategy": s.Strategy,
		"no-entity-bias": b(s.NoEntityBias), "no-triple-bias": b(s.NoTripleBias),
		"only-greedy": b(s.OnlyGreedy), "only-threshold": b(s.OnlyThreshold),
		"reuse": s.Reuse, "triple-text": s.TripleText, "max-branch": strconv.Itoa(s.MaxBranch),
	}
	if s.Planner == "pattern" {
		m["planner-model"] = s.PlannerModel
	}
	if s.GNN != "" {
		m["gnn"] = s.GNN
		m["lambda"] = strconv.FormatFloat(s.Lambda, 'g', -1, 64)
		m["tau"] = strconv.FormatFloat(s.Tau, 'g', -1, 64)
		m["gate-triple-bias"] = b(s.GateTripleBias)
	}
	return m
}

// tracingConfig checks the setup's tracing settings and returns them.
func (s evalSetup) tracingConfig() (tracing.Config, error) {
	cfg := tracing.DefaultConfig()
	cfg.NoEntityBias = s.NoEntityBias
	cfg.NoTripleBias = s.NoTripleBias
	cfg.OnlyGreedy = s.OnlyGreedy
	cfg.OnlyThreshold = s.OnlyThreshold
	cfg.MaxBranch = s.MaxBranch
	cfg.Lambda, cfg.Tau = float32(s.Lambda), float32(s.Tau)
	cfg.GateTripleBias = s.GateTripleBias
	switch s.Reuse {
	case "not-back":
		cfg.Reuse = tracing.ReuseNotBack
	case "never":
		cfg.Reuse = tracing.ReuseNever
	default:
		return cfg, fmt.Errorf("--reuse %q: want not-back or never", s.Reuse)
	}
	mode, err := parseTextMode(s.TripleText)
	if err != nil {
		return cfg, err
	}
	cfg.Text = mode
	if cfg.OnlyGreedy && cfg.OnlyThreshold {
		return cfg, fmt.Errorf("--only-greedy and --only-threshold exclude each other")
	}
	return cfg, nil
}

// evalData is a loaded dataset: the questions to answer and the shared KG
// (nil for datasets whose questions carry their own).
type evalData struct {
	qs      []benchmark.Question
	g       *kg.Graph
	dropped int
}

// loadEvalData loads the dataset the data flags name.
func loadEvalData(c *cli.Context) (*evalData, error) {
	ctx := c.Context
	files := splitList(c.String("questions"))
	var (
		qs      []benchmark.Question
		g       *kg.Graph
		err     error
		dropped int
	)
	needKG := func() error {
		if c.String("kg") == "" {
			return fmt.Errorf("--format %s needs --kg FILE", c.String("format"))
		}
		g, err = kg.Load(ctx, c.String("kg"), kg.FormatAuto)
		return err
	}
	switch c.String("format") {
	case "pq":
		if err := needKG(); err != nil {
			return nil, err
		}
		for _, f := range files {
			part, err := benchmark.LoadPathQuestion(ctx, f)
			if err != nil {
				return nil, err
			}
			qs = append(qs, part...)
		}
	case "metaqa":
		if err := needKG(); err != nil {
			return nil, err
		}
		types := splitList(c.String("qtype"))
		if len(types) != len(files) {
			return nil, fmt.Errorf("--format metaqa needs one --qtype file per --questions file (got %d and %d)", len(types), len(files))
		}
		for i, f := range files {
			part, err := benchmark.LoadMetaQA(ctx, f, types[i])
			if err != nil {
				return nil, err
			}
			qs = append(qs, part...)
		}
	case "webqsp-mini":
		if c.String("gold-paths") == "" {
			return nil, fmt.Errorf("--format webqsp-mini needs --gold-paths rog_paths_test.jsonl")
		}
		if qs, err = benchmark.LoadWebQSP(ctx, files, c.String("gold-paths")); err != nil {
			return nil, err
		}
	case "rog":
		var gold map[string][][]string
		if p := c.String("gold-paths"); p != "" {
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			gold, err = benchmark.ReadGroundPaths(ctx, f, p)
			f.Close()
			if err != nil {
				return nil, err
			}
		}
		for _, f := range files {
			part, err := benchmark.LoadRoG(ctx, f, gold)
			if err != nil {
				return nil, err
			}
			qs = append(qs, part...)
		}
	default:
		return nil, fmt.Errorf("--format %q: want pq, metaqa, webqsp-mini or rog", c.String("format"))
	}
	if c.Bool("answerable-only") {
		if g == nil {
			return nil, fmt.Errorf("--answerable-only needs a shared KG (--format metaqa or pq)")
		}
		if qs, dropped, err = benchmark.Answerable(ctx, g, qs); err != nil {
			return nil, err
		}
		fmt.Fprintf(c.App.ErrWriter, "answerable-only: kept %d questions, dropped %d whose answers are not all within reach\n", len(qs), dropped)
	}
	if n := c.Int("limit"); n > 0 && n < len(qs) {
		qs = qs[:n]
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("no questions to evaluate in %s", c.String("questions"))
	}
	return &evalData{qs: qs, g: g, dropped: dropped}, nil
}

// evalConfig is the whole configuration a results log's header records:
// the dataset, the encoder, the setup and, for the llm planner, the model.
// --limit is left out so that a run can be resumed with a larger one.
func evalConfig(c *cli.Context, s evalSetup) map[string]string {
	m := s.config()
	for _, k := range []string{"format", "questions", "kg", "qtype", "gold-paths", "encoder", "vectors", "model-dir", "pooling", "model"} {
		if v := c.String(k); v != "" {
			m[k] = v
		}
	}
	// Files are compared by absolute path, so that a run resumed from
	// another directory still matches.
	for _, k := range []string{"questions", "kg", "qtype", "gold-paths", "vectors", "model-dir", "planner-model"} {
		if v, ok := m[k]; ok {
			parts := splitList(v)
			for i, p := range parts {
				if abs, err := filepath.Abs(p); err == nil {
					parts[i] = abs
				}
			}
			m[k] = strings.Join(parts, ",")
		}
	}
	m["answerable-only"] = strconv.FormatBool(c.Bool("answerable-only"))
	if s.Planner == "llm" {
		for _, k := range []string{"llm-base-url", "llm-model", "llm-examples"} {
			m[k] = c.String(k)
		}
	}
	return m
}

// evalEnv is what every configuration over one dataset shares: the
// encoder and the KG's entity vectors.
type evalEnv struct {
	enc   models.Encoder
	ents  *kgvec.Entities
	close func() error
}

// openEvalEnv opens the encoder the flags name and embeds d's KG.
func openEvalEnv(c *cli.Context, d *evalData) (*evalEnv, error) {
	enc, closeEnc, err := openEncoder(c, c.App.ErrWriter)
	if err != nil {
		return nil, err
	}
	env := &evalEnv{enc: enc, close: closeEnc}
	if d.g != nil {
		if env.ents, err = kgvec.LoadOrBuild(c.Context, d.g, c.String("kg"), enc, c.App.ErrWriter); err != nil {
			closeEnc()
			return nil, err
		}
	}
	return env, nil
}

// build returns the planner and retriever s names over d. close releases
// the planner's resources; it is never nil.
func (s evalSetup) build(c *cli.Context, d *evalData, env *evalEnv) (eval.Planner, eval.Retriever, func() error, error) {
	none := func() error { return nil }
	cfg, err := s.tracingConfig()
	if err != nil {
		return nil, nil, none, err
	}
	planner, closePlanner, err := evalPlanner(c, s, d.g, env.ents, env.enc)
	if err != nil {
		return nil, nil, closePlanner, err
	}
	ret, err := plan.NewRetriever(c.Context, d.g, env.ents, env.enc, cfg)
	if err != nil {
		return nil, nil, closePlanner, err
	}
	if s.GNN != "" {
		if d.g == nil {
			return nil, nil, closePlanner, fmt.Errorf("--gnn needs a shared KG (formats pq, metaqa): per-question graphs are traced without guidance")
		}
		if ret.Guider, err = openGuider(s.GNN, d.g, env.enc); err != nil {
			return nil, nil, closePlanner, err
		}
	}
	return planner, ret, closePlanner, nil
}

func runEval(c *cli.Context) error {
	ctx := c.Context
	d, err := loadEvalData(c)
	if err != nil {
		return err
	}
	s := setupFromFlags(c)
	if _, err := s.tracingConfig(); err != nil {
		return err
	}
	if c.Bool("resume") && c.String("out") == "" {
		return fmt.Errorf("--resume needs --out FILE, the results log to continue")
	}
	env, err := openEvalEnv(c, d)
	if err != nil {
		return err
	}
	defer env.close()
	planner, ret, closePlanner, err := s.build(c, d, env)
	defer closePlanner()
	if err != nil {
		return err
	}
	opts := eval.Options{
		Graph:       d.g,
		KeepGoing:   c.Bool("keep-going"),
		PerQuestion: c.Bool("per-question"),
		Progress:    c.App.ErrWriter,
		Workers:     c.Int("workers"),
	}
	if out := c.String("out"); out != "" {
		log, prior, err := eval.OpenLog(out, evalConfig(c, s), c.Bool("resume"))
		if err != nil {
			return err
		}
		defer log.Close()
		if len(prior) > 0 {
			fmt.Fprintf(c.App.ErrWriter, "resume: %d results already in %s\n", len(prior), out)
		}
		opts.Done, opts.OnResult = prior, log.Write
	}
	rep, err := eval.Run(ctx, d.qs, planner, ret, opts)
	if rep == nil {
		return err
	}
	// A cancelled run still shows what it scored; the error follows.
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "interrupted: the report covers the %d questions answered so far", rep.N)
		if out := c.String("out"); out != "" {
			fmt.Fprintf(c.App.ErrWriter, "; rerun with --out %s --resume to finish", out)
		}
		fmt.Fprintln(c.App.ErrWriter)
	}
	rep.Dropped = d.dropped
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(rep); jerr != nil {
			return errors.Join(err, jerr)
		}
		return err
	}
	if terr := rep.WriteTable(c.App.Writer); terr != nil {
		return errors.Join(err, terr)
	}
	return err
}

// evalPlanner returns the planner the flags name: the oracle, or a
// projection planner run over the dataset's questions.
func evalPlanner(c *cli.Context, s evalSetup, g *kg.Graph, ents *kgvec.Entities, enc models.Encoder) (eval.Planner, func() error, error) {
	none := func() error { return nil }
	var mode eval.StrategyMode
	var force *schema.Strategy
	switch s.Strategy {
	case "auto":
		mode = eval.Auto
	case "precision":
		mode, force = eval.AlwaysPrecision, new(schema.Strategy)
		*force = schema.Precision
	case "breadth":
		mode, force = eval.AlwaysBreadth, new(schema.Strategy)
		*force = schema.Breadth
	default:
		return nil, none, fmt.Errorf("--strategy %q: want auto, precision or breadth", s.Strategy)
	}
	if s.Planner == "oracle" {
		return eval.Oracle{Beam: s.Beam, Strategy: mode}, none, nil
	}
	// openPlanner reads --beam and --planner-model from c; a stem compare
	// configuration may name its own, so they are written back first.
	if c.Int("beam") != s.Beam {
		if err := c.Set("beam", strconv.Itoa(s.Beam)); err != nil {
			return nil, none, err
		}
	}
	if c.String("planner-model") != s.PlannerModel {
		if err := c.Set("planner-model", s.PlannerModel); err != nil {
			return nil, none, err
		}
	}
	pl, closePl, err := openPlanner(c, s.Planner, g, enc)
	if err != nil {
		return nil, closePl, err
	}
	ep := plan.EvalPlanner{Planner: pl, Strategy: force}
	if g != nil {
		ep.Linker = newLinker(g, ents)
	}
	return ep, closePl, nil
}

// splitList splits a comma-separated flag value, dropping empty parts.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseTextMode reads a --triple-text value.
func parseTextMode(s string) (tracing.TextMode, error) {
	for _, m := range []tracing.TextMode{tracing.TextFarMention, tracing.TextKnownEnds, tracing.TextFull, tracing.TextRelation} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("--triple-text %q: want far-mention, known-ends, full or relation", s)
}
