package kg

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"sync"
)

// Triple is one edge: ids into the graph's entity and relation tables.
type Triple struct{ Head, Rel, Tail int32 }

// Graph is an in-memory knowledge graph. It is immutable once built and safe
// for concurrent reads.
//
// Entities and relations are numbered 0..n-1 in the order they were first
// seen in the input, so loading the same file always gives the same ids.
// Triples are kept in three parallel columns; triple ids are input order
// with exact duplicates removed. Adjacency is stored twice in CSR form
// (offsets plus triple ids), once by head and once by tail, each row sorted
// by (relation, other end) so that HasTriple and OutRel are binary searches.
//
// Methods taking an entity, relation or triple id panic when the id is out
// of range, as slice indexing does; HasTriple is the exception (it is a
// question, and the answer for an unknown id is false).
//
// Names live in compact tables (one byte blob, uint32 offsets and an
// open-addressing hash index each; see nameTable), so a graph costs about
// as much memory as its snapshot file, and a snapshot loads by pointing
// these slices into the mapped file.
type Graph struct {
	ents, relTab nameTable

	heads, rels, tails []int32

	outOff, outIdx []int32 // triples by head, rows sorted by (rel, tail)
	inOff, inIdx   []int32 // triples by tail, rows sorted by (rel, head)

	dups int

	// The normalised-name index comes with a snapshot; a graph built in
	// memory builds it on first use (normOnce), since most callers never
	// need it.
	normOnce sync.Once
	norm     normIndex

	// alias holds other names of entities (Freebase dumps), for lookup.
	alias aliasIndex
}

// NumEntities returns the number of distinct entities.
func (g *Graph) NumEntities() int { return g.ents.len() }

// NumRelations returns the number of distinct relations.
func (g *Graph) NumRelations() int { return g.relTab.len() }

// NumTriples returns the number of distinct triples.
func (g *Graph) NumTriples() int { return len(g.heads) }

// Duplicates returns how many exact duplicate (head, relation, tail) triples
// were dropped while building.
func (g *Graph) Duplicates() int { return g.dups }

// EntityName returns the name entity id was loaded with. It does not
// allocate: the string shares the graph's immutable name storage.
func (g *Graph) EntityName(id int32) string { return g.ents.name(id) }

// RelationName returns the name relation id was loaded with, without
// allocating.
func (g *Graph) RelationName(id int32) string { return g.relTab.name(id) }

// EntityText returns the readable words of an entity's name (see EntityText).
func (g *Graph) EntityText(id int32) string { return EntityText(g.ents.name(id)) }

// RelationText returns the readable words of a relation's name (see RelationText).
func (g *Graph) RelationText(id int32) string { return RelationText(g.relTab.name(id)) }

// Triple returns triple i.
func (g *Graph) Triple(i int32) Triple { return Triple{g.heads[i], g.rels[i], g.tails[i]} }

// Columns returns the head, relation and tail columns, indexed by triple id.
// They are the graph's own storage, handed out so that bulk consumers (GNN
// edge lists, encoders) need not copy: do not modify them.
func (g *Graph) Columns() (heads, rels, tails []int32) {
	return g.heads[:len(g.heads):len(g.heads)], g.rels[:len(g.rels):len(g.rels)], g.tails[:len(g.tails):len(g.tails)]
}

// Out returns the ids of the triples whose head is e, sorted by (relation,
// tail). The slice is the graph's storage: do not modify it. Its capacity
// is clipped, so appending to it copies.
func (g *Graph) Out(e int32) []int32 {
	a, b := g.outOff[e], g.outOff[e+1]
	return g.outIdx[a:b:b]
}

// In returns the ids of the triples whose tail is e, sorted by (relation,
// head). The slice is the graph's storage: do not modify it.
func (g *Graph) In(e int32) []int32 {
	a, b := g.inOff[e], g.inOff[e+1]
	return g.inIdx[a:b:b]
}

// Degree returns len(Out(e)) + len(In(e)); a self-loop counts twice.
func (g *Graph) Degree(e int32) int {
	return int(g.outOff[e+1]-g.outOff[e]) + int(g.inOff[e+1]-g.inOff[e])
}

// OutRel returns the triples with head e and relation r (a sub-slice of
// Out(e), sorted by tail).
func (g *Graph) OutRel(e, r int32) []int32 { return relRange(g.Out(e), g.rels, r) }

// InRel returns the triples with tail e and relation r (a sub-slice of
// In(e), sorted by head).
func (g *Graph) InRel(e, r int32) []int32 { return relRange(g.In(e), g.rels, r) }

func relRange(row, rels []int32, r int32) []int32 {
	lo := sort.Search(len(row), func(i int) bool { return rels[row[i]] >= r })
	hi := lo + sort.Search(len(row)-lo, func(i int) bool { return rels[row[lo+i]] > r })
	return row[lo:hi:hi]
}

