package main

import (
	"encoding/json"
	"fmt"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/train"
	"github.com/stem-kgqa/stem/train/dataset"
	"github.com/stem-kgqa/stem/tripgnn"
	"github.com/urfave/cli/v2"
)

func evalGNNCommand() *cli.Command {
	encS := catalog.DefaultEncoderSettings()
	return &cli.Command{
		Name:  "eval-gnn",
		Usage: "score the Triple-GNN's guidance graph: recall@K of gold-chain entities against similarity and hop baselines",
		Description: "K = 4 x the number of schema triples of the question's gold path. Every ranking sees the same\n" +
			"subgraph (built with the model's training rule, --max-nodes/--max-neighbors). Baselines: entities by\n" +
			"encoder cosine of entity text and question text, and by hop distance from the question entities then degree.\n\n" +
			"Formats as for stem train gnn, items included.\n\nExample:\n  stem eval-gnn --format pq --questions splits/PQ-2H.test.txt --kg 2H-kb.txt --gnn pq2h.stemgnn --json",
		Flags: append(append(gnnDataFlags(),
			&cli.StringFlag{Name: "gnn", Required: true, Usage: "Triple-GNN checkpoint (stem train gnn)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
		), flagsOf(&encS)...),
		Before: before(guard(map[string]float64{"max-nodes": 0, "max-neighbors": 0, "limit": 0}), bind(&encS)),
		Action: func(c *cli.Context) error { return runEvalGNN(c, encS) },
	}
}

func runEvalGNN(c *cli.Context, encS catalog.EncoderSettings) error {
	ctx := c.Context
	fromItems := c.String("format") == "items"
	var (
		qs   []benchmark.Question
		data []dataset.Item
		g    *kg.Graph
		err  error
	)
	if fromItems {
		if c.String("kg") == "" {
			return fmt.Errorf("--format items needs --kg FILE: the KG the items were made from")
		}
		data, g, err = loadItemFiles(ctx, c.String("questions"), c.String("kg"))
	} else {
		qs, g, err = loadGNNQuestions(ctx, c.String("format"), c.String("questions"), c.String("kg"), c.String("qtype"), c.String("gold-paths"), nil)
	}
	if err != nil {
		return err
	}
	qs, data = sample(qs, c.Int("limit"), c.Uint64("seed")), sample(data, c.Int("limit"), c.Uint64("seed"))
	enc, closeEnc, err := catalog.OpenEncoder(c.Context, encS, c.App.ErrWriter)
	if err != nil {
		return err
	}
	defer closeEnc()
	m, err := tripgnn.Load(c.String("gnn"), enc.Name(), enc.Dim())
	if err != nil {
		return err
	}
	b := tripgnn.NewBuilder(enc, subgraphOptions(c))
	var (
		items   []*tripgnn.Input
		skipped int
	)
	if fromItems {
		items, skipped, err = train.LabeledDataAll(ctx, b, g, data, c.App.ErrWriter)
	} else {
		items, skipped, err = train.LabeledAll(ctx, b, g, qs, c.App.ErrWriter)
	}
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return fmt.Errorf("no question of %s has a question entity and a gold path in the KG", c.String("questions"))
	}
	met, err := train.Evaluate(ctx, m, b, items)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		out := json.NewEncoder(c.App.Writer)
		out.SetIndent("", "  ")
		return out.Encode(struct {
			train.Metrics
			Skipped int `json:"skipped"`
		}{met, skipped})
	}
	fmt.Fprintf(c.App.Writer, "questions        %d (%d skipped)\nrecall@K GNN     %.4f\nrecall@K simil.  %.4f\nrecall@K hops    %.4f\ngold in subgraph %.4f\nmean entities    %.1f\n",
		met.N, skipped, met.RecallGNN, met.RecallSimilarity, met.RecallHops, met.GoldInSubgraph, met.MeanEntities)
	return nil
}
