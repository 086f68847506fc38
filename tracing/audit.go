package tracing

import "github.com/stem-kgqa/stem/kg"

// Audit counts the evidence triples of res that g does not hold and the
// answers that are not an end of some evidence triple: the faithfulness
// audit every retrieval strategy fills Result.Unbacked with, so that a
// peer's evidence is checked by the same rule as tracing's.
func Audit(g kg.Reader, res *Result) int {
	bad := 0
	ends := map[int32]bool{}
	n := int32(g.NumTriples())
	for _, m := range res.Evidence {
		if m.Triple < 0 || m.Triple >= n {
			bad++
			continue
		}
		tr := g.Triple(m.Triple)
		if !g.HasTriple(tr.Head, tr.Rel, tr.Tail) {
			bad++
			continue
		}
		ends[tr.Head], ends[tr.Tail] = true, true
	}
	for _, a := range res.Answers {
		if !ends[a.Entity] {
			bad++
		}
	}
	return bad
}
