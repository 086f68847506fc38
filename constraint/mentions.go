package constraint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// Mention is the constraint kind of a second thing the question names
// beside the entity its plan starts from ("which school with the mascot
// B did A attend"): the answers must meet it in the KG.
const Mention = "mention"

// Named is one thing a question names, as an entity of the KG the answers
// are checked in, with the words that name it.
type Named struct {
	Entity int32
	Text   string
}

// Mentioned is what Checker.Meet checks a question's answers against:
// every thing the question names and, per answer, the ones its plan
// started from (an answer meets its own anchor by construction, so that
// one says nothing of it).
type Mentioned struct {
	Names []Named
	// Own[i] are the entities answers[i] was traced from; nil for an
	// answer whose anchors are not known, which counts every name.
	Own [][]int32
	// Question is the question's text: its words choose, among the
	// answers that meet a name, those met through a relation they name.
	Question string
}

// Bounds of the search from a named entity: the edges read from it, and
// how many edges an entity between it and an answer may have. A
// mediator (a CVT: a marriage, an office held, a performance) or a thing
// of its own (an airport, a school) has few; a hub (a country, a gender)
// links everything to everything and meets no answer by meaning.
const (
	meetEdges  = 20000
	viaDegree  = 100
	meetReport = 3
)

// MeetVia is the most edges an entity between a named thing and an
// answer may have for Meet to walk through it: a remote KG need fetch
// the edges of no neighbour with more (kg.WithinFetcher, Checker.Over).
const MeetVia = viaDegree

// meeting is how a named entity reaches a node: in 1 or 2 hops, and the
// relations walked (their best fit with the question's words).
type meeting struct {
	hops int
	fit  int
}

// Meet keeps, of answers, those that meet the most of the question's
// other named things in the KG: directly, or through one entity of few
// edges (a CVT or a thing of its own), whatever the relation; among
// those, the answers met through relations the question's words name go
// first. The conjunction is read from the KG rather than planned, so it
// narrows the answers of any plan (gold paths, a learnt pattern, a
// composed one). Where no answer meets a name, or every one does, the
// answers are left as they were: the name narrows nothing (a namesake, a
// hub, or a word the KG happens to name).
func (k Checker) Meet(m Mentioned, answers []Answer) ([]int, Report) {
	keep := make([]int, len(answers))
	for i := range keep {
		keep[i] = i
	}
	var texts, names []string
	for _, n := range m.Names {
		texts = append(texts, n.Text)
		names = append(names, k.Graph.EntityName(n.Entity))
	}
	rep := Report{Constraint: schema.Constraint{Kind: Mention, Value: strings.Join(names, ", "), Text: strings.Join(texts, ", ")}}
	if len(m.Names) < 2 || len(answers) < 2 {
		rep.Note = fmt.Sprintf("mention %q: nothing to narrow", rep.Constraint.Text)
		return keep, rep
	}
	named := map[int32]bool{}
	for _, n := range m.Names {
		named[n.Entity] = true
	}
	words := questionWords(m.Question)
	reach := make([]map[int32]meeting, len(m.Names))
	for j, n := range m.Names {
		reach[j] = k.reachOf(n.Entity, named, words)
	}
	met := make([]int, len(answers))
	fit := make([]int, len(answers))
	meets := make([]int, len(m.Names))
	best := 0
	for i, a := range answers {
		for j, n := range m.Names {
			if n.Entity == a.Entity || i < len(m.Own) && slices.Contains(m.Own[i], n.Entity) {
				continue
			}
			if r, ok := reach[j][a.Entity]; ok {
				met[i]++
				fit[i] += r.fit
				meets[j]++
			}
		}
		best = max(best, met[i])
	}
	// The report names the things that told answers apart.
	texts, names = texts[:0], names[:0]
	for j, n := range m.Names {
		if meets[j] > 0 && meets[j] < len(answers) {
			texts = append(texts, n.Text)
			names = append(names, k.Graph.EntityName(n.Entity))
		}
	}
	if len(texts) > 0 {
		rep.Constraint.Text, rep.Constraint.Value = strings.Join(texts, ", "), strings.Join(names, ", ")
	}
	kept := keep[:0:0]
	for _, i := range keep {
		if met[i] == best {
			kept = append(kept, i)
		}
	}
	if best == 0 || len(kept) == len(answers) {
		rep.Unknown = len(answers)
		rep.Note = fmt.Sprintf("mention %q: narrows nothing (%s)", rep.Constraint.Text, map[bool]string{true: "no answer meets it", false: "every answer meets it alike"}[best == 0])
		return keep, rep
	}
	slices.SortStableFunc(kept, func(a, b int) int { return fit[b] - fit[a] })
	rep.Held, rep.Failed, rep.Dropped = len(kept), len(answers)-len(kept), len(answers)-len(kept)
	var first []string
	for _, i := range kept[:min(len(kept), meetReport)] {
		first = append(first, k.Graph.EntityName(answers[i].Entity))
	}
	rep.Note = fmt.Sprintf("mention %q (%s): %d answers meet it within 2 hops and are kept (%s), %d dropped",
		rep.Constraint.Text, rep.Constraint.Value, len(kept), strings.Join(first, ", "), rep.Dropped)
	return kept, rep
}

