package signals

import (
	"slices"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// PlanPath is a candidate schema graph's relation path from a mention to
// the answer slot, with the planner's confidence in it: what a peer in
// the planner-assisted mode may lean on.
type PlanPath struct {
	// Steps are the path's steps, in order from the mention.
	Steps []Step
	// Weight is 1 for every candidate of an unranked projection (the
	// oracle's gold paths) and 1/(rank+1) for a ranked one.
	Weight float32
}

// PlanPaths reads the relation path of every candidate schema graph of p
// that g knows all the relations of.
func PlanPaths(g kg.Reader, p projection.Projection) []PlanPath {
	var out []PlanPath
	for i, c := range p.Candidates {
		steps := SchemaSteps(c.Graph)
		if len(steps) == 0 {
			continue
		}
		path := make([]Step, 0, len(steps))
		for _, s := range steps {
			rel, ok := g.Relation(s.Rel)
			if !ok {
				break
			}
			path = append(path, Step{Rel: rel, Inverse: s.Dir == schema.Inverse})
		}
		if len(path) != len(steps) {
			continue
		}
		w := float32(1)
		if !p.Unranked {
			w = 1 / float32(i+1)
		}
		out = append(out, PlanPath{Steps: path, Weight: w})
	}
	return out
}

// SchemaSteps returns the shortest relation path of g from an entity
// mention to its answer slot, each step Forward when walked from head to
// tail, Inverse otherwise; nil when there is none. Constraint edges off
// that path are not steps of the answer and are left out.
func SchemaSteps(g schema.Graph) []schema.Step {
	ans := g.AnswerSlot()
	if ans == "" {
		return nil
	}
	type visit struct {
		node  string
		steps []schema.Step
	}
	var queue []visit
	seen := map[string]bool{}
	for _, m := range g.Mentions() {
		queue = append(queue, visit{node: m})
		seen[m] = true
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if schema.CanonicalPlaceholder(v.node) == ans && schema.IsPlaceholder(v.node) {
			return v.steps
		}
		for _, t := range g.Triples {
			next, dir := "", schema.Forward
			switch v.node {
			case t.Head:
				next = t.Tail
			case t.Tail:
				next, dir = t.Head, schema.Inverse
			default:
				continue
			}
			if seen[next] {
				continue
			}
			seen[next] = true
			queue = append(queue, visit{node: next, steps: append(slices.Clip(v.steps), schema.Step{Rel: t.Rel, Dir: dir})})
		}
	}
	return nil
}

// PlanScore is the planner's opinion of a relation path (or a prefix of
// one): the largest Weight * len(path)/len(Steps) over the plans whose
// Steps start with path, 0 when none does. A peer in the planner-assisted
// mode adds PlanWeight times it to its own score.
func PlanScore(plans []PlanPath, path []Step) float32 {
	best := float32(0)
	for _, p := range plans {
		if len(path) == 0 || len(path) > len(p.Steps) || !slices.Equal(p.Steps[:len(path)], path) {
			continue
		}
		best = max(best, p.Weight*float32(len(path))/float32(len(p.Steps)))
	}
	return best
}