// HasTriple reports whether the graph holds (h, r, t). It is a binary
// search in h's out-row, so faithfulness audits can call it per evidence
// triple. Out-of-range ids give false.
func (g *Graph) HasTriple(h, r, t int32) bool {
	if nE, nR := g.NumEntities(), g.NumRelations(); h < 0 || int(h) >= nE || r < 0 || int(r) >= nR || t < 0 || int(t) >= nE {
		return false
	}
	row := g.Out(h)
	lo, hi := 0, len(row)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		id := row[m]
		if c := cmp2(g.rels[id], g.tails[id], r, t); c < 0 {
			lo = m + 1
		} else if c > 0 {
			hi = m
		} else {
			return true
		}
	}
	return false
}

// cmp2 compares the pairs (a1, a2) and (b1, b2) lexicographically.
func cmp2(a1, a2, b1, b2 int32) int {
	if c := cmp.Compare(a1, b1); c != 0 {
		return c
	}
	return cmp.Compare(a2, b2)
}

// Entity returns the id of the entity with exactly this name, or else of
// the one entity with exactly this alias (a Freebase dump's machine id
// "m.0jcx" of a named entity; the plain name of a namesake when only one
// entity carries it).
func (g *Graph) Entity(name string) (int32, bool) {
	if id, ok := g.ents.lookup(name); ok {
		return id, true
	}
	return g.alias.exact(name)
}

// Relation returns the id of the relation with exactly this name.
func (g *Graph) Relation(name string) (int32, bool) { return g.relTab.lookup(name) }

// EntitiesByNorm returns, in id order, every entity whose Normalize(name),
// or one of whose aliases' (see Entity), equals Normalize(name). It returns nil when the normalised query is empty,
// since "" would match only names made of punctuation. The slice is shared:
// do not modify it. A graph built in memory builds the index behind it on
// the first call; a snapshot brings it along.
func (g *Graph) EntitiesByNorm(name string) []int32 {
	key := Normalize(name)
	if key == "" {
		return nil
	}
	ids := g.normIndex().lookup(&g.ents, key)
	if g.alias.len() == 0 {
		return ids
	}
	// Entities found by an alias too (a namesake's plain name): a new
	// slice, in id order, each entity once.
	all := g.alias.byNorm(slices.Clone(ids), key)
	slices.Sort(all)
	return slices.Compact(all)
}

// normIndex returns the normalised-name index, building it on first use
// when the graph did not come with one (a snapshot stores it).
func (g *Graph) normIndex() *normIndex {
	g.normOnce.Do(func() {
		if g.norm.slots == nil {
			g.norm = buildNormIndex(&g.ents)
		}
	})
	return &g.norm
}

// RelationCount is one relation and how many triples use it.
type RelationCount struct {
	Name  string
	Count int
}

// Stats summarises a graph for reports and the `stem kg stats` command.
type Stats struct {
	Entities, Relations, Triples, Duplicates int
	// MaxDegree, P50Degree and P99Degree describe Degree over all entities
	// (nearest-rank percentiles), which tells hub-heavy graphs apart.
	MaxDegree            int
	P50Degree, P99Degree float64
	// NoDegree says the degrees were not computed: a SPARQL endpoint
	// would scan every entity for them.
	NoDegree bool
	// TopRelations lists the most used relations, most frequent first (ties
	// by name), at most the number asked for.
	TopRelations []RelationCount
}

// Stats computes counts, the degree distribution and the top relations.
func (g *Graph) Stats(top int) Stats {
	s := Stats{
		Entities:   g.NumEntities(),
		Relations:  g.NumRelations(),
		Triples:    g.NumTriples(),
		Duplicates: g.dups,
	}
	if n := g.NumEntities(); n > 0 {
		deg := make([]int, n)
		for e := range deg {
			deg[e] = g.Degree(int32(e))
		}
		slices.Sort(deg)
		s.MaxDegree = deg[n-1]
		s.P50Degree = float64(deg[nearestRank(0.50, n)])
		s.P99Degree = float64(deg[nearestRank(0.99, n)])
	}
	if top > 0 && g.NumRelations() > 0 {
		counts := make([]RelationCount, g.NumRelations())
		for r := range counts {
			counts[r].Name = g.relTab.name(int32(r))
		}
		for _, r := range g.rels {
			counts[r].Count++
		}
		slices.SortFunc(counts, func(a, b RelationCount) int {
			if c := cmp.Compare(b.Count, a.Count); c != 0 {
				return c
			}
			return cmp.Compare(a.Name, b.Name)
		})
		s.TopRelations = counts[:min(top, len(counts)):min(top, len(counts))]
	}
	return s
}

// nearestRank returns the 0-based index of the p-th percentile of n sorted
// values by the nearest-rank method.
func nearestRank(p float64, n int) int {
	i := int(math.Ceil(p*float64(n))) - 1
	return max(0, min(i, n-1))
}
