// Package projection turns a question into candidate schema graphs and an
// answer strategy: STEM's Semantic-to-Structural Projection (paper sections
// 3.1-3.2). Planners implement one small interface; sub-packages hold the
// planners themselves:
//
//   - pattern: learns question patterns -> relation paths + strategy from
//     training questions (the embedded default, no LLM);
//   - compose: aligns the question's relation words, in order from the
//     entity, to a relation path the KG walks, with no training data (what
//     --planner auto uses without a model);
//   - zeroshot: ranks the KG's relation paths from the anchored entity
//     against the question, with no training data at all;
//   - llmplan: SGDA and SAGB over an OpenAI-compatible chat server.
package projection

import (
	"context"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
)

// DefaultBeam is the paper's SGDA beam size B: candidate schema graphs per
// question.
const DefaultBeam = 4

// Input is what a planner gets for one question.
type Input struct {
	// Question is the question text as asked.
	Question string
	// Entities are the question's entities as KG entity names, when known
	// (linked, marked by the dataset, or given with --entity). Planners that
	// need them and get none report an error.
	Entities []string
	// Mentions are the spans of Question that name Entities, when known
	// (Mentions[i] names Entities[i]); pattern planners mask them.
	Mentions []string
	// Linked are every span of Question that names a KG entity
	// (linking.MentionsOf): the mentions of Entities (Topic) and, beside
	// them, the other things the question names ("the school with the
	// mascot B"), each with its candidates and the one chosen by graph
	// proximity to the others. Empty where the pipeline did not look
	// (a remote KG); planners that plan from Entities alone ignore it.
	Linked []linking.Mention
	// Graph, when not nil, is the question's own graph (a per-question
	// subgraph, or the neighbourhood fetched from a remote KG): planners
	// that check paths in a KG check them there rather than in the KG
	// they were built with.
	Graph kg.Reader
	// Hops, when Graph is a neighbourhood of the KG the planner was built
	// with (fetched around the entities from a remote KG), says how far it
	// reaches: every edge of every entity less than Hops hops from the
	// entities is in it, and nothing beyond is known. A planner that
	// checks paths in Graph can tell a path of up to Hops steps leads
	// nowhere, not a longer one. 0 when Graph is the question's whole KG.
	Hops int
	// Gold is the benchmark's answer sheet, nil outside evaluation. Only the
	// oracle planner reads it; a planner that looked at it would be
	// measuring nothing.
	Gold *Gold
}

// Gold is what a benchmark knows of a question's answer: its reasoning
// paths and how many answers it has.
type Gold struct {
	Paths   []schema.GoldPath
	Answers int
	// Graphs are the gold schema graphs where the benchmark gives them
	// (two anchors, constraint edges): the oracle plans them rather than
	// Paths.
	Graphs []schema.Graph
}

// Candidate is one planned decomposition: a schema graph and the planner's
// confidence in it.
type Candidate struct {
	Graph schema.Graph
	// Assertions are the atomic assertions behind Graph, when the planner
	// produces them (SGDA), e.g. "[ENT1] is the director of Inception".
	Assertions []string
	// Score is the planner's confidence, higher is better; comparable only
	// within one Projection.
	Score float32
	// Strategy is the candidate's own answer strategy, read only when the
	// Projection's PerCandidate is set: the llm planner's B SGDA samples
	// each name one, as in the paper, so each candidate graph is traced
	// with the strategy of the samples it came from.
	Strategy schema.Strategy
	// Variant says the candidate states what the first candidate states,
	// another way: the planner learnt that the two are gold paths for the
	// same questions (languages_spoken and countries_spoken_in, a KG that
	// records one fact under either). A ranked projection's answers come
	// from the first candidate that binds any; a variant of the first
	// candidate binds answers beside it rather than after it. Never set on
	// the first candidate.
	Variant bool
	// Origin says which planner proposed the candidate, in a beam merged
	// from two (Merge); the zero value otherwise.
	Origin Origin
}

