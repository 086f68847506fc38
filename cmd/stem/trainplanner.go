package main

import (
	"fmt"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/train/selfsup"
	"github.com/urfave/cli/v2"
)

// trainCommand groups the commands that learn models from benchmark data.
func trainCommand() *cli.Command {
	encS := catalog.DefaultEncoderSettings()
	return &cli.Command{
		Name:  "train",
		Usage: "learn models from training data",
		Subcommands: []*cli.Command{
			trainGNNSubcommand(),
			trainThetaSubcommand(),
			trainPeerSubcommand(),
			trainSelectorSubcommand(),
			{
				Name:  "planner",
				Usage: "learn the pattern planner (question pattern -> relation paths + strategy) from questions with gold paths, or from a KG alone",
				Description: "From a KG alone (--from-kg KG, no --format or --questions): questions are synthesized from the KG's\n" +
					"relation paths (starts drawn per relation, every path of up to --max-hops from them, several phrasings per\n" +
					"path written from the relation names) and a pattern model is trained on them. It plans beside the zero-shot\n" +
					"compose planner, adding its path scores (times --prior-weight) to compose's: use it with --planner pattern\n" +
					"--planner-model OUT, or --planner-model OUT alone (see docs/planning.md).\n\n" +
					"Formats:\n" +
					"  pq            PathQuestion: --questions splits/PQ-2H.train.txt[,...]\n" +
					"  metaqa        MetaQA: --questions qa_dev_1hop.txt,qa_dev_2hop.txt --qtype qtype_dev_1hop.txt,qtype_dev_2hop.txt\n" +
					"  webqsp-paths  RoG path files: --questions rog_paths_train.jsonl (ground_paths; no answer counts,\n" +
					"                so the model has no strategy labels)\n" +
					"  items         stem data item files (`stem data synth`, `stem data chains`): each usable item's question,\n" +
					"                its chain from the question entity to the answer slot, and its answer count\n\n" +
					"Training encodes the questions with their entity mention masked and fits a path classifier\n" +
					"(softmax over the training paths): seconds for PathQuestion, about half a minute for WebQSP.\n\n" +
					"Examples:\n  stem train planner --format metaqa --questions qa_dev_1hop.txt,qa_dev_2hop.txt \\\n" +
					"        --qtype qtype_dev_1hop.txt,qtype_dev_2hop.txt --out metaqa.stempat\n" +
					"  stem train planner --from-kg kb.tsv --out kb.stempat\n" +
					"  stem ask --kg kb.tsv --planner-model kb.stempat 'who is the manager of bob martin 's manager ?'",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "format", Usage: "dataset format: pq, metaqa, webqsp-paths, items"},
					&cli.StringFlag{Name: "questions", Usage: "training question file(s), comma-separated"},
					&cli.StringFlag{Name: "from-kg", Usage: "train from this KG file alone: no questions (instead of --format and --questions)"},
					&cli.IntFlag{Name: "max-hops", Category: "from-kg", Usage: "longest relation path synthesized (0 = 3, what compose enumerates)"},
					&cli.IntFlag{Name: "per-relation", Category: "from-kg", Usage: "triples drawn per relation, whose ends are the walks' starts (0 = default)"},
					&cli.IntFlag{Name: "per-path", Category: "from-kg", Usage: "starts kept per relation path (0 = default)"},
					&cli.IntFlag{Name: "phrasings", Category: "from-kg", Usage: "distinct questions written per start and path (0 = default)"},
					&cli.IntFlag{Name: "max-answers", Category: "from-kg", Usage: "leave out a start whose path reaches more entities (0 = default)"},
					&cli.Float64Flag{Name: "prior-weight", Category: "from-kg", Usage: "weight of the model's path scores added to the compose planner's (0 = default)"},
					&cli.StringFlag{Name: "qtype", Usage: "metaqa: question-type file(s), one per --questions file"},
					&cli.StringFlag{Name: "gold-paths", Usage: "webqsp-mini: rog_paths_*.jsonl with the gold relation paths"},
					&cli.StringFlag{Name: "kg", Usage: "optional KG file: gold paths naming relations it lacks are reported"},
					&cli.StringFlag{Name: "out", Required: true, Usage: "model file to write"},
					forceFlag,
					&cli.IntFlag{Name: "k", Usage: "neighbours that vote (0 = default)"},
					&cli.Float64Flag{Name: "temperature", Usage: "vote weight exp((sim-best)/T) (0 = default)"},
					&cli.Float64Flag{Name: "tfidf", Usage: "weight of the TF-IDF similarity in the blend (0 = default, negative = off)"},
					&cli.Float64Flag{Name: "classifier", Usage: "weight of the path classifier in a path's score, 1 = classifier only (0 = default, negative = neighbour vote only)"},
					&cli.IntFlag{Name: "epochs", Usage: "path classifier training passes (0 = default, negative = no classifier)"},
					&cli.IntFlag{Name: "hidden", Usage: "path classifier hidden width (0 = default)"},
					&cli.Float64Flag{Name: "lr", Usage: "path classifier initial learning rate (0 = default)"},
					&cli.Uint64Flag{Name: "seed", Usage: "path classifier seed (initial weights, example order)"},
				}, flagsOf(&encS)...),
				Before: before(guard(map[string]float64{"k": 0, "hidden": 0, "max-hops": 0, "per-relation": 0, "per-path": 0, "phrasings": 0, "max-answers": 0}), bind(&encS)),
				Action: func(c *cli.Context) error { return runTrainPlanner(c, encS) },
			},
		},
	}
}

