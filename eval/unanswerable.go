package eval

import (
	"fmt"
	"io"
)

// UnanswerableScores is what a run did with the questions whose answers
// its KG lacks: any answer to them is unsupported by the KG the run was
// given, so the right response is "no answer".
type UnanswerableScores struct {
	N int `json:"n"`
	// Abstained counts those answered "no answer"; AbstentionRecall is
	// Abstained / N in percent.
	Abstained        int     `json:"abstained"`
	AbstentionRecall float64 `json:"abstention_recall"`
	// AnsweredWrong counts those answered with a first answer that is not
	// gold; AnsweredRight those answered with a gold one all the same
	// (reached through relations other than the removed ones).
	AnsweredWrong int `json:"answered_wrong"`
	AnsweredRight int `json:"answered_right"`
}

// AnswerableScores is how the run scored the other questions, whose
// answers the KG still holds; compare Hits1 with a run over the original
// KG restricted to the same questions (the variant's answerable id file,
// --ids) for what abstaining cost them.
type AnswerableScores struct {
	N int `json:"n"`
	// Hits1 is in percent, an abstention scoring as a miss.
	Hits1     float64 `json:"hits1"`
	Abstained int     `json:"abstained"`
}

// splitUnanswerable scores the done outcomes by whether their question is
// in ids.
func splitUnanswerable(outs []outcome, ids map[string]bool) (*UnanswerableScores, *AnswerableScores) {
	un, an := &UnanswerableScores{}, &AnswerableScores{}
	for _, o := range outs {
		if !o.done {
			continue
		}
		r := o.res
		if !ids[r.ID] {
			an.N++
			an.Hits1 += r.Hits1
			if r.Abstained {
				an.Abstained++
			}
			continue
		}
		un.N++
		switch {
		case r.Abstained:
			un.Abstained++
		case r.Hits1 > 0:
			un.AnsweredRight++
		default:
			un.AnsweredWrong++
		}
	}
	if un.N > 0 {
		un.AbstentionRecall = 100 * float64(un.Abstained) / float64(un.N)
	}
	if an.N > 0 {
		an.Hits1 = 100 * an.Hits1 / float64(an.N)
	}
	return un, an
}

// writeUnanswerable prints the split's lines under a report's table.
func (r *Report) writeUnanswerable(w io.Writer) error {
	u, a := r.Unanswerable, r.Answerable
	if u == nil || a == nil {
		return nil
	}
	_, err := fmt.Fprintf(w, "unanswerable (KG lacks the answer) %d: abstained %d (%.2f%%), answered wrong %d, answered right %d; answerable %d: hits@1 %.2f, abstained %d\n",
		u.N, u.Abstained, u.AbstentionRecall, u.AnsweredWrong, u.AnsweredRight, a.N, a.Hits1, a.Abstained)
	return err
}
