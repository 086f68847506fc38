package tracing

import "github.com/stem-kgqa/stem/kg"

// Audit counts the evidence triples of res that g does not hold and the
// answers that are not an end of some evidence triple: the faithfulness
// audit every retrieval strategy fills Result.Unbacked with, so that a
// peer's evidence is checked by the same rule as tracing's.
func Audit(g kg.Reader, res *Result) int {
	return audit(res, int32(g.NumTriples()), func(id int32) (int32, int32, bool) {
		tr := g.Triple(id)
		return tr.Head, tr.Tail, g.HasTriple(tr.Head, tr.Rel, tr.Tail)
	})
}

// audit is Audit's rule over a KG of n triples, where held gives triple
// id's ends and whether the KG holds it (the id is in range).
func audit(res *Result, n int32, held func(id int32) (head, tail int32, ok bool)) int {
	bad := 0
	ends := make(map[int32]bool, 2*len(res.Evidence))
	for _, m := range res.Evidence {
		if m.Triple < 0 || m.Triple >= n {
			bad++
			continue
		}
		h, tl, ok := held(m.Triple)
		if !ok {
			bad++
			continue
		}
		ends[h], ends[tl] = true, true
	}
	for _, a := range res.Answers {
		if !ends[a.Entity] {
			bad++
		}
	}
	return bad
}
