package benchmark

import (
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// Question is one benchmark question with everything needed to plan,
// retrieve and score it.
type Question struct {
	// ID is the dataset's id, or "file:line" for datasets without ids.
	ID   string
	Text string
	// Answers is the gold answer set, as KG entity names.
	Answers []string
	// Entities are the question's topic entities, as KG entity names.
	Entities []string
	// Gold lists the ground-truth reasoning paths.
	Gold []schema.GoldPath
	// GoldGraphs are the gold schema graphs, where the dataset gives
	// them (synth: a conjunction's two anchors, a constraint edge); the
	// oracle planner plans them instead of the paths.
	GoldGraphs []schema.Graph
	// Hops is the length of the shortest gold path (0 when there is none).
	Hops int
	// Type is the dataset's question type when it has one (MetaQA qtype).
	Type string
	// Graph is the question's own KG (WebQSP, RoG); nil means the
	// dataset's shared KG, passed to Run in Options.Graph.
	Graph *kg.Graph
}

func shortestHops(paths []schema.GoldPath) int {
	h := 0
	for _, p := range paths {
		if n := len(p.Steps); n > 0 && (h == 0 || n < h) {
			h = n
		}
	}
	return h
}

// GoldSteps returns the relation steps of each gold path, as planners
// train on them.
func (q Question) GoldSteps() [][]schema.Step {
	out := make([][]schema.Step, 0, len(q.Gold))
	for _, g := range q.Gold {
		out = append(out, g.Steps)
	}
	return out
}
