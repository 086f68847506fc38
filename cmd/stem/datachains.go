package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/train/chains"
	"github.com/stem-kgqa/stem/train/dataset"
	"github.com/urfave/cli/v2"
)

// dataChainsCommand extracts reasoning chains (appendix C.1): one item per
// question with T, T' and the strategy.
func dataChainsCommand() *cli.Command {
	return &cli.Command{
		Name:  "chains",
		Usage: "extract reasoning chains (all shortest KG paths from the question entities to the answers) and mask them",
		Description: "Writes one item per question to --out (JSON Lines, header kind \"chains\"): every chain triple\n" +
			"(\"evidence\"), the schema graph a planner should write (chains with the same relation pattern kept once,\n" +
			"the gold pattern preferred when known; \"triples\" and their masked form \"masked\", where entities that\n" +
			"are not question entities become [ENT1], [ENT2], ... and the answer's placeholder is numbered last),\n" +
			"the hop count and the strategy (Precision for one answer, Breadth for several).\n" +
			"Questions with no question entity in the KG, or no answer within --max-hops, are written with a\n" +
			"\"dropped\" reason and counted. A dataset card goes to OUT.card.md; the summary (--json: one JSON\n" +
			"object) goes to stdout. gold_path_share is the percentage of questions whose chains contain the\n" +
			"gold path (PathQuestion: all its triples; MetaQA with --qtype: a chain with the qtype's relations).\n" +
			"By default (--question-hops) a question whose gold path has N hops gets chains of at least N triples\n" +
			"when its answer is nearer (\"the gender of X's father\" is not X's own gender, even when they agree);\n" +
			"see package train/chains for the walks this allows.\n\n" +
			"Examples:\n" +
			"  stem data chains --format pq --questions ../shared/data/pathquestion/splits/PQ-2H.train.txt \\\n" +
			"        --kg ../shared/data/pathquestion/2H-kb.txt --out pq2h.chains.jsonl --json\n" +
			"  stem data chains --format metaqa --questions qa_dev_1hop.txt,qa_dev_2hop.txt \\\n" +
			"        --qtype qtype_dev_1hop.txt,qtype_dev_2hop.txt --kg kb.txt --out metaqa.chains.jsonl",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Required: true, Usage: "question format: pq or metaqa"},
			&cli.StringFlag{Name: "questions", Required: true, Usage: "question file(s), comma-separated"},
			&cli.StringFlag{Name: "kg", Required: true, Usage: "the KG file"},
			&cli.StringFlag{Name: "qtype", Usage: "metaqa: question-type file(s), one per --questions file (optional: they give the gold paths, for gold_path_share and --question-hops)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "item file to write (JSON Lines)"},
			&cli.IntFlag{Name: "max-hops", Value: chains.DefaultMaxHops, Usage: "longest chain, in triples"},
			&cli.IntFlag{Name: "max-paths", Value: chains.DefaultMaxPaths, Usage: "most chains kept per question (shared out over the answers; the rest are counted as capped)"},
			&cli.IntFlag{Name: "min-hops", Usage: "prefer chains of at least N triples: an answer nearer than N gets its shortest non-backtracking walks of N triples or more (0 = the shortest chains)"},
			&cli.BoolFlag{Name: "question-hops", Value: true, Usage: "raise --min-hops per question to its gold path's length (PathQuestion's path, MetaQA's qtype): a shortcut to the answer is not the reasoning the question asks for; --question-hops=false gives the plain shortest chains"},
			&cli.BoolFlag{Name: "resume", Usage: "continue an interrupted run: keep the items --out holds and write the rest (its options must match)"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as one JSON object"},
		},
		Action: runDataChains,
	}
}

// chainsSummary is the printed summary: the extraction counts plus where
// the items went.
type chainsSummary struct {
	*chains.Summary
	Out     string `json:"out"`
	Card    string `json:"card"`
	Written int    `json:"written"`
	Resumed int    `json:"resumed"`
}

