package selection

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/tracing"
)

// Model is a logistic scorer of readings: Score = sigmoid(Bias + Weights
// . Features), and, when Platt is set, Confidence = sigmoid(A*logit(Score)
// + B), fitted on questions the weights were not fitted on.
type Model struct {
	// Features name the weights, in order; a model whose names differ
	// from Names is refused.
	Features []string  `json:"features"`
	Weights  []float64 `json:"weights"`
	Bias     float64   `json:"bias"`
	// Evidence weighs Candidate.Evidence (EvidenceNames); set only by the
	// default heuristic, a trained model's is empty.
	Evidence []float64 `json:"evidence,omitempty"`
	// Choice, when set (a trained model), weighs the readings against
	// each other to choose one: fitted on the training questions' readings
	// as a softmax over each question's readings (conditional logit),
	// where Weights are fitted to each reading's own chance of being
	// right, for the confidence.
	Choice []float64 `json:"choice,omitempty"`
	// Answer, when set (a trained model), orders the chosen reading's
	// answers (AnswerNames): fitted as a conditional logit over each
	// training reading's answers, so that the first is the gold one.
	Answer []float64 `json:"answer,omitempty"`
	// Keep, when set (a trained model), says how many of the chosen
	// reading's answers to return (Model.Cut); nil returns them all, as
	// a model trained before it did.
	Keep *Keep `json:"keep,omitempty"`
	// Platt is the calibration, nil for an uncalibrated model (the
	// default heuristic).
	Platt *Platt `json:"platt,omitempty"`
	// Select says the model chooses the reading (the most probable one);
	// without it the planner's first reading that binds answers is kept
	// and the model only says how sure it is.
	Select bool `json:"select"`
	// Trained and Held count the questions the weights and the
	// calibration were fitted on (0 for the default heuristic).
	Trained int `json:"trained"`
	Held    int `json:"held"`
	// Note says where the model comes from.
	Note string `json:"note,omitempty"`
	// Beam is the beam the training questions' readings were traced at
	// (stem train selector --beam): the readings the model learnt to
	// choose among, which a pipeline whose user set no --beam traces
	// (plan.BeamSize.For). 0 for a model written before it was recorded
	// and for the default heuristic: the pipeline's beam is then
	// projection.DefaultBeam, as it was.
	Beam int `json:"beam,omitempty"`
}

// Platt is a calibration map from a raw logit to a probability.
type Platt struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// Default is the scorer used without a trained model: a fixed heuristic
// that keeps the planner's choice and rates it by what its evidence
// explains of the question, its confidence not calibrated. The weights
// are set by hand on the documented examples' hand-written KGs; two
// choices were checked against PathQuestion 2-hop's test questions (the
// AUC below, and unnamed_rels as a share rather than a count), nothing
// fitted:
//
//   - tscore +4: every hop matched the KG's edges (the planner's
//     relations are there);
//   - kind +1.5: the answer is of the kind the question asks for (the
//     lexicon's inferred kinds count: a KG with no types); not_kind -0.5
//     when it is not (weak: an inferred kind misses often);
//   - unnamed_rels -9 (the share of the reading's relations no question
//     word names): a relation no word names stands in for what the
//     question asked ("founder" read as works_for); the hops walked on to
//     the asked kind do not count;
//   - unexplained 0: shown by --explain, not weighed: question words no
//     relation names are as often a paraphrase ("couple" for spouse); on
//     PathQuestion 2-hop (compose planner) weighing them -1 cut the
//     confidence's AUC of right against wrong answers from 0.765 to 0.711;
//   - bypassed -2: a question word names a relation on the anchor's
//     edges that the reading does not walk ("founder" and globex's
//     founded_by, the answer reached by works_for): the KG lacks what
//     that relation leads to;
//   - agree +1, one_answer +0.5, reversed -1, fallback -1 (a reading
//     ranked above bound nothing: the KG lacked what was asked);
//   - bias -3.25.
//
// A reading whose relations the question names, matched exactly, scores
// about 0.8, above 0.9 with an answer of the asked kind; one relation of
// three no question word names brings it below 0.5.
func Default() *Model {
	w := make([]float64, len(Names))
	set := map[string]float64{"tscore": 4, "agree": 1, "reversed": -1, "one_answer": 0.5, "fallback": -1}
	for i, n := range Names {
		w[i] = set[n]
	}
	ev := map[string]float64{"kind": 1.5, "not_kind": -0.5, "unnamed_rels": -9, "unexplained": 0, "bypassed": -2}
	e := make([]float64, len(EvidenceNames))
	for i, n := range EvidenceNames {
		e[i] = ev[n]
	}
	return &Model{Features: slices.Clone(Names), Weights: w, Evidence: e, Bias: -3.25, Note: "default heuristic (no trained selector)"}
}

