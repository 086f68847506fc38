package main

import (
	"fmt"
	"path/filepath"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/urfave/cli/v2"
)

// dataUnanswerableCommand writes the unanswerable variant of a benchmark
// (runner.WriteUnanswerable): its KG without the answer edges of a fixed
// sample of its questions.
func dataUnanswerableCommand() *cli.Command {
	d := runner.NewDataset()
	o := runner.VariantOptions{Fraction: benchmark.DefaultUnanswerableFraction}
	return &cli.Command{
		Name:  "unanswerable",
		Usage: "write a variant of a benchmark whose KG lacks the answers of a fixed sample of its questions",
		Description: "A question is sampled when a hash of its id falls below --fraction (one in five by default):\n" +
			"the same questions whatever the file order or machine. Its answer edges go from the KG: the\n" +
			"last step of its gold relation paths walked from its topic entity (PathQuestion's named paths,\n" +
			"MetaQA's question-type relations, WebQSP's ground paths), every triple of that step ending at a\n" +
			"gold answer; the rest of the walk stays. Questions that shared those triples lose their answer\n" +
			"too and are listed as unreachable; questions whose gold path reaches no answer in the original\n" +
			"KG are never sampled.\n\n" +
			"OUT holds the KG (under --kg's name), copies of the question files, " + runner.ManifestFile + " (the\n" +
			"removed and unreachable ids and the removed triples), " + runner.LostIDsFile + " and " + runner.AnswerableIDFile + ".\n" +
			"stem eval --unanswerable OUT/" + runner.ManifestFile + " over the variant reports how many of the\n" +
			"questions that lost their answer were abstained (--min-confidence) and the Hits@1 of the others;\n" +
			"stem eval --ids OUT/" + runner.AnswerableIDFile + " over the original is the run to compare those with.\n\n" +
			"Example:\n  P=../shared/data/pathquestion\n" +
			"  stem data unanswerable --format pq --questions $P/PQ-3H.txt --kg $P/3H-kb.txt --out pq3h-unanswerable",
		Flags: append(flagsOf(&d),
			&cli.Float64Flag{Name: "fraction", Value: o.Fraction, Usage: "share of the questions whose answer edges are removed, in (0, 1)", Destination: &o.Fraction},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Required: true, Usage: "folder to write the variant into (created)", Destination: &o.Out},
			forceFlag),
		Before: bind(&d),
		Action: func(c *cli.Context) error {
			o.Force = c.Bool("force")
			u, err := runner.WriteUnanswerable(c.Context, d, o, c.App.ErrWriter)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.App.Writer, "wrote %s: %s\n", o.Out, runner.VariantSummary(u))
			if err == nil {
				_, err = fmt.Fprintf(c.App.Writer, "score it: stem eval ... --kg %s --unanswerable %s\n",
					filepath.Join(o.Out, u.Files["kg"][0]), filepath.Join(o.Out, runner.ManifestFile))
			}
			return err
		},
	}
}
