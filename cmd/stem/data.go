package main

import "github.com/urfave/cli/v2"

// dataCommand groups the commands that build training data for the
// planners and the Triple-GNN (appendix C of the paper).
func dataCommand() *cli.Command {
	return &cli.Command{
		Name:  "data",
		Usage: "build training data: reasoning chains, SFT sets for SGDA/SAGB, reverse-generated questions",
		Description: "The three steps feed one another through one item file format (JSON Lines, one item per line,\n" +
			"written as it goes, so an interrupted run resumes with --resume):\n\n" +
			"  stem data chains  questions + KG  -> items with reasoning chains T and their masked form T'\n" +
			"  stem data synth   KG alone        -> items sampled by random walks, with generated questions\n" +
			"  stem data sft     items           -> assertions S, then SGDA and SAGB fine-tuning sets + a dataset card\n\n" +
			"stem data split writes the fixed train/test halves of a question set by a hash of the question id.\n" +
			"stem data union writes the shared KG of a dataset whose questions bring their own graphs.\n" +
			"stem data unanswerable writes a variant of a benchmark whose KG lacks the answers of some questions.\n",
		Subcommands: []*cli.Command{
			dataChainsCommand(),
			dataSynthCommand(),
			dataSFTCommand(),
			dataSplitCommand(),
			dataUnionCommand(),
			dataUnanswerableCommand(),
		},
	}
}
