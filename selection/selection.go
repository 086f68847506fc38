// Package selection chooses among a planner's readings of a question by
// the evidence each finds in the KG, and says how sure the choice is.
//
// Tracing traces every candidate schema graph of the beam; with
// tracing.Request.Alternatives it returns each reading's own answers
// (tracing.Alternative). Candidates turns each into a row of features
// (the planner's score and rank, how many answers it binds, whether they
// fit the type the question asks for, how many other readings agree on
// its first answer, the T-Score, reversed edges, how well the question's
// words name its relations, the Triple-GNN's score of its first answer,
// the score of a plan the planner preferred but demoted because it
// reaches nothing in the KG), and a Model, a logistic scorer over those
// features, gives each the probability that its first answer is right.
// Choose takes the most probable (or, without a trained model, the
// planner's own first reading) and reports that probability, calibrated
// on held-out questions when the model was trained (Platt scaling), as
// the answer's confidence.
//
// The package reads the KG, schema graphs, the planner's projection and
// tracing's result; it imports no other stage and no training code. The
// model is plain slices of weights stored as JSON, small enough to read.
package selection

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// Names are the features of a candidate, in the order of
// Candidate.Features and Model.Weights.
var Names = []string{
	"first",        // 1 for the planner's first reading
	"rank",         // the reading's rank in the beam, 0 first, over the beam size
	"gap",          // planner score below the best reading's, clipped to [0, 1]
	"log_answers",  // log(1 + answers bound), over log(1001)
	"one_answer",   // 1 when exactly one answer is bound
	"agree",        // share of the other readings with answers whose first answer is this one's
	"hops",         // schema triples of the reading, over 3
	"lex_fit",      // share of its relations the question's words name
	"tscore",       // the first answer's cumulative T-Score S over its hops + 1 (1 where every hop matched exactly)
	"reversed",     // the first answer's edges matched against the schema's direction, over its hops
	"type_fit",     // +1 the KG says the first answer is of the type the question asks for, -1 it says not, 0 unknown
	"gnn",          // the Triple-GNN's probability of the first answer (0 without guidance)
	"log_degree",   // log(1 + degree of the first answer), over log(1e5)
	"sem",          // the encoder's cosine of the question and the reading's relation names
	"sem_best",     // 1 for the reading whose relation names the encoder finds nearest the question
	"unnamed",      // 1 when the first answer's name is a bare id (m.0abc, g.11x), no name a reader knows
	"fallback",     // 1 when a reading the planner ranked above this one binds no answer: the KG lacked what the preferred plan asks, and this one answers in its place
	"exact",        // 1 when the first answer matched every hop exactly (T-Score S at its maximum) and in the schema's direction: no relaxed or reversed edge stands in for a missing one
	"demoted",      // the planner's score, clipped to [0, 1], of a plan it preferred but ranked last because it reaches nothing from the question's entities in the KG (projection.Projection.Demoted): the KG may lack the answer
	"zero_shot",    // 1 when, in a beam merged from a trained and a zero-shot planner (--planner both), only the zero-shot one proposed the reading
	"both_plan",    // 1 when both planners of a merged beam proposed the reading
	"own_rank",     // the reading's rank in its own planner's beam, over the beam size (rank, for a beam of one planner)
	"own_first",    // 1 for its own planner's first reading (first, for a beam of one planner)
	"backward",     // share of the reading's schema triples walked from their object to their subject ("the films of X" read as X's film reversed)
	"words_left",   // share of the question's content words (not the anchor's, not question words) that no relation of the reading names
	"demoted_last", // demoted, where every step of that plan but its last reaches something (projection.Projection.DemotedLast): the KG lacks only the edge the answer would hang on, not a reading that fails early
	"path_fit",     // the least, over the reading's relations, of the best P(relation on the gold path | question word) in the trained planner's training questions (Input.PathFit; 0 without one)
}

