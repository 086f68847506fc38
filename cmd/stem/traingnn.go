package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	prog "github.com/stem-kgqa/stem/progress"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/sparql"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/train"
	"github.com/stem-kgqa/stem/train/dataset"
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

// gnnData is what train gnn and eval-gnn read: benchmark questions, or
// data items (--format items), sampled by --limit and --seed, and the KG.
type gnnData struct {
	items  bool // --format items: data holds them
	qs     []benchmark.Question
	data   []dataset.Item
	g      *kg.Graph
	remote *sparql.Graph // --kg URL: questions get their neighbourhoods there
}

// loadGNNData reads the --format, --questions and --kg c names.
func loadGNNData(c *cli.Context, ss sparql.Settings) (*gnnData, error) {
	d := &gnnData{items: c.String("format") == "items"}
	var err error
	if u := c.String("kg"); sparql.IsEndpoint(u) {
		if d.items {
			return nil, fmt.Errorf("--format items needs --kg FILE, the KG the items were made from; over a SPARQL endpoint, give the questions (--format pq, metaqa, webqsp-mini or rog)")
		}
		if d.remote, err = openEndpoint(c.Context, u, ss); err != nil {
			return nil, err
		}
	}
	if d.items {
		if c.String("kg") == "" {
			return nil, fmt.Errorf("--format items needs --kg FILE: the KG the items were made from")
		}
		d.data, d.g, err = loadItemFiles(c.Context, c.String("questions"), c.String("kg"))
	} else {
		d.qs, d.g, err = loadGNNQuestions(c.Context, c.String("format"), c.String("questions"), c.String("kg"), c.String("qtype"), c.String("gold-paths"), nil)
	}
	if err != nil {
		return nil, err
	}
	if d.items && c.String("ids") != "" {
		return nil, fmt.Errorf("--ids keeps benchmark questions by id: not with --format items")
	}
	if d.qs, err = keepIDs(d.qs, c.String("ids"), c.App.ErrWriter); err != nil {
		return nil, err
	}
	d.qs, d.data = sample(d.qs, c.Int("limit"), c.Uint64("seed")), sample(d.data, c.Int("limit"), c.Uint64("seed"))
	if err := d.fetch(c.Context, d.qs, c.App.ErrWriter); err != nil {
		return nil, err
	}
	return d, nil
}

// fetch gives each question, over a SPARQL endpoint, its neighbourhood
// there as its own graph: as many hops as its gold path has (CVTs walked
// through), so the subgraph the Triple-GNN is built on holds the path.
func (d *gnnData) fetch(ctx context.Context, qs []benchmark.Question, progress io.Writer) error {
	if d.remote == nil {
		return nil
	}
	var bar *prog.Bar
	if progress != nil {
		bar = prog.New(progress, "fetch graphs", int64(len(qs)))
	}
	defer bar.Finish()
	for i := range qs {
		sub, err := d.remote.Neighbourhood(ctx, qs[i].Entities, max(qs[i].Hops, 1))
		if err != nil {
			return fmt.Errorf("fetch the graph of question %s: %w", qs[i].ID, err)
		}
		qs[i].Graph = sub
		bar.Add(1)
	}
	return nil
}

// label builds the labelled Triple-GNN inputs, counting what it skips.
func (d *gnnData) label(ctx context.Context, b *tripgnn.Builder, progress io.Writer) ([]*tripgnn.Input, int, error) {
	if d.items {
		return train.LabeledDataAll(ctx, b, d.g, d.data, progress)
	}
	return train.LabeledAll(ctx, b, d.g, d.qs, progress)
}

// loadGNNQuestions reads questions of a benchmark format; g is the shared
// KG when it is loaded already (nil loads kgPath for the formats that have
// one).
func loadGNNQuestions(ctx context.Context, format, questions, kgPath, qtype, goldPaths string, g *kg.Graph) ([]benchmark.Question, *kg.Graph, error) {
	f, err := benchmark.LookupFormat(format)
	if err != nil {
		return nil, nil, err
	}
	if f.SharedKG && kgPath == "" {
		return nil, nil, fmt.Errorf("--format %s needs --kg FILE", format)
	}
	if kgPath != "" && g == nil && !sparql.IsEndpoint(kgPath) {
		if g, err = kg.Load(ctx, kgPath, kg.FormatAuto); err != nil {
			return nil, nil, err
		}
	}
	qs, err := f.LoadQuestions(ctx, benchmark.Source{Format: format, Questions: splitList(questions), QTypes: splitList(qtype), GoldPaths: goldPaths})
	if kgPath != "" {
		// An own-graph format over a shared KG (the union stem data union
		// writes): every question's subgraph is cut from the shared KG.
		for i := range qs {
			qs[i].Graph = nil
		}
	}
	return qs, g, err
}

// sample keeps n of qs chosen by seed, in their original order.
func sample[T any](qs []T, n int, seed uint64) []T {
	if n <= 0 || n >= len(qs) {
		return qs
	}
	rng := rand.New(rand.NewPCG(seed, 0x5a3))
	keep := map[int]bool{}
	for _, i := range rng.Perm(len(qs))[:n] {
		keep[i] = true
	}
	var out []T
	for i, q := range qs {
		if keep[i] {
			out = append(out, q)
		}
	}
	return out
}

