package tracing

import (
	"fmt"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

// hubGraph has "sven", whose nationality is a hub country with 10 official
// languages and 300 places in it (location.location.country, a relation
// whose text resembles the official language's), and "olle", whose country
// has only 100 residents by a relation nothing in a schema resembles.
func hubGraph(t *testing.T) *kg.Graph {
	t.Helper()
	ts := [][3]string{{"sven", "people.person.nationality", "norway"}}
	for i := range 10 {
		ts = append(ts, [3]string{"norway", "location.country.official_language", fmt.Sprintf("language %d", i)})
	}
	for i := range 300 {
		ts = append(ts, [3]string{fmt.Sprintf("place %03d", i), "location.location.country", "norway"})
	}
	ts = append(ts, [3]string{"olle", "people.person.nationality", "sweden"})
	for i := range 100 {
		ts = append(ts, [3]string{fmt.Sprintf("resident %03d", i), "zz.qq.xx", "sweden"})
	}
	g, err := kg.GraphOf(ts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Breadth keeps every edge tied at the best score and at most MaxWeak of
// the others that pass Theta; its fallback keeps the best tied edges only
// while at most MaxFallback tie. The weak edges compete only where
// similarity decides (SoftSymbols, or a relation the KG does not name): by
// default the named relation's edges alone match where the entity has
// some, so the resembling location.location.country binds no place.
func TestBreadthBounds(t *testing.T) {
	g := hubGraph(t)
	enc := wordvec.New(nil, wordvec.Options{})
	lang := Request{Graphs: []schema.Graph{schema.Path("sven", "people.person.nationality", "location.country.official_language")},
		Strategy: schema.Breadth, Mentions: []string{"sven"}}
	unmatched := Request{Graphs: []schema.Graph{schema.Path("olle", "people.person.nationality", "film.film.directed_by")},
		Strategy: schema.Breadth, Mentions: []string{"olle"}}
	count := func(res *Result, prefix string) int {
		n := 0
		for _, a := range res.Answers {
			if len(a.Name) >= len(prefix) && a.Name[:len(prefix)] == prefix {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		name                 string
		soft                 bool
		maxWeak, maxFallback int
		req                  Request
		languages, places    int
		residents            int
	}{
		{"on the plan", false, 256, 64, lang, 10, 0, 0},
		{"weak edges bounded", true, 256, 64, lang, 10, 256, 0},
		{"few weak edges", true, 5, 64, lang, 10, 5, 0},
		{"no bound", true, 0, 64, lang, 10, 300, 0},
		{"fallback flood ends the branch", false, 256, 64, unmatched, 0, 0, 0},
		{"fallback unbounded", false, 256, 0, unmatched, 0, 0, 100},
		{"fallback within the bound", false, 256, 100, unmatched, 0, 0, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxWeak, cfg.MaxFallback, cfg.SoftSymbols = tc.maxWeak, tc.maxFallback, tc.soft
			tr, err := New(g, enc, nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			res := mustTrace(t, tr, tc.req)
			if l, p, r := count(res, "language"), count(res, "place"), count(res, "resident"); l != tc.languages || p != tc.places || r != tc.residents {
				t.Errorf("answers: %d languages, %d places, %d residents; want %d, %d, %d", l, p, r, tc.languages, tc.places, tc.residents)
			}
			if tc.places > 0 && tc.places < 300 {
				// The bound keeps the best weak edges; here they tie, so the
				// first triples.
				for _, a := range res.Answers {
					if a.Name == fmt.Sprintf("place %03d", 299) {
						t.Errorf("kept place 299, a later triple than the %d first", tc.places)
					}
				}
			}
		})
	}
}

// The edges the bounds keep are chosen by the triples' names, not their
// ids: the same KG numbered in reverse (as a SPARQL endpoint's
// neighbourhood numbers it otherwise than the KG's file) keeps the same
// ones (it kept the last 256 places instead of the first).
func TestBoundsIndependentOfNumbering(t *testing.T) {
	g := hubGraph(t)
	b := kg.NewBuilder()
	for i := g.NumTriples() - 1; i >= 0; i-- {
		tr := g.Triple(int32(i))
		b.Add(g.EntityName(tr.Head), g.RelationName(tr.Rel), g.EntityName(tr.Tail))
	}
	rev, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	req := Request{Graphs: []schema.Graph{schema.Path("sven", "people.person.nationality", "location.country.official_language")},
		Strategy: schema.Breadth, Mentions: []string{"sven"}}
	for _, tc := range []struct {
		name string
		set  func(*Config)
	}{
		{"MaxWeak", func(c *Config) { c.MaxWeak = 20 }},
		{"MaxBranch", func(c *Config) { c.MaxWeak, c.MaxBranch = 0, 15 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.set(&cfg)
			var names [2]string
			for i, g := range []*kg.Graph{g, rev} {
				tr, err := New(g, enc, nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				res := mustTrace(t, tr, req)
				for _, a := range res.Answers {
					names[i] += a.Name + ", "
				}
			}
			if names[0] != names[1] {
				t.Errorf("answers\n%s\nwith the triples numbered in reverse\n%s", names[0], names[1])
			}
		})
	}
}
