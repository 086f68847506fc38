package synth

import (
	"bufio"
	"context"
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
)

// RunOptions is one `stem data synth` run: where the KG and the item file
// are, how walks are sampled and how questions are written.
type RunOptions struct {
	KG, Out string
	// Seeds walks from that many seed entities drawn by Seed (0 = every
	// entity that is not skipped or a hub); SeedEntities is a file of seed
	// names instead.
	Seeds        int
	SeedEntities string
	// Hops is a chain-length spec for ParseHops; Mention one for
	// ParseMention; SkipEntity and SkipRelation are regular expressions
	// ("" = none).
	Hops, Mention            string
	SkipEntity, SkipRelation string
	Branch                   float64
	PerSeed, Max             int
	MaxAnswers, MaxFanout    int
	MaxDegree                int
	Seed                     uint64
	Workers                  int
	// Generator, when not nil, writes questions with an LLM (P6, P5),
	// LLMWorkers items at once; otherwise the verbalizer does.
	Generator  *Generator
	LLMWorkers int
	// Resume keeps the items Out holds and writes the rest.
	Resume bool
	// Log receives warnings and a progress bar.
	Log io.Writer
}

// Summary is what a run did.
type Summary struct {
	Stats
	// UnknownSeeds counts SeedEntities names the KG lacks.
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

// Check reports options that cannot work, before anything is read.
func (o RunOptions) Check() error {
	if _, err := ParseHops(o.Hops); err != nil {
		return fmt.Errorf("--hops: %w", err)
	}
	if _, err := ParseMention(o.Mention); err != nil {
		return fmt.Errorf("--mention: %w", err)
	}
	for flag, re := range map[string]string{"skip-entity": o.SkipEntity, "skip-relation": o.SkipRelation} {
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("--%s: %w", flag, err)
		}
	}
	if o.Seeds != 0 && o.SeedEntities != "" {
		return fmt.Errorf("give --seeds or --seed-entities, not both")
	}
	if o.PerSeed < 1 || o.MaxAnswers < 1 || o.MaxFanout < 1 || o.Max < 0 || o.MaxDegree < 0 || o.Seeds < 0 || o.Workers < 0 {
		return fmt.Errorf("--per-seed, --max-answers and --max-fanout must be at least 1; --max, --max-degree, --seeds and --workers not negative")
	}
	if o.Branch < 0 || o.Branch > 1 {
		return fmt.Errorf("--branch %v: want a probability from 0 to 1", o.Branch)
	}
	// Whether an existing Out may be continued is dataset.Create's rule
	// (--resume); that it is none of the inputs is checked here.
	if err := atomicfile.CheckOutput("--out", o.Out, true, o.KG, o.SeedEntities); err != nil {
		return err
	}
	if o.Generator != nil && o.LLMWorkers < 1 {
		return fmt.Errorf("--llm-workers %d: want at least 1", o.LLMWorkers)
	}
	return nil
}

func compile(re string) *regexp.Regexp {
	if re == "" {
		return nil
	}
	return regexp.MustCompile(re) // checked by Check
}

