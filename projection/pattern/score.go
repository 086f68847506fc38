package pattern

import (
	"context"
	"fmt"
	"math"

	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
	"github.com/viterin/vek/vek32"
)

// scores is what the model says of one masked question: the score of
// every path it knows and what it needs to score one it does not.
type scores struct {
	// known holds each model path's score, by path id: (1-wc) times the
	// neighbours' vote share plus the prototype similarity, plus wc times
	// the classifier's probability.
	known []float32
	// wc is the classifier's weight (0 without a classifier); hid the
	// question's hidden vector and lmax, lsum its softmax's largest logit
	// and normaliser, which put an unseen path's logit on the same scale.
	wc, lmax, lsum float32
	hid            []float32
	// breadth and precision are the neighbours' weighted strategy votes.
	breadth, precision float32
}

// maskedText is the text the model reads for a question: masked like the
// training texts, or not at all when they were not.
func (p *Planner) maskedText(question string, entities, mentions []string) string {
	if p.m.unmasked {
		return MaskedText(question, nil)
	}
	if len(mentions) == 0 {
		mentions = linking.Mentions(question, entities)
	}
	return MaskedText(question, mentions)
}

// scoreAll scores every path of the model for a masked text.
func (p *Planner) scoreAll(ctx context.Context, text string) (scores, error) {
	m := p.m
	n, d := len(m.f.Texts), m.f.Dim
	sims := make([]float32, n)
	// Encoder part.
	q := make([]float32, d)
	if err := p.enc.Encode(ctx, []string{text}, q); err != nil {
		return scores{}, fmt.Errorf("pattern: encode question: %w", err)
	}
	if a := 1 - p.opts.TFIDF; a > 0 {
		// vek's SIMD dot: a model trained from a KG holds tens of
		// thousands of texts, read for every question.
		for i := range n {
			sims[i] = a * vek32.Dot(m.f.Vectors[i*d:(i+1)*d], q)
		}
	}
	// TF-IDF part.
	if b := p.opts.TFIDF; b > 0 {
		tf := map[string]float32{}
		for _, w := range words(text) {
			tf[w]++
		}
		var qn float32
		terms := sortedTerms(tf)
		for _, w := range terms {
			x := tf[w] * m.idf[w]
			qn += x * x
		}
		if qn > 0 {
			qn = float32(math.Sqrt(float64(qn)))
			for _, w := range terms {
				x := tf[w] * m.idf[w] / qn
				for _, po := range m.post[w] {
					if m.norms[po.ex] > 0 {
						sims[po.ex] += b * x * po.w / m.norms[po.ex]
					}
				}
			}
		}
	}
	var sc scores
	nb := topK(sims, p.opts.K)
	best := sims[nb[0]]
	vote := make([]float32, len(m.f.Paths))
	for _, i := range nb {
		w := float32(math.Exp(float64((sims[i] - best) / p.opts.Temperature)))
		var tot float32
		for _, c := range m.f.ExCounts[i] {
			tot += c
		}
		for j, id := range m.f.ExPaths[i] {
			vote[id] += w * m.f.ExCounts[i][j] / tot
		}
		if l := m.f.Breadth[i] + m.f.Precision[i]; l > 0 {
			sc.breadth += w * m.f.Breadth[i] / l
			sc.precision += w * m.f.Precision[i] / l
		}
	}
	var total float32
	for _, v := range vote {
		total += v
	}
	logits, hid := p.classify(text, q)
	sc.wc, sc.hid = p.opts.Classifier, hid
	var probs []float32
	if logits == nil {
		sc.wc = 0
	} else {
		probs = make([]float32, len(logits))
		sc.lmax, sc.lsum = softmaxInto(probs, logits)
	}
	sc.known = vote
	for id := range vote {
		s := vote[id] / total
		if c := p.opts.Centroid; c > 0 {
			s += c * vek32.Dot(m.centroids[id*d:(id+1)*d], q)
		}
		if sc.wc > 0 {
			s = (1-sc.wc)*s + sc.wc*probs[id]
		}
		sc.known[id] = s
	}
	return sc, nil
}

// unseenScore scores a path the model never saw by its known parts alone
// (see pathParts), on the classifier's scale; 0 without a classifier.
func (p *Planner) unseenScore(sc scores, path Path) float32 {
	if sc.wc == 0 {
		return 0
	}
	l := p.m.meanBias + p.partLogit(path, sc.hid)
	return sc.wc * float32(math.Exp(float64(l-sc.lmax))) / sc.lsum
}

// ScorePaths scores the given relation paths for a question as Predict
// ranks them: a path the model knows by its score among the model's
// paths, one it never saw by the classifier's reading of its parts. A
// zero-shot planner that enumerates a KG's paths adds these scores to its
// own (see Prior).
func (p *Planner) ScorePaths(ctx context.Context, question string, mentions []string, paths [][]schema.Step) ([]float32, error) {
	if len(linking.Words(question)) == 0 {
		return nil, ErrEmptyQuestion
	}
	sc, err := p.scoreAll(ctx, p.maskedText(question, nil, mentions))
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(paths))
	for i, path := range paths {
		if id, ok := p.m.pathID[Path(path).key()]; ok {
			out[i] = sc.known[id]
		} else {
			out[i] = p.unseenScore(sc, path)
		}
	}
	return out, nil
}
