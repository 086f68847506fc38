package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/train/dataset"
	"github.com/stem-kgqa/stem/train/synth"
	"github.com/urfave/cli/v2"
)

// dataSynthCommand is Structure-to-Query reverse generation (appendix
// C.2): random-walk subgraphs of a KG turned into questions.
func dataSynthCommand() *cli.Command {
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
		}, llmFlags()...),
		Action: runDataSynth,
	}
}

// synthSummary is the printed summary of a run.
type synthSummary struct {
	synth.Stats
	// UnknownSeeds counts --seed-entities names the KG lacks.
	UnknownSeeds int `json:"unknown_seeds"`
	// Resumed counts items already in the file, skipped; Written those
	// written now.
	Resumed int `json:"resumed"`
	Written int `json:"written"`
	// Usable counts the written items that are not dropped.
	Usable int `json:"usable"`
	// LLMDropped counts the written items an LLM check dropped, by reason.
	LLMDropped map[string]int `json:"llm_dropped,omitempty"`
	// P5 is how many strategies P5 gave, and how many equal the
	// answer-count rule.
	P5Asked     int     `json:"p5_answered,omitempty"`
	P5Agree     int     `json:"p5_agree,omitempty"`
	P5Agreement float64 `json:"p5_agreement,omitempty"`
	Questions   string  `json:"questions"`
	Seconds     float64 `json:"seconds"`
	// SamplesPerSec is emitted items per second of the whole run
	// (sampling, questions and writing).
	SamplesPerSec float64 `json:"samples_per_sec"`
	Out           string  `json:"out"`
	Card          string  `json:"card"`
}

