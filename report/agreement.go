package report

import (
	"slices"

	"github.com/stem-kgqa/stem/eval"
)

// Agreement says which questions each configuration alone answers right
// (a hit), so a comparison shows where a strategy's wins lie, not only
// how many there are.
type Agreement struct {
	// N is the questions every configuration answered.
	N int `json:"n"`
	// All and None count the questions every configuration, and no
	// configuration, answered right.
	All  int `json:"all_right"`
	None int `json:"none_right"`
	// Alone lists, per configuration in the comparison's order, the
	// questions only it answered right.
	Alone []AloneRight `json:"alone_right"`
}

// AloneRight is one configuration's questions that no other got right.
type AloneRight struct {
	Name string `json:"config"`
	// Count is len(IDs) before IDs was cut to MaxAloneIDs.
	Count int      `json:"count"`
	IDs   []string `json:"ids"`
}

// MaxAloneIDs is how many question ids an AloneRight keeps as examples.
const MaxAloneIDs = 20

// Agree computes the agreement of entries from their per-question results
// (eval.Options.PerQuestion); nil when fewer than two entries have them.
// Questions some entry did not answer (a partial run) are left out.
func Agree(entries []Entry) *Agreement {
	var with []Entry
	for _, e := range entries {
		if e.Report != nil && len(e.Report.Questions) > 0 {
			with = append(with, e)
		}
	}
	if len(with) < 2 {
		return nil
	}
	hits := make([]map[string]bool, len(with))
	for i, e := range with {
		hits[i] = make(map[string]bool, len(e.Report.Questions))
		for _, q := range e.Report.Questions {
			hits[i][q.ID] = q.Hit > 0
		}
	}
	a := &Agreement{Alone: make([]AloneRight, len(with))}
	for i, e := range with {
		a.Alone[i].Name = e.Name
	}
	ids := questionIDs(with[0].Report.Questions)
	for _, id := range ids {
		right, who := 0, -1
		answered := true
		for i := range with {
			hit, ok := hits[i][id]
			if !ok {
				answered = false
				break
			}
			if hit {
				right++
				who = i
			}
		}
		if !answered {
			continue
		}
		a.N++
		switch right {
		case len(with):
			a.All++
		case 0:
			a.None++
		case 1:
			al := &a.Alone[who]
			al.Count++
			if len(al.IDs) < MaxAloneIDs {
				al.IDs = append(al.IDs, id)
			}
		}
	}
	return a
}

// questionIDs returns the results' ids in their order.
func questionIDs(rs []eval.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return slices.Clip(out)
}
