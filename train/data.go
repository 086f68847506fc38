package train

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/train/dataset"
	"github.com/stem-kgqa/stem/tripgnn"
)

// Source names what stem train gnn and eval-gnn read: benchmark questions
// or data items, and their KG.
type Source struct {
	// Format is a benchmark format, or "items" (files from stem data
	// chains or synth).
	Format    string
	Questions []string
	QTypes    []string
	GoldPaths string
	// KG names the shared KG, a file or a URL ("" for none); Open opens
	// it (a kg.Registry's Open in the commands: package train opens no
	// KG backend itself). A KG in memory is cut into each question's
	// subgraph; a remote one (kg.Neighbourhooder) gives each question its
	// neighbourhood there, as deep as its gold path.
	KG   string
	Open benchmark.OpenKG
	// IDs names a file of the question ids to keep ("" keeps all).
	IDs string
	// Limit keeps that many questions or items, sampled by Seed (0 keeps
	// all).
	Limit int
	Seed  uint64
	// AnswerLabels labels a question's gold answers alone 1 instead of
	// every entity of its gold chain (AnswerLabels); not for items.
	AnswerLabels bool
}

// Data is what LoadData read: benchmark questions, or data items.
type Data struct {
	// Items says the source was data items (Format "items").
	Items     bool
	Questions []benchmark.Question
	DataItems []dataset.Item
	// Graph is the KG in memory (nil over a remote KG, or when each
	// question brings its own graph).
	Graph  *kg.Graph
	remote kg.Neighbourhooder
	src    Source
}

// LoadData reads src's questions or items and opens its KG; over a remote
// KG each question gets its neighbourhood there as its own graph, with a
// progress bar on log.
func LoadData(ctx context.Context, src Source, log io.Writer) (*Data, error) {
	d := &Data{Items: src.Format == "items", src: src}
	var err error
	if d.Items {
		if src.KG == "" {
			return nil, fmt.Errorf("--format items needs --kg FILE: the KG the items were made from")
		}
		if err := d.open(ctx); err != nil {
			return nil, err
		}
		if d.remote != nil {
			return nil, fmt.Errorf("--format items needs --kg FILE, the KG the items were made from; over a SPARQL endpoint, give the questions (--format pq, metaqa, webqsp-mini or rog)")
		}
		d.DataItems, err = ReadItemFiles(src.Questions)
	} else {
		d.Questions, err = d.loadQuestions(ctx, src.Questions, src.QTypes, true)
	}
	if err != nil {
		return nil, err
	}
	if d.Items && src.IDs != "" {
		return nil, fmt.Errorf("--ids keeps benchmark questions by id: not with --format items")
	}
	if src.IDs != "" {
		ids, err := benchmark.ReadIDs(src.IDs)
		if err != nil {
			return nil, fmt.Errorf("--ids: %w", err)
		}
		kept, err := benchmark.KeepIDs(d.Questions, ids, src.IDs)
		if err != nil {
			return nil, fmt.Errorf("--ids: %w", err)
		}
		fmt.Fprintf(log, "ids: kept the %d of %d questions %s lists\n", len(kept), len(d.Questions), src.IDs)
		d.Questions = kept
	}
	d.Questions, d.DataItems = Sample(d.Questions, src.Limit, src.Seed), Sample(d.DataItems, src.Limit, src.Seed)
	if err := d.fetch(ctx, d.Questions, log); err != nil {
		return nil, err
	}
	return d, nil
}

// open opens the source's KG.
func (d *Data) open(ctx context.Context) error {
	if d.src.KG == "" {
		return nil
	}
	if d.src.Open == nil {
		return fmt.Errorf("--kg %s: no way to open a KG was given", d.src.KG)
	}
	r, err := d.src.Open(ctx, d.src.KG)
	if err != nil {
		return err
	}
	if g, ok := r.(*kg.Graph); ok {
		d.Graph = g
	} else if n := kg.Remote(r); n != nil {
		d.remote = n
	} else {
		return fmt.Errorf("--kg %s: a KG neither in memory nor able to fetch a question's neighbourhood", d.src.KG)
	}
	return nil
}

