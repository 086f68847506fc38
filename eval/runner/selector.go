package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/stem-kgqa/stem/assets"
	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/selection"
	"github.com/stem-kgqa/stem/tracing"
	"github.com/stem-kgqa/stem/train/selfsup"
)

// SelectorJob is what stem train selector trains on: the training
// questions, the settings they are answered with, the encoder, and the
// command's own options.
type SelectorJob struct {
	Data     Dataset
	Settings plan.Settings
	Encoder  catalog.EncoderSettings
	SelectorOptions
}

// SelectorOptions are stem train selector's own: the selector file
// written, whether it may replace one, the questions answered at once
// and how many questions in each of the calibration's shares (every
// Held-th question calibrates; 0: 5).
type SelectorOptions struct {
	Out     string
	Force   bool
	Workers int
	Held    int
	// Answers also learns the order of the chosen reading's answers.
	Answers bool
	// NoKeep learns no answer set (selection.Model.Keep): every answer
	// the chosen reading binds is returned.
	NoKeep bool
	// Rows, when not "", is a JSON-lines FILE written with every
	// question's readings: plan, first answers, features and label.
	Rows string
	// Negatives is the share of the training questions whose answer
	// edges are removed from the KG they are traced over
	// (benchmark.RemoveSampled with benchmark.NegativesSalt): every
	// reading of a question that lost its answer is labelled wrong, so
	// the selector sees what a reading looks like when the KG cannot
	// answer. 0 trains on the KG as it is.
	Negatives float64
	// CalibrateAnswerable calibrates the confidence on the held-out
	// questions that kept their answers only
	// (selection.TrainOptions.CalibrateAnswerable).
	CalibrateAnswerable bool
	// UnanswerableShare calibrates the confidence for a KG that lacks
	// the answers of that share of its questions
	// (selection.TrainOptions.UnanswerableShare); 0: as drawn.
	UnanswerableShare float64
	// ChosenOnly fits the confidence on the chosen readings only
	// (selection.TrainOptions.ChosenOnly).
	ChosenOnly bool
	// SelfSup trains on questions the KG itself yields (train/selfsup)
	// instead of the dataset's: for a KG with no training questions.
	SelfSup bool
}

// SelectorBeam is stem train selector's beam when the user gives none:
// the readings traced per training question, which the selector file
// records (selection.Model.Beam) and a pipeline using it traces unless
// given a --beam (plan.BeamSize.For). It is twice projection.DefaultBeam
// because a selector chooses better among more readings: trained and
// used at 8 against 4 (its keep part weighing four readings' answers),
// Hits@1 / F1 went from 65.79 / 56.96 to 67.38 / 57.57 on WebQSP's shared
// KG out of fold (scripts/webqsp-folds), 98.40 / 96.59 to 98.50 / 96.68
// on the 10M synthetic KG (both planners), 98.57 / 97.35 to 98.67 / 97.47
// on MetaQA 2-hop; on PQ-3H Hits@1 stayed 98.09 and F1 fell 97.69 to
// 97.56 (three questions kept one more wrong answer).
const SelectorBeam plan.BeamSize = 8

