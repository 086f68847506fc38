package dataset

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Card is a dataset card: what a file holds, in the terms of the paper's
// table 10 (size, question length, hops, strategies), plus what was dropped
// and why, so nothing is lost without a count.
type Card struct {
	Items  int `json:"items"`
	Usable int `json:"usable"`
	// AvgQuestionChars is the mean question length in characters over
	// usable items (table 10's "Avg Question Length").
	AvgQuestionChars float64 `json:"avg_question_chars"`
	// Hops counts usable items by hop count; the key "4+" gathers longer.
	Hops map[string]int `json:"hops"`
	// Strategies counts usable items by strategy.
	Strategies map[string]int `json:"strategies"`
	// AssertionSources counts usable items by who wrote their assertions
	// ("none" when no assertions were written).
	AssertionSources map[string]int `json:"assertion_sources"`
	// QuestionSources counts usable items by who wrote the question
	// ("dataset" for benchmark questions).
	QuestionSources map[string]int `json:"question_sources"`
	// Dropped counts the unusable items by reason.
	Dropped map[string]int `json:"dropped"`
}

// HopKey is the table 10 bucket of a hop count: "1", "2", "3" or "4+".
func HopKey(h int) string {
	if h >= 4 {
		return "4+"
	}
	return fmt.Sprint(h)
}

// NewCard counts items.
func NewCard(items []Item) Card {
	c := Card{Hops: map[string]int{}, Strategies: map[string]int{}, AssertionSources: map[string]int{}, QuestionSources: map[string]int{}, Dropped: map[string]int{}}
	chars := 0
	for i := range items {
		it := &items[i]
		c.Items++
		if !it.Usable() {
			reason := it.Dropped
			if reason == "" {
				reason = "no evidence triples"
			}
			c.Dropped[reason]++
			continue
		}
		c.Usable++
		chars += len([]rune(it.Question))
		c.Hops[HopKey(it.Hops)]++
		c.Strategies[it.Strategy]++
		src := it.AssertionSource
		if len(it.Assertions) == 0 {
			src = "none"
		}
		c.AssertionSources[src]++
		qs := it.QuestionSource
		if qs == "" {
			qs = "dataset"
		}
		c.QuestionSources[qs]++
	}
	if c.Usable > 0 {
		c.AvgQuestionChars = float64(chars) / float64(c.Usable)
	}
	return c
}

// WriteMarkdown writes the card as a Markdown document, for a README beside
// the exported files.
func (c Card) WriteMarkdown(w io.Writer, title string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n| statistic | value |\n|---|---|\n", title)
	fmt.Fprintf(&b, "| items | %d |\n| usable | %d |\n| avg question length (chars) | %.1f |\n", c.Items, c.Usable, c.AvgQuestionChars)
	row := func(prefix string, m map[string]int) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&b, "| %s %s | %d |\n", prefix, k, m[k])
		}
	}
	row("hops =", c.Hops)
	row("strategy", c.Strategies)
	row("assertions by", c.AssertionSources)
	row("questions by", c.QuestionSources)
	row("dropped:", c.Dropped)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCounts writes one summary line of counts by reason, sorted by
// reason: "label none" when there are none.
func WriteCounts(b *strings.Builder, label string, counts map[string]int) {
	b.WriteString(label)
	if len(counts) == 0 {
		b.WriteString(" none")
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(b, " %s:%d", k, counts[k])
	}
	b.WriteString("\n")
}
