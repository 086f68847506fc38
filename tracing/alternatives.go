package tracing

// Alternative is what one reading of the question (a group of the
// request's schema graphs, Request.Groups) binds on its own: the answers
// the merged result would hold had the planner ranked that group first.
// Plan selection (package selection) weighs the alternatives against each
// other by the evidence each has, instead of taking the first that binds
// any.
type Alternative struct {
	// Group is the group's number (Request.Groups), Graphs its schema
	// graphs, in request order.
	Group  int
	Graphs []int
	// Answers are the group's answers, ranked and cut as Result.Answers
	// is; empty when its searches bound nothing.
	Answers []Answer
	// Matched counts the KG triples the group's searches matched.
	Matched int
}

// alternatives returns, for a ranked request that asks for them
// (Request.Alternatives), each group's own answers, in group order. The
// searches already ran for every graph: this only merges their outputs
// group by group.
func (t *Tracer) alternatives(s *searches, anchors []Anchor) []Alternative {
	if !s.req.Alternatives || !s.req.Ranked {
		return nil
	}
	var out []Alternative
	index := map[int]int{}
	for g := range s.sgs {
		grp := s.group(g)
		i, ok := index[grp]
		if !ok {
			i = len(out)
			index[grp] = i
			out = append(out, Alternative{Group: grp})
		}
		out[i].Graphs = append(out[i].Graphs, g)
	}
	for i := range out {
		sub := *s
		sub.outs = make([]runOut, len(s.outs))
		for j, o := range s.outs {
			if s.group(s.jobs[j].graph) == out[i].Group {
				sub.outs[j] = o
				out[i].Matched += len(o.matches)
			}
		}
		out[i].Answers = t.answers(&sub, anchors)
	}
	return out
}
