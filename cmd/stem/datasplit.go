package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/urfave/cli/v2"
)

// dataSplitCommand writes the fixed split of a question set by question
// id (benchmark.HalfOf) as two id files.
func dataSplitCommand() *cli.Command {
	return &cli.Command{
		Name:  "split",
		Usage: "split a question set into fixed train and test halves by a hash of the question id",
		Description: "A question goes to the train half when the FNV-1a 64-bit hash of its id is even, to the test half\n" +
			"when it is odd: the split depends on the id alone (no seed, no file order). Writes OUT/train.ids and\n" +
			"OUT/test.ids, one id per line; --ids FILE on stem train gnn, eval-gnn, eval and compare keeps only\n" +
			"the questions FILE lists.\n\n" +
			"Example:\n  stem data split --format webqsp-mini --questions gnnrag_sbert_test.jsonl,gnnrag_lmsr_test.jsonl \\\n" +
			"        --gold-paths rog_paths_test.jsonl --out webqsp-split",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Required: true, Usage: "dataset format: pq, metaqa, webqsp-mini, rog"},
			&cli.StringFlag{Name: "questions", Required: true, Usage: "question file(s), comma-separated"},
			&cli.StringFlag{Name: "qtype", Usage: "metaqa: question-type file(s), one per --questions file"},
			&cli.StringFlag{Name: "gold-paths", Usage: "webqsp-mini, rog: rog_paths_*.jsonl with the gold relation paths"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "folder to write train.ids and test.ids into (created)"},
			forceFlag,
		},
		Action: runDataSplit,
	}
}

func runDataSplit(c *cli.Context) error {
	dir := c.String("out")
	paths := []string{filepath.Join(dir, "train.ids"), filepath.Join(dir, "test.ids")}
	for _, p := range paths {
		if err := atomicfile.CheckOutput("--out", p, c.Bool("force"), inputs(c, "questions", "qtype", "gold-paths")...); err != nil {
			return err
		}
	}
	f, err := benchmark.LookupFormat(c.String("format"))
	if err != nil {
		return err
	}
	qs, err := f.LoadQuestions(c.Context, benchmark.Source{Format: c.String("format"), Questions: splitList(c.String("questions")),
		QTypes: splitList(c.String("qtype")), GoldPaths: c.String("gold-paths")})
	if err != nil {
		return err
	}
	if len(qs) == 0 {
		return fmt.Errorf("no questions in %s", c.String("questions"))
	}
	train, test := benchmark.SplitByID(qs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	for i, half := range [][]benchmark.Question{train, test} {
		if err := atomicfile.Write(paths[i], 0o644, func(w io.Writer) error { return benchmark.WriteIDs(w, half) }); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.App.Writer, "%s: %d questions\n%s: %d questions\n", paths[0], len(train), paths[1], len(test))
	return nil
}
