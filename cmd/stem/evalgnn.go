package main

import (
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/models/catalog"
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
	gd, err := loadGNNData(c, ks, false)
	if err != nil {
		return err
	}
	sc, err := runner.EvalGNN(c.Context, c.App.ErrWriter, gd, encS, runner.GNNOptions{Subgraph: subgraphOptions(c), GNN: c.String("gnn"), Questions: c.String("questions")})
	if err != nil {
		return err
	}
	return printSummary(c.App.Writer, c.Bool("json"), sc, sc.WriteText)
}
