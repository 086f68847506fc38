package sft

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/dataset"
)

// Task names of the two fine-tuning sets.
const (
	TaskSGDA = "sgda"
	TaskSAGB = "sagb"
)

// Example is one supervised pair: the prompt the model is given (the whole
// user message) and the reply it should learn to write.
type Example struct {
	// ID is the item the example was made from.
	ID string
	// Task is TaskSGDA or TaskSAGB.
	Task       string
	Prompt     string
	Completion string
}

// Set is what Build makes of a list of items.
type Set struct {
	SGDA, SAGB []Example
	// Skipped counts usable items that gave no examples, by reason.
	Skipped map[string]int
	// Duplicates counts examples left out because an identical prompt and
	// completion was already in the set, by task (PathQuestion words one
	// chain several ways, so its SAGB pairs repeat).
	Duplicates map[string]int
}

// Build makes the SGDA and SAGB examples of the usable items that have
// assertions, in item order. SGDA: P1 with the question -> the
// assertions and strategy as llmplan.FormatDecomposition writes them. SAGB:
// P2 with the assertions -> the masked triples as llmplan.FormatTriples
// writes them. Each target is read back with the planner's own parser and
// the item is skipped (and counted) unless it gives back exactly the
// item's assertions, strategy and triples: whatever the fine-tuned models
// learn to write, the planner can read.
func Build(items []dataset.Item) Set {
	s := Set{Skipped: map[string]int{}, Duplicates: map[string]int{}}
	seen := map[string]bool{}
	add := func(dst *[]Example, e Example) {
		k := e.Task + "\x00" + e.Prompt + "\x00" + e.Completion
		if seen[k] {
			s.Duplicates[e.Task]++
			return
		}
		seen[k] = true
		*dst = append(*dst, e)
	}
	for i := range items {
		it := &items[i]
		if !it.Usable() {
			continue
		}
		sgda, sagb, reason := examples(it)
		if reason != "" {
			s.Skipped[reason]++
			continue
		}
		add(&s.SGDA, sgda)
		add(&s.SAGB, sagb)
	}
	return s
}

// examples makes the item's two examples, or says why it cannot.
func examples(it *dataset.Item) (sgda, sagb Example, reason string) {
	switch {
	case len(it.Assertions) == 0:
		return sgda, sagb, "no assertions"
	case len(it.Assertions) != len(it.Masked):
		return sgda, sagb, "assertions not parallel to the triples"
	case len(it.Masked) > llmplan.MaxAssertions:
		return sgda, sagb, fmt.Sprintf("more than %d triples (the planner reads no longer plan)", llmplan.MaxAssertions)
	}
	st, err := schema.ParseStrategy(it.Strategy)
	if err != nil {
		return sgda, sagb, "unknown strategy"
	}
	dec := llmplan.FormatDecomposition(llmplan.Decomposition{Assertions: it.Assertions, Strategy: st, HasStrategy: true})
	back, err := llmplan.ParseDecomposition(dec)
	if err != nil || !slices.Equal(back.Assertions, it.Assertions) || back.Strategy != st || !back.HasStrategy {
		return sgda, sagb, "SGDA target does not read back (repeated assertion, or none with a placeholder)"
	}
	ts := FormatTriples(it.Masked)
	tback, err := llmplan.ParseTriples(ts)
	if err != nil || !slices.Equal(tback, schemaTriples(it.Masked)) {
		return sgda, sagb, "SAGB target does not read back (a field the parser rewrites)"
	}
	sgda = Example{ID: it.ID, Task: TaskSGDA, Prompt: SGDAPrompt(it.Question), Completion: dec}
	sagb = Example{ID: it.ID, Task: TaskSAGB, Prompt: SAGBPrompt(it.Assertions), Completion: ts}
	return sgda, sagb, ""
}

// MessagesLine is one line of the chat fine-tuning format (OpenAI's, also
// read by LLaMA-Factory, axolotl, TRL and Unsloth): a user turn holding
// the prompt and the assistant turn to learn. There is no system message
// because the planner sends none.
type MessagesLine struct {
	Messages []llm.Message `json:"messages"`
}

// AlpacaLine is one line of the Alpaca format. Instruction holds the whole
// prompt and Input is empty: tools join instruction and input into the
// user turn, and the question sits inside P1, not after it, so splitting
// it out would change the prompt the model is trained on.
type AlpacaLine struct {
	Instruction string `json:"instruction"`
	Input       string `json:"input"`
	Output      string `json:"output"`
}

// WriteMessages writes examples in the chat format, one JSON object a line.
func WriteMessages(w io.Writer, exs []Example) error {
	enc := newEncoder(w)
	for _, e := range exs {
		if err := enc.Encode(MessagesLine{Messages: []llm.Message{llm.User(e.Prompt), llm.Assistant(e.Completion)}}); err != nil {
			return err
		}
	}
	return nil
}

// WriteAlpaca writes examples in the Alpaca format, one JSON object a line.
func WriteAlpaca(w io.Writer, exs []Example) error {
	enc := newEncoder(w)
	for _, e := range exs {
		if err := enc.Encode(AlpacaLine{Instruction: e.Prompt, Output: e.Completion}); err != nil {
			return err
		}
	}
	return nil
}

// newEncoder writes JSON without HTML escaping, so "<", ">" and "&" in
// questions stay readable in the files.
func newEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
