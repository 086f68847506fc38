package main

import (
	"fmt"

	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/urfave/cli/v2"
)

func reasonCommand() *cli.Command {
	o := runner.DefaultReasonOptions()
	chat := catalog.DefaultChatSettings()
	return &cli.Command{
		Name:      "reason",
		Usage:     "answer a retrieval-only export with an LLM, as RoG's predict_answer.py does, and score the answers",
		ArgsUsage: "EXPORT",
		Description: "EXPORT is what stem eval --out-format paths wrote (or any file whose rows carry id,\n" +
			"question, ground_truth and input, such as a predictions.jsonl). Each row's input, the\n" +
			"\"Reasoning Paths:\" prompt, goes to an OpenAI-compatible chat server (a llama2 wrapper is\n" +
			"taken off: the server applies the model's template) with greedy decoding; the reply is\n" +
			"the row's prediction in --out, RoG's predictions.jsonl. Then the file is scored with\n" +
			"the peers' rules (RoG's evaluate_results.py prints the same Hit, F1, precision and\n" +
			"recall; its \"Accuracy\" is the recall).\n\n" +
			"Example (RoG-7B served by vLLM on a GPU machine):\n" +
			"  stem eval --format webqsp-mini --questions gnnrag_sbert_test.jsonl --gold-paths rog_paths_test.jsonl \\\n" +
			"            --planner pattern --planner-model w.stempat --out paths.jsonl --out-format paths --prompt-template plain\n" +
			"  stem reason --llm-base-url http://gpu:8000/v1 --llm-model rmanluo/RoG --out predictions.jsonl paths.jsonl",
		Flags:  append(append(flagsOf(&o), forceFlag), flagsOf(&chat)...),
		Before: bind(&o, &chat),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("reason takes one EXPORT file (stem eval --out-format paths writes one); got %d arguments", c.NArg())
			}
			o.In, o.Force = c.Args().First(), c.Bool("force")
			return runner.Reason(c.Context, c.App.Writer, c.App.ErrWriter, o, chat)
		},
	}
}
