package synth

import (
	"fmt"
	"slices"

	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/dataset"
)

// Chain returns the relation steps of the shortest path, over the item's
// masked triples, from its first question entity to its answer slot: the
// chain a question about the item asks for. Branch triples of a tree-shaped
// item lie off that path and are left out. Steps are Forward where the path
// walks a triple head -> tail, Inverse where it walks it backwards.
func Chain(it *dataset.Item) ([]schema.Step, error) {
	if len(it.Entities) == 0 {
		return nil, fmt.Errorf("item %s: no question entity", it.ID)
	}
	if it.AnswerSlot == "" {
		return nil, fmt.Errorf("item %s: no answer slot", it.ID)
	}
	p, ok := shortest(it.Masked, it.Entities[0], it.AnswerSlot)
	if !ok || len(p) == 0 {
		return nil, fmt.Errorf("item %s: no path from %q to %s in its masked triples", it.ID, it.Entities[0], it.AnswerSlot)
	}
	return p, nil
}

// GoldPaths returns the distinct shortest paths from each question entity
// to each answer of the item: its answer slot and every placeholder
// standing for an answer entity. Items written by `stem data chains` may
// have several answers and question entities; for a synth item, whose
// branches may hide answers reached another way, use Chain.
func GoldPaths(it *dataset.Item) [][]schema.Step {
	var targets []string
	for ph, e := range it.Placeholders {
		if ph == it.AnswerSlot || slices.Contains(it.Answers, e) {
			targets = append(targets, ph)
		}
	}
	if it.AnswerSlot != "" && !slices.Contains(targets, it.AnswerSlot) {
		targets = append(targets, it.AnswerSlot)
	}
	slices.Sort(targets)
	var out [][]schema.Step
	for _, from := range it.Entities {
		for _, to := range targets {
			p, ok := shortest(it.Masked, from, to)
			if !ok || len(p) == 0 {
				continue
			}
			if !slices.ContainsFunc(out, func(q []schema.Step) bool { return slices.Equal(p, q) }) {
				out = append(out, p)
			}
		}
	}
	return out
}

// shortest is a breadth-first search over triples taken in both
// directions; ties go to the earlier triple, so the result is the same on
// every call.
func shortest(ts [][3]string, from, to string) ([]schema.Step, bool) {
	type back struct {
		prev string
		step schema.Step
	}
	seen := map[string]back{from: {}}
	queue := []string{from}
	for len(queue) > 0 && from != to {
		cur := queue[0]
		queue = queue[1:]
		for _, t := range ts {
			var nxt string
			var st schema.Step
			switch {
			case t[0] == cur:
				nxt, st = t[2], schema.Step{Rel: t[1], Dir: schema.Forward}
			case t[2] == cur:
				nxt, st = t[0], schema.Step{Rel: t[1], Dir: schema.Inverse}
			default:
				continue
			}
			if _, ok := seen[nxt]; ok {
				continue
			}
			seen[nxt] = back{cur, st}
			if nxt == to {
				queue = nil
				break
			}
			queue = append(queue, nxt)
		}
	}
	if _, ok := seen[to]; !ok {
		return nil, false
	}
	var steps []schema.Step
	for n := to; n != from; n = seen[n].prev {
		steps = append(steps, seen[n].step)
	}
	slices.Reverse(steps)
	return steps, true
}
