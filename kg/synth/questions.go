package synth

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// maxAnswers skips questions whose answer set is larger: PathQuestion
// questions have a handful of answers, and a path fanning out of a hub
// would otherwise give thousands.
const maxAnswers = 50

// qStats counts the questions of one split.
type qStats struct {
	Questions       int
	QuestionsByHops [4]int
	QuestionsViaCVT int
}

// questions writes up to n PathQuestion lines: a random walk of 1-3
// forward hops from a named topic entity gives the gold path, and the
// answers are everything the path's relations reach from the topic. Walks
// prefer a CVT at the first hop of multi-hop questions, and never end on
// one (a CVT has no name to answer with).
// seen holds the (topic, path) keys of questions written already, so that
// the train split never repeats a test question.
func (g *gen) questions(ctx context.Context, r *rand.Rand, n int, w *bufio.Writer, st *qStats, seen map[string]bool) error {
	var b []byte
	for tries := 0; st.Questions < n && tries < 50*n; tries++ {
		if tries%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		topic := r.Int32N(g.nNamed)
		hops := 1 + r.IntN(3)
		firstEdge := int32(-1)
		if hops > 1 && r.IntN(10) < 4 {
			// Start some multi-hop questions at a CVT edge's head: random
			// triples, until one whose tail is a CVT node.
			for range 32 {
				i := r.Int32N(int32(len(g.heads)))
				if g.tails[i] >= g.nNamed && g.heads[i] < g.nNamed {
					topic, firstEdge = g.heads[i], i
					break
				}
			}
		}
		if g.cnt[topic] == 0 {
			continue
		}
		path, viaCVT, ok := g.walk(r, topic, hops, firstEdge)
		if !ok {
			continue
		}
		relsOf := make([]int32, len(path))
		for i, e := range path {
			relsOf[i] = e.rel
		}
		key := fmt.Sprint(topic, relsOf)
		if seen[key] {
			continue
		}
		answers := g.follow(topic, relsOf)
		if len(answers) == 0 || len(answers) > maxAnswers {
			continue
		}
		seen[key] = true
		last := path[len(path)-1].tail
		if !slices.Contains(answers, last) {
			return fmt.Errorf("synth: internal error: walk end %d not among the path's answers", last)
		}
		// Text: "what is the <rel_n> of the <rel_n-1> ... of <topic> ?"
		var words []string
		for i := len(path) - 1; i >= 0; i-- {
			words = append(words, g.relWords(path[i].rel))
		}
		b = b[:0]
		b = append(b, "what is the "...)
		b = append(b, strings.Join(words, " of the ")...)
		b = append(b, " of "...)
		b = g.appendName(b, topic)
		b = append(b, " ?\t"...)
		b = g.appendName(b, last)
		b = append(b, '(')
		for _, a := range answers {
			b = g.appendName(b, a)
			b = append(b, '/')
		}
		b = append(b, ")\t"...)
		b = g.appendName(b, topic)
		for _, e := range path {
			b = append(b, '#')
			b = append(b, g.s.rels[e.rel].name...)
			b = append(b, '#')
			b = g.appendName(b, e.tail)
		}
		b = append(b, "#<end>#"...)
		b = g.appendName(b, last)
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("synth: write questions: %w", err)
		}
		st.Questions++
		st.QuestionsByHops[len(path)]++
		if viaCVT {
			st.QuestionsViaCVT++
		}
	}
	return nil
}

// walk takes hops random out-edges from topic; firstEdge, if not -1, is
// the first.
func (g *gen) walk(r *rand.Rand, topic int32, hops int, firstEdge int32) (path []edge, viaCVT, ok bool) {
	cur := topic
	for h := 0; h < hops; h++ {
		lo, c := g.first[cur], g.cnt[cur]
		if c == 0 {
			return nil, false, false
		}
		i := lo + r.Int32N(c)
		if h == 0 && firstEdge >= 0 {
			i = firstEdge
		} else if h == 0 && hops > 1 && r.IntN(10) < 7 {
			// Prefer a CVT edge, if the topic has one.
			for j := lo; j < lo+c; j++ {
				if g.tails[j] >= g.nNamed {
					i = j
					break
				}
			}
		}
		t := g.tails[i]
		if t == topic || slices.ContainsFunc(path, func(e edge) bool { return e.tail == t }) {
			return nil, false, false // no cycles: PathQuestion paths are simple
		}
		path = append(path, edge{g.rels[i], t})
		cur = t
		if t >= g.nNamed {
			viaCVT = true
		}
	}
	return path, viaCVT, cur < g.nNamed
}

// follow returns, sorted, every entity reached from topic by following rels
// forward, nil when a frontier grows past maxAnswers.
func (g *gen) follow(topic int32, rels []int32) []int32 {
	front := []int32{topic}
	for _, rel := range rels {
		var next []int32
		for _, e := range front {
			lo, c := g.first[e], g.cnt[e]
			for j := lo; j < lo+c; j++ {
				if g.rels[j] == rel {
					next = append(next, g.tails[j])
				}
			}
		}
		slices.Sort(next)
		next = slices.Compact(next)
		if len(next) > maxAnswers {
			return nil
		}
		front = next
	}
	return front
}
