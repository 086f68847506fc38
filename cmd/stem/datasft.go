package main

import (
	"fmt"
	"strconv"

	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/train/sft"
	"github.com/urfave/cli/v2"
)

// dataSFTCommand writes the assertions S of training items and exports
// the SGDA and SAGB fine-tuning sets (appendix C.1).
func dataSFTCommand() *cli.Command {
	chatS := catalog.DefaultChatSettings()
	return &cli.Command{
		Name:      "sft",
		Usage:     "write assertions for items, then export SGDA and SAGB fine-tuning sets (chat messages and Alpaca JSONL) with a dataset card",
		ArgsUsage: " ",
		Description: "Reads item files written by `stem data chains` or `stem data synth` and gives every usable item one\n" +
			"assertion per masked triple: with prompt P4 through the chat model the --llm-* flags name (--assertions llm,\n" +
			"the default when --llm-model is set), or by rule from the relation names (--assertions verbalizer, the\n" +
			"default otherwise). Items that already carry assertions (synth's LLM wrote them) keep them. An LLM reply\n" +
			"with the wrong number of assertions, or one that changes a triple's [ENTn] labels, is asked for again once,\n" +
			"then the item is written with a \"dropped\" reason and counted in the card, never kept. Items whose\n" +
			"requests fail (server down, timeouts) are not written: rerun with --resume to retry them. With the\n" +
			"response cache on (the default), a rerun gets the same replies back without asking the server, even at\n" +
			"temperature 1.0; change --llm-seed to draw new ones.\n\n" +
			"Writes, in --out DIR:\n" +
			"  items.jsonl           the items with their assertions (resumable: --resume skips the items it holds)\n" +
			"  sgda.messages.jsonl   SGDA set, chat format {\"messages\":[user P1+question, assistant ((assertions), Strategy)]}\n" +
			"  sgda.alpaca.jsonl     SGDA set, Alpaca format {\"instruction\",\"input\",\"output\"}\n" +
			"  sagb.messages.jsonl   SAGB set, chat format (user P2+assertions, assistant masked triples)\n" +
			"  sagb.alpaca.jsonl     SAGB set, Alpaca format\n" +
			"  card.md, card.json    dataset card: counts, hops, strategies, who wrote the assertions, drops\n" +
			"Prompts are P1 and P2 exactly as `--planner llm` sends them with no --llm-examples, so a model\n" +
			"fine-tuned on these files is run that way.\n\n" +
			"Examples:\n" +
			"  stem data sft --items pq2h.chains.jsonl --out sft-pq2h\n" +
			"  stem data sft --items chains.jsonl,synth.jsonl --out sft --llm-base-url http://localhost:8000/v1 \\\n" +
			"        --llm-model Qwen/Qwen3-8B --concurrency 8 --resume --json",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "items", Required: true, Usage: "item file(s) written by stem data chains or stem data synth, comma-separated"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output directory"},
			&cli.StringFlag{Name: "assertions", Usage: "who writes the assertions: llm (prompt P4) or verbalizer (rules); default llm when --llm-model is set"},
			&cli.Float64Flag{Name: "llm-temperature", Value: sft.DefaultTemperature, Category: "llm", Usage: "llm: sampling temperature for P4 (the paper's 1.0; 0 = greedy)"},
			&cli.Int64Flag{Name: "llm-seed", Category: "llm", Usage: "llm: seed sent with every P4 request; with the cache, a new seed draws new assertions"},
			&cli.IntFlag{Name: "llm-max-tokens", Category: "llm", Usage: "llm: longest reply, in tokens (0 = the server's limit)"},
			&cli.IntFlag{Name: "llm-retries", Value: sft.DefaultRetries, Category: "llm", Usage: "llm: times an unusable reply is asked for again before the item is dropped"},
			&cli.IntFlag{Name: "concurrency", Value: 4, Usage: "items asserted at once (the LLM client also keeps at most 4 requests in flight)"},
			&cli.BoolFlag{Name: "resume", Usage: "continue an interrupted run: keep the items DIR/items.jsonl holds and do the rest (options must match)"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as one JSON object"},
		}, flagsOf(&chatS)...),
		Before: before(guard(map[string]float64{"llm-max-tokens": 0, "llm-retries": 0, "concurrency": 1, "llm-temperature": 0}), bind(&chatS)),
		Action: func(c *cli.Context) error { return runDataSFT(c, chatS) },
	}
}

func runDataSFT(c *cli.Context, chatS catalog.ChatSettings) error {
	if c.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: item files go in --items", c.Args().Slice())
	}
	if c.Int("concurrency") < 1 {
		return fmt.Errorf("--concurrency %d: want at least 1", c.Int("concurrency"))
	}
	o := sft.ExportOptions{Items: splitList(c.String("items")), Out: c.String("out"), Config: map[string]string{},
		Workers: c.Int("concurrency"), Resume: c.Bool("resume"), Log: c.App.ErrWriter}
	mode := c.String("assertions")
	if mode == "" {
		mode = "verbalizer"
		if chatS.Model != "" {
			mode = "llm"
		}
	}
	switch mode {
	case "verbalizer":
		o.Asserter = sft.Verbalizer{}
	case "llm":
		chat, err := catalog.OpenChat(chatS)
		if err != nil {
			return err
		}
		defer func() {
			if err := chat.Close(); err != nil {
				fmt.Fprintf(c.App.ErrWriter, "warning: %v\n", err)
			}
		}()
		temp := c.Float64("llm-temperature")
		if temp == 0 {
			temp = -1 // greedy: sft.LLMConfig reads 0 as its default
		}
		a, err := sft.NewLLM(sft.LLMConfig{Chat: chat, Temperature: temp, Seed: c.Int64("llm-seed"),
			MaxTokens: c.Int("llm-max-tokens"), Retries: retries(c.Int("llm-retries"))})
		if err != nil {
			return err
		}
		o.Asserter = a
		o.Config["temperature"] = strconv.FormatFloat(c.Float64("llm-temperature"), 'g', -1, 64)
		o.Config["seed"] = strconv.FormatInt(c.Int64("llm-seed"), 10)
	default:
		return fmt.Errorf("--assertions %q: want llm or verbalizer", mode)
	}
	sum, err := sft.Export(c.Context, o)
	if err != nil {
		return err
	}
	if err := printSummary(c.App.Writer, c.Bool("json"), sum, sum.WriteText); err != nil {
		return err
	}
	return sum.Err()
}

// retries maps the --llm-retries flag (0 = none) to sft.LLMConfig.Retries
// (0 = the default, negative = none).
func retries(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}
