package linking

import (
	"context"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
)

// Near matches: a span no exact name covers is a mention when the entity
// index finds an entity both near in meaning (the encoder's cosine) and
// spelt nearly the same (letters), so that a misspelt or otherwise spelt
// name is linked but a question word near a title in meaning only ("film"
// and "Films") is not.
const (
	// NearScore is the least cosine between a run of the question's words
	// and an entity the index returns for it.
	NearScore = 0.8
	// NearLetters is the least letter similarity, 1 - edit distance /
	// longer length over the normalised texts, between the span and the
	// entity's name: one edit in seven letters.
	NearLetters = 0.85
	// nearMinLen is the fewest letters of a near span: in shorter words
	// one edit is another word ("cat", "act").
	nearMinLen = 5
	// nearK is how many entities the index returns per run of words.
	nearK = 5
	// nearRuns bounds the index searches per question.
	nearRuns = 4
)

// nearMatch is one span the entity index matched.
type nearMatch struct {
	span    Span
	id      int32
	score   float32
	letters float64
}

// nearMentions finds, in each run of unused words that are not stop words,
// the longest spans whose text is a near match of an entity the index
// returns for the run (NearScore, NearLetters), at most limit in all,
// marking their words used. An index still deferred (kgvec.Deferred: a KG
// of millions of entities) is not opened for it: the search would wait
// minutes on the first question.
func nearMentions(ctx context.Context, ents *kgvec.Entities, question string, ws []Span, used []bool, limit int) ([]nearMatch, error) {
	if !ents.Opened() {
		return nil, nil
	}
	var out []nearMatch
	for _, run := range wordRuns(question, ws, used, nearRuns) {
		hits, err := ents.Nearest(ctx, question[ws[run.Start].Start:ws[run.End-1].End], nearK)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, h := range hits {
			names = append(names, kg.Normalize(h.Name))
		}
		for n := run.End - run.Start; n >= 1; n-- {
			for i := run.Start; i+n <= run.End; i++ {
				if len(out) >= limit || anyUsed(used[i:i+n]) || stopWord(question, ws[i]) || stopWord(question, ws[i+n-1]) {
					continue
				}
				sp := Span{ws[i].Start, ws[i+n-1].End}
				text := kg.Normalize(question[sp.Start:sp.End])
				best := -1
				var bestLetters float64
				for k, h := range hits {
					if h.Score < NearScore || len([]rune(text)) < nearMinLen {
						continue
					}
					lt := letterSimilarity(text, names[k])
					if lt >= NearLetters && (best < 0 || lt > bestLetters || lt == bestLetters && h.Name < hits[best].Name) {
						best, bestLetters = k, lt
					}
				}
				if best < 0 {
					continue
				}
				out = append(out, nearMatch{span: sp, id: hits[best].Entity, score: hits[best].Score, letters: bestLetters})
				for k := i; k < i+n; k++ {
					used[k] = true
				}
			}
		}
	}
	return out, nil
}

// wordRuns returns, as word index ranges [Start, End), the first max runs
// of consecutive unused words that are not stop words: each is searched
// on its own, since the vector of a longer run ("born in massachusets")
// is far from the name in it.
func wordRuns(question string, ws []Span, used []bool, max int) []Span {
	var runs []Span
	for i := 0; i < len(ws) && len(runs) < max; {
		if used[i] || stopWord(question, ws[i]) {
			i++
			continue
		}
		j := i
		for j < len(ws) && !used[j] && !stopWord(question, ws[j]) {
			j++
		}
		runs = append(runs, Span{i, j})
		i = j
	}
	return runs
}

// stopWord reports whether the word w of q is a stop word.
func stopWord(q string, w Span) bool { return stopWords[strings.ToLower(q[w.Start:w.End])] }

// letterSimilarity is 1 - the edit distance between a and b over the
// longer's length, in runes: 1 for equal texts, 0 for nothing in common.
func letterSimilarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	n := max(len(ra), len(rb))
	if n == 0 {
		return 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			sub := prev[j-1]
			if ra[i-1] != rb[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(rb)])/float64(n)
}