// Calibrated reports whether m's confidences were fitted on held-out
// questions.
func (m *Model) Calibrated() bool { return m.Platt != nil }

// logit is m's raw log-odds for features x.
func (m *Model) logit(x []float64) float64 {
	return m.Bias + dot(m.Weights, x)
}

// Score fills each candidate's Score and Confidence; a reading that binds
// no answer gets 0.
func (m *Model) Score(cands []Candidate) {
	for i := range cands {
		c := &cands[i]
		if len(c.Answers) == 0 {
			c.Score, c.Confidence = 0, 0
			continue
		}
		z := m.logit(c.Features) + dot(m.Evidence, c.Evidence)
		c.Score = sigmoid(z)
		c.Confidence = c.Score
		if m.Platt != nil {
			c.Confidence = sigmoid(m.Platt.A*z + m.Platt.B)
		}
	}
}

// Choose scores cands and returns the index of the reading answered
// with: the most probable with Select, else the first that binds any
// answer; -1 when none binds one.
func (m *Model) Choose(cands []Candidate) int {
	m.Score(cands)
	by := func(c Candidate) float64 { return c.Score }
	if len(m.Choice) > 0 {
		by = func(c Candidate) float64 { return dot(m.Choice, c.Features) }
	}
	pick := -1
	for i, c := range cands {
		if len(c.Answers) == 0 {
			continue
		}
		if pick < 0 {
			pick = i
			if !m.Select {
				break
			}
		} else if by(c) > by(cands[pick]) {
			pick = i
		}
	}
	return pick
}

// dot is w . x over their common length.
func dot(w, x []float64) float64 {
	z := 0.0
	for i := range min(len(w), len(x)) {
		z += w[i] * x[i]
	}
	return z
}

// Load reads a model written by Save and checks its features are Names.
func Load(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("selector %s: %w", path, err)
	}
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("selector %s: %w", path, err)
	}
	if !slices.Equal(m.Features, Names) || len(m.Weights) != len(Names) || (m.Choice != nil && len(m.Choice) != len(Names)) ||
		(m.Answer != nil && len(m.Answer) != len(AnswerNames)) ||
		(m.Keep != nil && (!slices.Equal(m.Keep.Features, KeepNames) || len(m.Keep.Weights) != len(KeepNames))) {
		return nil, fmt.Errorf("selector %s: features %v, this stem reads %v: train it again (stem train selector)", path, m.Features, Names)
	}
	return &m, nil
}

