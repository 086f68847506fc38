package kg

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// rdfFixtures are the generic RDF KGs of testdata/rdf, written by hand,
// and the KG each must read as: labels as names (namesakes told apart by
// their local names), relations by their IRIs' local names, and the
// aliases a name lookup finds.
var rdfFixtures = []struct {
	file    string
	triples [][3]string
	aliases map[string]string // alias -> the entity's name
}{
	{"dbpedia.nt", [][3]string{
		{"Barack Obama", "birthPlace", "Honolulu"},
		{"Barack Obama", "spouse", "Michelle Obama"},
		{"Barack Obama", "birthDate", "1961-08-04"},
		{"Barack Obama", "type", "person"},
		{"Michelle Obama", "type", "person"},
		{"Michelle Obama", "almaMater", "Princeton_University"},
		{"Honolulu", "country", "United States"},
		{"Paris (Paris)", "country", "France"},
		{"Paris (Paris_(mythology))", "parent", "Priam"},
		{"Paris, Texas", "country", "United States"},
		{"AC/DC", "hometown", "Sydney"},
		{"AC/DC", "motto", "For those about to rock"},
	}, map[string]string{"Obama": "Barack Obama", "USA": "United States"}},
	{"wikidata.nt", [][3]string{
		{"Barack Obama", "P19", "Honolulu"},
		{"Barack Obama", "P26", "Michelle Obama"},
		{"Barack Obama", "P27", "United States of America"},
		{"Barack Obama", "P569", "1961-08-04T00:00:00Z"},
		{"Michelle Obama", "P26", "Barack Obama"},
		{"Michelle Obama", "P69", "Princeton University"},
		{"Honolulu", "P17", "United States of America"},
		{"Paris", "P17", "France"},
		{"Paris", "P1376", "France"},
		{"France", "P36", "Paris"},
		{"Princeton University", "P131", "Q999999"},
	}, map[string]string{"Obama": "Barack Obama", "Barack Hussein Obama II": "Barack Obama", "USA": "United States of America",
		"United States": "United States of America", "City of Light": "Paris"}},
}

// A DBpedia- or Wikidata-shaped KG reads with its labels as names, its
// alternative labels as aliases, and short relation names; kg build gives
// the same KG, byte for byte, with its names spilled or not.
func TestReadGenericRDF(t *testing.T) {
	ctx := context.Background()
	for _, fx := range rdfFixtures {
		t.Run(fx.file, func(t *testing.T) {
			in := filepath.Join("testdata", "rdf", fx.file)
			g, err := Load(ctx, in, FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			want, err := GraphOf(fx.triples)
			if err != nil {
				t.Fatal(err)
			}
			sameKG(t, fx.file, g, want)
			for alias, name := range fx.aliases {
				id, _ := g.Entity(name)
				if got := g.EntitiesByNorm(alias); len(got) != 1 || got[0] != id {
					t.Errorf("alias %q finds %v, want %q (%d)", alias, got, name, id)
				}
			}
			for _, dropped := range []string{"Барак Обама", "Frankreich", "バラク・オバマ", "Lonely", "place of birth"} {
				if got := g.EntitiesByNorm(dropped); len(got) != 0 {
					t.Errorf("%q finds %v: a name in another language, or of no entity, is no name", dropped, got)
				}
			}
			snap := encode(t, g)
			for _, mem := range []int64{64 << 20, 4 << 10} {
				out := filepath.Join(t.TempDir(), fmt.Sprintf("%d.stemkg", mem))
				if _, err := buildSnapshot(ctx, in, out, BuildOptions{MaxMemory: mem}); err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(out)
				if !bytes.Equal(got, snap) {
					t.Errorf("memory %d: kg build's snapshot differs from the in-memory one (first difference at %d)", mem, firstDiff(got, snap))
				}
			}
		})
	}
}

func TestLocalName(t *testing.T) {
	for _, tc := range []struct{ iri, want string }{
		{"http://dbpedia.org/ontology/birthPlace", "birthPlace"},
		{"http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "type"},
		{"http://www.wikidata.org/prop/direct/P19", "P19"},
		{FreebaseNS + "people.person.nationality", "people.person.nationality"},
		{FreebaseNS + "Paris%2C%20Texas", "Paris, Texas"},
		{"http://example.org/a%2Fb%23c", "a/b#c"},
		{"http://example.org/bad%2", "bad%2"},
		{"http://example.org/bad%zz", "bad%zz"},
		{"urn:isbn:0451450523", "0451450523"},
		{"http://example.org/", "http://example.org/"},
		{"http://example.org/onto#", "http://example.org/onto#"},
	} {
		if got := LocalName(tc.iri); got != tc.want {
			t.Errorf("LocalName(%q) = %q, want %q", tc.iri, got, tc.want)
		}
	}
}
