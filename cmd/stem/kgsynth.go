package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/synth"
	"github.com/stem-kgqa/stem/progress"
	"github.com/urfave/cli/v2"
)

// writeAll writes the files of paths atomically, the last first, each
// inside the next one's write (so the first file, the KG, appears last and
// never without the others); fill gets one writer per path, nil for an
// empty path.
func writeAll(paths []string, fill func([]io.Writer) error) error {
	ws := make([]io.Writer, len(paths))
	var step func(i int) error
	step = func(i int) error {
		if i < 0 {
			return fill(ws)
		}
		if paths[i] == "" {
			return step(i - 1)
		}
		return atomicfile.Write(paths[i], 0o644, func(w io.Writer) error {
			ws[i] = w
			return step(i - 1)
		})
	}
	return step(len(paths) - 1)
}

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
			// The KG is written as its name says: N-Triples for .nt, TSV
			// otherwise; a name that says another format is refused.
			nt := false
			if f, ok := kg.FormatOfName(out); ok && f == kg.FormatNTriples {
				nt = true
			} else if err := kg.CheckOutputName("--out", out, kg.FormatTSV); err != nil {
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
			prog := func(done, _ int64) { bar.Set(done) }
			var st synth.Stats
			// The question files are renamed into place first, inside the
			// KG's write, so the KG never appears without its questions.
			err := writeAll([]string{out, qout, tout}, func(ws []io.Writer) error {
				if !nt {
					var err error
					st, err = synth.WriteSplits(c.Context, cfg, ws[0], ws[1], ws[2], prog)
					return err
				}
				enc, err := kg.NewNTriplesEncoder(ws[0], "")
				if err != nil {
					return err
				}
				if st, err = synth.WriteSplits(c.Context, cfg, &tsvToNT{enc: enc}, ws[1], ws[2], prog); err != nil {
					return err
				}
				return enc.Flush()
			})
			bar.Finish()
			if err != nil {
				return fmt.Errorf("kg synth: %w", err)
			}
			w := c.App.Writer
			fmt.Fprintf(w, "wrote %s: %d triples, %d entities, %d relations used (schema %d), %d CVTs, %d namesakes, %d duplicates\n",
				out, st.Triples, st.Entities, st.Relations, st.Schema, st.CVTs, st.Namesakes, st.Duplicates)
			fmt.Fprintf(w, "degree: max %d (%s), median %d, %d hubs (degree >= max(1000, triples/1000))\n",
				st.MaxDegree, st.MaxDegreeEntity, st.MedianDegree, st.Hubs)
			if qout != "" {
				fmt.Fprintf(w, "wrote %s: %d questions (1/2/3 hops: %d/%d/%d; %d through a CVT)\n",
					qout, st.Questions, st.QuestionsByHops[1], st.QuestionsByHops[2], st.QuestionsByHops[3], st.QuestionsViaCVT)
			}
			if tout != "" {
				fmt.Fprintf(w, "wrote %s: %d training questions\n", tout, st.TrainQuestions)
			}
			fmt.Fprintf(w, "time %s, peak memory %s\n", time.Since(start).Round(time.Millisecond), runner.PeakMemory())
			return nil
		},
	}
}

// tsvToNT turns the TSV lines synth writes into N-Triples: synth streams
// its triples as TSV, and a graph of 10^7 triples is not built to export
// it.
type tsvToNT struct {
	enc  *kg.NTriplesEncoder
	line []byte
}

func (t *tsvToNT) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.line = append(t.line, p...)
			break
		}
		t.line = append(t.line, p[:i]...)
		p = p[i+1:]
		f := strings.Split(string(t.line), "\t")
		t.line = t.line[:0]
		if len(f) != 3 {
			return 0, fmt.Errorf("synth wrote a line of %d fields", len(f))
		}
		t.enc.Add(f[0], f[1], f[2])
	}
	return n, nil
}
