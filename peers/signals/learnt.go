package signals

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode"

	"github.com/stem-kgqa/stem/internal/jsonl"
)

// Pair is a training question and the relation path that answers it,
// written as a key: each relation's KG name followed by '>' when walked
// along it and '<' against it ("children>parents<"; GraphRAFT's
// Query.Key, GCR's path key). The two peers whose papers fine-tune a
// model on the training questions (GCR's KG-specialised LLM on the paths
// from question to answer entities, GraphRAFT's L1 on synthesised
// queries) learn from such pairs; the pairs come from the training
// questions' gold relation paths, the same questions and paths STEM's
// pattern planner learns from (stem train peer), and hold nothing of
// STEM's planner.
type Pair struct {
	Question string `json:"question"`
	Key      string `json:"path"`
}

// Classifier is a relation-path classifier learnt from pairs: a
// multinomial naive Bayes over the question's words, one class per key
// seen in training. It stands in for a peer's fine-tuned model (GCR's
// KG-specialised LLM, GraphRAFT's query generator L1): like them under
// their constraints (the KG-Trie, the grounded mask), the peer only ever
// weighs paths that exist around the question's entities. It is
// read-only once trained, so safe for concurrent use.
type Classifier struct {
	keys  []string
	prior []float64        // log P(key)
	word  []map[string]int // word counts per key
	total []int            // words per key
	vocab int
}

// Train learns a Classifier from pairs; pairs with an empty key are
// skipped.
func Train(pairs []Pair) *Classifier {
	s := &Classifier{}
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

// Keys returns the keys the classifier knows, in training order.
func (s *Classifier) Keys() []string { return s.keys }

// Posterior returns P(key | question) for every key seen in training;
// a key absent from the map has probability 0. Words are smoothed by
// add-one, so an unseen word weighs every key alike.
func (s *Classifier) Posterior(question string) map[string]float32 {
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

// WritePairs writes pairs as JSON lines, {"question": ..., "path": ...}.
func WritePairs(w io.Writer, pairs []Pair) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, p := range pairs {
		if err := enc.Encode(p); err != nil {
			return fmt.Errorf("write training pair %q: %w", p.Question, err)
		}
	}
	return bw.Flush()
}

// ReadPairs reads the pairs WritePairs wrote from the file at path.
func ReadPairs(ctx context.Context, path string) ([]Pair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("training pairs: %w", err)
	}
	defer f.Close()
	var out []Pair
	err = jsonl.Lines(ctx, f, path, func(n int, line []byte) error {
		var p Pair
		if err := json.Unmarshal(line, &p); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("training pairs %s: none", path)
	}
	return out, nil
}

// Learn reads the pairs at path and trains a Classifier on them: how a
// peer's --PEER-model flag opens its trained stand-in (naive Bayes
// trains in milliseconds, so the pairs are the model file).
func Learn(ctx context.Context, path string) (*Classifier, error) {
	pairs, err := ReadPairs(ctx, path)
	if err != nil {
		return nil, err
	}
	return Train(pairs), nil
}
