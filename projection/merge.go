package projection

import "slices"

// Origin is where a candidate of a beam merged from two planners (Merge)
// came from. The two planners' scores are not comparable (a trained
// planner's vote share, a zero-shot planner's similarity), so plan
// selection reads each candidate's standing in its own planner's beam and
// which planner proposed it. The zero value: a beam of one planner.
type Origin struct {
	// Merged says the candidate is in a merged beam.
	Merged bool
	// Second says only the second planner (the zero-shot one) proposed
	// it; Both that both did.
	Second bool
	Both   bool
	// Rank is its place in its own planner's beam, 0 first (the first
	// planner's where both proposed it).
	Rank int
}

// Merge returns the beams of two planners' projections of one question as
// one: first's candidates, then second's that first did not propose (the
// same schema graph), each with its Origin, so that plan selection weighs
// a trained planner's readings against a zero-shot one's. Each
// candidate's Score becomes its planner's score scaled over that
// planner's beam (1 its best, 0 its worst), comparable across the two.
// The candidates keep their own strategies (PerCandidate) where the two
// chose differently, and first's variants stay variants of its first
// candidate; second's never are. With no candidates in first, second's
// come first. The merged beam's Demoted is the larger of the two
// planners'.
func Merge(first, second Projection) Projection {
	if len(first.Candidates) == 0 {
		first, second = second, first
		out := merge(first, second)
		for i := range out.Candidates {
			o := &out.Candidates[i].Origin
			if !o.Both {
				o.Second = !o.Second
			}
		}
		return out
	}
	return merge(first, second)
}

// merge is Merge with the planners in the order given.
func merge(first, second Projection) Projection {
	out := Projection{Strategy: first.Strategy, Unranked: first.Unranked && second.Unranked,
		Notes: append(slices.Clone(first.Notes), second.Notes...), Deeper: max(first.Deeper, second.Deeper)}
	per := first.PerCandidate || second.PerCandidate || (len(second.Candidates) > 0 && first.Strategy != second.Strategy)
	seen := map[string]int{}
	add := func(p Projection, second bool) {
		scaled := scaleScores(p.Candidates)
		for i, c := range p.Candidates {
			key := c.Graph.String()
			if j, ok := seen[key]; ok {
				out.Candidates[j].Origin.Both = true
				continue
			}
			c.Strategy = p.StrategyOf(i)
			c.Score = scaled[i]
			c.Origin = Origin{Merged: true, Second: second, Rank: i}
			if second {
				c.Variant = false
			}
			seen[key] = len(out.Candidates)
			out.Candidates = append(out.Candidates, c)
		}
	}
	add(first, false)
	add(second, true)
	out.PerCandidate = per
	// A plan either planner preferred and demoted because the KG lacks
	// what it asks is evidence about the question, whichever planner saw
	// it: plan selection reads it (demoted, demoted_last) from the merged
	// beam as from one planner's.
	out.Demoted, out.DemotedLast = first.Demoted, first.DemotedLast
	if second.Demoted > first.Demoted {
		out.Demoted, out.DemotedLast = second.Demoted, second.DemotedLast
	}
	if per && len(out.Candidates) > 0 {
		out.Strategy = out.Candidates[0].Strategy
	}
	return out
}

// scaleScores returns cands' scores scaled over them: 1 the best, 0 the
// worst, 1 for all when they are equal.
func scaleScores(cands []Candidate) []float32 {
	out := make([]float32, len(cands))
	if len(cands) == 0 {
		return out
	}
	lo, hi := cands[0].Score, cands[0].Score
	for _, c := range cands {
		lo, hi = min(lo, c.Score), max(hi, c.Score)
	}
	for i, c := range cands {
		out[i] = 1
		if hi > lo {
			out[i] = (c.Score - lo) / (hi - lo)
		}
	}
	return out
}
