package selection

import (
	"math"
	"slices"
	"sort"

	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// AnswerNames are the features of one answer of a reading, in the order
// of answerFeatures' rows and Model.Answer: what orders a reading's
// answers where tracing ties them (its S, then its name).
var AnswerNames = []string{
	"s_below",    // the answer's S below the reading's best, over hops + 1
	"reversed",   // its edges matched against the schema's direction, over hops
	"readings",   // share of the readings binding answers that bind it
	"log_degree", // log(1 + its degree), over log(1e5)
	"unnamed",    // 1 when its name is a bare id
	"type_fit",   // as the reading's type_fit, for this answer
	"gnn",        // the Triple-GNN's probability of it (0 without guidance)
	"position",   // its place in tracing's order, over the answers
}

// MaxAnswers is how many of a reading's answers, in tracing's order,
// are weighed against each other; the rest keep their places after them.
const MaxAnswers = 30

// answerContext is what the answer features of every reading of a
// question read of the question as a whole: its type words and, over the
// readings that bind answers (tracing.Result.Alternatives), how many bind
// each entity. Built once a question (newAnswerContext), not once a
// reading: the readings' answer lists can run to thousands.
type answerContext struct {
	types    []schema.Constraint
	bound    map[int32]int
	readings int
	// plural is 1 when the question asks for several things (asksMany).
	plural float64
}

// newAnswerContext reads in's question and readings.
func newAnswerContext(in Input) *answerContext {
	ac := &answerContext{types: typeConstraints(in.Question), bound: map[int32]int{}, plural: b2f(asksMany(in.Question))}
	if in.Trace != nil {
		for _, a := range in.Trace.Alternatives {
			if len(a.Answers) == 0 {
				continue
			}
			ac.readings++
			for _, x := range a.Answers {
				ac.bound[x.Entity]++
			}
		}
	}
	return ac
}

// answerFeatures returns the features (AnswerNames) of up to MaxAnswers
// of answers, in tracing's order, of the reading whose schema graph is
// sg; ac is the question's answerContext.
func answerFeatures(in Input, ac *answerContext, sg schema.Graph, answers []tracing.Answer) [][]float64 {
	n := min(len(answers), MaxAnswers)
	if n == 0 {
		return nil
	}
	hops := float64(max(len(sg.Triples), 1))
	best := answers[0].Score
	for _, a := range answers[:n] {
		best = max(best, a.Score)
	}
	out := make([][]float64, n)
	for i, a := range answers[:n] {
		f := make([]float64, len(AnswerNames))
		f[0] = float64(best-a.Score) / (hops + 1)
		f[1] = float64(a.Reversed) / hops
		if ac.readings > 0 {
			f[2] = float64(ac.bound[a.Entity]) / float64(ac.readings)
		}
		if in.Graph != nil {
			f[3] = math.Log1p(float64(in.Graph.Degree(a.Entity))) / math.Log(1e5)
		}
		if bareID(a.Name) {
			f[4] = 1
		}
		f[5] = typeFit(in.Graph, ac.types, a.Entity)
		if in.GNN != nil {
			f[6] = float64(in.GNN[a.Entity])
		}
		f[7] = float64(i) / float64(n)
		out[i] = f
	}
	return out
}

// Order returns answers, reading c's (tracing's merged ones where c is
// tracing's pick), with their first MaxAnswers reordered by m's answer
// weights (stable: tracing's order breaks ties), or as they were when m
// has none or there is one answer.
func (m *Model) Order(in Input, c Candidate, answers []tracing.Answer) []tracing.Answer {
	if len(m.Answer) != len(AnswerNames) || len(answers) < 2 {
		return answers
	}
	fs := answerFeatures(in, newAnswerContext(in), c.graph, answers)
	idx := make([]int, len(fs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return dot(m.Answer, fs[idx[a]]) > dot(m.Answer, fs[idx[b]]) })
	out := slices.Clone(answers)
	for i, k := range idx {
		// idx orders only the first len(fs); the rest keep their places.
		out[i] = answers[k]
	}
	return out
}