func runDataSynth(c *cli.Context) error {
	ctx := c.Context
	hops, err := synth.ParseHops(c.String("hops"))
	if err != nil {
		return fmt.Errorf("--hops: %w", err)
	}
	mention, err := synth.ParseMention(c.String("mention"))
	if err != nil {
		return fmt.Errorf("--mention: %w", err)
	}
	compile := func(flag string) (*regexp.Regexp, error) {
		if c.String(flag) == "" {
			return nil, nil
		}
		re, err := regexp.Compile(c.String(flag))
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", flag, err)
		}
		return re, nil
	}
	skipEnt, err := compile("skip-entity")
	if err != nil {
		return err
	}
	skipRel, err := compile("skip-relation")
	if err != nil {
		return err
	}
	if c.IsSet("seeds") && c.IsSet("seed-entities") {
		return fmt.Errorf("give --seeds or --seed-entities, not both")
	}
	opt := synth.Options{
		Hops: hops, Branch: c.Float64("branch"), PerSeed: c.Int("per-seed"), Max: c.Int("max"),
		MaxAnswers: c.Int("max-answers"), MaxFanout: c.Int("max-fanout"),
		SkipEntity: skipEnt, SkipRelation: skipRel, MaxDegree: c.Int("max-degree"),
		Seed: c.Uint64("seed"), Workers: c.Int("workers"),
	}
	if opt.PerSeed < 1 || opt.MaxAnswers < 1 || opt.MaxFanout < 1 || opt.Max < 0 || opt.MaxDegree < 0 || c.Int("seeds") < 0 {
		return fmt.Errorf("--per-seed, --max-answers and --max-fanout must be at least 1; --max, --max-degree and --seeds not negative")
	}
	g, err := kg.Load(ctx, c.String("kg"), kg.FormatAuto)
	if err != nil {
		return err
	}
	s, err := synth.NewSampler(g, opt)
	if err != nil {
		return err
	}
	sum := synthSummary{Out: c.String("out"), Card: c.String("out") + ".card.md", Questions: synth.QuestionSourceVerbalizer}
	var seeds []int32
	if f := c.String("seed-entities"); f != "" {
		names, err := readLines(f)
		if err != nil {
			return err
		}
		var unknown []string
		seeds, unknown = s.SeedsByName(names)
		if sum.UnknownSeeds = len(unknown); len(unknown) > 0 {
			fmt.Fprintf(c.App.ErrWriter, "warning: %d seed entities of %s are not in the KG (first: %q)\n", len(unknown), f, unknown[0])
		}
		if len(seeds) == 0 {
			return fmt.Errorf("%s: no seed entity is in the KG", f)
		}
	} else {
		seeds = s.Seeds(c.Int("seeds"))
		if len(seeds) == 0 {
			return fmt.Errorf("%s: no entity may seed a walk (all skipped or hubs)", c.String("kg"))
		}
	}

	var gen *synth.Generator
	if c.String("llm-model") != "" {
		chat, err := openChat(c)
		if err != nil {
			return err
		}
		defer chat.Close()
		gen = &synth.Generator{Chat: chat, Model: chat.Model(), Temperature: c.Float64("temperature"), NoStrategy: c.Bool("no-strategy")}
		sum.Questions = "llm:" + chat.Model()
	}
	// Options that shape the items; --max and --seeds only choose how long
	// a prefix of the same sequence is written, so they may change on
	// resume.
	config := map[string]string{
		"kg": filepath.Base(c.String("kg")), "hops": c.String("hops"), "branch": strconv.FormatFloat(opt.Branch, 'g', -1, 64),
		"per-seed": strconv.Itoa(opt.PerSeed), "max-answers": strconv.Itoa(opt.MaxAnswers), "max-fanout": strconv.Itoa(opt.MaxFanout),
		"skip-entity": c.String("skip-entity"), "skip-relation": c.String("skip-relation"), "max-degree": strconv.Itoa(opt.MaxDegree),
		"mention": string(mention), "seed": strconv.FormatUint(opt.Seed, 10), "questions": sum.Questions,
	}
	if f := c.String("seed-entities"); f != "" {
		config["seed-entities"] = filepath.Base(f)
	}
	if gen != nil {
		config["temperature"] = strconv.FormatFloat(gen.Temperature, 'g', -1, 64)
		config["no-strategy"] = strconv.FormatBool(gen.NoStrategy)
	}
	w, _, err := dataset.Create(sum.Out, "synth", config, c.Bool("resume"))
	if err != nil {
		return err
	}
	total := int64(len(seeds) * opt.PerSeed)
	if opt.Max > 0 {
		total = min(total, int64(opt.Max))
	}
	bar := progress.New(c.App.ErrWriter, "synth", total)
	write := func(it *dataset.Item) error {
		if err := w.Write(it); err != nil {
			return err
		}
		sum.Written++
		if it.Usable() {
			sum.Usable++
		}
		return nil
	}
	var pool *synth.Pool
	if gen != nil {
		sum.LLMDropped = map[string]int{}
		pool = gen.NewPool(ctx, c.Int("llm-workers"), func(it *dataset.Item, res synth.Result) error {
			bar.Add(1)
			if res.Dropped != "" {
				sum.LLMDropped[res.Dropped]++
			}
			if res.Strategy != "" {
				sum.P5Asked++
				if res.StrategyAgrees {
					sum.P5Agree++
				}
			}
			return write(it)
		})
	}
	verb := synth.Verbalizer{Mention: mention, Seed: opt.Seed}
	start := time.Now()
	st, err := s.Run(ctx, seeds, func(it *dataset.Item) error {
		if w.Done(it.ID) {
			sum.Resumed++
			bar.Add(1)
			return nil
		}
		if pool != nil {
			return pool.Submit(it)
		}
		if err := verb.Apply(it); err != nil {
			return err
		}
		bar.Add(1)
		return write(it)
	})
	if pool != nil {
		if perr := pool.Wait(); err == nil {
			err = perr
		}
	}
	bar.Finish()
	sum.Stats = st
	sum.Seconds = time.Since(start).Seconds()
	if sum.Seconds > 0 {
		sum.SamplesPerSec = float64(st.Kept) / sum.Seconds
	}
	if sum.P5Asked > 0 {
		sum.P5Agreement = 100 * float64(sum.P5Agree) / float64(sum.P5Asked)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("data synth stopped after %d items (rerun with --resume to continue): %w", sum.Resumed+sum.Written, err)
	}
	_, items, err := dataset.ReadFile(sum.Out)
	if err != nil {
		return err
	}
	card := dataset.NewCard(items)
	if err := atomicfile.Write(sum.Card, 0o644, func(wr io.Writer) error {
		if err := card.WriteMarkdown(wr, "Reverse-generated questions: "+filepath.Base(sum.Out)); err != nil {
			return err
		}
		return writeSynthCardSection(wr, config, &sum)
	}); err != nil {
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	printSynthSummary(c.App.Writer, &sum)
	return nil
}