// loadQuestions reads benchmark questions (opening the KG first when
// openKG), each asked of the shared KG when there is one.
func (d *Data) loadQuestions(ctx context.Context, files, qtypes []string, openKG bool) ([]benchmark.Question, error) {
	f, err := benchmark.LookupFormat(d.src.Format)
	if err != nil {
		return nil, err
	}
	if f.SharedKG && d.src.KG == "" {
		return nil, fmt.Errorf("--format %s needs --kg FILE", d.src.Format)
	}
	if openKG {
		if err := d.open(ctx); err != nil {
			return nil, err
		}
	}
	qs, err := f.LoadQuestions(ctx, benchmark.Source{Format: d.src.Format, Questions: files, QTypes: qtypes, GoldPaths: d.src.GoldPaths})
	if d.src.KG != "" {
		// An own-graph format over a shared KG (the union stem data union
		// writes): every question's subgraph is cut from the shared KG.
		for i := range qs {
			qs[i].Graph = nil
		}
	}
	return qs, err
}

// fetch gives each question, over a remote KG, its neighbourhood there as
// its own graph: as many hops as its gold path has (CVTs walked through),
// so the subgraph the Triple-GNN is built on holds the path.
func (d *Data) fetch(ctx context.Context, qs []benchmark.Question, log io.Writer) error {
	if d.remote == nil {
		return nil
	}
	var bar *progress.Bar
	if log != nil {
		bar = progress.New(log, "fetch graphs", int64(len(qs)))
	}
	defer bar.Finish()
	for i := range qs {
		sub, err := d.remote.Neighbourhood(ctx, qs[i].Entities, max(qs[i].Hops, 1))
		if err != nil {
			return fmt.Errorf("fetch the graph of question %s: %w", qs[i].ID, err)
		}
		qs[i].Graph = sub
		bar.Add(1)
	}
	return nil
}

// Label builds the labelled Triple-GNN inputs, counting what it skips.
func (d *Data) Label(ctx context.Context, b *tripgnn.Builder, progress io.Writer) ([]*tripgnn.Input, int, error) {
	if d.Items {
		return LabeledDataAll(ctx, b, d.Graph, d.DataItems, progress)
	}
	items, skipped, err := LabeledAll(ctx, b, d.Graph, d.Questions, progress)
	if err != nil || !d.src.AnswerLabels {
		return items, skipped, err
	}
	items, dropped := AnswerLabels(items)
	return items, skipped + dropped, nil
}

// Dev builds the labelled inputs of the dev files (items, or questions of
// the source's format with their qtypes), a fifth of the source's Limit of
// them sampled by its Seed, over the same KG.
func (d *Data) Dev(ctx context.Context, files, qtypes []string, b *tripgnn.Builder) ([]*tripgnn.Input, error) {
	n := max(d.src.Limit/5, 0)
	if d.Items {
		items, err := ReadItemFiles(files)
		if err != nil {
			return nil, err
		}
		dev, _, err := LabeledDataAll(ctx, b, d.Graph, Sample(items, n, d.src.Seed), nil)
		return dev, err
	}
	qs, err := d.loadQuestions(ctx, files, qtypes, false)
	if err != nil {
		return nil, err
	}
	qs = Sample(qs, n, d.src.Seed)
	if err := d.fetch(ctx, qs, nil); err != nil {
		return nil, err
	}
	dev, _, err := LabeledAll(ctx, b, d.Graph, qs, nil)
	if err == nil && d.src.AnswerLabels {
		dev, _ = AnswerLabels(dev)
	}
	return dev, err
}

// ReadItemFiles reads item files written by stem data chains or synth.
func ReadItemFiles(files []string) ([]dataset.Item, error) {
	var all []dataset.Item
	for _, f := range files {
		_, items, err := dataset.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read items: %w", err)
		}
		all = append(all, items...)
	}
	return all, nil
}

// Sample keeps n of qs chosen by seed, in their original order (all of
// them when n is 0 or at least len(qs)).
func Sample[T any](qs []T, n int, seed uint64) []T {
	if n <= 0 || n >= len(qs) {
		return qs
	}
	rng := rand.New(rand.NewPCG(seed, 0x5a3))
	keep := map[int]bool{}
	for _, i := range rng.Perm(len(qs))[:n] {
		keep[i] = true
	}
	var out []T
	for i, q := range qs {
		if keep[i] {
			out = append(out, q)
		}
	}
	return out
}
