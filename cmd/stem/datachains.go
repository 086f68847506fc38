package main

import (
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/train/chains"
	"github.com/urfave/cli/v2"
)

// dataChainsCommand extracts reasoning chains (appendix C.1): one item per
// question with T, T' and the strategy.
func dataChainsCommand() *cli.Command {
	ks := kgFlags{backends.Default().NewSettings()}
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
		Before: bind(&ks),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Required: true, Usage: "question format: pq or metaqa"},
			&cli.StringFlag{Name: "questions", Required: true, Usage: "question file(s), comma-separated"},
			&cli.StringFlag{Name: "kg", Required: true, Usage: "the KG file, or a SPARQL endpoint URL (then --kg-graph and the --sparql-* flags apply)"},
			&cli.StringFlag{Name: "qtype", Usage: "metaqa: question-type file(s), one per --questions file (optional: they give the gold paths, for gold_path_share and --question-hops)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "item file to write (JSON Lines)"},
			&cli.IntFlag{Name: "max-hops", Value: chains.DefaultMaxHops, Usage: "longest chain, in triples"},
			&cli.IntFlag{Name: "max-paths", Value: chains.DefaultMaxPaths, Usage: "most chains kept per question (shared out over the answers; the rest are counted as capped)"},
			&cli.IntFlag{Name: "min-hops", Usage: "prefer chains of at least N triples: an answer nearer than N gets its shortest non-backtracking walks of N triples or more (0 = the shortest chains)"},
			&cli.BoolFlag{Name: "question-hops", Value: true, Usage: "raise --min-hops per question to its gold path's length (PathQuestion's path, MetaQA's qtype): a shortcut to the answer is not the reasoning the question asks for; --question-hops=false gives the plain shortest chains"},
			&cli.BoolFlag{Name: "resume", Usage: "continue an interrupted run: keep the items --out holds and write the rest (its options must match)"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as one JSON object"},
		}, flagsOf(&ks)...),
		Action: func(c *cli.Context) error { return runDataChains(c, ks) },
	}
}

func runDataChains(c *cli.Context, ks kgFlags) error {
	g, err := ks.open(c.Context, c.String("kg"), "auto")
	if err != nil {
		return err
	}
	sum, err := chains.Run(c.Context, chains.RunOptions{Graph: g,
		Format: c.String("format"), Questions: splitList(c.String("questions")), QTypes: splitList(c.String("qtype")),
		KG: c.String("kg"), Out: c.String("out"), Resume: c.Bool("resume"), Log: c.App.ErrWriter,
		Options: chains.Options{MaxHops: c.Int("max-hops"), MaxPaths: c.Int("max-paths"), MinHops: c.Int("min-hops"), QuestionHops: c.Bool("question-hops")},
	})
	if err != nil {
		return err
	}
	return printSummary(c.App.Writer, c.Bool("json"), sum, sum.WriteText)
}
