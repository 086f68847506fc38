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
			"With --complex N it also gives the KG date literals (the from and to of position, roster and\n" +
			"marriage CVTs) and writes N complex questions of each kind (conjunction, conjunction-cvt,\n" +
			"superlative, comparative, typed, superlative-number, count: \"how many\", whose gold answer is\n" +
			"the number, relative: a second entity two hops from the answer) to --complex-questions and 4N\n" +
			"to --complex-train, JSON lines with gold answers and gold schema graphs (stem eval --format\n" +
			"synth; stem train planner --format synth).\n" +
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
			&cli.IntFlag{Name: "complex", Usage: "complex questions of each kind to write (0: none, and no date literals in the KG)"},
			&cli.StringFlag{Name: "complex-questions", Usage: "JSON-lines file to write the complex test questions to (with --complex)"},
			&cli.StringFlag{Name: "complex-train", Usage: "JSON-lines file to write the complex training questions to, disjoint from --complex-questions (with --complex)"},
			forceFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("kg synth takes no arguments (got %q); give --out", c.Args().First())
			}
			cfg := synth.Config{Triples: c.Int("triples"), Seed: c.Uint64("seed"), Relations: c.Int("relations"), Questions: c.Int("n-questions"), TrainQuestions: c.Int("n-train"), Complex: c.Int("complex")}
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
			cout, ctout := c.String("complex-questions"), c.String("complex-train")
			if cfg.Complex < 0 {
				return fmt.Errorf("--complex %d: want 0 or more", cfg.Complex)
			}
			if (cout != "" || ctout != "") != (cfg.Complex > 0) {
				return fmt.Errorf("--complex N and --complex-questions or --complex-train go together")
			}
			seen := map[string]bool{}
			for _, p := range []string{out, qout, tout, cout, ctout} {
				if p != "" && seen[p] {
					return fmt.Errorf("--out, --questions, --train-questions, --complex-questions and --complex-train must be different files (%s twice)", p)
				}
				seen[p] = true
			}
			if err := synth.CheckKGName("--out", out); err != nil {
				return fmt.Errorf("kg synth: %w (it writes TSV, or N-Triples to a .nt file)", err)
			}
			for _, o := range []struct{ flag, path string }{{"--out", out}, {"--questions", qout}, {"--train-questions", tout}, {"--complex-questions", cout}, {"--complex-train", ctout}} {
				if o.path == "" {
					continue
				}
				if err := atomicfile.CheckOutput(o.flag, o.path, c.Bool("force")); err != nil {
					return err
				}
			}
			start := time.Now()
			bar := progress.New(c.App.ErrWriter, "synth", int64(cfg.Triples))
			files := synth.Files{KG: out, Questions: qout, Train: tout, Complex: cout, ComplexTrain: ctout}
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
