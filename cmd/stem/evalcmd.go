package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

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
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Required: true, Usage: "dataset format: pq, metaqa, webqsp-mini, rog"},
			&cli.StringFlag{Name: "questions", Required: true, Usage: "question file(s), comma-separated"},
			&cli.StringFlag{Name: "kg", Usage: "the shared KG file (pq, metaqa)"},
			&cli.StringFlag{Name: "qtype", Usage: "metaqa: the question-type file, line by line with --questions"},
			&cli.StringFlag{Name: "gold-paths", Usage: "webqsp-mini, rog: rog_paths_*.jsonl with each question's gold relation paths"},
			&cli.BoolFlag{Name: "answerable-only", Usage: "metaqa: keep questions whose answers all lie within the question's hop count of the topic entity"},
			&cli.StringFlag{Name: "planner", Value: "oracle", Usage: "where schema graphs come from: oracle (the gold path), pattern, schema or llm"},
			&cli.StringFlag{Name: "strategy", Value: "auto", Usage: "auto, precision or breadth"},
			&cli.BoolFlag{Name: "no-entity-bias", Usage: "ablation: no guidance boost for anchor entities"},
			&cli.BoolFlag{Name: "no-triple-bias", Usage: "ablation: no guidance boost for KG triples"},
			&cli.BoolFlag{Name: "only-greedy", Usage: "ablation: greedy selection whatever the strategy"},
			&cli.BoolFlag{Name: "only-threshold", Usage: "ablation: threshold selection whatever the strategy"},
			&cli.StringFlag{Name: "reuse", Value: "not-back", Usage: "which matched KG edges a later schema edge may match again: not-back (all but the edge just walked) or never (the paper's Contradict read literally)"},
			&cli.StringFlag{Name: "triple-text", Value: "far-mention", Usage: "how schema and KG triples are written for the encoder: far-mention, known-ends, full or relation (see package tracing)"},
			&cli.IntFlag{Name: "max-branch", Usage: "cap on KG edges kept per tracing step (0 = none)"},
			&cli.IntFlag{Name: "limit", Usage: "score only the first N questions (0 = all)"},
			&cli.BoolFlag{Name: "keep-going", Usage: "score a question whose retrieval fails as unanswered instead of stopping"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object instead of a table"},
			&cli.BoolFlag{Name: "per-question", Usage: "with --json: include every question's result"},
		}, append(encoderFlags(), plannerFlags()...)...),
		Action: runEval,
	}
}

func runEval(c *cli.Context) error {
	ctx := c.Context
	files := splitList(c.String("questions"))
	var (
		qs      []eval.Question
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
			return err
		}
		for _, f := range files {
			part, err := eval.LoadPathQuestion(ctx, f)
			if err != nil {
				return err
			}
			qs = append(qs, part...)
		}
	case "metaqa":
		if err := needKG(); err != nil {
			return err
		}
		types := splitList(c.String("qtype"))
		if len(types) != len(files) {
			return fmt.Errorf("--format metaqa needs one --qtype file per --questions file (got %d and %d)", len(types), len(files))
		}
		for i, f := range files {
			part, err := eval.LoadMetaQA(ctx, f, types[i])
			if err != nil {
				return err
			}
			qs = append(qs, part...)
		}
	case "webqsp-mini":
		if c.String("gold-paths") == "" {
			return fmt.Errorf("--format webqsp-mini needs --gold-paths rog_paths_test.jsonl")
		}
		if qs, err = eval.LoadWebQSP(ctx, files, c.String("gold-paths")); err != nil {
			return err
		}
	case "rog":
		var gold map[string][][]string
		if p := c.String("gold-paths"); p != "" {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			gold, err = eval.ReadGroundPaths(ctx, f, p)
			f.Close()
			if err != nil {
				return err
			}
		}
		for _, f := range files {
			part, err := eval.LoadRoG(ctx, f, gold)
			if err != nil {
				return err
			}
			qs = append(qs, part...)
		}
	default:
		return fmt.Errorf("--format %q: want pq, metaqa, webqsp-mini or rog", c.String("format"))
	}
	if c.Bool("answerable-only") {
		if g == nil {
			return fmt.Errorf("--answerable-only needs a shared KG (--format metaqa or pq)")
		}
		if qs, dropped, err = eval.Answerable(ctx, g, qs); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "answerable-only: kept %d questions, dropped %d whose answers are not all within reach\n", len(qs), dropped)
	}
	if n := c.Int("limit"); n > 0 && n < len(qs) {
		qs = qs[:n]
	}
	if len(qs) == 0 {
		return fmt.Errorf("no questions to evaluate in %s", c.String("questions"))
	}

	cfg := tracing.DefaultConfig()
	cfg.NoEntityBias = c.Bool("no-entity-bias")
	cfg.NoTripleBias = c.Bool("no-triple-bias")
	cfg.OnlyGreedy = c.Bool("only-greedy")
	cfg.OnlyThreshold = c.Bool("only-threshold")
	cfg.MaxBranch = c.Int("max-branch")
	switch c.String("reuse") {
	case "not-back":
		cfg.Reuse = tracing.ReuseNotBack
	case "never":
		cfg.Reuse = tracing.ReuseNever
	default:
		return fmt.Errorf("--reuse %q: want not-back or never", c.String("reuse"))
	}
	mode, err := parseTextMode(c.String("triple-text"))
	if err != nil {
		return err
	}
	cfg.Text = mode
	if cfg.OnlyGreedy && cfg.OnlyThreshold {
		return fmt.Errorf("--only-greedy and --only-threshold exclude each other")
	}

	enc, closeEnc, err := openEncoder(c, c.App.ErrWriter)
	if err != nil {
		return err
	}
	defer closeEnc()
	var ents *kgvec.Entities
	if g != nil {
		if ents, err = kgvec.LoadOrBuild(ctx, g, c.String("kg"), enc, c.App.ErrWriter); err != nil {
			return err
		}
	}
	planner, closePlanner, err := evalPlanner(c, g, ents, enc)
	if err != nil {
		return err
	}
	defer closePlanner()
	ret, err := plan.NewRetriever(ctx, g, ents, enc, cfg)
	if err != nil {
		return err
	}
	rep, err := eval.Run(ctx, qs, planner, ret, eval.Options{
		Graph:       g,
		KeepGoing:   c.Bool("keep-going"),
		PerQuestion: c.Bool("per-question"),
		Progress:    c.App.ErrWriter,
	})
	if err != nil {
		return err
	}
	rep.Dropped = dropped
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteTable(c.App.Writer)
}

// evalPlanner returns the planner the flags name: the oracle, or a
// projection planner run over the dataset's questions.
func evalPlanner(c *cli.Context, g *kg.Graph, ents *kgvec.Entities, enc models.Encoder) (eval.Planner, func() error, error) {
	none := func() error { return nil }
	var mode eval.StrategyMode
	var force *schema.Strategy
	switch c.String("strategy") {
	case "auto":
		mode = eval.Auto
	case "precision":
		mode, force = eval.AlwaysPrecision, new(schema.Strategy)
		*force = schema.Precision
	case "breadth":
		mode, force = eval.AlwaysBreadth, new(schema.Strategy)
		*force = schema.Breadth
	default:
		return nil, none, fmt.Errorf("--strategy %q: want auto, precision or breadth", c.String("strategy"))
	}
	if c.String("planner") == "oracle" {
		return eval.Oracle{Beam: c.Int("beam"), Strategy: mode}, none, nil
	}
	pl, closePl, err := openPlanner(c, c.String("planner"), g, enc)
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
