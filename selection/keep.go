package selection

import (
	"math"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/tracing"
)

// KeepNames are the features of one answer of the chosen reading for
// the keep decision (Model.Keep), in the order of KeepFeatures' rows:
// the answer's own (AnswerNames, first), where it stands in tracing's
// order, and what the reading and the question say of how many answers
// are asked for. Append-only: stored models index them.
var KeepNames = []string{
	"s_below",     // as AnswerNames
	"reversed",    // as AnswerNames
	"readings",    // as AnswerNames
	"log_degree",  // as AnswerNames
	"unnamed",     // as AnswerNames
	"type_fit",    // as AnswerNames
	"gnn",         // as AnswerNames
	"position",    // as AnswerNames: its place over the answers weighed
	"log_place",   // log(1 + its place), over log(1 + MaxAnswers)
	"below_first", // its S below the first answer's, over hops + 1
	"degree_gap",  // |its log_degree - the first answer's|
	"log_answers", // the reading's log(1 + answers bound), over log(1001)
	"hops",        // the reading's schema triples, over 3
	"plural",      // 1 when the question's words ask for several things ("what are", "which countries")
}

// Keep is the learnt size of the answer set: a logistic model of each
// answer of the chosen reading being a gold one (KeepNames), and the
// probability above which an answer after the first is kept. The first
// answer is always kept (Hits@1 is the choice's and the order's); the
// answers after MaxAnswers are never (past them a list only grew
// longer: on WebQSP's shared KG cutting at MaxAnswers alone lifted F1).
type Keep struct {
	// Features name the weights; a model whose names differ from
	// KeepNames is refused.
	Features  []string  `json:"features"`
	Weights   []float64 `json:"weights"`
	Bias      float64   `json:"bias"`
	Threshold float64   `json:"threshold"`
	// F1 is the training questions' mean F1 of the chosen reading's
	// answers with the cut, All with every answer kept (what tracing
	// returned), One with the first alone: how much the cut bought.
	F1  float64 `json:"f1"`
	All float64 `json:"all"`
	One float64 `json:"one"`
}

// Kept is the keep decision on one answer, for --explain.
type Kept struct {
	Name string  `json:"name"`
	P    float64 `json:"p"`
	Kept bool    `json:"kept"`
}

// KeepFeatures returns the keep features (KeepNames) of up to
// MaxAnswers of answers, reading c's answers in tracing's order.
func KeepFeatures(in Input, c Candidate, answers []tracing.Answer) [][]float64 {
	fs := answerFeatures(in, c.graph, answers)
	if len(fs) == 0 {
		return nil
	}
	plural := b2f(asksMany(in.Question))
	hops := float64(max(len(c.graph.Triples), 1))
	out := make([][]float64, len(fs))
	for i, a := range fs {
		f := make([]float64, len(KeepNames))
		copy(f, a)
		f[8] = math.Log1p(float64(i)) / math.Log1p(MaxAnswers)
		f[9] = float64(answers[0].Score-answers[i].Score) / (hops + 1)
		f[10] = math.Abs(a[3] - fs[0][3])
		f[11] = math.Log1p(float64(len(answers))) / math.Log(1001)
		f[12] = float64(len(c.graph.Triples)) / 3
		f[13] = plural
		out[i] = f
	}
	return out
}

// manyWords are question words that ask for several things.
var manyWords = map[string]bool{"are": true, "were": true, "list": true, "all": true, "some": true}

// asksMany reports whether question asks for several things: a word of
// manyWords, or a plural noun after its question word ("which
// countries", "what languages").
func asksMany(question string) bool {
	ws := words(question)
	for i, w := range ws {
		if manyWords[w] {
			return true
		}
		if (w == "what" || w == "which") && i+1 < len(ws) {
			next := ws[i+1]
			if len(next) > 3 && strings.HasSuffix(next, "s") && !strings.HasSuffix(next, "ss") && !questionStop[next] {
				return true
			}
		}
	}
	return false
}

