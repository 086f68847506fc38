package sparql

import (
	"context"
	"fmt"

	"github.com/stem-kgqa/stem/kg"
)

// Backend describes the SPARQL backend for a kg.Registry: it serves http://
// and https:// specs, with Settings (kg/backends registers it).
func Backend() kg.Backend {
	return kg.Backend{Name: "sparql", Doc: "a SPARQL 1.1 endpoint (Virtuoso, QLever, Fuseki, ...), each question's graph fetched around its entities",
		Schemes: []string{"http", "https"}}
}

// Connect opens the endpoint with s and checks that it answers, so a wrong
// URL is reported before any work.
func Connect(ctx context.Context, endpoint string, s Settings) (kg.Reader, error) {
	g, err := Open(s.Config(endpoint))
	if err != nil {
		return nil, err
	}
	if err := g.Ping(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// Report implements kg.Reporter: the queries a run sent, per question, and
// the hubs it capped.
func (g *Graph) Report(questions int) string {
	st := g.Stats()
	return fmt.Sprintf("sparql: %d queries to %s, %.1f per question; %d hub entities capped at --sparql-max-degree",
		st.Queries, g.Endpoint(), float64(st.Queries)/float64(max(questions, 1)), st.Capped)
}

var (
	_ kg.Failer    = (*Graph)(nil)
	_ kg.Reporter  = (*Graph)(nil)
	_ kg.Describer = (*Graph)(nil)
)