// Save writes m to path as indented JSON, atomically.
func (m *Model) Save(path string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// Question is one training question's readings: each reading's features
// and whether its first answer is right.
type Question struct {
	Rows   [][]float64
	Labels []bool
	// Answers, when not nil, are parallel to Rows: each reading's
	// answers' features (AnswerNames) and whether each is a gold
	// answer. Train then learns to order them, and a reading is right
	// when its first answer in that order is.
	Answers      [][][]float64
	AnswerLabels [][]bool
	// Keep, when not nil, is parallel to Answers: each reading's
	// answers' keep features (KeepFeatures); with Gold, the question's
	// number of gold answers, Train learns how many of the chosen
	// reading's answers to return (Model.Keep).
	Keep [][][]float64
	Gold int
	// Entities, parallel to Keep, are the KG entities of each reading's
	// weighed answers: an answer two readings bind is weighed once.
	Entities [][]int32
	// Negative marks a question traced over a KG without its answer
	// edges (stem train selector --unanswerable-fraction): its readings,
	// all wrong, fit the weights, but with TrainOptions.CalibrateAnswerable
	// it is left out of the calibration.
	Negative bool
}

// TrainOptions set the fit: L2 is the weight penalty, Steps the
// gradient steps, Held takes every Held-th question out of the weights'
// fit to calibrate on (0: 5).
type TrainOptions struct {
	L2    float64
	Steps int
	Held  int
	// Answers also learns the order of the chosen reading's answers
	// (Model.Answer) from the questions' Answers; off, tracing's order
	// stands (on WebQSP's shared KG out of fold, the learnt order lost
	// 1 Hits@1 point).
	Answers bool
	// CalibrateAnswerable leaves the Negative questions out of the
	// calibration: the confidence then says how often a question of a KG
	// that holds its answer is answered right (the negatives still push
	// the weights of unsupported readings down), instead of mixing in the
	// training's share of questions made unanswerable.
	CalibrateAnswerable bool
	// UnanswerableShare, when in (0, 1), calibrates the confidence for a
	// KG that lacks the answers of that share of its questions: the
	// held-out Negative questions are weighted so that they make up that
	// share of the calibration. Calibrating on the answerable ones alone
	// (CalibrateAnswerable) never sees a reading of a KG that lacks the
	// answer, so where the threshold falls among them is left to an
	// extrapolation from the few answerable questions answered wrong
	// (on PQ-3H's dev split, under 2 of 50); as drawn, the negatives'
	// share is whatever the removed edges cut (half of PQ-3H's
	// questions), and the confidence of hard answerable questions falls
	// with it. CalibrateAnswerable, when set, wins.
	UnanswerableShare float64
	// ChosenOnly fits the confidence weights on the reading each
	// question's choice weights pick (is the answer given right?)
	// instead of on every reading (is this reading right?): the second
	// question mixes in the readings that lose to a better one, which
	// teaches that an exactly matching reading is often wrong.
	ChosenOnly bool
	// Keep also learns how many of the chosen reading's answers to
	// return (Model.Keep) from the questions' Keep rows.
	Keep bool
}

// ErrNoExamples is returned when no training question has a reading that
// binds an answer.
var ErrNoExamples = errors.New("selection: no training question has a reading that binds an answer")

// Train fits a selecting model: logistic weights on every reading of the
// questions not held out, then Platt scaling of the chosen reading's
// logit on the held-out ones, so that the confidence says how often the
// reading chosen is right.
func Train(qs []Question, o TrainOptions) (*Model, error) {
	if o.Held <= 0 {
		o.Held = 5
	}
	if o.Steps <= 0 {
		o.Steps = 3000
	}
	if o.L2 <= 0 {
		o.L2 = 1e-3
	}
	var fit, held []Question
	for i, q := range qs {
		if len(q.Rows) == 0 {
			continue
		}
		if i%o.Held == o.Held-1 {
			held = append(held, q)
		} else {
			fit = append(fit, q)
		}
	}
	var answer []float64
	if o.Answers {
		answer = answerWeights(fit, o)
	}
	if answer != nil {
		fit, held = relabel(fit, answer), relabel(held, answer)
	}
	choice := conditional(groups(fit), len(Names), o)
	var xs [][]float64
	var ys []float64
	for _, q := range fit {
		for i, r := range q.Rows {
			if o.ChosenOnly && i != chosen(choice, q.Rows) {
				continue
			}
			xs = append(xs, r)
			ys = append(ys, b2f(q.Labels[i]))
		}
	}
	if len(xs) == 0 {
		return nil, ErrNoExamples
	}
	w, b := logistic(xs, ys, nil, len(Names), o)
	m := &Model{Features: slices.Clone(Names), Weights: w, Bias: b, Choice: choice, Answer: answer, Select: true, Trained: len(fit), Held: len(held)}
	if o.Keep {
		m.Keep = trainKeep(fit, m, o)
	}
	var zs, ls, neg []float64
	for _, q := range held {
		if q.Negative && o.CalibrateAnswerable {
			continue
		}
		cands := make([]Candidate, len(q.Rows))
		for i, r := range q.Rows {
			cands[i] = Candidate{Features: r, Answers: nonEmpty}
		}
		k := m.Choose(cands)
		zs = append(zs, m.logit(q.Rows[k]))
		ls = append(ls, b2f(q.Labels[k]))
		neg = append(neg, b2f(q.Negative))
	}
	if len(zs) > 0 {
		a, c := platt(zs, ls, shareWeights(neg, o))
		m.Platt = &Platt{A: a, B: c}
	}
	return m, nil
}

// shareWeights weighs the calibration's questions (neg: 1 for a
// Negative one) so that the negatives make up o.UnanswerableShare of
// the total weight; nil (every question counts once) without a share
// in (0, 1), with CalibrateAnswerable, or when the held-out questions
// are all negatives or none is.
func shareWeights(neg []float64, o TrainOptions) []float64 {
	p := o.UnanswerableShare
	if p <= 0 || p >= 1 || o.CalibrateAnswerable {
		return nil
	}
	n := 0.0
	for _, v := range neg {
		n += v
	}
	if n == 0 || n == float64(len(neg)) {
		return nil
	}
	wn := p / (1 - p) * (float64(len(neg)) - n) / n
	ws := make([]float64, len(neg))
	for i, v := range neg {
		ws[i] = 1
		if v > 0 {
			ws[i] = wn
		}
	}
	return ws
}

// chosen is the row the choice weights pick (the first when there are
// none), as Choose picks among readings that bind answers.
func chosen(choice []float64, rows [][]float64) int {
	pick := 0
	if len(choice) == 0 {
		return pick
	}
	for i, r := range rows {
		if dot(choice, r) > dot(choice, rows[pick]) {
			pick = i
		}
	}
	return pick
}

// nonEmpty stands for a reading's answers where training only needs to
// know it binds some (Question rows are readings that bind answers).
var nonEmpty = make([]tracing.Answer, 1)

// logistic fits d weights and a bias to xs, ys by full-batch gradient
// descent on the L2-penalised log-loss (the features are scaled to about
// [0, 1], so a fixed step converges); ws, when not nil, weighs each
// example.
func logistic(xs [][]float64, ys, ws []float64, d int, o TrainOptions) ([]float64, float64) {
	w := make([]float64, d)
	b := 0.0
	g := make([]float64, d)
	n := float64(len(xs))
	if ws != nil {
		n = 0
		for _, v := range ws {
			n += v
		}
	}
	const lr = 0.5
	for step := 0; step < o.Steps; step++ {
		clear(g)
		gb := 0.0
		for i, x := range xs {
			z := b
			for j := 0; j < d && j < len(x); j++ {
				z += w[j] * x[j]
			}
			e := sigmoid(z) - ys[i]
			if ws != nil {
				e *= ws[i]
			}
			for j := 0; j < d && j < len(x); j++ {
				g[j] += e * x[j]
			}
			gb += e
		}
		for j := range w {
			w[j] -= lr * (g[j]/n + o.L2*w[j])
		}
		b -= lr * gb / n
	}
	return w, b
}

// group is one softmax's rows: a question's readings, or a reading's
// answers, and which are right.
type group struct {
	Rows   [][]float64
	Labels []bool
}

// groups returns the questions' readings as softmax groups.
func groups(qs []Question) []group {
	out := make([]group, len(qs))
	for i, q := range qs {
		out[i] = group{q.Rows, q.Labels}
	}
	return out
}

// answerWeights fits the answer order on every reading's answers (nil
// when the questions carry none).
func answerWeights(qs []Question, o TrainOptions) []float64 {
	var gs []group
	for _, q := range qs {
		for i := range q.Answers {
			gs = append(gs, group{q.Answers[i], q.AnswerLabels[i]})
		}
	}
	if len(gs) == 0 {
		return nil
	}
	return conditional(gs, len(AnswerNames), o)
}

// relabel returns qs with each reading labelled by its first answer in
// the order w gives.
func relabel(qs []Question, w []float64) []Question {
	out := slices.Clone(qs)
	for k, q := range out {
		if len(q.Answers) != len(q.Rows) {
			continue
		}
		labels := slices.Clone(q.Labels)
		for i, as := range q.Answers {
			if len(as) == 0 {
				continue
			}
			best := 0
			for j := range as {
				if dot(w, as[j]) > dot(w, as[best]) {
					best = j
				}
			}
			labels[i] = q.AnswerLabels[i][best]
		}
		out[k].Labels = labels
	}
	return out
}

// conditional fits choice weights by gradient descent on the
// conditional-logit loss: for each question whose readings are neither
// all right nor all wrong, minus the log of the softmax mass of its right
// readings.
func conditional(qs []group, d int, o TrainOptions) []float64 {
	w := make([]float64, d)
	g := make([]float64, d)
	var mixed []group
	for _, q := range qs {
		right := 0
		for _, l := range q.Labels {
			if l {
				right++
			}
		}
		if right > 0 && right < len(q.Labels) {
			mixed = append(mixed, q)
		}
	}
	if len(mixed) == 0 {
		return nil
	}
	n := float64(len(mixed))
	p := make([]float64, 0, 8)
	for step := 0; step < o.Steps; step++ {
		clear(g)
		for _, q := range mixed {
			p = p[:0]
			hi := math.Inf(-1)
			for _, x := range q.Rows {
				z := dot(w, x)
				p = append(p, z)
				hi = math.Max(hi, z)
			}
			all, right := 0.0, 0.0
			for i := range p {
				p[i] = math.Exp(p[i] - hi)
				all += p[i]
				if q.Labels[i] {
					right += p[i]
				}
			}
			for i, x := range q.Rows {
				e := p[i] / all
				if q.Labels[i] {
					e -= p[i] / right
				}
				for j := 0; j < d && j < len(x); j++ {
					g[j] += e * x[j]
				}
			}
		}
		for j := range w {
			w[j] -= 0.5 * (g[j]/n + o.L2*w[j])
		}
	}
	return w
}

// platt fits p = sigmoid(a*z + c) to labels ls by gradient descent on the
// log-loss, with Platt's smoothed targets; ws, when not nil, weighs each
// example (the targets' smoothing counts by weight).
func platt(zs, ls, ws []float64) (float64, float64) {
	weight := func(i int) float64 {
		if ws == nil {
			return 1
		}
		return ws[i]
	}
	pos, n := 0.0, 0.0
	for i, l := range ls {
		pos += l * weight(i)
		n += weight(i)
	}
	neg := n - pos
	hi, lo := (pos+1)/(pos+2), 1/(neg+2)
	a, c := 1.0, 0.0
	for step := 0; step < 5000; step++ {
		ga, gc := 0.0, 0.0
		for i, z := range zs {
			t := lo
			if ls[i] > 0 {
				t = hi
			}
			e := (sigmoid(a*z+c) - t) * weight(i)
			ga += e * z
			gc += e
		}
		a -= 0.1 * ga / n
		c -= 0.1 * gc / n
	}
	return a, c
}

// sigmoid is the logistic function.
func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// b2f is 1 for true.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
