package main

import (
	"encoding/json"
	"io"

	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/train/synth"
	"github.com/urfave/cli/v2"
)

// dataSynthCommand is Structure-to-Query reverse generation (appendix
// C.2): random-walk subgraphs of a KG turned into questions.
func dataSynthCommand() *cli.Command {
	chatS := catalog.DefaultChatSettings()
	return &cli.Command{
		Name:  "synth",
		Usage: "generate training questions from random-walk subgraphs of a KG (reverse generation, no human questions)",
		Description: "Walks from seed entities (the question entity, which stays named) along KG edges taken in either\n" +
			"direction; every other entity of the walk becomes an [ENTn] placeholder and the walk's end is the answer\n" +
			"slot. The answers recorded are ALL entities the chain's relations reach from the seed, so each item is\n" +
			"faithful to the KG; its strategy is Precision for one answer, Breadth for several. With --branch P a\n" +
			"chain node also grows a second edge with probability P (a tree; a sibling edge adds another answer).\n\n" +
			"Questions: without --llm-model a deterministic verbalizer writes them from relation words\n" +
			"(\"what is the nationality of X 's spouse ?\"); assertions are left to `stem data sft`. With --llm-model\n" +
			"the model writes the question and one sentence per triple (prompt P6), then names a strategy (P5,\n" +
			"compared with the answer-count rule, which stays the item's strategy); \"No Solution\", a wrong\n" +
			"sentence count, or a question that names a masked entity or misses the seed are written as dropped.\n\n" +
			"Items go to --out as JSON Lines (kind \"synth\"), a dataset card to OUT.card.md, the summary to stdout.\n" +
			"Sampling is deterministic for --seed; --max and --seeds take a prefix of the same sequence, so a rerun\n" +
			"with --resume and a larger --max or --seeds continues where the last one stopped.\n\n" +
			"Examples:\n" +
			"  stem data synth --kg ../shared/data/pathquestion/2H-kb.txt --hops 2 --max-degree 100 --out pq2h.synth.jsonl\n" +
			"  stem data synth --kg kb.txt --hops 1-2 --mention bracket --max 2000 --out metaqa.synth.jsonl \\\n" +
			"        --llm-model qwen3-8b --llm-base-url http://localhost:8000/v1\n" +
			"  stem train planner --format items --questions pq2h.synth.jsonl --out synth.stempat",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "kg", Required: true, Usage: "the KG file"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "item file to write (JSON Lines)"},
			&cli.IntFlag{Name: "seeds", Usage: "walk from N seed entities drawn by --seed (0 = every entity that is not skipped or a hub)"},
			&cli.StringFlag{Name: "seed-entities", Usage: "file of seed entity names, one a line (instead of --seeds)"},
			&cli.StringFlag{Name: "hops", Value: "1-3", Usage: "chain length: N, a range 1-3 (uniform) or weights 1:0.2,2:0.5,3:0.3"},
			&cli.Float64Flag{Name: "branch", Usage: "probability that a chain node grows a second edge (0 = plain chains)"},
			&cli.IntFlag{Name: "per-seed", Value: synth.DefaultPerSeed, Usage: "items per seed entity"},
			&cli.IntFlag{Name: "max", Usage: "stop after N items (0 = no cap)"},
			&cli.IntFlag{Name: "max-answers", Value: synth.DefaultMaxAnswers, Usage: "drop items whose chain reaches more answers (counted)"},
			&cli.IntFlag{Name: "max-fanout", Value: synth.DefaultMaxFanout, Usage: "drop items whose chain reaches more entities at an intermediate step (counted)"},
			&cli.StringFlag{Name: "skip-entity", Value: synth.DefaultSkipEntity, Usage: "regexp of entity names never walked into nor used as seeds (the default matches Freebase CVT-like ids; \"\" = none)"},
			&cli.StringFlag{Name: "skip-relation", Usage: "regexp of relation names never walked"},
			&cli.IntFlag{Name: "max-degree", Usage: "entities with more edges are hubs: a walk may end on one, never start from or pass through it (0 = no cap)"},
			&cli.StringFlag{Name: "mention", Value: string(synth.MentionRaw), Usage: "how questions write the seed entity: raw (PathQuestion: anna_of_holstein-gottorp) or bracket (MetaQA: [Joel Zwick])"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed of the walks and the verbalizer's templates"},
			&cli.IntFlag{Name: "workers", Usage: "sampling goroutines (0 = one per CPU)"},
			&cli.Float64Flag{Name: "temperature", Value: 1.0, Category: "llm", Usage: "llm: sampling temperature of the P6 request (the paper used 1.0)"},
			&cli.IntFlag{Name: "llm-workers", Value: 4, Category: "llm", Usage: "llm: items generated at once"},
			&cli.BoolFlag{Name: "no-strategy", Category: "llm", Usage: "llm: do not ask P5 for a strategy"},
			&cli.BoolFlag{Name: "resume", Usage: "continue an interrupted run: keep the items --out holds and write the rest (its options must match)"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as one JSON object"},
		}, flagsOf(&chatS)...),
		Before: before(guard(map[string]float64{"temperature": 0, "llm-workers": 1}), bind(&chatS)),
		Action: func(c *cli.Context) error { return runDataSynth(c, chatS) },
	}
}

func runDataSynth(c *cli.Context, chatS catalog.ChatSettings) error {
	o := synth.RunOptions{
		KG: c.String("kg"), Out: c.String("out"), Seeds: c.Int("seeds"), SeedEntities: c.String("seed-entities"),
		Hops: c.String("hops"), Mention: c.String("mention"), SkipEntity: c.String("skip-entity"), SkipRelation: c.String("skip-relation"),
		Branch: c.Float64("branch"), PerSeed: c.Int("per-seed"), Max: c.Int("max"), MaxAnswers: c.Int("max-answers"),
		MaxFanout: c.Int("max-fanout"), MaxDegree: c.Int("max-degree"), Seed: c.Uint64("seed"), Workers: c.Int("workers"),
		LLMWorkers: c.Int("llm-workers"), Resume: c.Bool("resume"), Log: c.App.ErrWriter,
	}
	if err := o.Check(); err != nil {
		return err
	}
	if chatS.Model != "" {
		chat, err := catalog.OpenChat(chatS)
		if err != nil {
			return err
		}
		defer chat.Close()
		o.Generator = &synth.Generator{Chat: chat, Model: chat.Model(), Temperature: c.Float64("temperature"), NoStrategy: c.Bool("no-strategy")}
	}
	sum, err := synth.Run(c.Context, o)
	if err != nil {
		return err
	}
	return printSummary(c.App.Writer, c.Bool("json"), sum, sum.WriteText)
}

// printSummary prints a command's result v: one JSON object, or its text
// form, written by text.
func printSummary(w io.Writer, asJSON bool, v any, text func(io.Writer) error) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	return text(w)
}
