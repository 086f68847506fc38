package main

import (
	"encoding/json"
	"fmt"

	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/train"
	"github.com/stem-kgqa/stem/tripgnn"
	"github.com/urfave/cli/v2"
)

func evalGNNCommand() *cli.Command {
	encS := catalog.DefaultEncoderSettings()
	ks := kgFlags{backends.Default().NewSettings()}
	return &cli.Command{
		Name:  "eval-gnn",
		Usage: "score the Triple-GNN's guidance graph: recall@K of gold-chain entities against similarity and hop baselines",
		Description: "K = 4 x the number of schema triples of the question's gold path. Every ranking sees the same\n" +
			"subgraph (built with the model's training rule, --max-nodes/--max-neighbors). Baselines: entities by\n" +
			"encoder cosine of entity text and question text, and by hop distance from the question entities then degree.\n" +
			"Answer siblings: questions whose gold relation path reaches gold answers and other entities alike; the\n" +
			"share where the GNN scores an answer above every such sibling, and where they tie.\n\n" +
			"Formats as for stem train gnn, items included.\n\nExample:\n  stem eval-gnn --format pq --questions splits/PQ-2H.test.txt --kg 2H-kb.txt --gnn pq2h.stemgnn --json",
		Flags: append(append(gnnDataFlags(),
			&cli.StringFlag{Name: "gnn", Required: true, Usage: "Triple-GNN checkpoint (stem train gnn)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
		), append(flagsOf(&encS), flagsOf(&ks)...)...),
		Before: before(guard(map[string]float64{"max-nodes": 0, "max-neighbors": 0, "limit": 0}), bind(&encS), bind(&ks)),
		Action: func(c *cli.Context) error { return runEvalGNN(c, encS, ks) },
	}
}

func runEvalGNN(c *cli.Context, encS catalog.EncoderSettings, ks kgFlags) error {
	ctx := c.Context
	gd, err := loadGNNData(c, ks)
	if err != nil {
		return err
	}
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
	items, skipped, err := gd.Label(ctx, b, c.App.ErrWriter)
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
	fmt.Fprintf(c.App.Writer, "answer siblings  %d questions: GNN scores an answer first %.4f, tied %.4f\n", met.SiblingN, met.SiblingAnswerFirst, met.SiblingTied)
	return nil
}
