package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/settings"
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
			grid := eval.DefaultThetas()
			if thetas != "" {
				grid = grid[:0]
				for _, p := range splitList(thetas) {
					v, err := strconv.ParseFloat(p, 32)
					if err != nil || v < -1 || v > 2 {
						return fmt.Errorf("--thetas: %q is not a threshold between -1 and 2", p)
					}
					grid = append(grid, float32(v))
				}
			}
			if err := d.Source().Check(); err != nil {
				return err
			}
			ins := append(append([]string{d.KG, d.GoldPaths, d.IDs, s.PlannerModel}, d.Questions...), d.QType...)
			if err := atomicfile.CheckOutput("--out", out, force, ins...); err != nil {
				return err
			}
			ctx, log := c.Context, c.App.ErrWriter
			data, err := d.Load(ctx, log)
			if err != nil {
				return err
			}
			env, err := d.Env(ctx, data, enc, log)
			if err != nil {
				return err
			}
			defer env.Close()
			s.Tracing.SoftSymbols = true
			open := func(ctx context.Context, th float32) (eval.Answerer, func() error, error) {
				st := s
				st.Tracing.Theta = th
				p, closeP, err := env.Pipeline(ctx, st)
				if err != nil {
					return nil, closeP, err
				}
				return eval.Pipeline{Pipeline: p}, closeP, nil
			}
			points, best, err := eval.SweepTheta(ctx, data.Questions, grid, open, eval.Options{Graph: data.Graph, KeepGoing: true, Workers: max(1, workers), Progress: log})
			if err != nil {
				return err
			}
			if err := eval.WriteThetaTable(c.App.Writer, points, best); err != nil {
				return err
			}
			return writeThetaConfig(out, points[best].Theta, enc, c.App.Writer)
		},
	}
}

// writeThetaConfig writes theta and the encoder settings it was measured
// with as a --config file: loaded by another command, it sets both, so
// the threshold is never used with an encoder it was not calibrated for.
func writeThetaConfig(path string, theta float32, enc catalog.EncoderSettings, w io.Writer) error {
	cfg := map[string]any{"theta": json.Number(strconv.FormatFloat(float64(theta), 'f', 2, 32))}
	def := catalog.DefaultEncoderSettings()
	fields, err := fieldsOf(&enc)
	if err != nil {
		return err
	}
	defFields, err := fieldsOf(&def)
	if err != nil {
		return err
	}
	defaults := settings.Values(defFields)
	for k, v := range settings.Values(fields) {
		// The encoder's identity: its name always, the rest where it is
		// not the default.
		if k == "encoder" || v != defaults[k] && (k == "vectors" || k == "model-dir" || k == "pooling" || k == "model" || k == "base-url") {
			cfg[k] = v
		}
	}
	if err := atomicfile.Write(path, 0o644, func(f io.Writer) error {
		e := json.NewEncoder(f)
		e.SetIndent("", "  ")
		return e.Encode(cfg)
	}); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "wrote %s: theta %.2f for encoder %s (use it with --config %s)\n", path, theta, strings.TrimSpace(string(enc.Encoder)), path)
	return err
}
