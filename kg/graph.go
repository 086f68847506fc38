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
type Graph struct {
	entNames, relNames []string
	entIndex, relIndex map[string]int32

	heads, rels, tails []int32

	outOff, outIdx []int32 // triples by head, rows sorted by (rel, tail)
	inOff, inIdx   []int32 // triples by tail, rows sorted by (rel, head)

	dups int

	// The normalised-name index is built on first use: most callers never
	// need it and it costs more to build than the rest of a snapshot load.
	normOnce  sync.Once
	normIndex map[string]int32 // normalised name -> group
	normOff   []int32          // CSR over groups
	normIDs   []int32
}

// NumEntities returns the number of distinct entities.
func (g *Graph) NumEntities() int { return len(g.entNames) }

// NumRelations returns the number of distinct relations.
func (g *Graph) NumRelations() int { return len(g.relNames) }

// NumTriples returns the number of distinct triples.
func (g *Graph) NumTriples() int { return len(g.heads) }

// Duplicates returns how many exact duplicate (head, relation, tail) triples
// were dropped while building.
func (g *Graph) Duplicates() int { return g.dups }

// EntityName returns the name entity id was loaded with.
func (g *Graph) EntityName(id int32) string { return g.entNames[id] }

// RelationName returns the name relation id was loaded with.
func (g *Graph) RelationName(id int32) string { return g.relNames[id] }

// EntityText returns the readable words of an entity's name (see EntityText).
func (g *Graph) EntityText(id int32) string { return EntityText(g.entNames[id]) }

// RelationText returns the readable words of a relation's name (see RelationText).
func (g *Graph) RelationText(id int32) string { return RelationText(g.relNames[id]) }

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
	if h < 0 || int(h) >= len(g.entNames) || r < 0 || int(r) >= len(g.relNames) || t < 0 || int(t) >= len(g.entNames) {
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

// Entity returns the id of the entity with exactly this name.
func (g *Graph) Entity(name string) (int32, bool) {
	id, ok := g.entIndex[name]
	return id, ok
}

// Relation returns the id of the relation with exactly this name.
func (g *Graph) Relation(name string) (int32, bool) {
	id, ok := g.relIndex[name]
	return id, ok
}

// EntitiesByNorm returns, in id order, every entity whose Normalize(name)
// equals Normalize(name). It returns nil when the normalised query is empty,
// since "" would match only names made of punctuation. The slice is shared:
// do not modify it. The index behind it is built on the first call.
func (g *Graph) EntitiesByNorm(name string) []int32 {
	key := Normalize(name)
	if key == "" {
		return nil
	}
	g.normOnce.Do(g.buildNormIndex)
	grp, ok := g.normIndex[key]
	if !ok {
		return nil
	}
	a, b := g.normOff[grp], g.normOff[grp+1]
	return g.normIDs[a:b:b]
}

func (g *Graph) buildNormIndex() {
	n := len(g.entNames)
	group := make([]int32, n)
	index := make(map[string]int32, n)
	var sizes []int32
	for id, name := range g.entNames {
		key := Normalize(name)
		if key == "" {
			group[id] = -1
			continue
		}
		grp, ok := index[key]
		if !ok {
			grp = int32(len(sizes))
			index[key] = grp
			sizes = append(sizes, 0)
		}
		group[id] = grp
		sizes[grp]++
	}
	off := make([]int32, len(sizes)+1)
	for i, s := range sizes {
		off[i+1] = off[i] + s
	}
	next := slices.Clone(off[:len(sizes)])
	ids := make([]int32, off[len(sizes)])
	for id, grp := range group {
		if grp >= 0 {
			ids[next[grp]] = int32(id)
			next[grp]++
		}
	}
	g.normIndex, g.normOff, g.normIDs = index, off, ids
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
		for r, name := range g.relNames {
			counts[r].Name = name
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
