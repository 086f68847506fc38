package gcr

import (
	"context"
	"fmt"
	"strings"

	"github.com/stem-kgqa/stem/generation"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// maxReasonPaths bounds the reasoning paths put in the prompt: the K
// decoded paths' entity paths can be thousands on a hub, and the general
// LLM reads the best first.
const maxReasonPaths = 50

// ReasonPrompt is the graph inductive reasoning prompt (section 4.4, the
// template of the paper's Figure 11): the reasoning paths the decoding
// found, the hypothesis answers they reach, and the question, for a
// general LLM to name the final answers. The paper's figure is not in the
// text stem was given; this follows the paper's description and the
// reasoning-paths prompt of RoG, GCR's predecessor by the same authors.
func ReasonPrompt(question string, paths, hypotheses []string) string {
	var b strings.Builder
	b.WriteString("Reasoning Paths:\n")
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	b.WriteString("\nHypothesis Answers:\n")
	b.WriteString(strings.Join(hypotheses, ", "))
	b.WriteString("\n\nQuestion:\n")
	b.WriteString(question)
	b.WriteString("\n\nBased on the reasoning paths, please answer the given question. " +
		"Please keep the answer as simple as possible and return all the possible answers as a list.")
	return b.String()
}

// reason asks cfg.Reason to choose the final answers among the hypotheses
// (res.Answers). An answer the LLM names that no path reaches is dropped,
// since every answer must be backed by the KG; when it names no
// hypothesis at all, the vote decides and a problem says so.
func (r *Retriever) reason(ctx context.Context, question string, strat schema.Strategy, res *tracing.Result) error {
	paths := res.Chains
	if len(paths) > maxReasonPaths {
		paths = paths[:maxReasonPaths]
	}
	hyp := make([]string, len(res.Answers))
	byName := make(map[string]int, len(res.Answers))
	for i, a := range res.Answers {
		hyp[i] = a.Name
		byName[kg.Normalize(a.Name)] = i
	}
	reply, err := r.cfg.Reason.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: ReasonPrompt(question, paths, hyp)}}})
	if err != nil {
		return fmt.Errorf("inductive reasoning: %w", err)
	}
	chosen := map[int]bool{}
	var dropped []string
	if len(reply.Choices) > 0 {
		for _, name := range generation.ParseAnswerList(reply.Choices[0]) {
			if i, ok := byName[kg.Normalize(name)]; ok {
				chosen[i] = true
			} else {
				dropped = append(dropped, name)
			}
		}
	}
	if len(dropped) > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("inductive reasoning named %d answers no decoded path reaches, dropped: %s", len(dropped), strings.Join(dropped, ", ")))
	}
	if len(chosen) == 0 {
		res.Problems = append(res.Problems, "inductive reasoning named no hypothesis answer; the vote chose")
		r.vote(strat, res)
		return nil
	}
	kept := res.Answers[:0]
	for i, a := range res.Answers {
		if chosen[i] {
			kept = append(kept, a)
		}
	}
	res.Answers = kept
	return nil
}
