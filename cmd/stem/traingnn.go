package main

import (
	"fmt"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/train"
	"github.com/stem-kgqa/stem/tripgnn"
	"github.com/urfave/cli/v2"
)

// gnnDataFlags name a question set and its KG for the Triple-GNN commands.
func gnnDataFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Required: true, Usage: "dataset format: pq, metaqa, webqsp-mini, rog, or items (files from stem data chains or synth)"},
		&cli.StringFlag{Name: "questions", Required: true, Usage: "question (or item) file(s), comma-separated"},
		&cli.StringFlag{Name: "kg", Usage: "the shared KG file (pq, metaqa; for webqsp-mini and rog, one KG every question's subgraph is cut from instead of its own graph, see stem data union), or a SPARQL endpoint URL: each question's graph is then its neighbourhood there, as deep as its gold path (--kg-graph and the --sparql-* flags apply)"},
		&cli.StringFlag{Name: "qtype", Usage: "metaqa: question-type file(s), one per --questions file"},
		&cli.StringFlag{Name: "gold-paths", Usage: "webqsp-mini: rog_paths_*.jsonl with the gold relation paths"},
		&cli.IntFlag{Name: "max-nodes", Value: tripgnn.DefaultMaxNodes, Usage: "subgraph cap: most entities per question"},
		&cli.IntFlag{Name: "max-neighbors", Value: tripgnn.DefaultMaxNeighbors, Usage: "subgraph cap: most incident triples a node expands through (a label-blind hash sample)"},
		&cli.StringFlag{Name: "ids", Usage: "keep only the questions whose ids `FILE` lists, one per line (see 'stem data split'); not with --format items"},
		&cli.IntFlag{Name: "limit", Usage: "use N questions, sampled by --seed (0 = all)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed for initial weights, shuffling, sampling and the held-out dev split"},
	}
}

// loadGNNData reads the --format, --questions and --kg c names.
// answers labels the gold answers alone (train.Source.AnswerLabels).
func loadGNNData(c *cli.Context, ks kgFlags, answers bool) (*train.Data, error) {
	return train.LoadData(c.Context, train.Source{Format: c.String("format"), Questions: splitList(c.String("questions")), QTypes: splitList(c.String("qtype")),
		GoldPaths: c.String("gold-paths"), KG: c.String("kg"), Open: backends.Default().Opener(kg.OpenOptions{Settings: ks.Backends}),
		IDs: c.String("ids"), Limit: c.Int("limit"), Seed: c.Uint64("seed"), AnswerLabels: answers}, c.App.ErrWriter)
}

func subgraphOptions(c *cli.Context) tripgnn.SubgraphOptions {
	return tripgnn.SubgraphOptions{MaxNodes: c.Int("max-nodes"), MaxNeighbors: c.Int("max-neighbors")}
}

