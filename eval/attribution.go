package eval

import (
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// The stages a failed question is attributed to (the paper's Tables
// 25-26), in pipeline order, and FailUnknown for a failure no stage can be
// blamed for because the gold data does not say what the stage should
// have produced.
const (
	FailLinking         = "linking"
	FailPlanning        = "planning"
	FailAnchoring       = "anchoring"
	FailTracing         = "tracing"
	FailAnswerSelection = "answer-selection"
	FailUnknown         = "unknown"
)

// FailureStages lists the attribution classes in the order they are
// checked and reported.
var FailureStages = []string{FailLinking, FailPlanning, FailAnchoring, FailTracing, FailAnswerSelection, FailUnknown}

// StageOutput is what the pipeline's stages produced for one question,
// kept so that a failure can be attributed to the first stage whose output
// is wrong.
type StageOutput struct {
	// Linked are the KG entity names linking gave (or the marked ones).
	Linked []string
	// Mentions are the other spans naming an entity
	// (linking.MentionsOf), each as "text=entity", or "text~entity" for a near match.
	Mentions []string
	// Plans are the relation names of each candidate schema graph, in the
	// order of its triples.
	Plans [][]string
	// Unplanned says no planner ran: the retrieval strategy plans for
	// itself (a peer standing alone), so planning is no stage of its
	// answer and is never blamed.
	Unplanned bool
	// Anchors are the KG entity names tracing started from.
	Anchors []string
	// Candidates are the entities tracing bound to the answer slot, before
	// answer selection.
	Candidates []string
}

// Attribute names the stage a failed question (no hit) failed at: the
// first of linking, planning, anchoring, tracing and answer selection
// whose output misses the gold data. Linking misses when no gold topic
// entity (a gold path's start, or the question's topic entities when the
// path names none) was linked; planning (when a planner ran) when no
// candidate schema graph holds a gold path's relations in order (directions are not compared,
// since WebQSP's gold paths have none); anchoring when tracing anchored
// no gold topic entity; tracing when neither the evidence triples nor the
// traced candidates name a gold answer; otherwise answer selection lost
// it. The stages after linking cannot be checked without a gold relation
// path, nor any stage without the stage outputs (out nil: an answerer that
// does not report them, or a failed call): both give FailUnknown.
// evidence is Prediction.EvidenceTriples.
func Attribute(q benchmark.Question, out *StageOutput, evidence [][3]string) string {
	if out == nil {
		return FailUnknown
	}
	topics := goldTopics(q)
	if len(topics) > 0 && !anyIn(out.Linked, topics) {
		return FailLinking
	}
	var paths [][]string
	for _, gp := range q.Gold {
		if len(gp.Steps) > 0 {
			paths = append(paths, gp.Relations())
		}
	}
	if len(paths) == 0 || len(topics) == 0 {
		return FailUnknown
	}
	if !out.Unplanned && !planned(paths, out.Plans) {
		return FailPlanning
	}
	if !anyIn(out.Anchors, topics) {
		return FailAnchoring
	}
	gold := map[string]bool{}
	for _, a := range q.Answers {
		gold[Normalize(a)] = true
	}
	found := false
	for _, c := range out.Candidates {
		found = found || gold[Normalize(c)]
	}
	for _, t := range evidence {
		found = found || gold[Normalize(t[0])] || gold[Normalize(t[2])]
	}
	if !found {
		return FailTracing
	}
	return FailAnswerSelection
}

// goldTopics are the normalised names of q's gold topic entities: each
// gold path's start, or q.Entities for a path that names no start.
func goldTopics(q benchmark.Question) map[string]bool {
	out := map[string]bool{}
	add := func(s string) {
		if s != "" {
			out[Normalize(s)] = true
		}
	}
	for _, gp := range q.Gold {
		if gp.Start != "" {
			add(gp.Start)
			continue
		}
		for _, e := range q.Entities {
			add(e)
		}
	}
	if len(q.Gold) == 0 {
		for _, e := range q.Entities {
			add(e)
		}
	}
	return out
}

// anyIn reports whether one of names is in set (compared normalised).
func anyIn(names []string, set map[string]bool) bool {
	for _, n := range names {
		if set[Normalize(n)] {
			return true
		}
	}
	return false
}

// planned reports whether some plan holds some gold relation path as a
// subsequence of its relations: a plan may add constraint triples around
// the path, which do not make it wrong.
func planned(paths, plans [][]string) bool {
	for _, plan := range plans {
		for _, p := range paths {
			i := 0
			for _, r := range plan {
				if i < len(p) && r == p[i] {
					i++
				}
			}
			if i == len(p) {
				return true
			}
		}
	}
	return false
}

// planRelations returns g's relation names in triple order.
func planRelations(g schema.Graph) []string {
	out := make([]string, len(g.Triples))
	for i, t := range g.Triples {
		out[i] = t.Rel
	}
	return out
}

// The classes of a question whose answers are a superset of its gold set
// (every gold answer found, and more), in the order they are checked.
const (
	// ExtraOffPath: an extra answer is reached by a relation no plan names
	// (tracing matched a resembling relation).
	ExtraOffPath = "off-path"
	// ExtraWrongType: an extra answer's KG types share none with the gold
	// answers' (a postal code among the schools).
	ExtraWrongType = "wrong-type"
	// ExtraUnconstrained: the question states a constraint (a time, an
	// order, a gender, a type word; package constraint) that would have
	// to tell the extra answers from the gold ones.
	ExtraUnconstrained = "unconstrained"
	// ExtraOnPath: none of those: the planned relations reach more than
	// the gold set (a plan too broad, or a gold set narrower than the KG).
	ExtraOnPath = "on-path"
)

// ExtraClasses lists the extra-answer classes in the order they are
// checked and reported.
var ExtraClasses = []string{ExtraOffPath, ExtraWrongType, ExtraUnconstrained, ExtraOnPath}

// AttributeExtras names why a question's answers hold more than its gold
// set, or returns "" when they do not (a gold answer is missing, or no
// answer is extra). g is the KG the question was answered over, for the
// answers' types; nil skips the type check.
func AttributeExtras(q benchmark.Question, out *StageOutput, evidence [][3]string, answers []string, g kg.Reader) string {
	gold := map[string]bool{}
	for _, a := range q.Answers {
		if n := Normalize(a); n != "" {
			gold[n] = true
		}
	}
	if len(gold) == 0 || len(answers) == 0 {
		return ""
	}
	joined := make([]string, len(answers))
	for i, a := range answers {
		joined[i] = Normalize(a)
	}
	all := strings.Join(joined, " ")
	for n := range gold {
		if !strings.Contains(all, n) {
			return ""
		}
	}
	isGold := func(a string) bool {
		na := Normalize(a)
		for n := range gold {
			if strings.Contains(na, n) {
				return true
			}
		}
		return false
	}
	var extras []string
	for _, a := range answers {
		if !isGold(a) {
			extras = append(extras, a)
		}
	}
	if len(extras) == 0 {
		return ""
	}
	if out != nil && len(out.Plans) > 0 {
		planned := map[string]bool{}
		for _, p := range out.Plans {
			for _, r := range p {
				planned[r] = true
			}
		}
		extra := map[string]bool{}
		for _, a := range extras {
			extra[a] = true
		}
		for _, t := range evidence {
			if (extra[t[0]] || extra[t[2]]) && !planned[t[1]] {
				return ExtraOffPath
			}
		}
	}
	if g != nil {
		goldTypes := map[string]bool{}
		for _, a := range answers {
			if !isGold(a) {
				continue
			}
			if e, ok := g.Entity(a); ok {
				for _, t := range kg.TypesOf(g, e) {
					goldTypes[t] = true
				}
			}
		}
		if len(goldTypes) > 0 {
			for _, a := range extras {
				e, ok := g.Entity(a)
				if !ok {
					continue
				}
				ts := kg.TypesOf(g, e)
				if len(ts) > 0 && !slices.ContainsFunc(ts, func(t string) bool { return goldTypes[t] }) {
					return ExtraWrongType
				}
			}
		}
	}
	if len(constraint.Detect(q.Text)) > 0 {
		return ExtraUnconstrained
	}
	return ExtraOnPath
}