// Cut returns answers cut to those m's keep part keeps (the first
// always, the others whose probability reaches the threshold, none past
// MaxAnswers) with the decision on each weighed; answers as they were,
// and no decisions, without a keep part.
func (m *Model) Cut(in Input, c Candidate, answers []tracing.Answer) ([]tracing.Answer, []Kept) {
	k := m.Keep
	if k == nil || len(answers) < 2 {
		return answers, nil
	}
	fs := KeepFeatures(in, c, answers)
	out := make([]tracing.Answer, 0, len(fs))
	ds := make([]Kept, len(fs))
	for i, f := range fs {
		p := sigmoid(k.Bias + dot(k.Weights, f))
		keep := i == 0 || p >= k.Threshold
		ds[i] = Kept{Name: answers[i].Name, P: p, Kept: keep}
		if keep {
			out = append(out, answers[i])
		}
	}
	return out, ds
}

// keepQuestion is one training question's chosen reading for the keep
// fit: its answers' keep features, which are gold, and how many gold
// answers the question has.
type keepQuestion struct {
	rows   [][]float64
	labels []bool
	gold   int
}

// keepQuestions are the chosen readings (by choice) of the questions
// that carry keep rows and gold answers.
func keepQuestions(qs []Question, choice []float64) []keepQuestion {
	var out []keepQuestion
	for _, q := range qs {
		if q.Negative || q.Gold == 0 || len(q.Keep) != len(q.Rows) || len(q.AnswerLabels) != len(q.Rows) || len(q.Rows) == 0 {
			continue
		}
		k := chosen(choice, q.Rows)
		if len(q.Keep[k]) == 0 || len(q.Keep[k]) != len(q.AnswerLabels[k]) {
			continue
		}
		out = append(out, keepQuestion{q.Keep[k], q.AnswerLabels[k], q.Gold})
	}
	return out
}

// trainKeep fits the keep part on the questions' chosen readings: the
// logistic weights on every answer after the first, then the threshold
// that maximises the questions' mean F1; nil when no question carries
// keep rows or no chosen reading binds more than one answer.
func trainKeep(qs []Question, choice []float64, o TrainOptions) *Keep {
	kq := keepQuestions(qs, choice)
	var xs [][]float64
	var ys, ws []float64
	for _, q := range kq {
		for i := 1; i < len(q.rows); i++ {
			xs = append(xs, q.rows[i])
			ys = append(ys, b2f(q.labels[i]))
			ws = append(ws, 1/float64(len(q.rows)-1))
		}
	}
	if len(xs) == 0 {
		return nil
	}
	w, b := logistic(xs, ys, ws, len(KeepNames), o)
	k := &Keep{Features: slices.Clone(KeepNames), Weights: w, Bias: b}
	ps := make([][]float64, len(kq))
	for j, q := range kq {
		ps[j] = make([]float64, len(q.rows))
		for i, f := range q.rows {
			ps[j][i] = sigmoid(b + dot(w, f))
		}
	}
	k.All, k.One = meanF1(kq, ps, -1), meanF1(kq, ps, 2)
	k.Threshold, k.F1 = 1, k.One
	for t := 0.01; t < 1; t += 0.01 {
		if f := meanF1(kq, ps, t); f > k.F1 {
			k.Threshold, k.F1 = t, f
		}
	}
	return k
}

// meanF1 is the questions' mean F1 when the first answer and those whose
// probability (ps, parallel to the questions' rows) reaches t are kept.
func meanF1(kq []keepQuestion, ps [][]float64, t float64) float64 {
	if len(kq) == 0 {
		return 0
	}
	sum := 0.0
	for j, q := range kq {
		kept, right := 0, 0
		for i, l := range q.labels {
			if i == 0 || ps[j][i] >= t {
				kept++
				if l {
					right++
				}
			}
		}
		right = min(right, q.gold)
		sum += 2 * float64(right) / float64(kept+q.gold)
	}
	return sum / float64(len(kq))
}
