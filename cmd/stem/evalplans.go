package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/compose"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/projection/zeroshot"
	"github.com/stem-kgqa/stem/schema"
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

// planned is one question's plan as eval-plans scores it.
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
		steps, ok := planeval.StepsOf(c.Graph)
		if !ok {
			steps = nil
		}
		out.paths = append(out.paths, steps)
		out.triples = append(out.triples, planeval.GraphSteps(c.Graph))
	}
	return out
}

func runEvalPlans(c *cli.Context, encS catalog.EncoderSettings, chatS catalog.ChatSettings, exS plan.ExampleSettings) error {
	ctx := c.Context
	format := c.String("format")
	if c.String("answers") != "" && format != "webqsp-paths" {
		return fmt.Errorf("--answers is for --format webqsp-paths (the other formats give answer counts)")
	}
	qs, err := loadPlanQuestions(ctx, format, c.String("questions"), c.String("qtype"), c.String("gold-paths"))
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
	if a := c.String("answers"); a != "" {
		counts, err := planeval.LoadAnswerCounts(ctx, splitList(a))
		if err != nil {
			return err
		}
		missing := 0
		for i, q := range qs {
			if n, ok := counts[q.ID]; ok {
				qs[i].Answers = n
			} else {
				missing++
			}
		}
		if missing > 0 {
			fmt.Fprintf(c.App.ErrWriter, "--answers: no answers for %d of %d questions (left out of strategy accuracy)\n", missing, len(qs))
		}
	}
	beam := c.Int("beam")
	type predictFunc func(q planQuestion) (planned, error)
	var predict predictFunc
	switch c.String("planner") {
	case "rog-reference":
		if format != "webqsp-paths" && !(format == "webqsp-mini" && c.String("gold-paths") != "") {
			return fmt.Errorf("--planner rog-reference needs --format webqsp-paths, or webqsp-mini with --gold-paths (it scores the RoG predictions of the rog_paths file)")
		}
		predict = func(q planQuestion) (planned, error) {
			ps := q.Reference
			if len(ps) > beam {
				ps = ps[:beam]
			}
			return pathPlan(ps, schema.Precision), nil
		}
	case "llm":
		enc, closeEnc, err := catalog.OpenEncoder(c.Context, encS, c.App.ErrWriter)
		if err != nil {
			return err
		}
		defer closeEnc()
		s := plan.DefaultSettings()
		s.Planner, s.Beam, s.Chat, s.ExampleSettings = "llm", beam, chatS, exS
		a := plan.Assets{Graph: kg.Of(g), Encoder: enc}
		if exS.Examples != "" {
			if a.Examples, err = llmExamples(ctx, exS); err != nil {
				return err
			}
		}
		pl, closePl, err := plan.OpenPlanner(ctx, s, a)
		defer closePl()
		if err != nil {
			return err
		}
		predict = func(q planQuestion) (planned, error) {
			pr, err := pl.Plan(ctx, projection.Input{Question: q.Text, Entities: q.Entities, Mentions: q.Mentions, Graph: q.Graph})
			if err != nil {
				return planned{}, err
			}
			return projectionPlan(pr), nil
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
		if m.Prior().Planner != "" {
			// Trained from the KG alone: it plans beside the zero-shot
			// planner it names, as stem eval and stem ask plan with it.
			if g == nil {
				return fmt.Errorf("--planner-model %s was trained from a KG alone (--from-kg) and plans beside the %s planner: give --kg", c.String("planner-model"), m.Prior().Planner)
			}
			lex, err := catalog.OpenLexicon(ctx, encS, c.App.ErrWriter)
			if err != nil {
				return err
			}
			s := plan.DefaultSettings()
			s.Planner, s.PlannerModel, s.Beam = "pattern", c.String("planner-model"), beam
			pl, closePl, err := plan.OpenPlanner(ctx, s, plan.Assets{Graph: kg.Of(g), Encoder: enc, Lexicon: lex})
			defer closePl()
			if err != nil {
				return err
			}
			predict = func(q planQuestion) (planned, error) {
				pr, err := pl.Plan(ctx, projection.Input{Question: q.Text, Entities: q.Entities, Mentions: q.Mentions})
				if err != nil {
					return planned{}, err
				}
				return projectionPlan(pr), nil
			}
			break
		}
		pl, err := pattern.New(m, enc, pattern.Config{Beam: beam, Graph: kg.Of(g), VoteStrategy: c.Bool("vote-strategy"),
			Options: pattern.Options{K: c.Int("k"), Temperature: float32(c.Float64("temperature")), TFIDF: float32(c.Float64("tfidf")), Centroid: float32(c.Float64("centroid")), Classifier: float32(c.Float64("classifier"))}})
		if err != nil {
			return err
		}
		predict = func(q planQuestion) (planned, error) {
			// A question whose graph names none of its entities (62 of
			// WebQSP-mini's have an empty graph) is planned from its text
			// alone, as with no graph: plans are relation paths, which
			// need no anchor to be scored.
			if q.Graph != nil && len(q.Entities) > 0 {
				pr, err := pl.Plan(ctx, projection.Input{Question: q.Text, Entities: q.Entities, Mentions: q.Mentions, Graph: q.Graph})
				if err != nil {
					return planned{}, err
				}
				return projectionPlan(pr), nil
			}
			pr, err := pl.Predict(ctx, q.Text, q.Entities, q.Mentions)
			if err != nil {
				return planned{}, err
			}
			return pathPlan(projection.Steps(pr.Paths), pr.Strategy), nil
		}
	case "schema", "compose":
		name := c.String("planner")
		ownGraphs := len(qs) > 0 && qs[0].Graph != nil
		if g == nil && !ownGraphs {
			return fmt.Errorf("--planner %s needs --kg FILE, or questions with their own graphs (webqsp-mini, rog): it enumerates the KG's paths from the question's entity", name)
		}
		enc, closeEnc, err := catalog.OpenEncoder(c.Context, encS, c.App.ErrWriter)
		if err != nil {
			return err
		}
		defer closeEnc()
		lex, err := catalog.OpenLexicon(ctx, encS, c.App.ErrWriter)
		if err != nil {
			return err
		}
		// open builds the zero-shot planner over a KG, as a function from
		// a question to its ranked paths.
		type pathFunc func(q planQuestion) ([]projection.ScoredPath, schema.Strategy, error)
		open := func(kgr kg.Reader) (pathFunc, error) {
			if name == "compose" {
				pl, err := compose.New(ctx, kgr, enc, compose.Config{Beam: beam, MaxHops: c.Int("max-hops"), Lexicon: lex})
				if err != nil {
					return nil, err
				}
				return func(q planQuestion) ([]projection.ScoredPath, schema.Strategy, error) {
					pr, err := pl.Predict(ctx, q.Text, q.Entities, q.Mentions)
					return pr.Paths, pr.Strategy, err
				}, nil
			}
			pl, err := zeroshot.New(ctx, kgr, enc, zeroshot.Config{Beam: beam, MaxHops: c.Int("max-hops"), LengthPenalty: float32(c.Float64("length-penalty"))})
			if err != nil {
				return nil, err
			}
			return func(q planQuestion) ([]projection.ScoredPath, schema.Strategy, error) {
				pr, err := pl.Predict(ctx, q.Text, q.Entities, q.Mentions)
				return pr.Paths, pr.Strategy, err
			}, nil
		}
		var shared pathFunc
		if g != nil {
			if shared, err = open(g); err != nil {
				return err
			}
		}
		predict = func(q planQuestion) (planned, error) {
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
		}
	default:
		return fmt.Errorf("--planner %q: want pattern, compose, schema, llm or rog-reference", c.String("planner"))
	}
	items := make([]planeval.Item, 0, len(qs))
	var lines []planLine
	failed := 0
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		pl, err := predict(q)
		lat := time.Since(t0)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failed++
			if failed <= 3 {
				fmt.Fprintf(c.App.ErrWriter, "plan %q: %v\n", q.Text, err)
			}
			pl = planned{} // no plan, the default Precision strategy
		}
		items = append(items, planeval.Item{Gold: q.Gold, Answers: q.Answers, Paths: pl.paths, Triples: pl.triples,
			Strategy: pl.strategy, Strategies: pl.strategies, Latency: lat})
		if c.String("out") != "" {
			lines = append(lines, newPlanLine(q, pl, err))
		}
	}
	if failed > 3 {
		fmt.Fprintf(c.App.ErrWriter, "... and %d more questions could not be planned (--out lists each with its error)\n", failed-3)
	}
	if p := c.String("out"); p != "" {
		err := atomicfile.Write(p, 0o644, func(w io.Writer) error {
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
			return fmt.Errorf("--out: %w", err)
		}
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
	_, err = fmt.Fprintf(c.App.Writer, "%s: %s failed=%d\n%s", c.String("planner"), rep, failed, rep.Table())
	return err
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

func newPlanLine(q planQuestion, pl planned, err error) planLine {
	l := planLine{ID: q.ID, Question: q.Text, Gold: []string{}, Paths: []string{}, HitRank: planeval.HitRank(pl.paths, q.Gold),
		Strategy: pl.strategy.String()}
	for _, g := range q.Gold {
		l.Gold = append(l.Gold, planeval.Format(g))
	}
	for _, p := range pl.paths {
		l.Paths = append(l.Paths, planeval.Format(p))
	}
	if err != nil {
		l.Error = err.Error()
	}
	return l
}
