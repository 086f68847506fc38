package sft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/train/dataset"
)

// Files written by Export, relative to its folder.
const (
	ItemsFile = "items.jsonl"
	CardMD    = "card.md"
	CardJSON  = "card.json"
)

// ExportOptions is one `stem data sft` run.
type ExportOptions struct {
	// Items are the item files (stem data chains or synth output); Out is
	// the folder written.
	Items []string
	Out   string
	// Asserter writes the assertions; Config records what makes its
	// output differ (temperature, seed) in the items file's header.
	Asserter Asserter
	Config   map[string]string
	// Workers is how many items are asserted at once.
	Workers int
	// Resume keeps the items Out's items file holds and does the rest.
	Resume bool
	// Log receives notes and a progress bar.
	Log io.Writer
}

// Summary is what an Export run did.
type Summary struct {
	Out        string `json:"out"`
	AssertedBy string `json:"asserted_by"`
	Input      int    `json:"input"`
	RunStats
	SGDA    int            `json:"sgda"`
	SAGB    int            `json:"sagb"`
	Skipped map[string]int `json:"skipped"`
	Files   []string       `json:"files"`
	Card    *Card          `json:"card"`
}

// Export asserts the items (writing them to OUT/items.jsonl as they come,
// so an interrupted run resumes), then writes the SGDA and SAGB sets in
// chat-messages and Alpaca form and the dataset card. A run whose LLM
// requests failed still exports what it has; Summary.Err says so.
func Export(ctx context.Context, o ExportOptions) (*Summary, error) {
	if len(o.Items) == 0 {
		return nil, errors.New("--items names no file")
	}
	if o.Asserter == nil {
		return nil, errors.New("sft: no asserter")
	}
	if err := atomicfile.CheckOutput("--out", filepath.Join(o.Out, ItemsFile), true, o.Items...); err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	var input []dataset.Item
	from := map[string]string{}
	for _, f := range o.Items {
		_, items, err := dataset.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if prev, ok := from[it.ID]; ok {
				return nil, fmt.Errorf("item %q is in both %s and %s: item ids must be unique across --items", it.ID, prev, f)
			}
			from[it.ID] = f
		}
		input = append(input, items...)
	}
	config := maps.Clone(o.Config)
	if config == nil {
		config = map[string]string{}
	}
	config["assertions"] = o.Asserter.Source()
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	itemsPath := filepath.Join(o.Out, ItemsFile)
	w, prior, err := dataset.Create(itemsPath, "assertions", config, o.Resume)
	if err != nil {
		return nil, err
	}
	if len(prior) > 0 {
		fmt.Fprintf(log, "resume: %d items already in %s\n", len(prior), itemsPath)
	}
	fmt.Fprintf(log, "assertions by %s for %d items from %d file(s)\n", o.Asserter.Source(), len(input), len(o.Items))
	st, err := AssertItems(ctx, w, input, RunOptions{Asserter: o.Asserter, Workers: o.Workers, Progress: o.Log})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted: %w; the items written so far are kept, rerun with --resume to finish", err)
		}
		return nil, err
	}
	_, items, err := dataset.ReadFile(itemsPath)
	if err != nil {
		return nil, err
	}
	set := Build(items)
	card := NewCard(items, set, o.Asserter.Source())
	card.NotWritten = st.Failed
	outputs := []struct {
		name  string
		exs   []Example
		write func(io.Writer, []Example) error
	}{
		{"sgda.messages.jsonl", set.SGDA, WriteMessages},
		{"sgda.alpaca.jsonl", set.SGDA, WriteAlpaca},
		{"sagb.messages.jsonl", set.SAGB, WriteMessages},
		{"sagb.alpaca.jsonl", set.SAGB, WriteAlpaca},
	}
	for _, out := range outputs {
		if err := atomicfile.Write(filepath.Join(o.Out, out.name), 0o644, func(wr io.Writer) error { return out.write(wr, out.exs) }); err != nil {
			return nil, err
		}
		card.Export.Files = append(card.Export.Files, out.name)
	}
	title := "SFT data: " + filepath.Base(filepath.Clean(o.Out))
	if err := atomicfile.Write(filepath.Join(o.Out, CardMD), 0o644, func(wr io.Writer) error { return card.WriteMarkdown(wr, title) }); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(o.Out, CardJSON), 0o644, func(wr io.Writer) error {
		enc := json.NewEncoder(wr)
		enc.SetIndent("", "  ")
		return enc.Encode(card)
	}); err != nil {
		return nil, err
	}
	return &Summary{Out: o.Out, AssertedBy: o.Asserter.Source(), Input: len(input), RunStats: st,
		SGDA: len(set.SGDA), SAGB: len(set.SAGB), Skipped: set.Skipped, Files: card.Export.Files, Card: &card}, nil
}

// Err reports LLM requests that failed: the run stopped, or items were not
// written. Both leave a run to --resume.
func (s *Summary) Err() error {
	if s.Stopped {
		return fmt.Errorf("stopped after %d LLM requests failed in a row (first: %v): is the server up? Rerun with --resume to continue", s.Failed, s.FirstFailure)
	}
	if s.Failed > 0 {
		return fmt.Errorf("%d items were not written because their LLM requests failed (first: %v); rerun with --resume to retry them", s.Failed, s.FirstFailure)
	}
	return nil
}

// WriteText prints the summary for a person.
func (s *Summary) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "assertions written by %s\n", s.AssertedBy)
	fmt.Fprintf(w, "items: %d read, %d already done, %d asserted, %d kept as they were, %d dropped, %d failed\n",
		s.Input, s.Resumed, s.Asserted, s.Kept, s.Dropped, s.Failed)
	fmt.Fprintf(w, "in %s: %d items, %d usable\n", filepath.Join(s.Out, ItemsFile), s.Card.Items, s.Card.Usable)
	for _, k := range slices.Sorted(maps.Keys(s.Card.Dropped)) {
		fmt.Fprintf(w, "  dropped: %s: %d\n", k, s.Card.Dropped[k])
	}
	fmt.Fprintf(w, "exported: %d SGDA and %d SAGB examples\n", s.SGDA, s.SAGB)
	for _, k := range slices.Sorted(maps.Keys(s.Skipped)) {
		fmt.Fprintf(w, "  skipped: %s: %d\n", k, s.Skipped[k])
	}
	_, err := fmt.Fprintf(w, "wrote %s (and %s, %s, %s)\n", filepath.Join(s.Out, "{sgda,sagb}.{messages,alpaca}.jsonl"), ItemsFile, CardMD, CardJSON)
	return err
}