func runDataChains(c *cli.Context) error {
	ctx := c.Context
	opt := chains.Options{MaxHops: c.Int("max-hops"), MaxPaths: c.Int("max-paths"), MinHops: c.Int("min-hops"), QuestionHops: c.Bool("question-hops")}
	if opt.MaxHops < 1 || opt.MaxPaths < 1 {
		return fmt.Errorf("--max-hops and --max-paths must be at least 1 (got %d and %d)", opt.MaxHops, opt.MaxPaths)
	}
	if opt.MinHops < 0 || opt.MinHops > opt.MaxHops {
		return fmt.Errorf("--min-hops %d: want 0 to --max-hops (%d)", opt.MinHops, opt.MaxHops)
	}
	format := c.String("format")
	qtypes := splitList(c.String("qtype"))
	qs, err := loadChainQuestions(ctx, format, splitList(c.String("questions")), qtypes)
	if err != nil {
		return err
	}
	if len(qs) == 0 {
		return fmt.Errorf("%s: no questions", c.String("questions"))
	}
	g, err := kg.Load(ctx, c.String("kg"), kg.FormatAuto)
	if err != nil {
		return err
	}
	config := map[string]string{
		"format": format, "kg": filepath.Base(c.String("kg")),
		"max-hops": strconv.Itoa(opt.MaxHops), "max-paths": strconv.Itoa(opt.MaxPaths),
		"min-hops": strconv.Itoa(opt.MinHops), "question-hops": strconv.FormatBool(opt.QuestionHops),
	}
	if format == "metaqa" {
		config["qtype"] = strconv.FormatBool(len(qtypes) > 0) // the qtypes give --question-hops its hop counts
	}
	out := c.String("out")
	w, resumed, err := dataset.Create(out, "chains", config, c.Bool("resume"))
	if err != nil {
		return err
	}
	items := resumed
	sum := chainsSummary{Summary: chains.NewSummary(opt), Out: out, Card: out + ".card.md", Resumed: len(resumed)}
	err = extractChains(ctx, c.App.ErrWriter, g, qs, opt, w, &items, &sum)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	title := "Reasoning chains: " + filepath.Base(out)
	card := dataset.NewCard(items)
	if err := atomicfile.Write(sum.Card, 0o644, func(wr io.Writer) error { return card.WriteMarkdown(wr, title) }); err != nil {
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	printChainsSummary(c.App.Writer, &sum)
	return nil
}

// extractChains extracts every question, writing those the file does not
// hold yet. Resumed questions are extracted again (it is cheap and
// deterministic) so the summary covers the whole file.
func extractChains(ctx context.Context, progressW io.Writer, g *kg.Graph, qs []benchmark.Question, opt chains.Options, w *dataset.Writer, items *[]dataset.Item, sum *chainsSummary) error {
	x := chains.NewExtractor(g, opt)
	bar := progress.New(progressW, "chains", int64(len(qs)))
	defer bar.Finish()
	for i, q := range qs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("data chains stopped after %d of %d questions (rerun with --resume): %w", i, len(qs), err)
			}
		}
		it, o := x.Extract(q)
		sum.Add(&it, o)
		if !w.Done(it.ID) {
			if err := w.Write(&it); err != nil {
				return err
			}
			*items = append(*items, it)
			sum.Written++
		}
		bar.Add(1)
	}
	return nil
}

// loadChainQuestions reads pq or metaqa questions and refuses files whose
// question ids collide (ids are file base name and line).
func loadChainQuestions(ctx context.Context, format string, files, qtypes []string) ([]benchmark.Question, error) {
	var qs []benchmark.Question
	switch format {
	case "pq":
		if len(qtypes) > 0 {
			return nil, fmt.Errorf("--qtype is for --format metaqa")
		}
		for _, f := range files {
			part, err := benchmark.LoadPathQuestion(ctx, f)
			if err != nil {
				return nil, err
			}
			qs = append(qs, part...)
		}
	case "metaqa":
		if len(qtypes) > 0 && len(qtypes) != len(files) {
			return nil, fmt.Errorf("--qtype needs one file per --questions file (got %d and %d)", len(qtypes), len(files))
		}
		for i, f := range files {
			qt := ""
			if len(qtypes) > 0 {
				qt = qtypes[i]
			}
			part, err := benchmark.LoadMetaQA(ctx, f, qt)
			if err != nil {
				return nil, err
			}
			qs = append(qs, part...)
		}
	default:
		return nil, fmt.Errorf("--format %q: want pq or metaqa", format)
	}
	seen := make(map[string]bool, len(qs))
	for _, q := range qs {
		if seen[q.ID] {
			return nil, fmt.Errorf("question id %s appears twice: two --questions files share a base name", q.ID)
		}
		seen[q.ID] = true
	}
	return qs, nil
}

func printChainsSummary(w io.Writer, s *chainsSummary) {
	var b strings.Builder
	fmt.Fprintf(&b, "questions           %d (%d written now, %d already in the file)\n", s.N, s.Written, s.Resumed)
	fmt.Fprintf(&b, "with a chain        %d\n", s.WithChain)
	if s.WithGold > 0 {
		fmt.Fprintf(&b, "contain gold path   %d = %.2f%% of questions (%d carry a gold path)\n", s.GoldPath, s.GoldPathShare, s.WithGold)
	}
	fmt.Fprintf(&b, "dropped             %d no question entity in the KG, %d no answer within %d hops\n", s.NoEntity, s.Unreachable, s.MaxHops)
	fmt.Fprintf(&b, "answers out of reach %d (%d not KG entities); %d kept questions miss some answer\n", s.UnreachableAnswers, s.NotInKG, s.Partial)
	fmt.Fprintf(&b, "answer is a question entity %d (closed walks)\n", s.AnswerIsEntity)
	fmt.Fprintf(&b, "chains              %d kept; cap %d per question left out %d chains in %d questions (%d answers without a chain)\n",
		s.Chains, s.MaxPaths, s.CappedChains, s.Capped, s.CappedAnswers)
	dataset.WriteCounts(&b, "hops               ", s.Hops)
	dataset.WriteCounts(&b, "strategies         ", s.Strategies)
	fmt.Fprintf(&b, "items               %s\ncard                %s\n", s.Out, s.Card)
	io.WriteString(w, b.String())
}