// Input is what the features of one question's readings are computed
// from.
type Input struct {
	Question   string
	Graph      kg.Reader
	Projection projection.Projection
	Trace      *tracing.Result
	// GNN holds the Triple-GNN's probabilities of the question's subgraph
	// entities, nil without guidance.
	GNN map[int32]float32
	// Encoder, when not nil, compares the question with each reading's
	// relation names (the sem features).
	Encoder models.Encoder
	// Kinds, when not nil, names the kinds of answers the KG gives no
	// type (WordNet's instances), for the evidence term kind.
	Kinds constraint.Instances
	// Lexicon, when not nil, says which question words name a relation
	// by meaning ("mother" a kind of parents, "kid" of children) for the
	// default heuristic's evidence term unnamed_rels; the trained
	// features do not read it.
	Lexicon models.Lexicon
	// PathFit, when not nil, weighs each reading's relations against the
	// words of the trained planner's training questions (the path_fit
	// feature).
	PathFit *PathFit
}

// Candidate is one reading of the question with what it binds and how
// the model judges it.
type Candidate struct {
	// Group is the reading's group of schema graphs (tracing.Alternative),
	// Rank its place among the readings, 0 first.
	Group int
	Rank  int
	// Plan is the reading's first schema graph, as text.
	Plan    string
	Answers []tracing.Answer
	// Features are parallel to Names; Evidence to EvidenceNames.
	Features []float64
	Evidence []float64
	// Score is the model's raw probability; Confidence is it calibrated
	// (equal to Score for an uncalibrated model). Both are 0 for a
	// reading that binds no answer.
	Score      float64
	Confidence float64
	// graph is the reading's first schema graph.
	graph schema.Graph
}

// Candidates returns the readings in in.Trace.Alternatives with their
// features, in the planner's order; nil when tracing returned none. An
// error is the encoder's.
func Candidates(ctx context.Context, in Input) ([]Candidate, error) {
	if in.Trace == nil || len(in.Trace.Alternatives) == 0 {
		return nil, nil
	}
	alts := in.Trace.Alternatives
	cands := in.Projection.Candidates
	best := float32(math.Inf(-1))
	for _, c := range cands {
		best = max(best, c.Score)
	}
	beam := float64(max(len(alts), 1))
	qwords := words(in.Question)
	types := typeConstraints(in.Question)
	q := asked{words: qwords, types: types, anchorRels: anchorRelations(in)}
	content := contentWords(qwords, in.Trace.Anchors)
	fitted := fitWords(in.Question)
	out := make([]Candidate, len(alts))
	for i, a := range alts {
		c := Candidate{Group: a.Group, Rank: i, Answers: a.Answers, Features: make([]float64, len(Names))}
		f := c.Features
		if i == 0 {
			f[0] = 1
		}
		f[1] = float64(i) / beam
		var g schema.Graph
		origin(projection.Origin{Rank: i}, beam, f)
		if len(a.Graphs) > 0 && a.Graphs[0] < len(cands) {
			pc := cands[a.Graphs[0]]
			g = pc.Graph
			c.graph = g
			c.Plan = g.String()
			f[2] = clip(float64(best-pc.Score), 0, 1)
			if pc.Origin.Merged {
				origin(pc.Origin, beam, f)
			}
		}
		hops := float64(max(len(g.Triples), 1))
		f[3] = math.Log1p(float64(len(a.Answers))) / math.Log(1001)
		if len(a.Answers) == 1 {
			f[4] = 1
		}
		f[6] = float64(len(g.Triples)) / 3
		f[7] = lexFit(qwords, g)
		if len(a.Answers) > 0 {
			top := a.Answers[0]
			f[5] = agreement(alts, i)
			f[8] = float64(top.Score) / (hops + 1)
			f[9] = float64(top.Reversed) / hops
			f[10] = typeFit(in.Graph, types, top.Entity)
			if in.GNN != nil {
				f[11] = float64(in.GNN[top.Entity])
			}
			if in.Graph != nil {
				f[12] = math.Log1p(float64(in.Graph.Degree(top.Entity))) / math.Log(1e5)
			}
			if bareID(top.Name) {
				f[15] = 1
			}
			if f[8] >= 1-1e-6 && top.Reversed == 0 {
				f[17] = 1
			}
		}
		f[18] = clip(float64(in.Projection.Demoted), 0, 1)
		if in.Projection.DemotedLast {
			f[slices.Index(Names, "demoted_last")] = f[18]
		}
		for _, above := range alts[:i] {
			if len(above.Answers) == 0 {
				f[16] = 1
				break
			}
		}
		evidence(in, &c, g, q)
		f[slices.Index(Names, "backward")] = backward(g)
		f[slices.Index(Names, "words_left")] = wordsLeft(content, g)
		f[slices.Index(Names, "path_fit")] = in.PathFit.Fit(fitted, g)
		out[i] = c
	}
	if err := semFit(ctx, in, out); err != nil {
		return nil, err
	}
	return out, nil
}

