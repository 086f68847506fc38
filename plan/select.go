package plan

import (
	"context"
	"fmt"
	"slices"

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
	// in is what the readings were judged from, for AnswerFeatures.
	in selection.Input
}

// AnswerFeatures returns the features of reading i's answers
// (selection.AnswerFeatures), for training the answer order.
func (s *Selection) AnswerFeatures(i int) [][]float64 {
	c := s.Candidates[i]
	return selection.AnswerFeatures(s.in, c, c.Answers)
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
// reading's answers in place of the first's; evidence without
// alternatives (a peer's) comes back as it was, with no selection.
func (p *Pipeline) choose(ctx context.Context, req Request, ev *Evidence) (*tracing.Result, *Selection, error) {
	tr := ev.Trace
	if tr == nil || len(tr.Alternatives) == 0 {
		return tr, nil, nil
	}
	m := p.selector()
	in := selection.Input{Question: req.Question, Graph: req.Graph, Projection: req.Projection, Trace: tr, GNN: ev.Scores, Encoder: p.Encoder, Kinds: p.Kinds}
	cands, err := selection.Candidates(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	sel := &Selection{Candidates: cands, Chosen: m.Choose(cands), Calibrated: m.Calibrated(), Selected: m.Select, Model: m.Note, in: in}
	if sel.Chosen < 0 {
		return tr, sel, nil
	}
	c := cands[sel.Chosen]
	sel.Confidence = c.Confidence
	answers := c.Answers
	if i := slices.IndexFunc(cands, func(a selection.Candidate) bool { return len(a.Answers) > 0 }); i == sel.Chosen {
		// Tracing's own pick: its answers as it merged them.
		if len(m.Answer) == 0 {
			return tr, sel, nil
		}
		answers = tr.Answers
	}
	out := *tr
	out.Answers = m.Order(in, c, answers)
	return &out, sel, nil
}

// abstain answers "no answer" when the selection's confidence is below
// MinConfidence, saying why; a result with no selection (a peer's) is
// never abstained on, having no confidence to compare.
func (p *Pipeline) abstain(res *Result) {
	if p.MinConfidence <= 0 || res.Selection == nil || len(res.Answers) == 0 {
		return
	}
	if c := res.Selection.Confidence; c < p.MinConfidence {
		res.Abstained = true
		res.Abstain = fmt.Sprintf("best candidate %.2f < %g", c, p.MinConfidence)
		res.Withheld, res.Answers = res.Answers, nil
	}
}
