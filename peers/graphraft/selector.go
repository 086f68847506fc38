package graphraft

import (
	"math"
	"strings"
	"unicode"
)

// Pair is a training question and the key (Query.Key) of its
// synthesized ground-truth query.
type Pair struct {
	Question, Key string
}

// Selector is a query selector learnt from synthesized pairs: a
// multinomial naive Bayes over the question's words, one class per query
// key seen in training. It stands in for the paper's fine-tuned query
// generator L1, and like L1 under the grounded mask it only ever weighs
// queries that exist around the question's entities. It is read-only
// once trained, so safe for concurrent use.
type Selector struct {
	keys  []string
	prior []float64        // log P(key)
	word  []map[string]int // word counts per key
	total []int            // words per key
	vocab int
}

// Train learns a Selector from pairs; pairs with an empty key are skipped.
func Train(pairs []Pair) *Selector {
	s := &Selector{}
	idx := map[string]int{}
	vocab := map[string]bool{}
	n := 0
	count := []int{}
	for _, p := range pairs {
		if p.Key == "" {
			continue
		}
		k, ok := idx[p.Key]
		if !ok {
			k = len(s.keys)
			idx[p.Key] = k
			s.keys = append(s.keys, p.Key)
			s.word = append(s.word, map[string]int{})
			s.total = append(s.total, 0)
			count = append(count, 0)
		}
		count[k]++
		n++
		for _, w := range tokens(p.Question) {
			s.word[k][w]++
			s.total[k]++
			vocab[w] = true
		}
	}
	s.vocab = len(vocab)
	for _, c := range count {
		s.prior = append(s.prior, math.Log(float64(c)/float64(n)))
	}
	return s
}

// Keys returns the query keys the selector knows, in training order.
func (s *Selector) Keys() []string { return s.keys }

// Posterior returns P(key | question) for every key seen in training;
// a key absent from the map has probability 0. Words are smoothed by
// add-one, so an unseen word weighs every key alike.
func (s *Selector) Posterior(question string) map[string]float32 {
	if len(s.keys) == 0 {
		return nil
	}
	ws := tokens(question)
	logp := make([]float64, len(s.keys))
	best := math.Inf(-1)
	for k := range s.keys {
		lp := s.prior[k]
		den := math.Log(float64(s.total[k] + s.vocab + 1))
		for _, w := range ws {
			lp += math.Log(float64(s.word[k][w]+1)) - den
		}
		logp[k] = lp
		best = max(best, lp)
	}
	var z float64
	for k := range logp {
		logp[k] = math.Exp(logp[k] - best)
		z += logp[k]
	}
	out := make(map[string]float32, len(s.keys))
	for k, key := range s.keys {
		out[key] = float32(logp[k] / z)
	}
	return out
}

// tokens are the lower-cased words of a question; entity names
// (joined by '_' in PathQuestion) stay one rare word each.
func tokens(q string) []string {
	return strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-'
	})
}