// Projection is a planner's answer: up to B candidate schema graphs, best
// first, and the strategy for tracing.
type Projection struct {
	Candidates []Candidate
	// Strategy is the question's strategy: with PerCandidate, the first
	// (best) candidate's.
	Strategy schema.Strategy
	// PerCandidate says every candidate carries its own Strategy; without
	// it Strategy applies to all candidates (planners that choose one
	// strategy per question).
	PerCandidate bool
	// Unranked says the candidates are equally good rather than best
	// first (the oracle's gold paths), so tracing merges them instead of
	// preferring the first.
	Unranked bool
	// Notes say what the planner fell back on or could not do (a strategy
	// defaulted to Precision, a reply that did not parse), for --explain.
	Notes []string
	// Demoted is the planner's score of the best plan it ranked last
	// because it reaches nothing from the question's entities in the KG,
	// where that plan scored above the first it kept: the KG lacks what
	// the planner would rather have asked (an answer edge missing), a
	// sign for the selector that the question may have no answer here.
	// 0 when no plan was so demoted, or the planner does not check the KG.
	Demoted float32
	// DemotedLast says every step of that demoted plan but its last
	// reaches something (a one-step plan: its entity is there): the KG
	// lacks only the last edge, where the answer would hang, rather than
	// the plan failing early as a wrong reading does.
	DemotedLast bool
	// Deeper is how deep a neighbourhood of the question's entities
	// (Input.Hops) the planner needs to plan as over the whole KG, where
	// that is deeper than its schema graphs reach: a join through an
	// intermediate entity reads the second thing's neighbours' edges,
	// two steps from it, which a neighbourhood one step deep lacks. 0
	// when the graphs' depth suffices.
	Deeper int
}

// Graphs returns the candidates' schema graphs, best first.
func (p Projection) Graphs() []schema.Graph {
	out := make([]schema.Graph, len(p.Candidates))
	for i, c := range p.Candidates {
		out[i] = c.Graph
	}
	return out
}

// StrategyOf returns the strategy candidate i is traced with: its own
// with PerCandidate, else the projection's.
func (p Projection) StrategyOf(i int) schema.Strategy {
	if p.PerCandidate && i >= 0 && i < len(p.Candidates) {
		return p.Candidates[i].Strategy
	}
	return p.Strategy
}

// Groups returns, parallel to Candidates, the group each candidate's
// answers are read with: the first candidate and its variants form group
// 0, every other candidate is a group of its own, numbered by its index.
func (p Projection) Groups() []int {
	out := make([]int, len(p.Candidates))
	for i, c := range p.Candidates {
		if i > 0 && !c.Variant {
			out[i] = i
		}
	}
	return out
}

// Strategies returns the candidates' own strategies, parallel to
// Candidates, or nil when the planner chose one strategy for all of them.
func (p Projection) Strategies() []schema.Strategy {
	if !p.PerCandidate {
		return nil
	}
	out := make([]schema.Strategy, len(p.Candidates))
	for i, c := range p.Candidates {
		out[i] = c.Strategy
	}
	return out
}

// Planner produces candidate schema graphs and a strategy for a question.
// Implementations must be safe for concurrent use.
type Planner interface {
	Plan(ctx context.Context, in Input) (Projection, error)
}

// ScoredPath is one relation path a path planner (pattern, zeroshot)
// ranked for a question, before it becomes a schema graph.
type ScoredPath struct {
	Steps []schema.Step
	// Score is the planner's score: a vote share (pattern) or a
	// similarity (zeroshot); higher is better.
	Score float32
	// Reach is the number of entities the path reaches from the question's
	// entity in the planner's KG (zeroshot caps it); -1 when not walked.
	Reach int
}

// Steps returns the relation paths of ranked paths, in rank order.
func Steps(paths []ScoredPath) [][]schema.Step {
	out := make([][]schema.Step, len(paths))
	for i, p := range paths {
		out[i] = p.Steps
	}
	return out
}
