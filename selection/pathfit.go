package selection

import (
	"github.com/stem-kgqa/stem/schema"
)

// PathFit weighs a reading's relations against the words of the
// questions they answered in the trained planner's training (its
// examples' texts and gold paths): P(relation on the gold path | the
// question holds word w), counted over those examples. It tells a
// reading whose relations such questions named ("study" and
// people.person.education) from one the planner reached by the
// question's shape alone, and it weighs the zero-shot planner's
// readings (--planner both), which the trained planner's score does not
// rate, by the same training. It holds counts only, built once per
// planner model; nil without a trained planner.
type PathFit struct {
	// word counts the examples holding each word; pair the examples
	// holding a word whose gold paths walk a relation.
	word map[string]float64
	pair map[wordRel]float64
}

// wordRel is a question word with a relation.
type wordRel struct{ word, rel string }

// pathFitSmooth is added to a word's count: a word seen in a handful of
// examples says little about their relations.
const pathFitSmooth = 5

// NewPathFit counts the examples each calls fn with: a training
// question's text and the relations of its gold paths
// (pattern.Model.EachExample).
func NewPathFit(each func(fn func(text string, rels []string))) *PathFit {
	p := &PathFit{word: map[string]float64{}, pair: map[wordRel]float64{}}
	each(func(text string, rels []string) {
		if len(rels) == 0 {
			return
		}
		ws := fitWords(text)
		for _, w := range ws {
			p.word[w]++
			for _, r := range rels {
				p.pair[wordRel{w, r}]++
			}
		}
	})
	return p
}

// fitWords are text's distinct words that may name a relation: not stop
// words or question words.
func fitWords(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words(text) {
		if stop[w] || questionStop[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// Fit is the least, over g's relations, of the best P(relation | word)
// over the question's words qwords (fitWords): a reading is as well named
// as its worst-named relation. 0 for a nil PathFit or a reading of no
// relation.
func (p *PathFit) Fit(qwords []string, g schema.Graph) float64 {
	if p == nil || len(g.Triples) == 0 {
		return 0
	}
	least := 1.0
	for _, t := range g.Triples {
		best := 0.0
		for _, w := range qwords {
			if n := p.pair[wordRel{w, t.Rel}]; n > 0 {
				best = max(best, n/(p.word[w]+pathFitSmooth))
			}
		}
		least = min(least, best)
	}
	return least
}
