package main

import (
	"encoding/json"
	"fmt"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/urfave/cli/v2"
)

// evalPlansCommand scores planners' relation paths and strategies against
// gold paths, before any retrieval.
func evalPlansCommand() *cli.Command {
	encS := catalog.DefaultEncoderSettings()
	chatS := catalog.DefaultChatSettings()
	exS := plan.DefaultExampleSettings()
	return &cli.Command{
		Name:  "eval-plans",
		Usage: "score a planner's relation paths and strategies against gold paths (any-hit, top-1, path recall, schema-graph P/R/F1, strategy accuracy by answer count, latency)",
		Description: "A plan hits when one of its B paths equals a gold path: same relations in order, same\n" +
			"directions where the gold data has them (WebQSP's are undirected). path_recall is the\n" +
			"fraction of a question's gold paths planned; strategy_acc compares the top candidate's\n" +
			"strategy with Breadth iff more than one gold answer.\n\n" +
			"Schema-graph precision, recall and F1 (the paper's eq. 45-47, Fig. 7): the top candidate's\n" +
			"schema graph G against the gold path R, P = |R ∩ G| / |G|, R = |R ∩ G| / |R|. Triples match\n" +
			"by relation name after normalising (case, '_' and '.' as spaces) and by direction where both\n" +
			"sides have one (WebQSP's gold paths and non-path graphs have none); each triple matches at\n" +
			"most once. With several gold paths the best-F1 one counts; an empty plan scores 0. Averaged\n" +
			"over the questions with a gold path (schema_*), and again over the union of all B\n" +
			"candidates' triples (union_*).\n\n" +
			"Strategy by answer count (the paper's Table 15): the share of Precision among questions\n" +
			"with one answer (strategy_acc_single) and of Breadth among those with two or more\n" +
			"(strategy_acc_multi). pq and metaqa give answer counts; webqsp-paths takes them from\n" +
			"--answers (GNN-RAG result files' ground_truth, by id); without them the figures are omitted.\n" +
			"With --planner llm each candidate carries its own strategy (from its SGDA samples):\n" +
			"candidate_strategy_acc is the share of all candidates agreeing with the label.\n\n" +
			"A question whose planning fails (server down, timeout, no readable plan) is scored with no\n" +
			"plan and the default Precision strategy, and counted in failed.\n\n" +
			"Planners: pattern (--planner-model from `stem train planner`), compose and schema (zero-shot\n" +
			"over --kg: relation words aligned in order, or the whole question's similarity),\n" +
			"llm (SGDA and SAGB over the chat server the --llm-* flags name, B = --beam samples; with --kg\n" +
			"its relations ground SAGB, as in stem eval), rog-reference (webqsp-paths only: the file's\n" +
			"own RoG `prediction` paths).\n\n" +
			"Questions that bring their own graphs (webqsp-mini with --gold-paths, rog) are planned over\n" +
			"them, as stem eval plans them: pattern keeps the paths the graph walks from the entity and\n" +
			"adds the graph's paths it never saw after them, schema enumerates the question's graph. A\n" +
			"question whose graph holds none of its entities (an empty graph) is planned by pattern from\n" +
			"its text alone, as with no graph; schema counts it as failed.\n\n" +
			"Examples:\n  stem eval-plans --format webqsp-paths --questions rog_paths_test.jsonl \\\n" +
			"        --planner pattern --planner-model webqsp.stempat --answers gnnrag_sbert_test.jsonl --json\n" +
			"  stem eval-plans --format webqsp-mini --questions gnnrag_sbert_test.jsonl,gnnrag_lmsr_test.jsonl \\\n" +
			"        --gold-paths rog_paths_test.jsonl --planner pattern --planner-model webqsp.stempat --beam 3\n" +
			"  stem eval-plans --format pq --questions PQ-3H.test.txt --kg 3H-kb.txt --planner llm \\\n" +
			"        --llm-base-url http://localhost:8000/v1 --llm-model Qwen/Qwen3-8B --llm-examples PQ-3H.train.txt",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Required: true, Usage: "dataset format: pq, metaqa, webqsp-paths, webqsp-mini, rog, items (stem data chains/synth output)"},
			&cli.StringFlag{Name: "questions", Required: true, Usage: "question file(s), comma-separated"},
			&cli.StringFlag{Name: "qtype", Usage: "metaqa: question-type file(s), one per --questions file"},
			&cli.StringFlag{Name: "gold-paths", Usage: "webqsp-mini: rog_paths_test.jsonl with the gold relation paths (each question is planned over its own graph)"},
			&cli.StringFlag{Name: "kg", Usage: "KG file (needed by --planner compose and schema; lets pattern drop paths absent from the KG and count reach for the strategy)"},
			&cli.StringFlag{Name: "answers", Usage: "webqsp-paths: JSONL file(s) with each question's `ground_truth` answers by id (GNN-RAG's gnnrag_*_test.jsonl), comma-separated, for strategy accuracy"},
			&cli.StringFlag{Name: "planner", Value: "pattern", Usage: "pattern, compose, schema, llm or rog-reference"},
			&cli.StringFlag{Name: "planner-model", Usage: "pattern: model file"},
			&cli.IntFlag{Name: "beam", Value: projection.DefaultBeam, Usage: "candidate paths per question (B)"},
			&cli.BoolFlag{Name: "vote-strategy", Usage: "pattern: take the strategy from the neighbours' vote even with --kg"},
			&cli.IntFlag{Name: "k", Usage: "pattern: override the model's neighbour count"},
			&cli.Float64Flag{Name: "temperature", Usage: "pattern: override the vote temperature"},
			&cli.Float64Flag{Name: "tfidf", Usage: "pattern: override the TF-IDF weight (negative = off)"},
			&cli.Float64Flag{Name: "centroid", Usage: "pattern: override the path-prototype weight (negative = off)"},
			&cli.Float64Flag{Name: "classifier", Usage: "pattern: override the path classifier's weight (1 = classifier only, negative = vote only)"},
			&cli.Float64Flag{Name: "length-penalty", Usage: "schema: score penalty per extra hop (0 = default, negative = none)"},
			&cli.IntFlag{Name: "max-hops", Value: 3, Usage: "schema: longest path enumerated"},
			&cli.IntFlag{Name: "limit", Usage: "score only the first N questions (0 = all)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
			&cli.StringFlag{Name: "out", Usage: "write every question's plans to FILE, one JSON line each: id, question, gold paths, planned paths best first, the rank of the first that hits (0: none), strategy, error"},
		}, append(append(flagsOf(&encS), flagsOf(&chatS)...), flagsOf(&exS)...)...),
		Before: before(guard(map[string]float64{"beam": 1, "limit": 0, "max-hops": 1, "k": 0}), bind(&encS, &chatS, &exS)),
		Action: func(c *cli.Context) error { return runEvalPlans(c, encS, chatS, exS) },
	}
}

