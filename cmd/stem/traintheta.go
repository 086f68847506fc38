package main

import (
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/urfave/cli/v2"
)

// trainThetaSubcommand calibrates the Breadth threshold θ for an encoder
// on training or dev questions (eval.SweepTheta) and writes it as a
// --config file.
func trainThetaSubcommand() *cli.Command {
	d := runner.NewDataset()
	workers := 2
	s := evalSettings()
	enc := catalog.DefaultEncoderSettings()
	var thetas, out string
	var force bool
	return &cli.Command{
		Name:  "theta",
		Usage: "calibrate the Breadth threshold theta for an encoder on training or dev questions, written as a --config file",
		Description: "Theta decides which KG edges a Breadth step keeps where relation similarity decides: plans whose\n" +
			"relations the KG does not name (an LLM's), and steps where the entity has no edge of the planned\n" +
			"relation. The paper's 0.6 was chosen for Qwen3-Embedding; other encoders score relations on\n" +
			"other scales. This answers the questions once per theta on --thetas with every relation matched\n" +
			"by similarity (--soft-symbols), by default with the gold paths as plans (--planner oracle), prints\n" +
			"the curve and writes the theta with the best F1 (ties: higher Hits@1, then higher theta) to --out\n" +
			"as a --config file for stem eval, ask, compare and serve, beside the encoder it was measured with.\n" +
			"Use training or dev questions, never the test split you report.\n\n" +
			"Example:\n  stem train theta --format pq --questions splits/PQ-3H.dev.txt --kg 3H-kb.txt --out theta.json\n" +
			"  stem eval --config theta.json --format pq --questions splits/PQ-3H.test.txt --kg 3H-kb.txt",
		Flags: append(append(append([]cli.Flag{
			&cli.StringFlag{Name: "thetas", Destination: &thetas, Usage: "comma-separated thresholds to try (default 0.30 to 0.95 by 0.05)"},
			&cli.StringFlag{Name: "out", Destination: &out, Required: true, Usage: "JSON --config file to write the best theta (and the encoder) to"},
			&cli.BoolFlag{Name: "force", Destination: &force, Usage: forceFlag.Usage},
			&cli.IntFlag{Name: "workers", Value: workers, Destination: &workers, Usage: "questions answered at once"},
		}, flagsOf(&d)...), flagsOf(&s)...), flagsOf(&enc)...),
		Before: bind(&d, &s, &enc),
		Action: func(c *cli.Context) error {
			return runner.Theta(c.Context, c.App.Writer, c.App.ErrWriter, d, s, enc, runner.ThetaOptions{Thetas: thetas, Out: out, Force: force, Workers: workers})
		},
	}
}
