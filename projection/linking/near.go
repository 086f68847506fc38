package linking

import (
	"context"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/stem-kgqa/stem/internal/editdist"
	"github.com/stem-kgqa/stem/kg"
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
func (ni *nearIndex) nearMentions(ctx context.Context, question string, ws []Span, used []bool, limit int) ([]nearMatch, error) {
	ents, vocab := ni.ents, ni.vocab
	if !ents.Opened() {
		return nil, nil
	}
	var out []nearMatch
	for _, run := range wordRuns(question, ws, used, nearRuns) {
		// A misspelt name has a word that is no word of any entity's
		// name but is an edit or two from one (vocab.near): a run with
		// none is not searched, which spares the search on most
		// questions.
		if !slices.ContainsFunc(ws[run.Start:run.End], func(w Span) bool { return vocab.near(kg.Normalize(question[w.Start:w.End])) }) {
			continue
		}
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
					// One text inside the other is an inflection or a
					// part ("languages" and "language"), not a misspelling.
					if strings.HasPrefix(text, names[k]) || strings.HasPrefix(names[k], text) {
						continue
					}
					lt := float64(editdist.Ratio(text, names[k]))
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

// vocabulary is the words of a KG's entity names and their one-letter
// deletions (as SymSpell indexes a dictionary), gathered on first use: a
// word one edit from a name's word shares a deletion with it. A deletion
// of the last letter is left out on both sides: a word that is another
// with a letter more at its end ("movies", "movie") is an inflection.
type vocabulary struct {
	once  sync.Once
	words map[string]bool
	dels  map[string]bool
}

// nearWordLen is the fewest letters of a word read as misspelt: in a
// shorter one an edit is most often another word.
const nearWordLen = 6

// build gathers g's name words once.
func (v *vocabulary) build(g kg.Reader) {
	v.once.Do(func() {
		v.words, v.dels = map[string]bool{}, map[string]bool{}
		for id := range g.NumEntities() {
			for _, w := range strings.Fields(kg.Normalize(g.EntityName(int32(id)))) {
				if v.words[w] {
					continue
				}
				v.words[w] = true
				if utf8.RuneCountInString(w) >= nearWordLen {
					for _, d := range deletions(w) {
						v.dels[d] = true
					}
				}
			}
		}
	})
}

// near reports whether w, a normalised word, is no word of a name but
// lies one edit (an insertion, deletion or substitution, not at the end)
// from one.
func (v *vocabulary) near(w string) bool {
	if v.words[w] || utf8.RuneCountInString(w) < nearWordLen {
		return false
	}
	if v.dels[w] {
		return true
	}
	for _, d := range deletions(w) {
		if v.words[d] || v.dels[d] {
			return true
		}
	}
	return false
}

// deletions are w with one rune left out, each place in turn but the
// last.
func deletions(w string) []string {
	rs := []rune(w)
	out := make([]string, 0, len(rs))
	for i := range len(rs) - 1 {
		out = append(out, string(rs[:i])+string(rs[i+1:]))
	}
	return out
}
