package benchmark

import (
	"context"
	"fmt"

	"github.com/stem-kgqa/stem/kg"
)

// Union is the union of the questions' own graphs as one KG: every
// distinct triple of every question's graph, named as there. It is the
// shared KG of an own-graph dataset (WebQSP-mini, RoG rows): asked of it,
// a question meets the other questions' entities and relations around its
// own, as a user asking Freebase does, instead of the few paths another
// retriever kept for it. Questions without a graph add nothing.
func Union(ctx context.Context, qs []Question) (*kg.Graph, error) {
	var ts [][3]string
	for i, q := range qs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if q.Graph == nil {
			continue
		}
		for t := range q.Graph.NumTriples() {
			tr := q.Graph.Triple(int32(t))
			ts = append(ts, [3]string{q.Graph.EntityName(tr.Head), q.Graph.RelationName(tr.Rel), q.Graph.EntityName(tr.Tail)})
		}
	}
	g, err := kg.GraphOf(ts)
	if err != nil {
		return nil, fmt.Errorf("union of %d questions' graphs: %w", len(qs), err)
	}
	return g, nil
}
