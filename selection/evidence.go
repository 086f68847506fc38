package selection

import (
	"slices"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection/paraphrase"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// EvidenceNames are the terms only the default heuristic weighs
// (Candidate.Evidence, Model.Evidence): what a reading explains of the
// question, read without training. They are kept out of Names so that
// trained selectors' features, and the files they are stored in, stay as
// they were.
var EvidenceNames = []string{
	"kind",         // 1 the first answer is of the kind the question asks for (the KG's types, or inferred: Input.Kinds, the relation into it, its siblings)
	"not_kind",     // 1 it is not of that kind (an inferred kind misses often: "nationality" asked, a country answered)
	"unnamed_rels", // share of the reading's relations no question word (but the anchor's) names; the last hops walked on to an answer of the asked kind (the compose planner's walk on, "company ... works for" to its country) count as named
	"unexplained",  // question words (not a question word, the anchor's name or the type word) no relation of the reading names, over 2, at most 1: "founder" left over by works_for reversed
	"bypassed",     // 1 when a question word names a relation on the anchor's own edges that the reading does not walk: "founder" names globex's founded_by, and the answer came by works_for instead (the KG lacks what founded_by would lead to)
}

// questionStop are words any question has that name no relation.
var questionStop = map[string]bool{"what": true, "which": true, "who": true, "whom": true, "whose": true, "where": true, "when": true,
	"how": true, "many": true, "much": true, "was": true, "were": true, "are": true, "does": true, "did": true, "do": true, "s": true,
	"that": true, "this": true, "there": true, "be": true, "been": true, "name": true, "one": true, "ones": true, "also": true,
	"same": true, "as": true, "their": true, "his": true, "her": true, "its": true, "it": true, "they": true, "he": true, "she": true}

// evidence fills c.Evidence for reading g whose first answer is top. The
// question's words are read as the compose planner reads them
// (paraphrase.Rewrite: "a man or a woman" names gender, "grandmother"
// parents twice), so what it walked for them counts as named.
func evidence(in Input, c *Candidate, g schema.Graph, q asked) {
	qwords, types, at := paraphrase.Rewrite(q.words, nil), q.types, q.anchorRels
	e := make([]float64, len(EvidenceNames))
	c.Evidence = e
	if len(c.Answers) == 0 {
		return
	}
	top := c.Answers[0]
	switch kindFit(in, types, top) {
	case constraint.Holds:
		e[0] = 1
	case constraint.Fails:
		e[1] = 1
	}
	anchor, typeWord := map[string]bool{}, map[string]bool{}
	for _, a := range in.Trace.Anchors {
		for _, w := range words(a.Name + " " + a.Mention) {
			anchor[w] = true
		}
	}
	for _, t := range types {
		for _, w := range words(t.Value + " " + t.Text) {
			typeWord[w] = true
		}
	}
	// A relation counts as named by a question word other than the
	// anchor's (the type word too: "which nationality" names
	// nationality); when the answer is of the asked kind, the hops after
	// the last one a word other than the type word names walked on to it,
	// and count as named too.
	var content, strict []string
	for _, w := range qwords {
		if !anchor[w] {
			content = append(content, w)
			if !typeWord[w] {
				strict = append(strict, w)
			}
		}
	}
	names := func(ws []string, rel string) bool { return namesRel(ws, rel) || lexNames(in.Lexicon, ws, rel) }
	named := make([]bool, len(g.Triples))
	last := -1
	for i, t := range g.Triples {
		named[i] = names(content, t.Rel)
		if names(strict, t.Rel) {
			last = i
		}
	}
	if e[0] > 0 && last >= 0 {
		for i := last + 1; i < len(named); i++ {
			named[i] = true
		}
	}
	unnamed := 0
	for _, n := range named {
		if !n {
			unnamed++
		}
	}
	e[2] = float64(unnamed) / float64(max(len(g.Triples), 1))
	// walked reports whether a relation of the reading is one w names.
	walked := func(w string) bool {
		return slices.ContainsFunc(g.Triples, func(t schema.Triple) bool { return names([]string{w}, t.Rel) })
	}
	left := 0
	for _, w := range qwords {
		if !stop[w] && !questionStop[w] && !anchor[w] && !typeWord[w] && !walked(w) {
			left++
		}
	}
	e[3] = min(float64(left)/2, 1)
	for _, w := range strict {
		if stop[w] || questionStop[w] || walked(w) {
			continue
		}
		for rel := range at {
			if names([]string{w}, rel) {
				e[4] = 1
				break
			}
		}
	}
}

// asked is what evidence reads of the question once for all its
// readings: its words, the types it asks for, and the relations on its
// anchors' edges (anchorRelations).
type asked struct {
	words      []string
	types      []schema.Constraint
	anchorRels map[string]bool
}

// maxAnchorEdges bounds the edges anchorRelations reads per anchor: a
// hub's relations are many, and read only to see which a question word
// names.
const maxAnchorEdges = 4096

// anchorRelations returns the names of the relations on the anchors' own
// edges (out and in), for the evidence term bypassed.
func anchorRelations(in Input) map[string]bool {
	out := map[string]bool{}
	if in.Graph == nil || in.Trace == nil {
		return out
	}
	for _, a := range in.Trace.Anchors {
		for _, ids := range [][]int32{in.Graph.Out(a.Entity), in.Graph.In(a.Entity)} {
			for _, id := range ids[:min(len(ids), maxAnchorEdges)] {
				out[in.Graph.RelationName(in.Graph.Triple(id).Rel)] = true
			}
		}
	}
	return out
}

// Contradicted reports whether the KG holds evidence against the
// reading: the planner ranked above it a reading that bound nothing
// (feature fallback), or a question word names a relation on the
// anchor's edges that it does not walk (evidence term bypassed). The
// default heuristic's confidence, uncalibrated, is held to
// --min-confidence auto only then.
func (c Candidate) Contradicted() bool {
	at := func(names []string, xs []float64, name string) bool {
		i := slices.Index(names, name)
		return i >= 0 && i < len(xs) && xs[i] > 0
	}
	return at(Names, c.Features, "fallback") || at(EvidenceNames, c.Evidence, "bypassed")
}

// namesRel reports whether a word of qwords names rel (lexFit's test).
func namesRel(qwords []string, rel string) bool {
	return named(qwords, words(relWords(rel)))
}

// lexNamed is the lexicon's relatedness at which a question word names a
// relation word by meaning: a kind of it or a close synonym ("mother" and
// parents 0.9, "dad" 0.8, "kid" and children 1), not a mere neighbour
// ("founder" and works 0).
const lexNamed = 0.8

// lexNames reports whether the lexicon says a word of qwords names a word
// of rel (false without a lexicon).
func lexNames(lex models.Lexicon, qwords []string, rel string) bool {
	if lex == nil {
		return false
	}
	for _, r := range words(relWords(rel)) {
		if stop[r] {
			continue
		}
		for _, w := range qwords {
			if lex.Related(w, r) >= lexNamed {
				return true
			}
		}
	}
	return false
}

// kindFit judges the answer against the type words the question states
// as the constraint check does, with the lexicon's inferred kinds where
// the KG states no type: Holds when it is of one, Fails when it is of
// none, Unknown when nothing says or none is asked.
func kindFit(in Input, types []schema.Constraint, a tracing.Answer) constraint.Verdict {
	v := constraint.Unknown
	if in.Graph == nil {
		return v
	}
	ck := constraint.Checker{Graph: in.Graph, Lexicon: in.Kinds}
	for _, t := range types {
		switch verdict, _ := ck.Kind(a.Entity, t.Value); verdict {
		case constraint.Holds:
			return verdict
		case constraint.Fails:
			v = verdict
		}
	}
	return v
}
