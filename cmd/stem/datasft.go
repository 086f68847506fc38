package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/train/dataset"
	"github.com/stem-kgqa/stem/train/sft"
	"github.com/urfave/cli/v2"
)

// dataSFTCommand writes the assertions S of training items and exports
// the SGDA and SAGB fine-tuning sets (appendix C.1).
func dataSFTCommand() *cli.Command {
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
		}, llmFlags()...),
		Action: runDataSFT,
	}
}

// Files written by `stem data sft`, relative to --out.
const (
	sftItemsFile = "items.jsonl"
	sftCardMD    = "card.md"
	sftCardJSON  = "card.json"
)

// sftSummary is the printed summary of `stem data sft`.
type sftSummary struct {
	Out        string `json:"out"`
	AssertedBy string `json:"asserted_by"`
	Input      int    `json:"input"`
	sft.RunStats
	SGDA    int            `json:"sgda"`
	SAGB    int            `json:"sagb"`
	Skipped map[string]int `json:"skipped"`
	Files   []string       `json:"files"`
	Card    *sft.Card      `json:"card"`
}

func runDataSFT(c *cli.Context) error {
	ctx := c.Context
	if c.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: item files go in --items", c.Args().Slice())
	}
	files := splitList(c.String("items"))
	if len(files) == 0 {
		return errors.New("--items names no file")
	}
	var input []dataset.Item
	from := map[string]string{}
	for _, f := range files {
		_, items, err := dataset.ReadFile(f)
		if err != nil {
			return err
		}
		for _, it := range items {
			if prev, ok := from[it.ID]; ok {
				return fmt.Errorf("item %q is in both %s and %s: item ids must be unique across --items", it.ID, prev, f)
			}
			from[it.ID] = f
		}
		input = append(input, items...)
	}

	mode := c.String("assertions")
	if mode == "" {
		mode = "verbalizer"
		if c.String("llm-model") != "" {
			mode = "llm"
		}
	}
	var (
		asserter sft.Asserter
		config   = map[string]string{}
		closeLLM = func() error { return nil }
	)
	switch mode {
	case "verbalizer":
		asserter = sft.Verbalizer{}
	case "llm":
		chat, err := openChat(c)
		if err != nil {
			return err
		}
		closeLLM = chat.Close
		temp := c.Float64("llm-temperature")
		if temp == 0 {
			temp = -1 // greedy: sft.LLMConfig reads 0 as its default
		}
		a, err := sft.NewLLM(sft.LLMConfig{Chat: chat, Temperature: temp, Seed: c.Int64("llm-seed"),
			MaxTokens: c.Int("llm-max-tokens"), Retries: retries(c.Int("llm-retries"))})
		if err != nil {
			chat.Close()
			return err
		}
		asserter = a
		config["temperature"] = strconv.FormatFloat(c.Float64("llm-temperature"), 'g', -1, 64)
		config["seed"] = strconv.FormatInt(c.Int64("llm-seed"), 10)
	default:
		return fmt.Errorf("--assertions %q: want llm or verbalizer", mode)
	}
	defer func() { closeLLM() }()
	config["assertions"] = asserter.Source()

	dir := c.String("out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	itemsPath := filepath.Join(dir, sftItemsFile)
	w, prior, err := dataset.Create(itemsPath, "assertions", config, c.Bool("resume"))
	if err != nil {
		return err
	}
	if len(prior) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "resume: %d items already in %s\n", len(prior), itemsPath)
	}
	fmt.Fprintf(c.App.ErrWriter, "assertions by %s for %d items from %d file(s)\n", asserter.Source(), len(input), len(files))
	st, err := sft.AssertItems(ctx, w, input, sft.RunOptions{Asserter: asserter, Workers: c.Int("concurrency"), Progress: c.App.ErrWriter})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w; the items written so far are kept, rerun with --resume to finish", err)
		}
		return err
	}
	if err := closeLLM(); err != nil {
		fmt.Fprintf(c.App.ErrWriter, "warning: %v\n", err)
	}
	closeLLM = func() error { return nil }

	_, items, err := dataset.ReadFile(itemsPath)
	if err != nil {
		return err
	}
	set := sft.Build(items)
	card := sft.NewCard(items, set, asserter.Source())
	card.NotWritten = st.Failed
	outputs := []struct {
		name  string
		exs   []sft.Example
		write func(io.Writer, []sft.Example) error
	}{
		{"sgda.messages.jsonl", set.SGDA, sft.WriteMessages},
		{"sgda.alpaca.jsonl", set.SGDA, sft.WriteAlpaca},
		{"sagb.messages.jsonl", set.SAGB, sft.WriteMessages},
		{"sagb.alpaca.jsonl", set.SAGB, sft.WriteAlpaca},
	}
	for _, o := range outputs {
		if err := atomicfile.Write(filepath.Join(dir, o.name), 0o644, func(wr io.Writer) error { return o.write(wr, o.exs) }); err != nil {
			return err
		}
		card.Export.Files = append(card.Export.Files, o.name)
	}
	title := "SFT data: " + filepath.Base(filepath.Clean(dir))
	if err := atomicfile.Write(filepath.Join(dir, sftCardMD), 0o644, func(wr io.Writer) error { return card.WriteMarkdown(wr, title) }); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, sftCardJSON), 0o644, func(wr io.Writer) error {
		enc := json.NewEncoder(wr)
		enc.SetIndent("", "  ")
		return enc.Encode(card)
	}); err != nil {
		return err
	}

	sum := sftSummary{Out: dir, AssertedBy: asserter.Source(), Input: len(input), RunStats: st,
		SGDA: len(set.SGDA), SAGB: len(set.SAGB), Skipped: set.Skipped, Files: card.Export.Files, Card: &card}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		printSFTSummary(c.App.Writer, &sum)
	}
	if st.Stopped {
		return fmt.Errorf("stopped after %d LLM requests failed in a row (first: %v): is the server up? Rerun with --resume to continue", st.Failed, st.FirstFailure)
	}
	if st.Failed > 0 {
		return fmt.Errorf("%d items were not written because their LLM requests failed (first: %v); rerun with --resume to retry them", st.Failed, st.FirstFailure)
	}
	return nil
}

// retries maps the --llm-retries flag (0 = none) to sft.LLMConfig.Retries
// (0 = the default, negative = none).
func retries(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

func printSFTSummary(w io.Writer, s *sftSummary) {
	fmt.Fprintf(w, "assertions written by %s\n", s.AssertedBy)
	fmt.Fprintf(w, "items: %d read, %d already done, %d asserted, %d kept as they were, %d dropped, %d failed\n",
		s.Input, s.Resumed, s.Asserted, s.Kept, s.Dropped, s.Failed)
	fmt.Fprintf(w, "in %s: %d items, %d usable\n", filepath.Join(s.Out, sftItemsFile), s.Card.Items, s.Card.Usable)
	for _, k := range slices.Sorted(maps.Keys(s.Card.Dropped)) {
		fmt.Fprintf(w, "  dropped: %s: %d\n", k, s.Card.Dropped[k])
	}
	fmt.Fprintf(w, "exported: %d SGDA and %d SAGB examples\n", s.SGDA, s.SAGB)
	for _, k := range slices.Sorted(maps.Keys(s.Skipped)) {
		fmt.Fprintf(w, "  skipped: %s: %d\n", k, s.Skipped[k])
	}
	fmt.Fprintf(w, "wrote %s (and %s, %s, %s)\n", filepath.Join(s.Out, "{sgda,sagb}.{messages,alpaca}.jsonl"), sftItemsFile, sftCardMD, sftCardJSON)
}
