package selection

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/tracing"
)

// KeepNames are the features of one answer for the keep decision
// (Model.Keep), in the order of KeepFeatures' rows: the answer's own
// (AnswerNames, first), where it stands in tracing's order, what its
// reading and the question say of how many answers are asked for, and
// whether it is another reading's than the chosen one (Cut weighs those
// too). Append-only: stored models index them.
var KeepNames = []string{
	"s_below",      // as AnswerNames
	"reversed",     // as AnswerNames
	"readings",     // as AnswerNames
	"log_degree",   // as AnswerNames
	"unnamed",      // as AnswerNames
	"type_fit",     // as AnswerNames
	"gnn",          // as AnswerNames
	"position",     // as AnswerNames: its place over the answers weighed
	"log_place",    // log(1 + its place), over log(1 + MaxAnswers)
	"below_first",  // its S below the first answer's, over hops + 1
	"degree_gap",   // |its log_degree - the first answer's|
	"log_answers",  // the reading's log(1 + answers bound), over log(1001)
	"hops",         // the reading's schema triples, over 3
	"plural",       // 1 when the question's words ask for several things ("what are", "which countries")
	"other",        // 1 for an answer of another reading than the chosen one, not among the chosen one's
	"choice_below", // that reading's choice score below the chosen one's, clipped to [0, 5], over 5
}

// Keep is the learnt answer set: a logistic model of each answer being
// a gold one (KeepNames), over the chosen reading's answers and the
// other readings' (Cut), and the probability from which an answer after
// the chosen reading's first is kept. That first answer is always kept
// (Hits@1 is the choice's and the order's); a reading's answers after
// MaxAnswers never are (past them a list only grew longer: on WebQSP's
// shared KG cutting the chosen reading's at MaxAnswers alone lifted F1).
type Keep struct {
	// Features name the weights; a model whose names differ from
	// KeepNames is refused.
	Features  []string  `json:"features"`
	Weights   []float64 `json:"weights"`
	Bias      float64   `json:"bias"`
	Threshold float64   `json:"threshold"`
	// Readings, when above 0, is how many readings' answers the pool
	// weighs: the chosen one and the next by choice score. 0 (a file
	// written before it) weighs every reading's, as before.
	Readings int `json:"readings,omitempty"`
	// F1 is the training questions' mean F1 with the cut, All with every
	// answer weighed kept, One with the chosen reading's first alone:
	// how much the cut bought.
	F1  float64 `json:"f1"`
	All float64 `json:"all"`
	One float64 `json:"one"`
}

// Kept is the keep decision on one answer weighed, for --explain: its
// probability of being a gold one and whether it is returned.
type Kept struct {
	Name string  `json:"name"`
	P    float64 `json:"p"`
	Kept bool    `json:"kept"`
}

// KeepFeatures returns the keep features (KeepNames) of up to
// MaxAnswers of answers, reading c's answers in tracing's order, as
// the chosen reading's (other and choice_below 0: Cut sets them for
// another reading's). Their first len(AnswerNames) are the answers'
// features for the answer order (AnswerNames).
func KeepFeatures(in Input, c Candidate, answers []tracing.Answer) [][]float64 {
	return keepFeatures(in, newAnswerContext(in), c, answers)
}

// KeepRows returns KeepFeatures of every reading's own answers, cands[i]
// the rows at i, reading the question's context once.
func KeepRows(in Input, cands []Candidate) [][][]float64 {
	ac := newAnswerContext(in)
	out := make([][][]float64, len(cands))
	for i, c := range cands {
		out[i] = keepFeatures(in, ac, c, c.Answers)
	}
	return out
}

