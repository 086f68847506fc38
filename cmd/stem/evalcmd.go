package main

import (
	"errors"

	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/settings"
	"github.com/urfave/cli/v2"
)

// pipelineSettings and evalSettings are the pipeline's flags' defaults.
var pipelineSettings, evalSettings = runner.PipelineSettings, runner.EvalSettings

func evalCommand() *cli.Command {
	d := runner.NewDataset()
	r := runner.Options{Workers: 1}
	x := runner.DefaultExport()
	s := evalSettings()
	enc := catalog.DefaultEncoderSettings()
	return &cli.Command{
		Name:  "eval",
		Usage: "answer a benchmark's questions and score them as the peer systems do (Hit, Hits@1, F1, coverage, latency)",
		Description: "Formats:\n" + runner.FormatHelp() + "\n" +
			"Planner oracle, the default, builds the schema graphs from each question's gold path, so the\n" +
			"run measures retrieval alone: an upper bound, not what stem scores from the question (--planner\n" +
			"auto, or pattern with --planner-model). The report's first line says which planner ran.\n" +
			"--strategy auto picks Breadth for questions with more than\n" +
			"one gold answer, else Precision (the paper's labelling rule).\n\n" +
			"--out FILE --out-format rog writes RoG's predictions.jsonl, which RoG's and GNN-RAG's\n" +
			"evaluate_results.py score as stem does; --out-format paths writes the retrieval alone,\n" +
			"each question's evidence as the \"Reasoning Paths:\" prompt RoG feeds its LLM, for\n" +
			"stem reason or a reasoning model of your own.\n\n" +
			"Examples:\n  stem eval --format pq --questions ../shared/data/pathquestion/splits/PQ-2H.test.txt \\\n" +
			"            --kg ../shared/data/pathquestion/2H-kb.txt --json\n" +
			"  stem eval --format pq --questions PQ-2H.test.txt --kg 2H-kb.txt --out predictions.jsonl --out-format rog",
		Flags:  append(append(append(append(append([]cli.Flag{configFlag, cpuProfileFlag}, flagsOf(&d)...), flagsOf(&r)...), flagsOf(&x)...), flagsOf(&s)...), flagsOf(&enc)...),
		Before: bindWithConfig(&d, &r, &x, &s, &enc),
		Action: func(c *cli.Context) error {
			stop, err := runner.StartCPUProfile(c.String("cpuprofile"))
			if err != nil {
				return err
			}
			defer stop()
			rep, err := runner.Eval(c.Context, d, r, x, s, enc, c.App.ErrWriter)
			if rep == nil {
				return err
			}
			return errors.Join(err, printSummary(c.App.Writer, r.JSON, rep, rep.WriteTable))
		},
	}
}

// splitList splits a comma-separated flag value, dropping empty parts.
var splitList = settings.SplitList
