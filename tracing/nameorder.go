package tracing

import (
	"cmp"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
)

// maxNameOrder bounds the entities and relations whose names are ranked
// once per tracer (nameOrder): MetaQA's 43k entities sort in a few
// milliseconds, while a 10M-triple KG's millions of names would cost
// seconds and megabytes that its few tied names per question never
// repay.
const maxNameOrder = 1 << rankBits

// nameOrder is every entity's and relation's place in the order of their
// names, equal names sharing a place, so that ordering triples or answers
// by name compares two integers: the merge of a broad plan (a compose
// plan through a genre or a language) orders thousands of tied evidence
// triples and answers by name per question, and the same names would
// otherwise be read and compared every time.
type nameOrder struct {
	ents, rels []int32
}

// newNameOrder ranks g's names, or returns nil when g is too big for it
// to pay (maxNameOrder) or its names are not local (no triple columns: a
// SPARQL KG would read each name over the network).
func newNameOrder(g kg.Reader, columnar bool) *nameOrder {
	ne, nr := g.NumEntities(), g.NumRelations()
	if !columnar || ne+nr > maxNameOrder {
		return nil
	}
	return &nameOrder{
		ents: rankNames(ne, g.EntityName),
		rels: rankNames(nr, g.RelationName),
	}
}

// rankNames returns, for each id below n, the number of distinct names
// that sort before its name.
func rankNames(n int, name func(int32) string) []int32 {
	names := make([]string, n)
	ids := make([]int32, n)
	for i := range n {
		names[i], ids[i] = name(int32(i)), int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int { return strings.Compare(names[a], names[b]) })
	ranks := make([]int32, n)
	r := int32(0)
	for i, id := range ids {
		if i > 0 && names[id] != names[ids[i-1]] {
			r++
		}
		ranks[id] = r
	}
	return ranks
}

// tripleRank is a triple's names as ranks (nameOrder), ordered as
// tripleName is: the head's, relation's and tail's ranks, each below
// maxNameOrder (20 bits), packed into key in that order.
type tripleRank struct {
	key uint64
	tid int32
}

// rankBits is the width of one rank in tripleRank.key.
const rankBits = 20

// rank returns triple tid's names' ranks.
func (t *Tracer) rank(tid int32) tripleRank {
	x := t.triple(tid)
	h, r, l := uint64(t.names.ents[x.Head]), uint64(t.names.rels[x.Rel]), uint64(t.names.ents[x.Tail])
	return tripleRank{h<<(2*rankBits) | r<<rankBits | l, tid}
}

// compareTripleRanks orders triples as compareTripleNames orders their
// names.
func compareTripleRanks(a, b tripleRank) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.tid, b.tid)
}

// sortTriples sorts tids as Tracer.byName orders them: by ranks when the
// tracer has them, else by names read once each.
func (t *Tracer) sortTriples(tids []int32) {
	if len(tids) < 2 {
		return
	}
	if t.names == nil {
		sortByKey(tids, t.tripleName, compareTripleNames)
		return
	}
	sortByKey(tids, t.rank, compareTripleRanks)
}

// sortByKey sorts xs by each one's key, read once, in compare's order.
func sortByKey[X, K any](xs []X, key func(X) K, compare func(a, b K) int) {
	type keyed struct {
		x X
		k K
	}
	tmp := make([]keyed, len(xs))
	for i, x := range xs {
		tmp[i] = keyed{x, key(x)}
	}
	slices.SortFunc(tmp, func(a, b keyed) int { return compare(a.k, b.k) })
	for i, e := range tmp {
		xs[i] = e.x
	}
}
