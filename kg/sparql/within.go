package sparql

import (
	"context"
	"fmt"

	"github.com/stem-kgqa/stem/kg"
)

var _ kg.WithinFetcher = (*Graph)(nil)

// NeighbourhoodWithin implements kg.WithinFetcher: the seeds' edges in
// both directions, then, of each entity they link to, its edges counted
// by the engine and read only when they are at most bound in all; the
// others are named in over. A constraint check that meets the answers
// through entities of few edges (constraint.Checker.Meet) reads no more
// than this, where the two-hop Neighbourhood of a hub is every edge of
// its thousands of neighbours (the two-hop graph of a country: 10,000-
// 18,000 triples, tens of count-then-page queries). Unlike Neighbourhood
// it does not walk through CVTs: a CVT beside a seed is a neighbour like
// any other, its edges read when it has few. Seeds the endpoint does not
// hold are left out.
func (g *Graph) NeighbourhoodWithin(ctx context.Context, seeds []string, bound int) (*kg.Graph, []string, error) {
	f, front, err := g.seedFetch(ctx, seeds)
	if err != nil {
		return nil, nil, err
	}
	// ring reads the edges of front in both directions (counted already
	// where known holds them), keeps them and returns the terms met that
	// were not met before, with their labels learned.
	ring := func(front []Term, known [2]map[string]int) ([]Term, error) {
		terms := termsOf(front)
		var byDir [2][][]row
		err := all(func() (err error) { byDir[0], err = g.edgesCounted(ctx, terms, true, known[0]); return err },
			func() (err error) { byDir[1], err = g.edgesCounted(ctx, terms, false, known[1]); return err })
		if err != nil {
			return nil, err
		}
		met := f.keep(front, byDir)
		return met, g.learn(ctx, met)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	near, err := ring(front, [2]map[string]int{})
	if err != nil {
		return nil, nil, err
	}
	// The neighbours' degrees: from the cache where both directions are
	// there (whole rows), else counted by the engine.
	terms := termsOf(near)
	deg := make([]int, len(near))
	var ask []int
	g.mu.Lock()
	for i, t := range terms {
		o, okOut := g.rows[rowKey{t, true}]
		in, okIn := g.rows[rowKey{t, false}]
		if okOut && okIn {
			deg[i] = len(o) + len(in)
		} else {
			ask = append(ask, i)
		}
	}
	g.mu.Unlock()
	askTerms := make([]string, len(ask))
	for k, i := range ask {
		askTerms[k] = terms[i]
	}
	var counted [2][]int
	if len(ask) > 0 {
		err = all(func() (err error) { counted[0], err = g.counts(ctx, askTerms, true); return err },
			func() (err error) { counted[1], err = g.counts(ctx, askTerms, false); return err })
		if err != nil {
			return nil, nil, err
		}
	}
	known := [2]map[string]int{{}, {}}
	for k, i := range ask {
		deg[i] = counted[0][k] + counted[1][k]
		known[0][terms[i]], known[1][terms[i]] = counted[0][k], counted[1][k]
	}
	var small []Term
	var overTerms []Term
	for i, t := range near {
		if deg[i] <= bound {
			small = append(small, t)
		} else {
			overTerms = append(overTerms, t)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if len(small) > 0 {
		if _, err := ring(small, known); err != nil {
			return nil, nil, err
		}
	}
	return g.fetched(f, overTerms, seeds)
}

// fetch is what one neighbourhood read has met, ring by ring: the
// triples kept and the terms seen. Neighbourhood and NeighbourhoodWithin
// read their rings the same way and differ only in which terms they read
// the edges of next.
type fetch struct {
	ts   []struct{ h, r, t Term }
	seen map[string]bool
}

// seedFetch resolves seeds to the endpoint's terms, each once (those it
// does not hold are left out), and starts a fetch that has seen them.
func (g *Graph) seedFetch(ctx context.Context, seeds []string) (*fetch, []Term, error) {
	f := &fetch{seen: map[string]bool{}}
	var front []Term
	for _, s := range seeds {
		t, ok, err := g.resolve(ctx, s)
		if err != nil {
			return nil, nil, fmt.Errorf("sparql: neighbourhood of %q: %w", s, err)
		}
		if !ok || f.seen[termOf(t)] {
			continue
		}
		f.seen[termOf(t)] = true
		front = append(front, t)
	}
	return f, front, nil
}

// keep adds the rows read for front (byDir[0] its outgoing edges,
// byDir[1] its incoming ones, each row at its term's index) as triples,
// and returns the terms they reach that the fetch had not seen.
func (f *fetch) keep(front []Term, byDir [2][][]row) []Term {
	var met []Term
	for d, out := range []bool{true, false} {
		for i, rs := range byDir[d] {
			for _, r := range rs {
				if out {
					f.ts = append(f.ts, struct{ h, r, t Term }{front[i], r.rel, r.other})
				} else {
					f.ts = append(f.ts, struct{ h, r, t Term }{r.other, r.rel, front[i]})
				}
				if k := termOf(r.other); !f.seen[k] {
					f.seen[k] = true
					met = append(met, r.other)
				}
			}
		}
	}
	return met
}

// fetched names f's triples as the Reader names entities (metName) and
// returns them as an in-memory graph, with the names of also.
func (g *Graph) fetched(f *fetch, also []Term, seeds []string) (*kg.Graph, []string, error) {
	named := make([][3]string, len(f.ts))
	var names []string
	// Each term is named once: an entity of many edges (a hub, its
	// CVTs) is in many triples, and naming a term matches its IRI
	// against the ids' pattern. metName is the same for every call with
	// one term, so once is enough to remember it.
	ents, rels := map[Term]string{}, map[Term]string{}
	ent := func(t Term) string {
		n, ok := ents[t]
		if !ok {
			n = g.metName(t)
			ents[t] = n
		}
		return n
	}
	g.mu.Lock()
	for i, t := range f.ts {
		r, ok := rels[t.r]
		if !ok {
			r = g.nameOf(t.r)
			rels[t.r] = r
		}
		named[i] = [3]string{ent(t.h), r, ent(t.t)}
	}
	for _, t := range also {
		names = append(names, ent(t))
	}
	g.mu.Unlock()
	sub, err := kg.GraphOf(named)
	if err != nil {
		return nil, nil, fmt.Errorf("sparql: neighbourhood of %q: %w", seeds, err)
	}
	return sub, names, nil
}

// termsOf writes ts in SPARQL syntax ("" for a blank node).
func termsOf(ts []Term) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = termOf(t)
	}
	return out
}

// countsOf returns the counts known holds of terms, in their order, when
// it holds every one of them.
func countsOf(terms []string, known map[string]int) ([]int, bool) {
	if known == nil {
		return nil, false
	}
	out := make([]int, len(terms))
	for i, t := range terms {
		n, ok := known[t]
		if !ok {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}
