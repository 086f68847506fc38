// Package sft writes the assertions S of training items and exports them
// as supervised fine-tuning sets for the paper's two projection models
// (appendix C.1): the SGDA, which learns question -> (assertions,
// strategy) under prompt P1, and the SAGB, which learns assertions ->
// masked triples T' under prompt P2.
//
// # Assertions
//
// An Asserter writes one assertion per masked triple. Verbalizer does it by
// rule from the relation's name; LLM asks a chat model with prompt P4
// (figure 14), reads the reply tolerantly and checks it: as many assertions
// as triples, each keeping the placeholders of its triple. A reply that
// fails the check is a *ReplyError, whose Reason the caller records as the
// item's Dropped field, so it is counted in the dataset card and never kept
// silently.
//
// # Export
//
// Build turns items into Examples whose prompts are rendered exactly as
// package llmplan renders P1 and P2 at inference with no few-shot examples
// (the usual choice for fine-tuning: the model learns the task from the
// data, and a fine-tuned model is then run with `--planner llm` and no
// --llm-examples, so it sees at inference the very prompt it was trained
// on). Targets are written with llmplan.FormatDecomposition and
// llmplan.FormatTriples, and every one is read back with
// llmplan.ParseDecomposition and llmplan.ParseTriples before it is kept, so
// the planner can read whatever the fine-tuned model learns to write.
// WriteMessages and WriteAlpaca write the two JSONL formats fine-tuning
// tools read most.
package sft

import "context"

// SourceVerbalizer is Item.AssertionSource for assertions written by the
// Verbalizer; an LLM's are "llm:" + model.
const SourceVerbalizer = "verbalizer"

// Asserter writes assertions S for masked triples T' (C.1, equation 31).
// Implementations must be safe for concurrent use.
type Asserter interface {
	// Source names the writer as Item.AssertionSource records it.
	Source() string
	// Assert returns one assertion per masked triple, in order. An error
	// that is a *ReplyError means the item cannot get assertions from this
	// writer (drop it with the error's Reason); any other error is a failure
	// to ask (a request that failed after retries), worth retrying later.
	Assert(ctx context.Context, question string, masked [][3]string) ([]string, error)
}