// origin fills the features of which planner proposed a reading of a
// merged beam (projection.Merge) and how that planner ranked it.
// Outside a merged beam, o.Rank is the reading's rank in the beam. The
// features are found by name: other features may be appended before
// them.
func origin(o projection.Origin, beam float64, f []float64) {
	set := func(name string, v float64) { f[slices.Index(Names, name)] = v }
	set("zero_shot", b2f(o.Second))
	set("both_plan", b2f(o.Both))
	set("own_rank", float64(o.Rank)/beam)
	set("own_first", b2f(o.Rank == 0))
}

// backward is the share of g's triples walked against their direction:
// from a node already reached (the anchor, or an earlier triple's) at
// the triple's object to a new one at its subject.
func backward(g schema.Graph) float64 {
	if len(g.Triples) == 0 {
		return 0
	}
	reached := map[string]bool{}
	for _, n := range g.Mentions() {
		reached[n] = true
	}
	n := 0
	for _, t := range g.Triples {
		if reached[t.Tail] && !reached[t.Head] {
			n++
		}
		reached[t.Head], reached[t.Tail] = true, true
	}
	return float64(n) / float64(len(g.Triples))
}

// contentWords are the question's words that may name a relation: not
// stop words, question words or the anchors' names.
func contentWords(qwords []string, anchors []tracing.Anchor) []string {
	anchor := map[string]bool{}
	for _, a := range anchors {
		for _, w := range words(a.Name + " " + a.Mention) {
			anchor[w] = true
		}
	}
	var out []string
	for _, w := range qwords {
		if !stop[w] && !questionStop[w] && !anchor[w] {
			out = append(out, w)
		}
	}
	return out
}

// wordsLeft is the share of content no relation of g names.
func wordsLeft(content []string, g schema.Graph) float64 {
	if len(content) == 0 {
		return 0
	}
	left := 0
	for _, w := range content {
		if !slices.ContainsFunc(g.Triples, func(t schema.Triple) bool { return namesRel([]string{w}, t.Rel) }) {
			left++
		}
	}
	return float64(left) / float64(len(content))
}

// semFit fills the sem features: the encoder's cosine of the question and
// each reading's relation names, and which reading is nearest.
func semFit(ctx context.Context, in Input, out []Candidate) error {
	if in.Encoder == nil || len(out) == 0 {
		return nil
	}
	texts := []string{in.Question}
	for _, c := range out {
		texts = append(texts, relText(c.graph))
	}
	d := in.Encoder.Dim()
	vs := make([]float32, len(texts)*d)
	if err := in.Encoder.Encode(ctx, texts, vs); err != nil {
		return fmt.Errorf("selection: encode %q's readings: %w", in.Question, err)
	}
	q := vs[:d]
	best := -1
	for i := range out {
		v := vs[(i+1)*d : (i+2)*d]
		dot := 0.0
		for j := range q {
			dot += float64(q[j] * v[j])
		}
		out[i].Features[13] = dot
		if len(out[i].Answers) > 0 && (best < 0 || dot > out[best].Features[13]) {
			best = i
		}
	}
	if best >= 0 {
		out[best].Features[14] = 1
	}
	return nil
}

