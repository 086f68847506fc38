package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/projection/zeroshot"
	"github.com/stem-kgqa/stem/schema"
	"github.com/urfave/cli/v2"
)

// evalPlansCommand scores planners' relation paths and strategies against
// gold paths, before any retrieval.
func evalPlansCommand() *cli.Command {
	encS := catalog.DefaultEncoderSettings()
	return &cli.Command{
		Name:  "eval-plans",
		Usage: "score a planner's relation paths and strategies against gold paths (any-hit, top-1, path recall, strategy accuracy, latency)",
		Description: "A plan hits when one of its B paths equals a gold path: same relations in order, same\n" +
			"directions where the gold data has them (WebQSP's are undirected). path_recall is the\n" +
			"fraction of a question's gold paths planned; strategy_acc compares the strategy with\n" +
			"Breadth iff more than one gold answer (omitted when the data has no answers).\n\n" +
			"Planners: pattern (--planner-model from `stem train planner`), schema (zero-shot over --kg),\n" +
			"rog-reference (webqsp-paths only: the file's own RoG `prediction` paths).\n\n" +
			"Example:\n  stem eval-plans --format webqsp-paths --questions rog_paths_test.jsonl \\\n" +
			"        --planner pattern --planner-model webqsp.stempat --json",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Required: true, Usage: "dataset format: pq, metaqa, webqsp-paths, items (stem data chains/synth output)"},
			&cli.StringFlag{Name: "questions", Required: true, Usage: "question file(s), comma-separated"},
			&cli.StringFlag{Name: "qtype", Usage: "metaqa: question-type file(s), one per --questions file"},
			&cli.StringFlag{Name: "kg", Usage: "KG file (needed by --planner schema; lets pattern drop paths absent from the KG and count reach for the strategy)"},
			&cli.StringFlag{Name: "planner", Value: "pattern", Usage: "pattern, schema or rog-reference"},
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
		}, flagsOf(&encS)...),
		Before: before(guard(map[string]float64{"beam": 1, "limit": 0, "max-hops": 1, "k": 0}), bind(&encS)),
		Action: func(c *cli.Context) error { return runEvalPlans(c, encS) },
	}
}

func runEvalPlans(c *cli.Context, encS catalog.EncoderSettings) error {
	ctx := c.Context
	format := c.String("format")
	qs, err := loadPlanQuestions(ctx, format, c.String("questions"), c.String("qtype"))
	if err != nil {
		return err
	}
	if n := c.Int("limit"); n > 0 && n < len(qs) {
		qs = qs[:n]
	}
	var g *kg.Graph
	if p := c.String("kg"); p != "" {
		if g, err = kg.Load(ctx, p, kg.FormatAuto); err != nil {
			return err
		}
	}
	beam := c.Int("beam")
	type predictFunc func(q planQuestion) ([][]schema.Step, schema.Strategy, error)
	var predict predictFunc
	switch c.String("planner") {
	case "rog-reference":
		if format != "webqsp-paths" {
			return fmt.Errorf("--planner rog-reference needs --format webqsp-paths (it scores the file's RoG predictions)")
		}
		predict = func(q planQuestion) ([][]schema.Step, schema.Strategy, error) {
			ps := q.Reference
			if len(ps) > beam {
				ps = ps[:beam]
			}
			return ps, schema.Precision, nil
		}
	case "pattern":
		if c.String("planner-model") == "" {
			return fmt.Errorf("--planner pattern needs --planner-model FILE (see `stem train planner`)")
		}
		enc, closeEnc, err := catalog.OpenEncoder(c.Context, encS, c.App.ErrWriter)
		if err != nil {
			return err
		}
		defer closeEnc()
		m, err := pattern.Load(c.String("planner-model"), enc)
		if err != nil {
			return err
		}
		pl, err := pattern.New(m, enc, pattern.Config{Beam: beam, Graph: kg.Of(g), VoteStrategy: c.Bool("vote-strategy"),
			Options: pattern.Options{K: c.Int("k"), Temperature: float32(c.Float64("temperature")), TFIDF: float32(c.Float64("tfidf")), Centroid: float32(c.Float64("centroid")), Classifier: float32(c.Float64("classifier"))}})
		if err != nil {
			return err
		}
		predict = func(q planQuestion) ([][]schema.Step, schema.Strategy, error) {
			pr, err := pl.Predict(ctx, q.Text, q.Entities, q.Mentions)
			if err != nil {
				return nil, 0, err
			}
			return projection.Steps(pr.Paths), pr.Strategy, nil
		}
	case "schema":
		if g == nil {
			return fmt.Errorf("--planner schema needs --kg FILE (it enumerates the KG's paths from the question's entity)")
		}
		enc, closeEnc, err := catalog.OpenEncoder(c.Context, encS, c.App.ErrWriter)
		if err != nil {
			return err
		}
		defer closeEnc()
		pl, err := zeroshot.New(ctx, g, enc, zeroshot.Config{Beam: beam, MaxHops: c.Int("max-hops"), LengthPenalty: float32(c.Float64("length-penalty"))})
		if err != nil {
			return err
		}
		predict = func(q planQuestion) ([][]schema.Step, schema.Strategy, error) {
			pr, err := pl.Predict(ctx, q.Text, q.Entities, q.Mentions)
			if err != nil {
				return nil, 0, err
			}
			return projection.Steps(pr.Paths), pr.Strategy, nil
		}
	default:
		return fmt.Errorf("--planner %q: want pattern, schema or rog-reference", c.String("planner"))
	}
	items := make([]planeval.Item, 0, len(qs))
	failed := 0
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		paths, strat, err := predict(q)
		lat := time.Since(t0)
		if err != nil {
			failed++
			if failed <= 3 {
				fmt.Fprintf(c.App.ErrWriter, "plan %q: %v\n", q.Text, err)
			}
		}
		items = append(items, planeval.Item{Gold: q.Gold, Answers: q.Answers, Paths: paths, Strategy: strat, Latency: lat})
	}
	if c.String("planner") == "rog-reference" {
		// The reference has no strategy: leave strategy accuracy out.
		for i := range items {
			items[i].Answers = -1
		}
	}
	rep := planeval.Score(items, beam)
	out := struct {
		planeval.Report
		Planner string `json:"planner"`
		Failed  int    `json:"failed"`
	}{rep, c.String("planner"), failed}
	if c.Bool("json") {
		e := json.NewEncoder(c.App.Writer)
		e.SetIndent("", "  ")
		return e.Encode(out)
	}
	_, err = fmt.Fprintf(c.App.Writer, "%s: %s failed=%d\n", c.String("planner"), rep, failed)
	return err
}
