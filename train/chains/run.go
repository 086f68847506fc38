package chains

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/train/dataset"
)

// RunOptions is one `stem data chains` run.
type RunOptions struct {
	// Format is pq or metaqa; Questions the question files, QTypes
	// MetaQA's question-type files (optional: they give gold paths).
	Format    string
	Questions []string
	QTypes    []string
	// KG names the KG, a file or a URL, as the item file's header records
	// it; Out is the item file written.
	KG, Out string
	// Graph is the KG KG names, opened by the caller (kg.Registry). One
	// held in memory (*kg.Graph) is searched whole; one served remotely
	// (a kg.Neighbourhooder: a SPARQL endpoint, a KG too large to hold)
	// gives each question its neighbourhood of MaxHops, which holds every
	// chain of that length, so the items are those of the same KG in a
	// file.
	Graph kg.Reader
	Options
	// Resume keeps the items Out holds and writes the rest.
	Resume bool
	// Log receives a progress bar.
	Log io.Writer
}

// RunSummary is what a Run did: the extraction counts plus where the
// items went.
type RunSummary struct {
	*Summary
	Out     string `json:"out"`
	Card    string `json:"card"`
	Written int    `json:"written"`
	Resumed int    `json:"resumed"`
}

// Run extracts the chains of every question, writing items to Out as they
// come (so an interrupted run resumes), then the dataset card OUT.card.md.
func Run(ctx context.Context, o RunOptions) (*RunSummary, error) {
	opt := o.Options
	// Whether an existing Out may be continued is dataset.Create's rule
	// (--resume); that it is none of the inputs is checked here.
	ins := append(slices.Clone(o.Questions), o.QTypes...)
	if kg.IsPath(o.KG) {
		ins = append(ins, o.KG)
	}
	if err := atomicfile.CheckOutput("--out", o.Out, true, ins...); err != nil {
		return nil, err
	}
	if opt.MaxHops < 1 || opt.MaxPaths < 1 {
		return nil, fmt.Errorf("--max-hops and --max-paths must be at least 1 (got %d and %d)", opt.MaxHops, opt.MaxPaths)
	}
	if opt.MinHops < 0 || opt.MinHops > opt.MaxHops {
		return nil, fmt.Errorf("--min-hops %d: want 0 to --max-hops (%d)", opt.MinHops, opt.MaxHops)
	}
	format, qtypes := o.Format, o.QTypes
	qs, err := loadQuestions(ctx, format, o.Questions, qtypes)
	if err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no questions", strings.Join(o.Questions, ","))
	}
	g, _ := o.Graph.(*kg.Graph)
	remote := kg.Remote(o.Graph)
	if g == nil && remote == nil {
		return nil, fmt.Errorf("--kg %s: a KG neither in memory nor able to fetch a question's neighbourhood", o.KG)
	}
	config := map[string]string{
		"format": format, "kg": kgName(o.KG),
		"max-hops": strconv.Itoa(opt.MaxHops), "max-paths": strconv.Itoa(opt.MaxPaths),
		"min-hops": strconv.Itoa(opt.MinHops), "question-hops": strconv.FormatBool(opt.QuestionHops),
	}
	if format == "metaqa" {
		config["qtype"] = strconv.FormatBool(len(qtypes) > 0) // the qtypes give --question-hops its hop counts
	}
	out := o.Out
	w, resumed, err := dataset.Create(out, "chains", config, o.Resume)
	if err != nil {
		return nil, err
	}
	items := resumed
	sum := &RunSummary{Summary: NewSummary(opt), Out: out, Card: out + ".card.md", Resumed: len(resumed)}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	err = extraction{g: g, remote: remote, opt: opt, w: w, items: &items, sum: sum}.extract(ctx, log, qs)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	title := "Reasoning chains: " + filepath.Base(out)
	card := dataset.NewCard(items)
	if err := atomicfile.Write(sum.Card, 0o644, func(wr io.Writer) error { return card.WriteMarkdown(wr, title) }); err != nil {
		return nil, err
	}
	return sum, nil
}

// extraction is one run of data chains: the KG in memory (g) or the
// remote KG each question's neighbourhood is fetched from, the options,
// and the item file written with what was written to it.
type extraction struct {
	g      *kg.Graph
	remote kg.Neighbourhooder
	opt    Options
	w      *dataset.Writer
	items  *[]dataset.Item
	sum    *RunSummary
}

// extract extracts every question, writing those the file does not
// hold yet. Resumed questions are extracted again (it is cheap and
// deterministic) so the summary covers the whole file.
func (e extraction) extract(ctx context.Context, progressW io.Writer, qs []benchmark.Question) error {
	g, remote, opt, w, items, sum := e.g, e.remote, e.opt, e.w, e.items, e.sum
	var x *Extractor
	if g != nil {
		x = NewExtractor(g, opt)
	}
	bar := progress.New(progressW, "chains", int64(len(qs)))
	defer bar.Finish()
	for i, q := range qs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("data chains stopped after %d of %d questions (rerun with --resume): %w", i, len(qs), err)
			}
		}
		if g == nil {
			sub, err := remote.Neighbourhood(ctx, q.Entities, opt.MaxHops)
			if err != nil {
				return fmt.Errorf("data chains stopped at question %s (rerun with --resume): %w", q.ID, err)
			}
			x = NewExtractor(sub, opt)
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

// kgName is how the item file's header names the KG: a file by its base
// name (the folder may move), a URL whole.
func kgName(kgPath string) string {
	if kg.IsPath(kgPath) {
		return filepath.Base(kgPath)
	}
	return kgPath
}

// loadQuestions reads pq or metaqa questions and refuses files whose
// question ids collide (ids are file base name and line).
func loadQuestions(ctx context.Context, format string, files, qtypes []string) ([]benchmark.Question, error) {
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

// WriteText prints the summary for a person.
func (s *RunSummary) WriteText(w io.Writer) error {
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
	_, err := io.WriteString(w, b.String())
	return err
}
