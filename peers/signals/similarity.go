package signals

import (
	"context"
	"fmt"
	"sync"

	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection/linking"
)

// Similarity is the neutral stand-in for a peer's LLM (package doc): the
// encoder's cosine of the question, its entity mentions masked so that
// it compares what is asked and not whom it is about, and a candidate's
// text, in practice a path's relation words (Words). Every peer's
// no-LLM mode scores with it where its paper has an LLM choose, so the
// four differ only by their algorithms. Texts are encoded once per
// question, however many candidates share them (a hub's thousands of
// triples have a few relations). It is safe for concurrent use.
type Similarity struct {
	enc models.Encoder
	qv  []float32
	mu  sync.Mutex
	cos map[string]float32
}

// NewSimilarity encodes question, mentions masked, with enc.
func NewSimilarity(ctx context.Context, enc models.Encoder, question string, mentions []string) (*Similarity, error) {
	if enc == nil {
		return nil, fmt.Errorf("similarity: no encoder")
	}
	qv := make([]float32, enc.Dim())
	if err := enc.Encode(ctx, []string{linking.Mask(question, mentions)}, qv); err != nil {
		return nil, fmt.Errorf("encode the question: %w", err)
	}
	return &Similarity{enc: enc, qv: qv, cos: map[string]float32{}}, nil
}

// Scores returns the cosine of the question and each text.
func (s *Similarity) Scores(ctx context.Context, texts []string) ([]float32, error) {
	s.mu.Lock()
	var fresh []string
	seen := map[string]bool{}
	for _, t := range texts {
		if _, ok := s.cos[t]; !ok && !seen[t] {
			seen[t] = true
			fresh = append(fresh, t)
		}
	}
	s.mu.Unlock()
	if len(fresh) > 0 {
		dim := s.enc.Dim()
		vecs := make([]float32, len(fresh)*dim)
		if err := s.enc.Encode(ctx, fresh, vecs); err != nil {
			return nil, fmt.Errorf("encode %d texts: %w", len(fresh), err)
		}
		s.mu.Lock()
		for i, t := range fresh {
			s.cos[t] = models.Cosine(s.qv, vecs[i*dim:(i+1)*dim])
		}
		s.mu.Unlock()
	}
	out := make([]float32, len(texts))
	s.mu.Lock()
	for i, t := range texts {
		out[i] = s.cos[t]
	}
	s.mu.Unlock()
	return out, nil
}

// Score returns the cosine of the question and text.
func (s *Similarity) Score(ctx context.Context, text string) (float32, error) {
	v, err := s.Scores(ctx, []string{text})
	if err != nil {
		return 0, err
	}
	return v[0], nil
}