// reachOf returns the entities e meets in 1 hop, or in 2 through an
// entity of at most viaDegree edges that no other name is, with how well
// the relations walked fit the question's words.
func (k Checker) reachOf(e int32, named map[int32]bool, words []string) map[int32]meeting {
	g := k.Graph
	out := map[int32]meeting{}
	add := func(x int32, h, f int) {
		if r, ok := out[x]; !ok || h < r.hops || h == r.hops && f > r.fit {
			out[x] = meeting{hops: h, fit: f}
		}
	}
	fits := map[int32]int{}
	fitOf := func(rel int32) int {
		f, ok := fits[rel]
		if !ok {
			f = relationFit(g.RelationName(rel), words)
			fits[rel] = f
		}
		return f
	}
	read := 0
	for _, edges := range [2][]int32{g.Out(e), g.In(e)} {
		for _, tid := range edges {
			if read >= meetEdges {
				break
			}
			read++
			t := g.Triple(tid)
			x := other(t, e)
			f := fitOf(t.Rel)
			add(x, 1, f)
			if named[x] || g.Degree(x) > viaDegree || k.Over != nil && k.Over(x) {
				continue
			}
			for _, inner := range [2][]int32{g.Out(x), g.In(x)} {
				for _, uid := range inner {
					u := g.Triple(uid)
					if y := other(u, x); y != e {
						add(y, 2, max(f, fitOf(u.Rel)))
					}
				}
			}
		}
	}
	return out
}

// other is the end of t that is not e.
func other(t kg.Triple, e int32) int32 {
	if t.Head == e {
		return t.Tail
	}
	return t.Head
}

// questionWords are the question's words that may name a relation: four
// letters or more, lower case.
func questionWords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
		if len(w) >= 4 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// relationFit counts the question's words a relation name names: a word
// of the name (split at '.', '_', '/' and spaces) that starts with the
// first five letters of a question word, or that a short question word
// is ("mascot", "borders" for "bordering").
func relationFit(rel string, words []string) int {
	parts := strings.FieldsFunc(strings.ToLower(rel), func(r rune) bool { return !(r >= 'a' && r <= 'z') })
	n := 0
	for _, w := range words {
		stem := w[:min(len(w), 5)]
		for _, p := range parts {
			if strings.HasPrefix(p, stem) {
				n++
				break
			}
		}
	}
	return n
}

// Describes says a span found beside a question's entities that names a
// KG entity is more likely a word about the answer than a second thing:
// the answer's type noun ("what language", "what kind of guitar"), a
// word of the phrase that names the answer ("who was canadian prime
// minister in 1993": the answer is the prime minister, not one who meets
// the office), or a word the plan's relations name ("where did picasso
// live": places_lived). Such spans name an entity too (Language, Prime
// minister) but narrow the answers to whatever happens to meet it.
func Describes(question, text string, cs []schema.Constraint, rels []string) bool {
	t := kg.Normalize(text)
	for _, c := range cs {
		if c.Kind == Type && (t == kg.Normalize(c.Text) || t == kg.Normalize(c.Value)) {
			return true
		}
	}
	if p := " " + answerPhrase(question) + " "; strings.Contains(p, " "+t+" ") {
		return true
	}
	for _, w := range strings.Fields(t) {
		if len(w) < 4 {
			continue
		}
		for _, r := range rels {
			if relationFit(r, []string{w}) > 0 {
				return true
			}
		}
	}
	return false
}

// Words that end the phrase naming the answer: prepositions, relative
// pronouns and auxiliaries.
var phraseEnds = []string{"in", "of", "for", "from", "with", "at", "on", "by", "to", "during", "after", "before", "since",
	"near", "into", "about", "over", "under", "between", "against", "as", "than", "within", "across", "along", "through",
	"behind", "beyond", "among", "like", "via", "whose",
	"that", "who", "whom", "which", "where", "when", "did", "does", "do", "has", "have", "had", "is", "was", "are", "were"}

// answerPhrase is the normalised words that name the answer after the
// first "who", "what" or "which" and the verb "to be" after it: "who was
// canadian prime minister in 1993" gives "canadian prime minister".
func answerPhrase(question string) string {
	ws := strings.Fields(kg.Normalize(question))
	i := slices.IndexFunc(ws, func(w string) bool { return w == "who" || w == "what" || w == "which" })
	if i < 0 {
		return ""
	}
	i++
	for i < len(ws) && slices.Contains([]string{"is", "was", "are", "were", "the", "a", "an"}, ws[i]) {
		i++
	}
	j := i
	for j < len(ws) && !slices.Contains(phraseEnds, ws[j]) {
		j++
	}
	return strings.Join(ws[i:j], " ")
}

// clauseMarks open a relative clause or a phrase that says more of the
// answer: "the airport that serves B", "the school with the mascot B",
// "the president during B", "the country whose capital is B".
var clauseMarks = []string{"that", "which", "whose", "where", "with", "during"}

// clauseReach is how many words before a span a clause mark may stand:
// "that serves lyon", "with the mascot eagles".
const clauseReach = 4

// Attached says the span text of question stands in a relative clause or
// a with- or during-phrase (clauseMarks), the way a question states a
// second thing the answer meets; a span elsewhere ("what language do
// maltese speak") is more often a word of the question that happens to
// name an entity.
func Attached(question, text string) bool {
	ws := strings.Fields(kg.Normalize(question))
	ts := strings.Fields(kg.Normalize(text))
	if len(ts) == 0 {
		return false
	}
	// The question's own wh-word opens no clause.
	wh := slices.IndexFunc(ws, func(w string) bool { return slices.Contains([]string{"who", "what", "which", "where", "when"}, w) })
	for i := range ws {
		if i+len(ts) > len(ws) || !slices.Equal(ws[i:i+len(ts)], ts) {
			continue
		}
		for j := max(0, i-clauseReach); j < i; j++ {
			if j != wh && slices.Contains(clauseMarks, ws[j]) {
				return true
			}
		}
	}
	return false
}
