package kg

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// Reader is the read side of a KG as stem's stages use it: tracing,
// entity linking, the planners and the Triple-GNN's subgraph builder ask
// for nothing else. It is the seam a second backend (a SPARQL endpoint)
// implements; *Graph is the in-memory one.
//
// Ids are dense int32s local to one process. A remote backend interns the
// entities, relations and triples it has served and numbers them in the
// order it first saw them, so the hot loops of tracing stay slices of
// int32 whichever backend sits behind them. NumEntities, NumRelations and
// NumTriples count what the backend has interned so far: for *Graph that
// is the whole KG.
//
// Slices returned by Out, In, OutRel, InRel and EntitiesByNorm belong to
// the backend: callers must not modify them. Methods taking an id accept
// only ids the backend handed out; HasTriple answers false for others.
type Reader interface {
	NumEntities() int
	NumRelations() int
	NumTriples() int

	// EntityName and RelationName return the name an id stands for.
	EntityName(id int32) string
	RelationName(id int32) string
	// Entity and Relation look a name up exactly.
	Entity(name string) (int32, bool)
	Relation(name string) (int32, bool)
	// EntitiesByNorm returns the entities whose Normalize(name) equals
	// Normalize(name), in id order.
	EntitiesByNorm(name string) []int32

	// Triple returns triple id's head, relation and tail.
	Triple(id int32) Triple
	// Out and In return the triples leaving and entering e, sorted by
	// (relation, other end); OutRel and InRel only those with relation r.
	Out(e int32) []int32
	In(e int32) []int32
	OutRel(e, r int32) []int32
	InRel(e, r int32) []int32
	// Degree is len(Out(e)) + len(In(e)).
	Degree(e int32) int
	// HasTriple reports whether the KG holds (h, r, t).
	HasTriple(h, r, t int32) bool
}

// Texter is an optional Reader capability: the readable words of a name
// (EntityText, RelationText), which a backend may have stored instead of
// deriving them. Callers use EntityTextOf and RelationTextOf, which fall
// back to deriving them from the name.
type Texter interface {
	EntityText(id int32) string
	RelationText(id int32) string
}

// EntityTextOf returns the readable words of entity id's name.
func EntityTextOf(r Reader, id int32) string {
	if t, ok := r.(Texter); ok {
		return t.EntityText(id)
	}
	return EntityText(r.EntityName(id))
}

// RelationTextOf returns the readable words of relation id's name.
func RelationTextOf(r Reader, id int32) string {
	if t, ok := r.(Texter); ok {
		return t.RelationText(id)
	}
	return RelationText(r.RelationName(id))
}

// Columnar is an optional Reader capability for bulk consumers (GNN edge
// lists, encoders): the whole triple table as three columns indexed by
// triple id, without copying. Backends that cannot hand out their table
// do not implement it; callers fall back to Triple per id.
type Columnar interface {
	Columns() (heads, rels, tails []int32)
}

var (
	_ Reader   = (*Graph)(nil)
	_ Texter   = (*Graph)(nil)
	_ Columnar = (*Graph)(nil)
)

// Of returns g as a Reader, and a nil Reader for a nil g: a nil *Graph
// stored in an interface would not compare equal to nil, and callers test
// for a missing KG with == nil.
func Of(g *Graph) Reader {
	if g == nil {
		return nil
	}
	return g
}

// Neighbourhooder is an optional Reader capability of a KG too large to
// walk edge by edge, such as a SPARQL endpoint: the triples within hops of
// some entities, fetched in bulk, as an in-memory graph of their own. The
// pipeline answers each question over its neighbourhood instead of over
// the whole KG, so tracing never waits on the network inside its loops.
type Neighbourhooder interface {
	Neighbourhood(ctx context.Context, seeds []string, hops int) (*Graph, error)
}

// StepFetcher is an optional capability of a Neighbourhooder whose hops
// walk through mediators (Freebase's CVTs, a hop for Neighbourhood): the
// triples within steps triples of the seeds, every triple one step,
// through a CVT too: every edge of every entity fewer than steps triples
// from a seed. A planner's relation paths count every triple, so a path
// of two triples through a CVT reads the edges of the seeds and of their
// neighbours, where a Neighbourhood of two hops reads the edges of every
// entity beyond their CVTs as well (around a hub, thousands).
type StepFetcher interface {
	NeighbourhoodSteps(ctx context.Context, seeds []string, steps int) (*Graph, error)
}

// OutFetcher is an optional capability of a remote KG (a Neighbourhooder):
// the outgoing edges of named entities, fetched at once, as a graph of its
// own. Checking an answer reads only its own outgoing edges (a gender, its
// types, the dates of the CVT it came through), and an answer may be a hub
// whose incoming edges are thousands.
type OutFetcher interface {
	OutEdges(ctx context.Context, seeds []string) (*Graph, error)
}