func subgraphOptions(c *cli.Context) tripgnn.SubgraphOptions {
	return tripgnn.SubgraphOptions{MaxNodes: c.Int("max-nodes"), MaxNeighbors: c.Int("max-neighbors")}
}

func trainGNNSubcommand() *cli.Command {
	encS := catalog.DefaultEncoderSettings()
	ss := sparql.DefaultSettings()
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
			&cli.BoolFlag{Name: "plain-mean", Usage: "aggregate messages by the paper's plain mean, without gfm-rag's boundary self-loop (h0 added at every layer)"},
		), append(flagsOf(&encS), flagsOf(&ss)...)...),
		Before: before(guard(map[string]float64{"max-nodes": 0, "max-neighbors": 0, "limit": 0, "layers": 1, "width": 1, "epochs": 1, "patience": 0, "batch": 1, "lr": 1e-12}), bind(&encS), bind(&ss)),
		Action: func(c *cli.Context) error { return runTrainGNN(c, encS, ss) },
	}
}

func runTrainGNN(c *cli.Context, encS catalog.EncoderSettings, ss sparql.Settings) error {
	ctx := c.Context
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
	gd, err := loadGNNData(c, ss)
	if err != nil {
		return err
	}
	g, fromItems := gd.g, gd.items
	// Before the encoder is opened and anything is trained.
	if err := atomicfile.CheckOutput("--out", c.String("out"), c.Bool("force"), inputs(c, "questions", "dev", "kg", "qtype", "dev-qtype", "gold-paths", "ids", "vectors")...); err != nil {
		return err
	}
	seed := c.Uint64("seed")
	enc, closeEnc, err := catalog.OpenEncoder(c.Context, encS, c.App.ErrWriter)
	if err != nil {
		return err
	}
	defer closeEnc()
	b := tripgnn.NewBuilder(enc, subgraphOptions(c))
	items, skipped, err := gd.label(ctx, b, c.App.ErrWriter)
	if err != nil {
		return err
	}
	var dev []*tripgnn.Input
	if d := c.String("dev"); d != "" && fromItems {
		ddata, _, err := loadItemFiles(ctx, d, "")
		if err != nil {
			return err
		}
		ddata = sample(ddata, max(c.Int("limit")/5, 0), seed)
		if dev, _, err = train.LabeledDataAll(ctx, b, g, ddata, nil); err != nil {
			return err
		}
	} else if d != "" {
		dqs, _, err := loadGNNQuestions(ctx, c.String("format"), d, c.String("kg"), c.String("dev-qtype"), c.String("gold-paths"), g)
		if err != nil {
			return err
		}
		dqs = sample(dqs, max(c.Int("limit")/5, 0), seed)
		if err := gd.fetch(ctx, dqs, nil); err != nil {
			return err
		}
		if dev, _, err = train.LabeledAll(ctx, b, g, dqs, nil); err != nil {
			return err
		}
	} else {
		items, dev = train.Split(items, 0.1, seed)
	}
	fmt.Fprintf(c.App.ErrWriter, "train gnn: %d training and %d dev questions (%d skipped: dropped items, or no question entity or gold path in the KG)\n", len(items), len(dev), skipped)
	m, err := tripgnn.New(tripgnn.Config{
		EncoderName: enc.Name(), EncoderDim: enc.Dim(),
		Layers: c.Int("layers"), Width: c.Int("width"), LR: c.Float64("lr"), LossMix: mix, Seed: seed,
		KFactor: c.Int("k-factor"), NoBoundary: c.Bool("plain-mean"),
	})
	if err != nil {
		return err
	}
	h, err := train.Fit(ctx, m, items, dev, train.Options{
		Epochs: c.Int("epochs"), Batch: c.Int("batch"), Patience: c.Int("patience"), Seed: seed,
		Out: c.String("out"), Progress: c.App.ErrWriter,
	})
	if err != nil {
		return err
	}
	if info, err := os.Stat(c.String("out")); err == nil {
		fmt.Fprintf(c.App.ErrWriter, "train gnn: %s (%d bytes, %d weights): best dev recall@K %.3f at epoch %d; %s; %s\n",
			c.String("out"), info.Size(), m.NumParams(), h.BestRecall, h.BestEpoch, h.Stopped, h.Elapsed.Round(1e9))
	}
	out := json.NewEncoder(c.App.Writer)
	out.SetIndent("", "  ")
	return out.Encode(h)
}

// loadItemFiles reads item files written by stem data chains or synth and,
// when kgPath is not "", the KG they were made from.
func loadItemFiles(ctx context.Context, files, kgPath string) ([]dataset.Item, *kg.Graph, error) {
	var all []dataset.Item
	for _, f := range splitList(files) {
		_, items, err := dataset.ReadFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("read items: %w", err)
		}
		all = append(all, items...)
	}
	if kgPath == "" {
		return all, nil, nil
	}
	g, err := kg.Load(ctx, kgPath, kg.FormatAuto)
	return all, g, err
}
