package kg

import (
	"context"
	"errors"
)

// The helpers below are how callers reach a Reader's optional
// capabilities: each finds the capability by type assertion here, in one
// place, and falls back where the Reader lacks it (as database/sql's
// ctxutil.go does for a driver's optional interfaces), so no caller
// guesses what kind of KG it holds.

// Remote returns r's bulk fetch when r is a KG too large to walk edge by
// edge (a Neighbourhooder: a SPARQL endpoint), whose questions are each
// answered over their own neighbourhood; nil for a KG walked in place (a
// Graph, or nil).
func Remote(r Reader) Neighbourhooder {
	if nb, ok := r.(Neighbourhooder); ok {
		return nb
	}
	return nil
}

// FetchSteps returns the triples within steps triples of the named seeds
// of remote KG nb (StepFetcher), or its Neighbourhood of steps hops
// where it cannot fetch by triples: that holds them too.
func FetchSteps(ctx context.Context, nb Neighbourhooder, seeds []string, steps int) (*Graph, error) {
	if sf, ok := nb.(StepFetcher); ok {
		return sf.NeighbourhoodSteps(ctx, seeds, steps)
	}
	return nb.Neighbourhood(ctx, seeds, steps)
}

// FetchOut returns the outgoing edges of the named entities of remote KG
// nb as a graph of their own: fetched alone where nb can (OutFetcher),
// otherwise with the rest of their one-hop neighbourhood.
func FetchOut(ctx context.Context, nb Neighbourhooder, seeds []string) (*Graph, error) {
	if of, ok := nb.(OutFetcher); ok {
		return of.OutEdges(ctx, seeds)
	}
	return nb.Neighbourhood(ctx, seeds, 1)
}

// FetchOutEnding returns the outgoing edges of seeds whose relation name
// ends in one of endings where nb can fetch just those
// (OutEndingFetcher), and FetchOut's edges otherwise (every outgoing
// edge, a superset). No endings means every edge.
func FetchOutEnding(ctx context.Context, nb Neighbourhooder, seeds, endings []string) (*Graph, error) {
	if of, ok := nb.(OutEndingFetcher); ok && len(endings) > 0 {
		return of.OutEdgesEnding(ctx, seeds, endings)
	}
	return FetchOut(ctx, nb, seeds)
}

// ColumnsOf returns r's triple table as three columns indexed by triple
// id (Columnar), or nils when r cannot hand it out: callers then read
// each triple with Triple.
func ColumnsOf(r Reader) (heads, rels, tails []int32) {
	if c, ok := r.(Columnar); ok {
		return c.Columns()
	}
	return nil, nil, nil
}

// Labelled reports whether r stores the readable words of its names
// (Texter) rather than having them derived from the names.
func Labelled(r Reader) bool {
	_, ok := r.(Texter)
	return ok
}

// Degrees returns each entity's number of edges: counted at the KG's end
// where it finds names there (NameSearcher), read with Degree otherwise.
func Degrees(ctx context.Context, r Reader, ids []int32) ([]int, error) {
	if ns, ok := r.(NameSearcher); ok {
		return ns.Degrees(ctx, ids)
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = r.Degree(id)
	}
	return out, nil
}

// Report returns the line r's backend writes about what a run of
// questions cost it (Reporter), "" for a backend that counts nothing.
func Report(r Reader, questions int) string {
	if rp, ok := r.(Reporter); ok {
		return rp.Report(questions)
	}
	return ""
}

// LookupNamesOf returns, for each name, the entities ns finds so named
// (after Normalize): through its text index where it has one
// (NameMatcher), by LookupNames otherwise.
func LookupNamesOf(ctx context.Context, ns NameSearcher, names []string) (map[string][]int32, error) {
	if m, ok := ns.(NameMatcher); ok {
		found, err := m.MatchNames(ctx, names)
		if !errors.Is(err, ErrNoTextIndex) {
			return found, err
		}
	}
	return ns.LookupNames(ctx, names)
}

// Searcher returns r's search for names at its own end (NameSearcher),
// nil for a KG whose names are read in place (EntitiesByNorm, Degree).
func Searcher(r Reader) NameSearcher {
	if ns, ok := r.(NameSearcher); ok {
		return ns
	}
	return nil
}