// relText is a schema graph's relation names as words: the last two
// dotted parts of a Freebase symbol, underscores as spaces.
func relText(g schema.Graph) string {
	var parts []string
	for _, t := range g.Triples {
		rel := t.Rel
		if ps := strings.Split(rel, "."); len(ps) > 2 {
			rel = strings.Join(ps[len(ps)-2:], " ")
		}
		parts = append(parts, strings.Join(words(rel), " "))
	}
	return strings.Join(parts, " ")
}

// bareID reports whether name is an id rather than a name: a Freebase
// mid (m.0abc) or g. id.
func bareID(name string) bool {
	if len(name) < 3 || (name[0] != 'm' && name[0] != 'g') || name[1] != '.' {
		return false
	}
	for _, r := range name[2:] {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			return false
		}
	}
	return true
}

// typeConstraints are the type words the question states ("which
// country").
func typeConstraints(question string) []schema.Constraint {
	var types []schema.Constraint
	for _, c := range constraint.Detect(question) {
		if c.Kind == constraint.Type {
			types = append(types, c)
		}
	}
	return types
}

// agreement is the share of the readings other than i that bind answers
// and whose first answer is reading i's.
func agreement(alts []tracing.Alternative, i int) float64 {
	top := alts[i].Answers[0].Entity
	n, same := 0, 0
	for j, a := range alts {
		if j == i || len(a.Answers) == 0 {
			continue
		}
		n++
		if a.Answers[0].Entity == top {
			same++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(same) / float64(n)
}

// typeFit judges e against the type words the question states: +1 when
// the KG says it is of such a type, -1 when it says it is not, 0 when it
// holds no type for it or the question states none.
func typeFit(g kg.Reader, types []schema.Constraint, e int32) float64 {
	if g == nil || len(types) == 0 {
		return 0
	}
	v := 0.0
	for _, c := range types {
		switch constraint.Check(g, c, constraint.Answer{Entity: e}) {
		case constraint.Holds:
			return 1
		case constraint.Fails:
			v = -1
		}
	}
	return v
}

// stop are relation-name words that name no thing a question asks about.
var stop = map[string]bool{"of": true, "the": true, "for": true, "in": true, "to": true, "by": true, "is": true, "a": true, "an": true,
	"at": true, "on": true, "from": true, "with": true, "and": true, "has": true, "type": true, "object": true, "common": true, "topic": true}

// words returns s's lower-case words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// lexFit is the share of g's relations that a question word names: a
// word of the relation's name (its last two dotted parts, for a Freebase
// symbol) equal to a question word, or sharing its first four letters
// with one (founder, founded_by).
func lexFit(qwords []string, g schema.Graph) float64 {
	if len(g.Triples) == 0 {
		return 0
	}
	hit := 0
	for _, t := range g.Triples {
		if namesRel(qwords, t.Rel) {
			hit++
		}
	}
	return float64(hit) / float64(len(g.Triples))
}

// relWords is a relation's name as lexFit reads it: its last two dotted
// parts, for a Freebase symbol.
func relWords(rel string) string {
	if parts := strings.Split(rel, "."); len(parts) > 2 {
		return strings.Join(parts[len(parts)-2:], " ")
	}
	return rel
}

// named reports whether a word of rel is one of q's, or shares its first
// four letters with one.
func named(q, rel []string) bool {
	for _, r := range rel {
		if stop[r] {
			continue
		}
		for _, w := range q {
			if w == r || (len(w) >= 4 && len(r) >= 4 && w[:4] == r[:4]) {
				return true
			}
		}
	}
	return false
}

// clip bounds v to [lo, hi].
func clip(v, lo, hi float64) float64 {
	return math.Max(lo, math.Min(hi, v))
}
