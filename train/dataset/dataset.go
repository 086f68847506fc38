// Package dataset holds stem's training-data record, Item, and its file
// format: JSON Lines written one item at a time, so a long run (an LLM
// writing assertions for thousands of questions) can stop at any point and
// resume where it stopped. The chain extractor (train/chains), the reverse
// generator (train/synth) and the SFT exporter (train/sft) all read and
// write Items, which is what lets their outputs feed one another and the
// Triple-GNN and planner trainers.
package dataset

import (
	"fmt"
	"slices"

	"github.com/stem-kgqa/stem/schema"
)

// Item is one training question with its evidence, in the shape of the
// paper's appendix C: the question Q, its entities N_Q and answers A, the
// reasoning-chain triples T, their masked form T', one assertion per masked
// triple S, and the strategy sigma.
type Item struct {
	// ID is unique within a file; a resumed run skips IDs already written.
	ID string `json:"id"`
	// Source says where the item came from, e.g. "chains:PQ-2H.train.txt:12"
	// or "synth:walk".
	Source   string `json:"source"`
	Question string `json:"question"`
	// Entities are the question (topic) entities, as KG names.
	Entities []string `json:"entities"`
	// Answers are the answer entities, as KG names.
	Answers []string `json:"answers"`
	// Triples is T: the evidence triples as KG names (head, relation, tail).
	// For chains items, one chain per relation pattern (see Evidence).
	Triples [][3]string `json:"triples,omitempty"`
	// Masked is T', parallel to Triples: every entity that is not a question
	// entity is replaced by an [ENTn] placeholder, one per distinct entity,
	// the answer's numbered last (planners read the highest-numbered
	// placeholder as the answer).
	Masked [][3]string `json:"masked,omitempty"`
	// Evidence, when set, is every triple of every reasoning chain found;
	// Triples then holds one chain per relation pattern (see
	// train/chains.Schema), which is what a planner should learn to write.
	Evidence [][3]string `json:"evidence,omitempty"`
	// Placeholders maps each placeholder of Masked to the KG entity it hides.
	Placeholders map[string]string `json:"placeholders,omitempty"`
	// AnswerSlot is the placeholder standing for the answer ("[ENT2]").
	AnswerSlot string `json:"answer_slot,omitempty"`
	// Hops is the length of the longest chain from a question entity to an
	// answer, in triples.
	Hops int `json:"hops"`
	// Strategy is "Precision" (one answer) or "Breadth" (several), C.1.
	Strategy string `json:"strategy"`
	// Assertions is S, parallel to Masked, once written.
	Assertions []string `json:"assertions,omitempty"`
	// AssertionSource says who wrote Assertions: "verbalizer" or
	// "llm:MODEL".
	AssertionSource string `json:"assertion_source,omitempty"`
	// QuestionSource says who wrote Question for generated items:
	// "verbalizer" or "llm:MODEL"; empty for dataset questions.
	QuestionSource string `json:"question_source,omitempty"`
	// SubgraphEntities are the entities labelled 1 when the item trains the
	// Triple-GNN (C.2's N_sub); empty means the entities of Triples.
	SubgraphEntities []string `json:"subgraph_entities,omitempty"`
	// Dropped, when set, says why the item is not usable (unreachable
	// answers, an LLM reply with the wrong count, "No Solution" ...). Dropped
	// items stay in the file so they are counted in the dataset card and
	// skipped on resume, never silently lost or silently kept.
	Dropped string `json:"dropped,omitempty"`
}

// Usable reports whether the item may be exported: not dropped, with
// evidence triples.
func (it *Item) Usable() bool { return it.Dropped == "" && len(it.Masked) > 0 }

// Strategy names as the paper's prompts write them.
const (
	Precision = "Precision"
	Breadth   = "Breadth"
)

// StrategyFor is the C.1 rule: one answer is Precision, several Breadth.
func StrategyFor(answers int) string {
	if answers > 1 {
		return Breadth
	}
	return Precision
}

// Schema returns the item's masked triples as a schema graph.
func (it *Item) Schema() schema.Graph {
	g := schema.Graph{Answer: it.AnswerSlot}
	for _, t := range it.Masked {
		g.Triples = append(g.Triples, schema.Triple{Head: t[0], Rel: t[1], Tail: t[2]})
	}
	return g
}

// Check reports the first inconsistency of a usable item: masked triples
// not parallel to the triples, assertions not parallel to the masked
// triples, an unknown strategy, or an answer slot not among the masked
// triples' placeholders.
func (it *Item) Check() error {
	if it.ID == "" {
		return fmt.Errorf("item has no id")
	}
	if it.Dropped != "" {
		return nil
	}
	if len(it.Masked) == 0 {
		return fmt.Errorf("item %s: no masked triples", it.ID)
	}
	if len(it.Triples) != 0 && len(it.Triples) != len(it.Masked) {
		return fmt.Errorf("item %s: %d triples but %d masked triples", it.ID, len(it.Triples), len(it.Masked))
	}
	if len(it.Assertions) != 0 && len(it.Assertions) != len(it.Masked) {
		return fmt.Errorf("item %s: %d assertions for %d triples", it.ID, len(it.Assertions), len(it.Masked))
	}
	if _, err := schema.ParseStrategy(it.Strategy); err != nil {
		return fmt.Errorf("item %s: %w", it.ID, err)
	}
	if it.AnswerSlot != "" {
		found := false
		for _, t := range it.Masked {
			if t[0] == it.AnswerSlot || t[2] == it.AnswerSlot {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("item %s: answer slot %s is in no masked triple", it.ID, it.AnswerSlot)
		}
	}
	return nil
}

// EvidenceEntities returns the entities of the evidence: the names in Triples, sorted, without repeats.
func (it *Item) EvidenceEntities() []string {
	var out []string
	for _, t := range it.Triples {
		out = append(out, t[0], t[2])
	}
	slices.Sort(out)
	return slices.Compact(out)
}