// keepFeatures is KeepFeatures with the question's answerContext.
func keepFeatures(in Input, ac *answerContext, c Candidate, answers []tracing.Answer) [][]float64 {
	fs := answerFeatures(in, ac, c.graph, answers)
	if len(fs) == 0 {
		return nil
	}
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
		f[13] = ac.plural
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

// Cut returns the answers m's keep part keeps of the chosen reading's
// (cands[k], answers in the order given) and of the other readings'
// (after them, the readings by choice score, an answer once): the
// chosen reading's first always, the others whose probability reaches
// the threshold, none past MaxAnswers of a reading; with the decision on
// each weighed. Without a keep part, answers as they were and no
// decisions.
func (m *Model) Cut(in Input, cands []Candidate, k int, answers []tracing.Answer) ([]tracing.Answer, []Kept) {
	kp := m.Keep
	if kp == nil || k < 0 || k >= len(cands) {
		return answers, nil
	}
	rs := make([]poolReading, len(cands))
	lists := make([][]tracing.Answer, len(cands))
	for j, c := range cands {
		lists[j] = c.Answers
		rs[j].choice = m.choiceScore(c)
	}
	lists[k] = answers
	// Only the readings the pool weighs need their answers' features:
	// at a selector's beam of 8, half of them.
	order := poolOrder(rs, k, kp.Readings)
	ac := newAnswerContext(in)
	for _, j := range order {
		rs[j].rows = keepFeatures(in, ac, cands[j], lists[j])
		for _, a := range lists[j][:len(rs[j].rows)] {
			rs[j].ents = append(rs[j].ents, a.Entity)
		}
	}
	rows, from := poolRows(rs, order)
	if len(rows) < 2 {
		return answers, nil
	}
	out := make([]tracing.Answer, 0, len(rows))
	ds := make([]Kept, len(rows))
	for i, f := range rows {
		a := lists[from[i][0]][from[i][1]]
		p := sigmoid(kp.Bias + dot(kp.Weights, f))
		keep := i == 0 || p >= kp.Threshold
		ds[i] = Kept{Name: a.Name, P: p, Kept: keep}
		if keep {
			out = append(out, a)
		}
	}
	return out, ds
}

// choiceScore is what Choose weighs reading c by.
func (m *Model) choiceScore(c Candidate) float64 {
	if len(m.Choice) > 0 {
		return dot(m.Choice, c.Features)
	}
	return c.Score
}

// poolReading is one reading's part of the keep pool: its weighed
// answers' keep features and entities, and its choice score.
type poolReading struct {
	rows   [][]float64
	ents   []int32
	choice float64
}

// pool lists the answers the keep part decides on: reading k's, then
// the other readings' not already listed, the readings by choice score
// (stable), each with the features other and choice_below set; from
// says which reading and answer each row is. With limit above 0 only
// the chosen reading and the limit-1 next by choice score are weighed.
func pool(rs []poolReading, k, limit int) ([][]float64, [][2]int) {
	return poolRows(rs, poolOrder(rs, k, limit))
}

// poolOrder returns the readings pool weighs, in its order: k, then the
// others by choice score (stable), limit of them in all when above 0.
func poolOrder(rs []poolReading, k, limit int) []int {
	order := make([]int, 0, len(rs))
	for j := range rs {
		if j != k {
			order = append(order, j)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rs[b].choice, rs[a].choice) })
	order = append([]int{k}, order...)
	if limit > 0 && len(order) > limit {
		order = order[:limit]
	}
	return order
}

// poolRows is pool over the readings of order (poolOrder), the chosen
// one first.
func poolRows(rs []poolReading, order []int) ([][]float64, [][2]int) {
	var rows [][]float64
	var from [][2]int
	k := order[0]
	seen := map[int32]bool{}
	for _, j := range order {
		below := clip(rs[k].choice-rs[j].choice, 0, 5) / 5
		for i, f := range rs[j].rows {
			if i >= len(rs[j].ents) || seen[rs[j].ents[i]] {
				continue
			}
			seen[rs[j].ents[i]] = true
			f = slices.Clone(f)
			if j != k {
				f[len(KeepNames)-2], f[len(KeepNames)-1] = 1, below
			}
			rows = append(rows, f)
			from = append(from, [2]int{j, i})
		}
	}
	return rows, from
}

// keepReadings is how many readings a trained keep part weighs the
// answers of (Keep.Readings): the default beam's four. A selector traced
// at a wider beam chooses among more readings, but weighing every one's
// answers at beam 8 cost MetaQA 2-hop 0.71 F1 (97.35 to 96.64); with four,
// 97.47, and WebQSP's shared KG out of fold 57.57 against 57.37.
const keepReadings = 4

// keepQuestion is one training question's keep pool: its answers' keep
// features, which are gold, and how many gold answers the question has.
type keepQuestion struct {
	rows   [][]float64
	labels []bool
	gold   int
}

// keepQuestions are the keep pools of the chosen readings (by m's
// choice) of the questions that carry keep rows and gold answers.
func keepQuestions(qs []Question, m *Model) []keepQuestion {
	var out []keepQuestion
	for _, q := range qs {
		if q.Negative || q.Gold == 0 || len(q.Keep) != len(q.Rows) || len(q.AnswerLabels) != len(q.Rows) || len(q.Entities) != len(q.Rows) || len(q.Rows) == 0 {
			continue
		}
		k := chosen(m.Choice, q.Rows)
		if len(q.Keep[k]) == 0 {
			continue
		}
		rs := make([]poolReading, len(q.Rows))
		for j, r := range q.Rows {
			rs[j] = poolReading{rows: q.Keep[j], ents: q.Entities[j], choice: m.choiceScore(Candidate{Features: r, Score: sigmoid(m.logit(r))})}
		}
		rows, from := pool(rs, k, keepReadings)
		labels := make([]bool, len(rows))
		for i, f := range from {
			labels[i] = f[1] < len(q.AnswerLabels[f[0]]) && q.AnswerLabels[f[0]][f[1]]
		}
		out = append(out, keepQuestion{rows, labels, q.Gold})
	}
	return out
}

// trainKeep fits the keep part on the keep pools of the questions'
// chosen readings (pool): the logistic weights on every answer after the
// chosen one's first, each question's answers weighing one question in
// all (F1 is a mean over questions, and a pool of thirty answers would
// otherwise outweigh thirty questions of one), then the threshold that
// maximises the questions' mean F1; nil when no question carries keep
// rows or no pool holds more than one answer.
func trainKeep(qs []Question, m *Model, o TrainOptions) *Keep {
	kq := keepQuestions(qs, m)
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
	k := &Keep{Features: slices.Clone(KeepNames), Weights: w, Bias: b, Readings: keepReadings}
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
