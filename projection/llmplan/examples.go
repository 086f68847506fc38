package llmplan

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// Example is one few-shot demonstration: a training question with its
// decomposition, strategy and schema triples (the paper's figures 9-10).
// P1 shows Question -> (Assertions, Strategy); P2 shows Assertions ->
// Triples; P5 shows Question + Assertions -> Strategy.
type Example struct {
	Question   string
	Assertions []string
	Strategy   schema.Strategy
	// Triples are parallel to Assertions when built by ExamplesFromPaths;
	// an example without them is not shown to P2.
	Triples []schema.Triple
}

// PathRecord is a training question with its gold relation path, the raw
// material of ExamplesFromPaths (PathQuestion, MetaQA, WebQSP ground paths).
type PathRecord struct {
	Question string
	// Entity is the topic entity the path leaves.
	Entity    string
	Relations []string
	// Inverse, when set, is parallel to Relations and marks steps walked
	// tail -> head (MetaQA's director_to_movie walks directed_by backwards).
	Inverse []bool
	// Answers is the number of gold answers: more than one makes the
	// example's strategy Breadth, as in the paper's training data (C.1).
	Answers int
}

// ExamplesFromPaths turns relation-path training data into few-shot
// examples, so that planning over a new KG needs no hand-written prompts.
// Step i of the path becomes the triple (prev, rel, [ENTi]) and the
// assertion "[ENTi] is the <relation words> of <prev>" (reversed for an
// inverse step); the strategy is Breadth for several answers, as in C.1.
// Records with no question, entity or relation are skipped and counted in
// skipped.
func ExamplesFromPaths(recs []PathRecord) (exs []Example, skipped int) {
	for _, r := range recs {
		if strings.TrimSpace(r.Question) == "" || strings.TrimSpace(r.Entity) == "" || len(r.Relations) == 0 {
			skipped++
			continue
		}
		e := Example{Question: strings.TrimSpace(r.Question), Strategy: schema.Precision}
		if r.Answers > 1 {
			e.Strategy = schema.Breadth
		}
		prev, prevText := r.Entity, readable(r.Entity)
		ok := true
		for i, rel := range r.Relations {
			words := relationWords(rel)
			if words == "" {
				ok = false
				break
			}
			ph := "[ENT" + strconv.Itoa(i+1) + "]"
			inv := i < len(r.Inverse) && r.Inverse[i]
			if inv {
				e.Triples = append(e.Triples, schema.Triple{Head: ph, Rel: rel, Tail: prev})
				e.Assertions = append(e.Assertions, fmt.Sprintf("%s is the %s of %s", prevText, words, ph))
			} else {
				e.Triples = append(e.Triples, schema.Triple{Head: prev, Rel: rel, Tail: ph})
				e.Assertions = append(e.Assertions, fmt.Sprintf("%s is the %s of %s", ph, words, prevText))
			}
			prev, prevText = ph, ph
		}
		if !ok {
			skipped++
			continue
		}
		exs = append(exs, e)
	}
	return exs, skipped
}

// readable writes a KG entity name as text: underscores become spaces, but
// case is kept ("Barack_Obama" -> "Barack Obama").
func readable(name string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(name, "_", " ")), " ")
}

// relationWords is the most specific part of a relation name as words:
// the last segment of a Freebase dotted path or of PathQuestion's
// "__people__person__gender", so that "people.person.place_of_birth" reads
// "place of birth".
func relationWords(rel string) string {
	s := strings.TrimSpace(rel)
	if !strings.ContainsFunc(s, unicode.IsSpace) {
		if i := strings.LastIndex(s, "."); i >= 0 && i+1 < len(s) {
			s = s[i+1:]
		}
		if i := strings.LastIndex(s, "__"); i >= 0 && i+2 < len(s) {
			s = s[i+2:]
		}
	}
	return kg.RelationText(s)
}

// wordSet is the set of lower-cased words of s, for the lexical similarity
// used when no encoder is configured.
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[w] = true
	}
	return out
}

// jaccard is |a ∩ b| / |a ∪ b|.
func jaccard(a, b map[string]bool) float32 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	n := 0
	for w := range a {
		if b[w] {
			n++
		}
	}
	return float32(n) / float32(len(a)+len(b)-n)
}

// rankBy returns the indices 0..n-1 ordered by score, highest first, ties
// by index, so the choice of examples is deterministic.
func rankBy(scores []float32) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}