func runTrainPlanner(c *cli.Context, encS catalog.EncoderSettings) error {
	ctx := c.Context
	if err := atomicfile.CheckOutput("--out", c.String("out"), c.Bool("force"), inputs(c, "questions", "qtype", "kg", "from-kg", "vectors")...); err != nil {
		return err
	}
	o := runner.PlannerOptions{Out: c.String("out"), KG: c.String("kg"), Pattern: pattern.Options{K: c.Int("k"), Temperature: float32(c.Float64("temperature")), TFIDF: float32(c.Float64("tfidf")),
		Classifier: float32(c.Float64("classifier")), Epochs: c.Int("epochs"), Hidden: c.Int("hidden"), LearningRate: float32(c.Float64("lr")), Seed: c.Uint64("seed")}}
	if c.String("from-kg") != "" {
		if c.String("format") != "" || c.String("questions") != "" || c.String("kg") != "" {
			return fmt.Errorf("--from-kg trains from the KG alone: drop --format, --questions and --kg")
		}
		g, err := backends.Default().Load(ctx, c.String("from-kg"), kg.OpenOptions{})
		if err != nil {
			return err
		}
		o.FromKG = selfsup.Options{MaxHops: c.Int("max-hops"), PerRelation: c.Int("per-relation"), PerPath: c.Int("per-path"),
			Phrasings: c.Int("phrasings"), MaxAnswers: c.Int("max-answers"), Seed: c.Uint64("seed"), PriorWeight: float32(c.Float64("prior-weight"))}
		return runner.TrainFromKG(ctx, c.App.ErrWriter, g, encS, o)
	}
	if c.String("format") == "" || c.String("questions") == "" {
		return fmt.Errorf("want --format and --questions (training questions with gold paths), or --from-kg KG (no questions)")
	}
	qs, err := planeval.Load(ctx, benchmark.Source{Format: c.String("format"), Questions: splitList(c.String("questions")), QTypes: splitList(c.String("qtype")), GoldPaths: c.String("gold-paths")})
	if err != nil {
		return err
	}
	if o.KG != "" {
		if o.Graph, err = backends.Default().Load(ctx, o.KG, kg.OpenOptions{}); err != nil {
			return err
		}
	}
	return runner.TrainPlanner(ctx, c.App.ErrWriter, qs, encS, o)
}

// trainPeerSubcommand is stem train peer: the training pairs of the two
// peers whose papers fine-tune a model (GCR, GraphRAFT), from the same
// files stem train planner reads.
func trainPeerSubcommand() *cli.Command {
	return &cli.Command{
		Name:  "peer",
		Usage: "write the training pairs (question, gold relation path) the trained GCR and GraphRAFT stand-ins learn from",
		Description: "Reads the training questions stem train planner reads (same --format, --questions, --qtype,\n" +
			"--gold-paths) and writes one JSON line per question and gold relation path. --gcr-model FILE\n" +
			"learns a path scorer from them, decoded under GCR's KG-Trie in place of its fine-tuned\n" +
			"KG-specialised LLM; --graphraft-model FILE learns a query selector in place of GraphRAFT's\n" +
			"fine-tuned L1. Both train (naive Bayes over the question's words) in milliseconds when the\n" +
			"retriever opens, so the pairs are the model. Nothing of STEM's planner goes into them.\n\n" +
			"Example:\n  stem train peer --format pq --questions splits/PQ-2H.train.txt --out pq2h.pairs.jsonl\n" +
			"  stem compare --format pq --questions splits/PQ-2H.test.txt --kg 2H-kb.txt --strategies gcr,graphraft \\\n" +
			"        --config 'name=gcr-trained,retriever=gcr,gcr-model=pq2h.pairs.jsonl'",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Required: true, Usage: "dataset format: pq, metaqa, webqsp-paths, items"},
			&cli.StringFlag{Name: "questions", Required: true, Usage: "training question file(s), comma-separated"},
			&cli.StringFlag{Name: "qtype", Usage: "metaqa: question-type file(s), one per --questions file"},
			&cli.StringFlag{Name: "gold-paths", Usage: "webqsp-mini: rog_paths_*.jsonl with the gold relation paths"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "pairs file to write (JSON lines)"},
			&cli.BoolFlag{Name: "synthesize", Usage: "GraphRAFT's section 4.1: each question's query synthesised by executing every template around its entities against its gold answers in --kg (pq, metaqa, webqsp-mini), instead of its gold relation paths"},
			&cli.StringFlag{Name: "kg", Usage: "with --synthesize: the KG file the templates run on (pq, metaqa)"},
			&cli.IntFlag{Name: "hops", Value: 2, Usage: "with --synthesize: the longest chain template (--graphraft-hops)"},
			forceFlag,
		},
		Action: func(c *cli.Context) error {
			if err := atomicfile.CheckOutput("--out", c.String("out"), c.Bool("force"), inputs(c, "questions", "qtype", "gold-paths", "kg")...); err != nil {
				return err
			}
			if c.Bool("synthesize") {
				d := runner.NewDataset()
				d.Format, d.Questions, d.QType, d.GoldPaths, d.KG = c.String("format"), splitList(c.String("questions")), splitList(c.String("qtype")), c.String("gold-paths"), c.String("kg")
				pairs, n, err := runner.SynthesizedPairs(c.Context, c.App.ErrWriter, d, c.Int("hops"))
				if err != nil {
					return err
				}
				return runner.WritePairs(c.App.ErrWriter, pairs, n, c.String("out"))
			}
			qs, err := planeval.Load(c.Context, benchmark.Source{Format: c.String("format"), Questions: splitList(c.String("questions")), QTypes: splitList(c.String("qtype")), GoldPaths: c.String("gold-paths")})
			if err != nil {
				return err
			}
			return runner.TrainPeer(c.App.ErrWriter, qs, c.String("out"))
		},
	}
}