// Run samples items from the KG, writes them to Out as they come (so an
// interrupted run resumes), then writes the dataset card OUT.card.md.
func Run(ctx context.Context, o RunOptions) (*Summary, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	hops, _ := ParseHops(o.Hops)
	mention, _ := ParseMention(o.Mention)
	opt := Options{
		Hops: hops, Branch: o.Branch, PerSeed: o.PerSeed, Max: o.Max, MaxAnswers: o.MaxAnswers, MaxFanout: o.MaxFanout,
		SkipEntity: compile(o.SkipEntity), SkipRelation: compile(o.SkipRelation), MaxDegree: o.MaxDegree, Seed: o.Seed, Workers: o.Workers,
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	g, err := kg.Load(ctx, o.KG, kg.FormatAuto)
	if err != nil {
		return nil, err
	}
	s, err := NewSampler(g, opt)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Out: o.Out, Card: o.Out + ".card.md", Questions: QuestionSourceVerbalizer}
	var seeds []int32
	if f := o.SeedEntities; f != "" {
		names, err := readLines(f)
		if err != nil {
			return nil, err
		}
		var unknown []string
		seeds, unknown = s.SeedsByName(names)
		if sum.UnknownSeeds = len(unknown); len(unknown) > 0 {
			fmt.Fprintf(log, "warning: %d seed entities of %s are not in the KG (first: %q)\n", len(unknown), f, unknown[0])
		}
		if len(seeds) == 0 {
			return nil, fmt.Errorf("%s: no seed entity is in the KG", f)
		}
	} else if seeds = s.Seeds(o.Seeds); len(seeds) == 0 {
		return nil, fmt.Errorf("%s: no entity may seed a walk (all skipped or hubs)", o.KG)
	}
	gen := o.Generator
	if gen != nil {
		sum.Questions = gen.source()
	}
	// Options that shape the items; Max and Seeds only choose how long a
	// prefix of the same sequence is written, so they may change on
	// resume.
	config := map[string]string{
		"kg": filepath.Base(o.KG), "hops": o.Hops, "branch": strconv.FormatFloat(opt.Branch, 'g', -1, 64),
		"per-seed": strconv.Itoa(opt.PerSeed), "max-answers": strconv.Itoa(opt.MaxAnswers), "max-fanout": strconv.Itoa(opt.MaxFanout),
		"skip-entity": o.SkipEntity, "skip-relation": o.SkipRelation, "max-degree": strconv.Itoa(opt.MaxDegree),
		"mention": string(mention), "seed": strconv.FormatUint(opt.Seed, 10), "questions": sum.Questions,
	}
	if f := o.SeedEntities; f != "" {
		config["seed-entities"] = filepath.Base(f)
	}
	if gen != nil {
		config["temperature"] = strconv.FormatFloat(gen.Temperature, 'g', -1, 64)
		config["no-strategy"] = strconv.FormatBool(gen.NoStrategy)
	}
	w, _, err := dataset.Create(sum.Out, "synth", config, o.Resume)
	if err != nil {
		return nil, err
	}
	total := int64(len(seeds) * opt.PerSeed)
	if opt.Max > 0 {
		total = min(total, int64(opt.Max))
	}
	bar := progress.New(log, "synth", total)
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
	var pool *Pool
	if gen != nil {
		sum.LLMDropped = map[string]int{}
		pool = gen.NewPool(ctx, o.LLMWorkers, func(it *dataset.Item, res Result) error {
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
	verb := Verbalizer{Mention: mention, Seed: opt.Seed}
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
	if err == nil {
		bar.Complete() // the total counted walks that may give no item
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
		return nil, fmt.Errorf("data synth stopped after %d items (rerun with --resume to continue): %w", sum.Resumed+sum.Written, err)
	}
	_, items, err := dataset.ReadFile(sum.Out)
	if err != nil {
		return nil, err
	}
	card := dataset.NewCard(items)
	if err := atomicfile.Write(sum.Card, 0o644, func(wr io.Writer) error {
		if err := card.WriteMarkdown(wr, "Reverse-generated questions: "+filepath.Base(sum.Out)); err != nil {
			return err
		}
		return writeCardSection(wr, config, sum)
	}); err != nil {
		return nil, err
	}
	return sum, nil
}

// writeCardSection adds what the card of items cannot know: the options
// and the walks that gave no item.
func writeCardSection(w io.Writer, config map[string]string, s *Summary) error {
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

// WriteText prints the summary for a person.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "seeds        %d walked (%d with no usable edge", s.Seeds, s.NoEdges)
	if s.UnknownSeeds > 0 {
		fmt.Fprintf(&b, ", %d names not in the KG", s.UnknownSeeds)
	}
	fmt.Fprintf(&b, ")\nsamples      %d walks, %d kept (%d written now, %d already in the file)\n", s.Attempts, s.Kept, s.Written, s.Resumed)
	dataset.WriteCounts(&b, "dropped     ", s.Dropped)
	if s.LLMDropped != nil {
		dataset.WriteCounts(&b, "llm dropped ", s.LLMDropped)
		if s.P5Asked > 0 {
			fmt.Fprintf(&b, "P5 strategy  agrees with the answer-count rule on %d of %d (%.1f%%)\n", s.P5Agree, s.P5Asked, s.P5Agreement)
		}
	}
	fmt.Fprintf(&b, "usable       %d of the %d items written now\nquestions    %s\n", s.Usable, s.Written, s.Questions)
	fmt.Fprintf(&b, "speed        %.0f samples/s (%.2f s)\nitems        %s\ncard         %s\n", s.SamplesPerSec, s.Seconds, s.Out, s.Card)
	_, err := io.WriteString(w, b.String())
	return err
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
