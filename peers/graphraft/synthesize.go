package graphraft

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/stem-kgqa/stem/kg"
)

// Candidate is a template instance with what running it returned against
// a training question's gold answers.
type Candidate struct {
	Query Query
	// Hits counts the gold answers the query returns; Size its distinct
	// results.
	Hits, Size int
}

// Synthesize is GraphRAFT's ground-truth query synthesis (section 4.1)
// without the LLM: the question entities are given (entities, by KG name)
// rather than read off the question, every template instance around them
// (chains up to hops steps, as Enumerate) is executed, and the instances are ranked by hits in the gold answers
// (more first), then by result size (fewer first, the paper's precision
// filter), then one-hop before two-hop before between-entity paths before
// three-hop, then enumeration order, so the ranking is deterministic. The first candidate
// is the synthesized ground-truth query; instances with no hit are left
// out. Entities or answers g lacks are skipped; none found is an error
// naming the question.
func Synthesize(ctx context.Context, g kg.Reader, question string, entities, answers []string, hops int) ([]Candidate, error) {
	var anchors []int32
	for _, e := range entities {
		if id, ok := g.Entity(e); ok && !slices.Contains(anchors, id) {
			anchors = append(anchors, id)
		}
	}
	if len(anchors) == 0 {
		return nil, fmt.Errorf("synthesize %q: none of the entities %q is in the KG", question, entities)
	}
	gold := map[int32]bool{}
	for _, a := range answers {
		if id, ok := g.Entity(a); ok {
			gold[id] = true
		}
	}
	if len(gold) == 0 {
		return nil, fmt.Errorf("synthesize %q: none of the answers %q is in the KG", question, answers)
	}
	qs, err := Enumerate(ctx, g, anchors, hops, 0)
	if err != nil {
		return nil, fmt.Errorf("synthesize %q: %w", question, err)
	}
	var out []Candidate
	for _, q := range qs {
		paths, err := Execute(ctx, g, q, 0)
		if err != nil {
			return nil, fmt.Errorf("synthesize %q: %w", question, err)
		}
		ans := Answers(paths)
		hits := 0
		for _, a := range ans {
			if gold[a] {
				hits++
			}
		}
		if hits > 0 {
			out = append(out, Candidate{Query: q, Hits: hits, Size: len(ans)})
		}
	}
	slices.SortStableFunc(out, func(a, b Candidate) int {
		if c := cmp.Compare(b.Hits, a.Hits); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Size, b.Size); c != 0 {
			return c
		}
		return cmp.Compare(a.Query.Template, b.Query.Template)
	})
	return out, nil
}
