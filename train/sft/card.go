package sft

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/train/dataset"
)

// Card is the dataset card of an SFT export: the items' statistics
// (dataset.Card, in the terms of the paper's table 10) and what was
// exported from them.
type Card struct {
	dataset.Card
	// AssertedBy names the writer of this run's assertions ("verbalizer"
	// or "llm:MODEL"); AssertionSources counts who wrote each item's.
	AssertedBy string `json:"asserted_by"`
	// NotWritten counts items whose assertions could not be asked for in
	// the last run (failed requests): they are not in the item file, and a
	// rerun with --resume tries them again.
	NotWritten int `json:"not_written,omitempty"`
	// Export says what the fine-tuning files hold.
	Export ExportCounts `json:"export"`
}

// ExportCounts are the sizes of the exported sets and why items are
// missing from them.
type ExportCounts struct {
	SGDA       int            `json:"sgda"`
	SAGB       int            `json:"sagb"`
	Skipped    map[string]int `json:"skipped"`
	Duplicates map[string]int `json:"duplicates"`
	// Prompts says how the prompts were rendered.
	Prompts string `json:"prompts"`
	// Files lists the exported files, each in both formats.
	Files []string `json:"files"`
}

// ExportPrompts describes the exported prompts for the card.
const ExportPrompts = "zero-shot: P1 and P2 rendered as the llm planner renders them with no --llm-examples (example block \"(none)\", no relation hints), sent as one user message"

// NewCard counts items and the set exported from them.
func NewCard(items []dataset.Item, s Set, assertedBy string) Card {
	return Card{
		Card:       dataset.NewCard(items),
		AssertedBy: assertedBy,
		Export: ExportCounts{
			SGDA: len(s.SGDA), SAGB: len(s.SAGB),
			Skipped: s.Skipped, Duplicates: s.Duplicates,
			Prompts: ExportPrompts,
		},
	}
}

// WriteMarkdown writes the card as a Markdown document: the item table of
// dataset.Card, then the export.
func (c Card) WriteMarkdown(w io.Writer, title string) error {
	if err := c.Card.WriteMarkdown(w, title); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nAssertions of this run written by: %s.\n", c.AssertedBy)
	if c.NotWritten > 0 {
		fmt.Fprintf(&b, "Items not written (their LLM requests failed; rerun with --resume to retry): %d.\n", c.NotWritten)
	}
	fmt.Fprintf(&b, "\n## Fine-tuning sets\n\n| set | examples |\n|---|---|\n| SGDA (P1 + question -> assertions, strategy) | %d |\n| SAGB (P2 + assertions -> masked triples) | %d |\n", c.Export.SGDA, c.Export.SAGB)
	for _, k := range slices.Sorted(maps.Keys(c.Export.Duplicates)) {
		fmt.Fprintf(&b, "| %s duplicates left out | %d |\n", k, c.Export.Duplicates[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Export.Skipped)) {
		fmt.Fprintf(&b, "| items skipped: %s | %d |\n", k, c.Export.Skipped[k])
	}
	fmt.Fprintf(&b, "\nPrompts: %s.\n", c.Export.Prompts)
	if len(c.Export.Files) > 0 {
		b.WriteString("\nFiles: ")
		for i, f := range c.Export.Files {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("`" + f + "`")
		}
		b.WriteString(" (`*.messages.jsonl`: chat `messages` format; `*.alpaca.jsonl`: `instruction`/`input`/`output`).\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
