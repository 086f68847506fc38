package tripgnn

import (
	"cmp"
	"math"
	"slices"

	"github.com/stem-kgqa/stem/kg"
)

// TopK returns the ids of the k most probable entities, most probable
// first; ties go to the lower id, NaN ranks last. k is clipped to
// [0, len(probs)].
func TopK(probs []float32, k int) []int32 {
	k = max(0, min(k, len(probs)))
	ids := make([]int32, len(probs))
	for i := range ids {
		ids[i] = int32(i)
	}
	key := func(i int32) float64 {
		p := float64(probs[i])
		if math.IsNaN(p) {
			return math.Inf(-1)
		}
		return p
	}
	slices.SortFunc(ids, func(a, b int32) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), cmp.Compare(a, b))
	})
	return slices.Clip(ids[:k])
}

// Guidance builds the Global Guidance Subgraph of section 3.3 on g: the
// top entities (deduplicated, sorted by id) and the ids of g's triples
// whose head and tail are both among them (sorted). Ids outside g are
// ignored.
func Guidance(g *kg.Graph, top []int32) (entities, triples []int32) {
	entities = entitySet(top, g.NumEntities())
	in := make(map[int32]bool, len(entities))
	for _, e := range entities {
		in[e] = true
	}
	for _, e := range entities {
		for _, t := range g.Out(e) {
			if in[g.Triple(t).Tail] {
				triples = append(triples, t)
			}
		}
	}
	slices.Sort(triples)
	return entities, triples
}

// GuidanceEdges is Guidance on a plain edge list (an Example's Heads and
// Tails): the returned triples are indices into heads/tails.
func GuidanceEdges(numEntities int, heads, tails []int32, top []int32) (entities, triples []int32) {
	entities = entitySet(top, numEntities)
	in := make([]bool, numEntities)
	for _, e := range entities {
		in[e] = true
	}
	for i := range min(len(heads), len(tails)) {
		h, t := heads[i], tails[i]
		if h >= 0 && int(h) < numEntities && t >= 0 && int(t) < numEntities && in[h] && in[t] {
			triples = append(triples, int32(i))
		}
	}
	return entities, triples
}

func entitySet(top []int32, n int) []int32 {
	out := make([]int32, 0, len(top))
	for _, e := range top {
		if e >= 0 && int(e) < n {
			out = append(out, e)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
