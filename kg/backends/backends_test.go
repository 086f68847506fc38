package backends

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/settings"
)

func TestDefault(t *testing.T) {
	r := Default()
	if got, want := r.Names(), []string{"tsv", "pipe", "nt", "freebase", "snapshot", "sparql"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	for spec, want := range map[string]string{"http://127.0.0.1:8890/sparql": "sparql", "https://query.wikidata.org/sparql": "sparql"} {
		if b, err := r.Choose(spec, kg.OpenOptions{}); err != nil || b.Name != want {
			t.Errorf("Choose(%q) = %q, %v; want %q", spec, b.Name, err, want)
		}
	}
	// The SPARQL backend's settings are the flags every --kg command had.
	holder := struct{ KG kg.BackendSettings }{r.NewSettings()}
	fields, err := settings.Fields(&holder)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kg-graph", "kg-prefix", "kg-text", "sparql-timeout", "sparql-page", "sparql-batch", "sparql-max-degree"} {
		if _, ok := settings.Lookup(fields, name); !ok {
			t.Errorf("no setting %s among %q", name, settings.Names(fields))
		}
	}
	// A malformed URL is the backend's error, naming it.
	if _, err := r.Open(context.Background(), "http://", kg.OpenOptions{}); err == nil || !strings.Contains(err.Error(), "sparql: endpoint") {
		t.Errorf("Open(http://) err = %v", err)
	}
}
