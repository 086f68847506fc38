package schema

// PathTo returns the relation path from node from to the graph's answer
// slot, each step walked Forward where the triple leaves the node reached
// so far and Inverse where it enters it: a conjunction graph read from one
// of its anchors ("[ENT1] directed_by A" from A: directed_by, Inverse).
// ok is false when from does not reach the answer.
func (g Graph) PathTo(from string) (steps []Step, ok bool) {
	answer := g.AnswerSlot()
	from = CanonicalPlaceholder(from)
	if answer == "" {
		return nil, false
	}
	back := map[string]pathHop{from: {}}
	queue := []string{from}
	for len(queue) > 0 && !hasKey(back, answer) {
		n := queue[0]
		queue = queue[1:]
		for _, t := range g.Triples {
			h, tl := CanonicalPlaceholder(t.Head), CanonicalPlaceholder(t.Tail)
			var next string
			var d Direction
			switch n {
			case h:
				next, d = tl, Forward
			case tl:
				next, d = h, Inverse
			default:
				continue
			}
			if hasKey(back, next) {
				continue
			}
			back[next] = pathHop{prev: n, step: Step{Rel: t.Rel, Dir: d}}
			queue = append(queue, next)
		}
	}
	if !hasKey(back, answer) || answer == from {
		return nil, false
	}
	for n := answer; n != from; n = back[n].prev {
		steps = append([]Step{back[n].step}, steps...)
	}
	return steps, true
}

// pathHop is how PathTo reached a node: from prev by step.
type pathHop struct {
	prev string
	step Step
}

func hasKey(m map[string]pathHop, k string) bool { _, ok := m[k]; return ok }