func trainGNNSubcommand() *cli.Command {
	encS := catalog.DefaultEncoderSettings()
	ks := kgFlags{backends.Default().NewSettings()}
	return &cli.Command{
		Name:  "gnn",
		Usage: "train the Triple-GNN (guidance graph) on questions with gold paths",
		Description: "Each question becomes its KG's neighbourhood of the question entities (as many hops as its gold path\n" +
			"has steps, hubs sampled, see --max-neighbors/--max-nodes) with labels 1 on the gold-chain entities.\n" +
			"The best model on the dev split (--dev, else a held-out 10% of --questions) is saved to --out after\n" +
			"every improvement; --out.loss.svg plots loss and dev recall@K per epoch.\n" +
			"--format items reads item files from stem data chains or synth instead (--questions and --dev): the\n" +
			"schema graph is an item's masked triples, the subgraph as deep as its longest chain, the labels its\n" +
			"subgraph entities or else the entities of its evidence triples; dropped items are skipped.\n\n" +
			"Examples:\n  stem train gnn --format pq --questions splits/PQ-2H.train.txt --dev splits/PQ-2H.dev.txt \\\n" +
			"        --kg 2H-kb.txt --out pq2h.stemgnn\n" +
			"  stem train gnn --format items --questions pq2h.chains.jsonl --dev pq2h-dev.chains.jsonl \\\n" +
			"        --kg 2H-kb.txt --out pq2h.stemgnn",
		Flags: append(append(gnnDataFlags(),
			&cli.StringFlag{Name: "dev", Usage: "dev question file(s) for early stopping (default: 10% of --questions held out)"},
			&cli.StringFlag{Name: "dev-qtype", Usage: "metaqa: qtype file(s) of --dev"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "model file to write"},
			forceFlag,
			&cli.IntFlag{Name: "layers", Value: 3, Usage: "message-passing layers"},
			&cli.IntFlag{Name: "width", Value: 64, Usage: "hidden width"},
			&cli.IntFlag{Name: "epochs", Value: train.DefaultEpochs, Usage: "most passes over the training questions"},
			&cli.IntFlag{Name: "patience", Value: train.DefaultPatience, Usage: "stop after this many epochs without a better dev recall"},
			&cli.IntFlag{Name: "batch", Value: train.DefaultBatch, Usage: "graphs per training step"},
			&cli.Float64Flag{Name: "lr", Value: tripgnn.DefaultLR, Usage: "AdamW learning rate"},
			&cli.StringFlag{Name: "loss", Value: "bce", Usage: "bce (the paper's) or mix (gfm-rag's 0.3 BCE + 0.7 listwise)"},
			&cli.IntFlag{Name: "k-factor", Value: tripgnn.DefaultKFactor, Usage: "guidance graph size K = k-factor x schema triples (paper: 4), stored in the model"},
			&cli.StringFlag{Name: "labels", Value: "chain", Usage: "what the model learns to score 1: chain (every entity of the gold path, the paper's) or answers (the gold answers alone, for judging a reading's answers; questions with no answer in their subgraph are skipped)"},
			&cli.BoolFlag{Name: "plain-mean", Usage: "aggregate messages by the paper's plain mean, without gfm-rag's boundary self-loop (h0 added at every layer)"},
		), append(flagsOf(&encS), flagsOf(&ks)...)...),
		Before: before(guard(map[string]float64{"max-nodes": 0, "max-neighbors": 0, "limit": 0, "layers": 1, "width": 1, "epochs": 1, "patience": 0, "batch": 1, "lr": 1e-12}), bind(&encS), bind(&ks)),
		Action: func(c *cli.Context) error { return runTrainGNN(c, encS, ks) },
	}
}

func runTrainGNN(c *cli.Context, encS catalog.EncoderSettings, ks kgFlags) error {
	var mix float64
	switch c.String("loss") {
	case "bce":
	case "mix":
		mix = 0.7
	default:
		return fmt.Errorf("--loss %q: want bce or mix", c.String("loss"))
	}
	if k := c.Int("k-factor"); k < 1 || k > 64 {
		return fmt.Errorf("--k-factor %d: want a whole number from 1 to 64", k)
	}
	labels := c.String("labels")
	if labels != "chain" && labels != "answers" {
		return fmt.Errorf("--labels %q: want chain or answers", labels)
	}
	if labels == "answers" && c.String("format") == "items" {
		return fmt.Errorf("--labels answers: items carry no answers; use --format pq, metaqa, webqsp-mini or rog")
	}
	gd, err := loadGNNData(c, ks, labels == "answers")
	if err != nil {
		return err
	}
	// Before the encoder is opened and anything is trained.
	if err := atomicfile.CheckOutput("--out", c.String("out"), c.Bool("force"), inputs(c, "questions", "dev", "kg", "qtype", "dev-qtype", "gold-paths", "ids", "vectors")...); err != nil {
		return err
	}
	seed := c.Uint64("seed")
	return runner.TrainGNN(c.Context, c.App.Writer, c.App.ErrWriter, gd, encS, runner.GNNOptions{Subgraph: subgraphOptions(c),
		Model: tripgnn.Config{Layers: c.Int("layers"), Width: c.Int("width"), LR: c.Float64("lr"), LossMix: mix, Seed: seed, KFactor: c.Int("k-factor"), NoBoundary: c.Bool("plain-mean")},
		Fit:   train.Options{Epochs: c.Int("epochs"), Batch: c.Int("batch"), Patience: c.Int("patience"), Seed: seed, Out: c.String("out")},
		Dev:   splitList(c.String("dev")), DevQTypes: splitList(c.String("dev-qtype"))})
}
