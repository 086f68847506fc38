package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/stem-kgqa/stem/selection"
	"github.com/stem-kgqa/stem/tracing"
)

// Selection is how the planner's readings of a question were judged by
// their evidence (package selection): every reading with its features and
// score, the one answered with, and how sure the answer is.
type Selection struct {
	Candidates []selection.Candidate
	// Chosen indexes Candidates, -1 when no reading bound an answer.
	Chosen int
	// Confidence is the probability, in [0, 1], that the first answer is
	// right; Calibrated says it was fitted on held-out questions (a
	// trained selector) rather than the default heuristic's.
	Confidence float64
	Calibrated bool
	// Selected says the selector may choose a reading other than the
	// planner's first that binds answers (a trained one does).
	Selected bool
	// Model says which selector judged: its note.
	Model string
	// Beam is the readings the planner traced per question
	// (Pipeline.Beam); 0 when the pipeline does not say.
	Beam int
	// Kept is the keep decision on each answer weighed, the chosen
	// reading's then the other readings' (selection.Model.Cut); nil
	// without a keep part.
	Kept []selection.Kept
	// KeepThreshold is the probability from which the keep part keeps
	// an answer after the first.
	KeepThreshold float64
	// in is what the readings were judged from, for KeepRows.
	in selection.Input
}

// KeepRows returns the keep features of each reading's answers
// (selection.KeepRows; their first len(selection.AnswerNames) are the
// answer-order features) and those answers' entities, Candidates[i]'s
// at i, for training the answer order and the answer set
// (selection.Question.Answers, Keep, Entities).
func (s *Selection) KeepRows() ([][][]float64, [][]int32) {
	rows := selection.KeepRows(s.in, s.Candidates)
	ents := make([][]int32, len(rows))
	for i, fs := range rows {
		ents[i] = make([]int32, len(fs))
		for j := range fs {
			ents[i][j] = s.Candidates[i].Answers[j].Entity
		}
	}
	return rows, ents
}

// Contradicted reports whether the KG holds evidence against the chosen
// reading (selection.Candidate.Contradicted).
func (s *Selection) Contradicted() bool {
	return s.Chosen >= 0 && s.Chosen < len(s.Candidates) && s.Candidates[s.Chosen].Contradicted()
}

// selector is the model that judges readings: the pipeline's, or the
// default heuristic, which keeps the planner's choice.
func (p *Pipeline) selector() *selection.Model {
	if p.Selector != nil {
		return p.Selector
	}
	return selection.Default()
}

// choose judges the readings tracing returned on their own
// (tracing.Result.Alternatives) and returns the evidence with the chosen
// reading's answers in place of the first's, ordered and cut to the
// answer set the selector learnt (selection.Model.Order, Cut); evidence without
// alternatives (a peer's) comes back as it was, with no selection.
func (p *Pipeline) choose(ctx context.Context, req Request, ev *Evidence) (*tracing.Result, *Selection, error) {
	tr := ev.Trace
	if tr == nil || len(tr.Alternatives) == 0 {
		return tr, nil, nil
	}
	m := p.selector()
	in := selection.Input{Question: req.Question, Graph: req.Graph, Projection: req.Projection, Trace: tr, GNN: ev.Scores, Encoder: p.Encoder, Kinds: p.Kinds, Lexicon: p.Lexicon, PathFit: p.PathFit}
	cands, err := selection.Candidates(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	sel := &Selection{Candidates: cands, Chosen: m.Choose(cands), Calibrated: m.Calibrated(), Selected: m.Select, Model: m.Note, Beam: p.Beam, in: in}
	if sel.Chosen < 0 {
		return tr, sel, nil
	}
	c := cands[sel.Chosen]
	sel.Confidence = c.Confidence
	answers := c.Answers
	if i := slices.IndexFunc(cands, func(a selection.Candidate) bool { return len(a.Answers) > 0 }); i == sel.Chosen {
		// Tracing's own pick: its answers as it merged them.
		if len(m.Answer) == 0 && m.Keep == nil {
			return tr, sel, nil
		}
		answers = tr.Answers
	}
	out := *tr
	out.Answers, sel.Kept = m.Cut(in, cands, sel.Chosen, m.Order(in, c, answers))
	if m.Keep != nil {
		sel.KeepThreshold = m.Keep.Threshold
	}
	return &out, sel, nil
}

// ConfidenceFloor is --min-confidence: the confidence below which stem
// answers "no answer", or AutoConfidence.
type ConfidenceFloor float64

// AutoConfidence is --min-confidence auto, DefaultMinConfidence: a user
// asking their own KG a question it lacks the evidence for gets "no
// answer" with no flag to learn (the default heuristic rates such an
// answer below it: the hand-written KG without the founder's birthplace
// answers canada at 0.44), while what the question's words name,
// matched in the KG, scores about 0.8.
const AutoConfidence ConfidenceFloor = -1

// DefaultMinConfidence is what AutoConfidence stands for.
const DefaultMinConfidence = 0.5

// UnmarshalText reads "auto" or a probability in [0, 1].
func (c *ConfidenceFloor) UnmarshalText(b []byte) error {
	if string(b) == "auto" {
		*c = AutoConfidence
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || v < 0 || v > 1 {
		return errors.New("want auto or a number from 0 to 1")
	}
	*c = ConfidenceFloor(v)
	return nil
}

// MarshalText writes c as UnmarshalText reads it.
func (c ConfidenceFloor) MarshalText() ([]byte, error) {
	if c < 0 {
		return []byte("auto"), nil
	}
	return []byte(strconv.FormatFloat(float64(c), 'g', -1, 64)), nil
}

// Auto reports whether c is AutoConfidence.
func (c ConfidenceFloor) Auto() bool { return c < 0 }

// Value is the floor as a probability: DefaultMinConfidence for auto.
func (c ConfidenceFloor) Value() float64 {
	if c < 0 {
		return DefaultMinConfidence
	}
	return float64(c)
}

// abstain answers "no answer" when the selection's confidence is below
// MinConfidence, saying why; a result with no selection (a peer's) is
// never abstained on, having no confidence to compare.
func (p *Pipeline) abstain(res *Result) {
	s := res.Selection
	if p.MinConfidence <= 0 || s == nil || len(res.Answers) == 0 {
		return
	}
	contradicted := s.Contradicted()
	if p.MinConfidenceAuto && !s.Calibrated && !contradicted {
		return
	}
	if c := s.Confidence; c < p.MinConfidence {
		res.Abstained = true
		res.Abstain = fmt.Sprintf("best candidate %.2f < %g", c, p.MinConfidence)
		if p.MinConfidenceAuto && contradicted {
			res.Abstain += ", and the KG holds evidence against its reading"
		}
		res.Withheld, res.Answers = res.Answers, nil
	}
}
