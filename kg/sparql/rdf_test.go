package sparql_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/sparql"
)

// A generic RDF KG (kg/testdata/rdf: DBpedia- and Wikidata-shaped, written
// by hand) served by Virtuoso and read with NamingRDF has the names,
// relations and answers kg.Load gives the same file in memory: labels as
// names (namesakes told apart by their local names), relations by local
// name, alternative labels found by name lookup, and every entity's
// neighbourhood the same named triples. An entity without a label (named
// by its local name) is reached over SPARQL only through its edges: no
// query finds an IRI by the end of its text without a scan.
func TestGenericRDFMatchesEndpoint(t *testing.T) {
	eachEngine(t, testGenericRDFMatchesEndpoint)
}

func testGenericRDFMatchesEndpoint(t *testing.T, e *engine) {
	ctx := context.Background()
	for _, fx := range []struct {
		file      string
		unlabeled []string // entities named by their local names, and literals
		aliases   []string
	}{
		{"dbpedia.nt", []string{"Sydney", "Princeton_University", "Priam", "1961-08-04", "For those about to rock"}, []string{"obama", "usa", "paris"}},
		{"wikidata.nt", []string{"Q999999", "1961-08-04T00:00:00Z"}, []string{"obama", "usa", "united states", "city of light"}},
	} {
		t.Run(fx.file, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "rdf", fx.file)
			mem, err := kg.Load(ctx, path, kg.FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			endpoint, graph := e.serveNT(t, string(data))
			open := func() *sparql.Graph {
				g, err := sparql.Open(sparql.Config{Endpoint: endpoint, Graph: graph, Naming: sparql.NamingRDF})
				if err != nil {
					t.Fatal(err)
				}
				return g
			}
			// Relations, each asked of a graph that has served nothing yet.
			for r := range mem.NumRelations() {
				name := mem.RelationName(int32(r))
				if _, ok := open().Relation(name); !ok {
					t.Errorf("relation %q not found over SPARQL", name)
				}
			}
			g := open()
			for id := range mem.NumEntities() {
				name := mem.EntityName(int32(id))
				sid, ok := g.Entity(name)
				if slices.Contains(fx.unlabeled, name) {
					continue
				}
				if !ok || g.EntityName(sid) != name {
					t.Errorf("Entity(%q) over SPARQL: %v %q", name, ok, g.EntityName(sid))
					continue
				}
				sameNeighbourhood(t, g, mem, name)
				// The answers of each of its relations.
				for _, tid := range mem.Out(int32(id)) {
					tr := mem.Triple(tid)
					rel := mem.RelationName(tr.Rel)
					sr, ok := g.Relation(rel)
					if !ok {
						t.Errorf("relation %q of %q not found over SPARQL", rel, name)
						continue
					}
					var a, b []string
					for _, x := range g.OutRel(sid, sr) {
						a = append(a, g.EntityName(g.Triple(x).Tail))
					}
					for _, x := range mem.OutRel(int32(id), tr.Rel) {
						b = append(b, mem.EntityName(mem.Triple(x).Tail))
					}
					slices.Sort(a)
					slices.Sort(b)
					if !slices.Equal(a, b) {
						t.Errorf("%q %q: over SPARQL %q, in memory %q", name, rel, a, b)
					}
				}
			}
			for _, q := range fx.aliases {
				sameLookup(t, g, mem, q)
			}
			if err := g.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}
