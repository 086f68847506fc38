package main

import (
	"fmt"
	"time"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/kg/synth"
	"github.com/stem-kgqa/stem/progress"
	"github.com/urfave/cli/v2"
)

// kgSynthCommand is stem kg synth: a synthetic Freebase-shaped KG and
// questions over it, for benchmarking at scales no bundled dataset has.
func kgSynthCommand() *cli.Command {
	return &cli.Command{
		Name:  "synth",
		Usage: "generate a synthetic Freebase-shaped KG (hubs, CVTs, namesakes) and PathQuestion questions over it",
		Description: "Writes --triples triples as TSV (head<TAB>relation<TAB>tail) to --out, or as N-Triples when\n" +
			"--out ends in .nt (as stem kg export writes them, names under Freebase's ns:): thousands of\n" +
			"domain.type.property relations, a power-law degree distribution with hubs (\"United States of\n" +
			"America\", \"Male\": 10^5+ edges at 10M triples), unnamed CVT mediator nodes (m.0...) between e.g.\n" +
			"actors and films, and namesakes (names equal after normalisation) that make linking ambiguous.\n" +
			"With --questions it also writes questions in PathQuestion format whose gold relation paths\n" +
			"(1-3 hops, some through hubs and CVTs) and answers are computed on the generated graph.\n" +
			"With --train-questions it also writes training questions (another random draw, none of them a\n" +
			"test question), for training a planner on the synthetic KG (stem train planner --format pq).\n" +
			"The same --seed gives the same bytes. Use it to measure load time, memory and retrieval at\n" +
			"Freebase scale without Freebase.\n\n" +
			"Next steps:\n" +
			"  stem kg build --out SNAP FILE          # binary snapshot, loads in milliseconds\n" +
			"  stem kg stats SNAP                     # degree distribution, top relations\n" +
			"  stem eval --format pq --questions QFILE --kg SNAP --planner oracle\n\n" +
			"Example: stem kg synth --triples 10000000 --out synth10m.tsv --questions synth10m-q.txt",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "triples", Aliases: []string{"n"}, Required: true, Usage: "number of triples to write"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Required: true, Usage: "file to write the KG to: TSV, or N-Triples when it ends in .nt"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed: the same seed gives the same files"},
			&cli.StringFlag{Name: "questions", Usage: "PathQuestion file to write questions to (default: none)"},
			&cli.IntFlag{Name: "n-questions", Value: synth.DefaultQuestions, Usage: "how many questions to write (fewer if the graph is small)"},
			&cli.StringFlag{Name: "train-questions", Usage: "PathQuestion file to write training questions to, disjoint from --questions (default: none)"},
			&cli.IntFlag{Name: "n-train", Value: synth.DefaultTrainQuestions, Usage: "how many training questions to write"},
			&cli.IntFlag{Name: "relations", Value: synth.DefaultRelations, Usage: "relations in the schema (small graphs use only some)"},
			forceFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("kg synth takes no arguments (got %q); give --out", c.Args().First())
			}
			cfg := synth.Config{Triples: c.Int("triples"), Seed: c.Uint64("seed"), Relations: c.Int("relations"), Questions: c.Int("n-questions"), TrainQuestions: c.Int("n-train")}
			if cfg.Triples <= 0 {
				return fmt.Errorf("--triples %d: want a positive number", cfg.Triples)
			}
			if cfg.Questions <= 0 {
				return fmt.Errorf("--n-questions %d: want a positive number", cfg.Questions)
			}
			if cfg.TrainQuestions <= 0 {
				return fmt.Errorf("--n-train %d: want a positive number", cfg.TrainQuestions)
			}
			if cfg.Relations <= 0 {
				return fmt.Errorf("--relations %d: want a positive number", cfg.Relations)
			}
			out, qout, tout := c.String("out"), c.String("questions"), c.String("train-questions")
			if (qout != "" && qout == out) || (tout != "" && (tout == out || tout == qout)) {
				return fmt.Errorf("--out, --questions and --train-questions must be three different files")
			}
			if err := synth.CheckKGName("--out", out); err != nil {
				return fmt.Errorf("kg synth: %w (it writes TSV, or N-Triples to a .nt file)", err)
			}
			for _, o := range []struct{ flag, path string }{{"--out", out}, {"--questions", qout}, {"--train-questions", tout}} {
				if o.path == "" {
					continue
				}
				if err := atomicfile.CheckOutput(o.flag, o.path, c.Bool("force")); err != nil {
					return err
				}
			}
			start := time.Now()
			bar := progress.New(c.App.ErrWriter, "synth", int64(cfg.Triples))
			files := synth.Files{KG: out, Questions: qout, Train: tout}
			st, err := synth.WriteFiles(c.Context, cfg, files, func(done, _ int64) { bar.Set(done) })
			bar.Finish()
			if err != nil {
				return fmt.Errorf("kg synth: %w", err)
			}
			st.WriteText(c.App.Writer, files)
			fmt.Fprintf(c.App.Writer, "time %s, peak memory %s\n", time.Since(start).Round(time.Millisecond), runner.PeakMemory())
			return nil
		},
	}
}