// OutEndingFetcher is an optional capability of an OutFetcher: the
// outgoing edges of named entities whose relation's name (its IRI, over
// SPARQL) ends in one of endings, fetched at once. Checking a gender or a
// date reads only those, where an answer may have hundreds of others.
type OutEndingFetcher interface {
	OutEdgesEnding(ctx context.Context, seeds, endings []string) (*Graph, error)
}

// WithinFetcher is an optional capability of a remote KG (a
// Neighbourhooder): the edges of named entities and of each entity they
// link to that has at most bound edges in all; over names the others,
// whose edges are left out. It is what a walk of two hops that passes
// only through entities of few edges reads (constraint.Checker.Meet),
// without the whole two-hop graph of a hub: a country's neighbours are
// thousands, and their edges tens of thousands.
type WithinFetcher interface {
	NeighbourhoodWithin(ctx context.Context, seeds []string, bound int) (sub *Graph, over []string, err error)
}

// NameSearcher is an optional Reader capability of a KG that finds
// entities by name at its own end (a SPARQL endpoint), so that linking
// needs neither a scan of every name nor a vector for every entity.
type NameSearcher interface {
	// LookupNames returns, for each name, the entities whose name or
	// label equals it after Normalize (as EntitiesByNorm), for many names
	// at once.
	LookupNames(ctx context.Context, names []string) (map[string][]int32, error)
	// Degrees returns each entity's number of edges, counted at the KG's
	// end rather than read.
	Degrees(ctx context.Context, ids []int32) ([]int, error)
	// SearchNames returns up to limit entities whose name or label
	// holds one of the phrases (its words, in order; a phrase may be one
	// word), best first, or ErrNoTextIndex when the KG has no text index
	// to search.
	SearchNames(ctx context.Context, phrases []string, limit int) ([]NameHit, error)
}

// NameMatcher is an optional capability of a NameSearcher whose text
// index finds exact names (after Normalize) in one query, where
// LookupNames asks for every common spelling of every name: a question's
// n-grams are one search instead of thousands of spellings. It returns
// ErrNoTextIndex when the KG has no text index; LookupNamesOf then falls
// back to LookupNames.
type NameMatcher interface {
	MatchNames(ctx context.Context, names []string) (map[string][]int32, error)
}

// NameHit is an entity a text search found: the name or label that
// matched, and the engine's relevance score (higher is better).
type NameHit struct {
	ID    int32
	Label string
	Score float64
}

// ErrNoTextIndex is returned by NameSearcher.SearchNames when the KG has
// no text index.
var ErrNoTextIndex = errors.New("no text index")

// Neighbourhood returns the triples of r within hops of the named seeds:
// every edge of every entity at distance below hops. It is what a
// Neighbourhooder must return, computed by walking r; seeds r lacks are
// left out.
func Neighbourhood(ctx context.Context, r Reader, seeds []string, hops int) (*Graph, error) {
	var ts [][3]string
	seen := map[int32]bool{}
	var front []int32
	for _, s := range seeds {
		if id, ok := r.Entity(s); ok && !seen[id] {
			seen[id] = true
			front = append(front, id)
		}
	}
	for hop := 0; hop < hops && len(front) > 0; hop++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var next []int32
		for _, e := range front {
			for _, row := range [][]int32{r.Out(e), r.In(e)} {
				for _, tid := range row {
					t := r.Triple(tid)
					ts = append(ts, [3]string{r.EntityName(t.Head), r.RelationName(t.Rel), r.EntityName(t.Tail)})
					for _, x := range []int32{t.Head, t.Tail} {
						if !seen[x] {
							seen[x] = true
							next = append(next, x)
						}
					}
				}
			}
		}
		front = next
	}
	return GraphOf(ts)
}

// GraphOf builds a graph from (head, relation, tail) names, sorted first
// so that the same triples give the same ids however they were gathered:
// two backends' neighbourhoods of a question are then the same graph.
// Duplicates are dropped; no triple is an empty graph.
func GraphOf(ts [][3]string) (*Graph, error) { return GraphWith(ts, nil) }

// GraphWith is GraphOf with the named entities in the graph too, those
// that no triple holds among them: a graph fetched for some entities
// holds each of them, with no edges where it has none.
func GraphWith(ts [][3]string, entities []string) (*Graph, error) {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b [3]string) int {
		for i := range a {
			if c := strings.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	ts = slices.Compact(ts)
	b := NewBuilder()
	for _, e := range entities {
		b.AddEntity(e)
	}
	for _, t := range ts {
		b.Add(t[0], t[1], t[2])
	}
	return b.BuildAllowEmpty()
}