// writeSynthCardSection adds what the card of items cannot know: the
// options and the walks that gave no item.
func writeSynthCardSection(w io.Writer, config map[string]string, s *synthSummary) error {
	var b strings.Builder
	b.WriteString("\n## Sampling (this run)\n\n| statistic | value |\n|---|---|\n")
	for _, k := range slices.Sorted(maps.Keys(config)) {
		fmt.Fprintf(&b, "| option %s | `%s` |\n", k, config[k])
	}
	fmt.Fprintf(&b, "| seeds walked | %d |\n| seeds with no usable edge | %d |\n| walks | %d |\n| items emitted | %d |\n",
		s.Seeds, s.NoEdges, s.Attempts, s.Kept)
	for _, k := range slices.Sorted(maps.Keys(s.Dropped)) {
		fmt.Fprintf(&b, "| walks dropped: %s | %d |\n", k, s.Dropped[k])
	}
	if s.UnknownSeeds > 0 {
		fmt.Fprintf(&b, "| seed names not in the KG | %d |\n", s.UnknownSeeds)
	}
	if s.P5Asked > 0 {
		fmt.Fprintf(&b, "| P5 strategy = answer-count rule | %d of %d (%.1f%%) |\n", s.P5Agree, s.P5Asked, s.P5Agreement)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCounts writes a summary line of counts by reason, sorted.
func writeCounts(b *strings.Builder, label string, counts map[string]int) {
	b.WriteString(label)
	if len(counts) == 0 {
		b.WriteString(" none")
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(b, " %s:%d", k, counts[k])
	}
	b.WriteString("\n")
}

func printSynthSummary(w io.Writer, s *synthSummary) {
	var b strings.Builder
	fmt.Fprintf(&b, "seeds        %d walked (%d with no usable edge", s.Seeds, s.NoEdges)
	if s.UnknownSeeds > 0 {
		fmt.Fprintf(&b, ", %d names not in the KG", s.UnknownSeeds)
	}
	fmt.Fprintf(&b, ")\nsamples      %d walks, %d kept (%d written now, %d already in the file)\n", s.Attempts, s.Kept, s.Written, s.Resumed)
	writeCounts(&b, "dropped     ", s.Dropped)
	if s.LLMDropped != nil {
		writeCounts(&b, "llm dropped ", s.LLMDropped)
		if s.P5Asked > 0 {
			fmt.Fprintf(&b, "P5 strategy  agrees with the answer-count rule on %d of %d (%.1f%%)\n", s.P5Agree, s.P5Asked, s.P5Agreement)
		}
	}
	fmt.Fprintf(&b, "usable       %d of the %d items written now\nquestions    %s\n", s.Usable, s.Written, s.Questions)
	fmt.Fprintf(&b, "speed        %.0f samples/s (%.2f s)\nitems        %s\ncard         %s\n", s.SamplesPerSec, s.Seconds, s.Out, s.Card)
	io.WriteString(w, b.String())
}

// readLines reads non-empty lines, skipping # comments.
func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}