// TrainSelector learns the plan selector (package selection) from the
// job's training questions: each is answered with its settings' planner, every reading
// of its beam is traced and labelled right when its first answer is a
// gold one, and a logistic model is fitted on four questions in five and
// calibrated on the fifth. It prints what it learnt to w and writes the
// model to o.Out. The questions must be training questions: nothing
// measured with the selector may be among them.
func TrainSelector(ctx context.Context, w, log io.Writer, job SelectorJob) error {
	d, s, enc, o := job.Data, job.Settings, job.Encoder, job.SelectorOptions
	if s.Planner == "oracle" {
		return fmt.Errorf("--planner oracle plans from the gold paths, which no question asked has: train the selector with the planner it will choose among")
	}
	if o.SelfSup && len(d.Questions) > 0 {
		return fmt.Errorf("--selfsup writes its own questions from the KG: give --kg alone, no --questions")
	}
	if o.UnanswerableShare < 0 || o.UnanswerableShare >= 1 {
		return fmt.Errorf("--calibrate-unanswerable %v: want a share in [0, 1)", o.UnanswerableShare)
	}
	if !o.SelfSup {
		if err := d.Source().Check(); err != nil {
			return err
		}
	}
	ins := append(append([]string{d.KG, d.GoldPaths, d.IDs, s.PlannerModel}, d.Questions...), d.QType...)
	if err := atomicfile.CheckOutput("--out", o.Out, o.Force, ins...); err != nil {
		return err
	}
	data, err := trainingData(ctx, d, o.SelfSup, log)
	if err != nil {
		return err
	}
	env, lost, err := negatives{kgPath: d.KG, data: data, enc: enc, fraction: o.Negatives}.open(ctx, log)
	if err != nil {
		return err
	}
	defer env.Close()
	s.Selector, s.MinConfidence = "", 0
	if s.Beam.Auto() {
		s.Beam = SelectorBeam
	}
	p, closeP, err := env.Pipeline(ctx, s)
	defer closeP()
	if err != nil {
		return err
	}
	col := &collector{p: eval.Pipeline{Pipeline: p}, rows: map[string]selection.Question{}, seen: map[string][]readingRow{}, lost: lost}
	if _, err := eval.Run(ctx, data.Questions, col, eval.Options{Graph: data.Graph, KeepGoing: true, Workers: max(1, o.Workers), Progress: log}); err != nil {
		return err
	}
	qs, st := col.questions()
	if o.Rows != "" {
		if err := col.writeRows(o.Rows); err != nil {
			return err
		}
	}
	m, err := selection.Train(qs, selection.TrainOptions{Held: o.Held, Answers: o.Answers, CalibrateAnswerable: o.CalibrateAnswerable,
		UnanswerableShare: o.UnanswerableShare, ChosenOnly: o.ChosenOnly, Keep: !o.NoKeep})
	if err != nil {
		return err
	}
	m.Note = fmt.Sprintf("trained on %d questions (%s planner, beam %d)", len(qs), p.PlannerName, p.Beam)
	m.Beam = p.Beam
	if err := m.Save(o.Out); err != nil {
		return fmt.Errorf("--out %s: %w", o.Out, err)
	}
	n := float64(max(1, len(qs)))
	fmt.Fprintf(w, "%d questions, %d with a reading that binds answers, %.0f readings\n", len(data.Questions), st.answered, st.readings)
	if lost != nil {
		fmt.Fprintf(w, "%d questions traced without their answer edges (--unanswerable-fraction %.2f), every reading labelled wrong\n", len(lost), o.Negatives)
	}
	fmt.Fprintf(w, "the planner's pick right: %.2f%%; some reading right: %.2f%%\n", 100*float64(st.first)/n, 100*float64(st.some)/n)
	fmt.Fprintf(w, "weights (fitted on %d questions, calibrated on %d): confidence, choice\n", m.Trained, m.Held)
	for i, name := range selection.Names {
		fmt.Fprintf(w, "  %-12s %+.3f", name, m.Weights[i])
		if m.Choice != nil {
			fmt.Fprintf(w, " %+.3f", m.Choice[i])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  %-12s %+.3f\n", "bias", m.Bias)
	if m.Answer != nil {
		fmt.Fprintf(w, "answer order weights:\n")
		for i, name := range selection.AnswerNames {
			fmt.Fprintf(w, "  %-12s %+.3f\n", name, m.Answer[i])
		}
	}
	if k := m.Keep; k != nil {
		fmt.Fprintf(w, "answer set: keep an answer after the chosen reading's first at p >= %.2f (training F1 %.2f; every answer weighed %.2f, the first alone %.2f)\n",
			k.Threshold, 100*k.F1, 100*k.All, 100*k.One)
		for i, name := range selection.KeepNames {
			fmt.Fprintf(w, "  %-12s %+.3f\n", name, k.Weights[i])
		}
		fmt.Fprintf(w, "  %-12s %+.3f\n", "bias", k.Bias)
	}
	if m.Platt != nil {
		fmt.Fprintf(w, "calibration: sigmoid(%.3f*z %+.3f)\n", m.Platt.A, m.Platt.B)
	}
	fmt.Fprintf(w, "wrote %s\n", o.Out)
	return nil
}

// trainingData loads d's training questions and its KG, or with selfSup
// opens d's KG and writes questions from it (train/selfsup): each
// synthesized question asks for the entities its relation path reaches
// from its entity, and that path is its gold path.
func trainingData(ctx context.Context, d Dataset, selfSup bool, log io.Writer) (*assets.Data, error) {
	if !selfSup {
		return d.Load(ctx, log)
	}
	r, err := assets.OpenKG(ctx, d.KG, kg.OpenOptions{Settings: d.Backends})
	if err != nil {
		return nil, err
	}
	g, ok := r.(*kg.Graph)
	if !ok {
		return nil, fmt.Errorf("--selfsup: --kg %s: the questions are written from a KG in memory; give the KG as a file", d.KG)
	}
	exs, st, err := selfsup.Synthesize(ctx, g, selfsup.Options{Seed: 1}, nil)
	if err != nil {
		return nil, fmt.Errorf("--selfsup: --kg %s: %w", d.KG, err)
	}
	fmt.Fprintf(log, "selfsup: %d questions over %d relation paths of %d relations\n", st.Examples, st.Paths, st.Relations)
	data := &assets.Data{KG: g, Graph: g}
	for i, ex := range exs {
		q := benchmark.Question{ID: fmt.Sprintf("selfsup-%d", i), Text: ex.Question, Entities: []string{ex.Mention},
			Gold: []schema.GoldPath{{Start: ex.Mention, Steps: ex.Path}}}
		for _, e := range benchmark.GoldEnds(g, q) {
			q.Answers = append(q.Answers, g.EntityName(e))
		}
		if len(q.Answers) > 0 {
			data.Questions = append(data.Questions, q)
		}
	}
	if len(data.Questions) == 0 {
		return nil, fmt.Errorf("--selfsup: --kg %s yields no question", d.KG)
	}
	return data, nil
}

// negatives are what TrainSelector's KG is opened from: the KG file, the
// training questions over it, the encoder and the share of questions
// whose answer edges go (SelectorOptions.Negatives).
type negatives struct {
	kgPath   string
	data     *assets.Data
	enc      catalog.EncoderSettings
	fraction float64
}

// open opens the KG of the training questions as Dataset.Open does,
// except that with fraction > 0 the KG is the variant
// without the answer edges of a fraction of them (sampled with
// benchmark.NegativesSalt, not the test variants' salt), written to a
// temporary file so that the entity index is keyed by its content; data's
// KG is then the variant. lost are the ids of the questions whose answers
// the variant lacks; nil with fraction 0 or without a shared KG in
// memory (then the KG is kgPath's own, and log says so).
func (n negatives) open(ctx context.Context, log io.Writer) (*assets.Env, map[string]bool, error) {
	kgPath, data, enc, fraction := n.kgPath, n.data, n.enc, n.fraction
	if fraction < 0 || fraction >= 1 {
		return nil, nil, fmt.Errorf("--unanswerable-fraction %v: want one in [0, 1)", fraction)
	}
	if fraction > 0 && data.Graph == nil {
		fmt.Fprintf(log, "--unanswerable-fraction: no shared KG in memory to remove answers from; training without negatives\n")
	}
	if fraction == 0 || data.Graph == nil {
		env, err := assets.Open(ctx, assets.Config{KG: kgPath, Graph: data.KG, Encoder: enc, Log: log})
		return env, nil, err
	}
	g, u, err := benchmark.RemoveSampled(ctx, data.Graph, data.Questions, benchmark.Sample{Fraction: fraction, Salt: benchmark.NegativesSalt})
	if err != nil {
		return nil, nil, fmt.Errorf("--unanswerable-fraction: %w", err)
	}
	dir, err := os.MkdirTemp("", "stem-negatives-")
	if err != nil {
		return nil, nil, fmt.Errorf("--unanswerable-fraction: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kg.tsv")
	if err := kg.WriteFile(ctx, path, g, kg.FreebaseNS); err != nil {
		return nil, nil, fmt.Errorf("--unanswerable-fraction: %w", err)
	}
	fmt.Fprintf(log, "negatives: %s\n", VariantSummary(u))
	data.KG, data.Graph = g, g
	env, err := assets.Open(ctx, assets.Config{KG: path, Graph: g, Encoder: enc, Log: log})
	return env, u.Lost(), err
}

// collector answers training questions and keeps every reading's
// features and label, by question id.
type collector struct {
	p    eval.Pipeline
	mu   sync.Mutex
	rows map[string]selection.Question
	seen map[string][]readingRow
	// lost are the questions whose answer edges the KG was traced
	// without: none of their readings is right.
	lost map[string]bool
}

// readingRow is one reading as --rows writes it.
type readingRow struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Plan     string   `json:"plan"`
	Answers  []string `json:"answers"`
	Bound    int      `json:"bound"`
	Right    bool     `json:"right"`
	// Lost says the question was traced over the KG without its answer
	// edges (--unanswerable-fraction).
	Lost     bool               `json:"lost,omitempty"`
	Features map[string]float64 `json:"features"`
	// Gold is the question's number of gold answers; Each is every bound
	// answer (the first selection.MaxAnswers) with its features
	// (selection.AnswerNames) and whether it is gold, to study which of
	// a reading's answers to keep.
	Gold int         `json:"gold"`
	Each []answerRow `json:"each,omitempty"`
	// Names are all the reading's bound answers in tracing's order and
	// GoldAnswers the question's gold answers, so that an answer list
	// cut or merged across readings can be scored as eval scores it
	// (F1 over every answer, not only the first selection.MaxAnswers).
	Names       []string `json:"names,omitempty"`
	GoldAnswers []string `json:"gold_answers,omitempty"`
}

// answerRow is one answer of a reading as --rows writes it.
type answerRow struct {
	Name     string             `json:"name"`
	Right    bool               `json:"right"`
	Features map[string]float64 `json:"features"`
}

// writeRows writes every question's readings, in id order, as JSON lines.
func (c *collector) writeRows(path string) error {
	ids := make([]string, 0, len(c.seen))
	for id := range c.seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		e := json.NewEncoder(w)
		for _, id := range ids {
			for _, r := range c.seen[id] {
				if err := e.Encode(r); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// answerRows pairs a reading's answers with their features (rows of
// selection.AnswerNames, for the first len(fs) answers) and gold labels,
// as --rows writes them.
func answerRows(answers []tracing.Answer, fs [][]float64, labels []bool) []answerRow {
	n := min(len(answers), len(fs), len(labels))
	out := make([]answerRow, n)
	for j := range n {
		a := answerRow{Name: answers[j].Name, Right: labels[j], Features: map[string]float64{}}
		for k, name := range selection.AnswerNames {
			if k < len(fs[j]) {
				a.Features[name] = fs[j][k]
			}
		}
		out[j] = a
	}
	return out
}

// Answer implements eval.Answerer.
func (c *collector) Answer(ctx context.Context, q benchmark.Question) (eval.Prediction, error) {
	pred, res, err := c.p.AnswerResult(ctx, q)
	if err != nil || res == nil || res.Selection == nil {
		return pred, err
	}
	row := selection.Question{Negative: c.lost[q.ID], Gold: len(q.Answers)}
	var seen []readingRow
	gold := func(name string) bool {
		if c.lost[q.ID] {
			return false
		}
		for _, g := range q.Answers {
			if eval.Match(name, g) {
				return true
			}
		}
		return false
	}
	keep, ents := res.Selection.KeepRows()
	for i, cand := range res.Selection.Candidates {
		if len(cand.Answers) == 0 {
			continue
		}
		right := gold(cand.Answers[0].Name)
		row.Rows = append(row.Rows, cand.Features)
		row.Labels = append(row.Labels, right)
		// The answer-order features lead each answer's keep features.
		fs := make([][]float64, len(keep[i]))
		labels := make([]bool, len(fs))
		for j, kf := range keep[i] {
			fs[j] = kf[:len(selection.AnswerNames):len(selection.AnswerNames)]
			labels[j] = gold(cand.Answers[j].Name)
		}
		row.Answers = append(row.Answers, fs)
		row.AnswerLabels = append(row.AnswerLabels, labels)
		row.Keep = append(row.Keep, keep[i])
		row.Entities = append(row.Entities, ents[i])
		r := readingRow{ID: q.ID, Question: q.Text, Plan: cand.Plan, Bound: len(cand.Answers), Right: right, Lost: c.lost[q.ID], Features: map[string]float64{}}
		for _, a := range cand.Answers[:min(3, len(cand.Answers))] {
			r.Answers = append(r.Answers, a.Name)
		}
		for i, n := range selection.Names {
			r.Features[n] = cand.Features[i]
		}
		r.Gold = len(q.Answers)
		r.Each = answerRows(cand.Answers, fs, labels)
		for _, a := range cand.Answers {
			r.Names = append(r.Names, a.Name)
		}
		r.GoldAnswers = q.Answers
		seen = append(seen, r)
	}
	c.mu.Lock()
	c.rows[q.ID] = row
	c.seen[q.ID] = seen
	c.mu.Unlock()
	return pred, nil
}

// collected counts what the training questions' readings hold.
type collected struct {
	answered, first, some int
	readings              float64
}

// questions returns the questions' readings in id order (the calibration
// share is then the same whatever the workers' order) and their counts.
func (c *collector) questions() ([]selection.Question, collected) {
	ids := make([]string, 0, len(c.rows))
	for id := range c.rows {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var st collected
	qs := make([]selection.Question, 0, len(ids))
	for _, id := range ids {
		q := c.rows[id]
		qs = append(qs, q)
		if len(q.Rows) == 0 {
			continue
		}
		st.answered++
		st.readings += float64(len(q.Rows))
		if q.Labels[0] {
			st.first++
		}
		for _, l := range q.Labels {
			if l {
				st.some++
				break
			}
		}
	}
	return qs, st
}