func runEvalPlans(c *cli.Context, encS catalog.EncoderSettings, chatS catalog.ChatSettings, exS plan.ExampleSettings) error {
	ctx := c.Context
	format := c.String("format")
	if c.String("answers") != "" && format != "webqsp-paths" {
		return fmt.Errorf("--answers is for --format webqsp-paths (the other formats give answer counts)")
	}
	qs, err := planeval.Load(ctx, benchmark.Source{Format: format, Questions: splitList(c.String("questions")), QTypes: splitList(c.String("qtype")), GoldPaths: c.String("gold-paths")})
	if err != nil {
		return err
	}
	if n := c.Int("limit"); n > 0 && n < len(qs) {
		qs = qs[:n]
	}
	cfg := planeval.Config{Planner: c.String("planner"), Format: format, GoldPaths: c.String("gold-paths") != "", Beam: c.Int("beam"),
		PlannerModel: c.String("planner-model"), VoteStrategy: c.Bool("vote-strategy"),
		Pattern:       pattern.Options{K: c.Int("k"), Temperature: float32(c.Float64("temperature")), TFIDF: float32(c.Float64("tfidf")), Centroid: float32(c.Float64("centroid")), Classifier: float32(c.Float64("classifier"))},
		LengthPenalty: float32(c.Float64("length-penalty")), MaxHops: c.Int("max-hops"), Encoder: encS, Chat: chatS, Examples: exS, Out: c.String("out"), Log: c.App.ErrWriter}
	if p := c.String("kg"); p != "" {
		if cfg.Graph, err = backends.Default().Load(ctx, p, kg.OpenOptions{}); err != nil {
			return err
		}
	}
	if a := c.String("answers"); a != "" {
		counts, err := planeval.LoadAnswerCounts(ctx, splitList(a))
		if err != nil {
			return err
		}
		if missing := planeval.SetAnswers(qs, counts); missing > 0 {
			fmt.Fprintf(c.App.ErrWriter, "--answers: no answers for %d of %d questions (left out of strategy accuracy)\n", missing, len(qs))
		}
	}
	res, err := planeval.Run(ctx, qs, cfg)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		e := json.NewEncoder(c.App.Writer)
		e.SetIndent("", "  ")
		return e.Encode(res)
	}
	_, err = fmt.Fprintf(c.App.Writer, "%s: %s failed=%d\n%s", res.Planner, res.Report, res.Failed, res.Table())
	return err
}
