// Package kgtest is the conformance suite of the KG seam (kg.Reader): every
// backend's tests call TestAll with a function that serves a fixed small
// graph, and the suite checks every read the stages make against the same
// expectations, so that backends cannot drift apart. A backend is done when
// it passes.
package kgtest

import (
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/kg"
)

// Triples is the fixed graph every backend serves:
//
//	           born_in                 capital_of
//	Nolan ─────────────────► London ─────────────► UK
//	 │  ▲                      ▲ │
//	 │  │ directed_by          │ │ twinned_with (both ways)
//	 │  │ (and produced_by:    │ ▼
//	 │  │  two parallel edges) Paris
//	 ▼  │
//	Inception    Nolan ──knows──► Nolan (a self-loop)
//
//	"hub": every film F1..F6 has  Fi ──genre──► Drama
//	"namesakes": "New York" and "new-york" normalise alike
var Triples = [][3]string{
	{"Nolan", "born_in", "London"},
	{"London", "capital_of", "UK"},
	{"Inception", "directed_by", "Nolan"},
	{"Inception", "produced_by", "Nolan"},
	{"London", "twinned_with", "Paris"},
	{"Paris", "twinned_with", "London"},
	{"Nolan", "knows", "Nolan"},
	{"F1", "genre", "Drama"},
	{"F2", "genre", "Drama"},
	{"F3", "genre", "Drama"},
	{"F4", "genre", "Drama"},
	{"F5", "genre", "Drama"},
	{"F6", "genre", "Drama"},
	{"New York", "twinned_with", "London"},
	{"new-york", "genre", "Drama"},
}

// Config names what a backend may legitimately lack.
type Config struct {
	// NoNorm: EntitiesByNorm is not served (it returns nil); a backend
	// whose engine cannot match names loosely.
	NoNorm bool
	// Interned: the backend numbers what it has served so far (a remote
	// backend), so its counts are checked after every name was looked up,
	// and its triple count may stay below the graph's until every edge
	// was read.
	Interned bool
}

// Open serves Triples through a backend.
type Open func(t *testing.T, triples [][3]string) kg.Reader

// TestAll runs every check on the graph open serves.
func TestAll(t *testing.T, open Open, conf Config) {
	t.Run("Names", func(t *testing.T) { testNames(t, open(t, Triples), conf) })
	t.Run("Edges", func(t *testing.T) { testEdges(t, open(t, Triples)) })
	t.Run("HasTriple", func(t *testing.T) { testHasTriple(t, open(t, Triples)) })
	if !conf.NoNorm {
		t.Run("EntitiesByNorm", func(t *testing.T) { testNorm(t, open(t, Triples)) })
	}
}

func entity(t testing.TB, g kg.Reader, name string) int32 {
	t.Helper()
	id, ok := g.Entity(name)
	if !ok {
		t.Fatalf("Entity(%q) not found", name)
	}
	return id
}

func relation(t testing.TB, g kg.Reader, name string) int32 {
	t.Helper()
	id, ok := g.Relation(name)
	if !ok {
		t.Fatalf("Relation(%q) not found", name)
	}
	return id
}

// triple names triple id as written in Triples.
func triple(g kg.Reader, id int32) [3]string {
	tr := g.Triple(id)
	return [3]string{g.EntityName(tr.Head), g.RelationName(tr.Rel), g.EntityName(tr.Tail)}
}

func testNames(t *testing.T, g kg.Reader, conf Config) {
	ents, rels := map[string]bool{}, map[string]bool{}
	for _, tr := range Triples {
		ents[tr[0]], rels[tr[1]], ents[tr[2]] = true, true, true
	}
	counts := func() {
		t.Helper()
		if g.NumEntities() != len(ents) || g.NumRelations() != len(rels) || g.NumTriples() != len(Triples) && !conf.Interned || g.NumTriples() > len(Triples) {
			t.Errorf("counts %d entities, %d relations, %d triples; want %d, %d, %d",
				g.NumEntities(), g.NumRelations(), g.NumTriples(), len(ents), len(rels), len(Triples))
		}
	}
	if !conf.Interned {
		counts()
	}
	defer counts()
	for name := range ents {
		if got := g.EntityName(entity(t, g, name)); got != name {
			t.Errorf("EntityName(Entity(%q)) = %q", name, got)
		}
	}
	for name := range rels {
		if got := g.RelationName(relation(t, g, name)); got != name {
			t.Errorf("RelationName(Relation(%q)) = %q", name, got)
		}
	}
	for _, miss := range []string{"Atlantis", "nolan", ""} {
		if _, ok := g.Entity(miss); ok {
			t.Errorf("Entity(%q) found: names match exactly", miss)
		}
	}
	if _, ok := g.Relation("directed"); ok {
		t.Error(`Relation("directed") found: names match exactly`)
	}
	if got := kg.EntityTextOf(g, entity(t, g, "New York")); got != "new york" {
		t.Errorf("EntityTextOf(New York) = %q, want %q", got, "new york")
	}
	if got := kg.RelationTextOf(g, relation(t, g, "born_in")); got != "born in" {
		t.Errorf("RelationTextOf(born_in) = %q, want %q", got, "born in")
	}
}

// sortedBy reports whether ids are sorted by (relation name's id, other end).
func sortedBy(g kg.Reader, ids []int32, other func(kg.Triple) int32) bool {
	return slices.IsSortedFunc(ids, func(a, b int32) int {
		ta, tb := g.Triple(a), g.Triple(b)
		if ta.Rel != tb.Rel {
			return int(ta.Rel) - int(tb.Rel)
		}
		return int(other(ta)) - int(other(tb))
	})
}

func testEdges(t *testing.T, g kg.Reader) {
	for name := range map[string]bool{"Nolan": true, "London": true, "Drama": true, "Inception": true, "UK": true} {
		e := entity(t, g, name)
		out, in := g.Out(e), g.In(e)
		var wantOut, wantIn [][3]string
		for _, tr := range Triples {
			if tr[0] == name {
				wantOut = append(wantOut, tr)
			}
			if tr[2] == name {
				wantIn = append(wantIn, tr)
			}
		}
		check := func(dir string, ids []int32, want [][3]string) {
			var got [][3]string
			for _, id := range ids {
				got = append(got, triple(g, id))
			}
			cmp := func(a, b [3]string) int {
				for i := range a {
					if a[i] != b[i] {
						if a[i] < b[i] {
							return -1
						}
						return 1
					}
				}
				return 0
			}
			slices.SortFunc(got, cmp)
			slices.SortFunc(want, cmp)
			if !slices.Equal(got, want) {
				t.Errorf("%s(%s) = %v, want %v", dir, name, got, want)
			}
		}
		check("Out", out, wantOut)
		check("In", in, wantIn)
		if !sortedBy(g, out, func(tr kg.Triple) int32 { return tr.Tail }) {
			t.Errorf("Out(%s) is not sorted by (relation, tail)", name)
		}
		if !sortedBy(g, in, func(tr kg.Triple) int32 { return tr.Head }) {
			t.Errorf("In(%s) is not sorted by (relation, head)", name)
		}
		if g.Degree(e) != len(out)+len(in) {
			t.Errorf("Degree(%s) = %d, want %d", name, g.Degree(e), len(out)+len(in))
		}
	}
	nolan, inception := entity(t, g, "Nolan"), entity(t, g, "Inception")
	// The self-loop is an out- and an in-edge: Nolan's degree counts it twice.
	if g.Degree(nolan) != 5 {
		t.Errorf("Degree(Nolan) = %d, want 5 (born_in, knows out; directed_by, produced_by, knows in)", g.Degree(nolan))
	}
	// Parallel edges between the same two entities are both kept.
	dir, prod := relation(t, g, "directed_by"), relation(t, g, "produced_by")
	if got := g.OutRel(inception, dir); len(got) != 1 || triple(g, got[0]) != [3]string{"Inception", "directed_by", "Nolan"} {
		t.Errorf("OutRel(Inception, directed_by) = %v", got)
	}
	if got := g.InRel(nolan, prod); len(got) != 1 || triple(g, got[0]) != [3]string{"Inception", "produced_by", "Nolan"} {
		t.Errorf("InRel(Nolan, produced_by) = %v", got)
	}
	if got := g.OutRel(nolan, dir); len(got) != 0 {
		t.Errorf("OutRel(Nolan, directed_by) = %v, want none (the edge points the other way)", got)
	}
	// The hub: Drama hears genre from seven films.
	drama, genre := entity(t, g, "Drama"), relation(t, g, "genre")
	if got := g.InRel(drama, genre); len(got) != 7 || !sortedBy(g, got, func(tr kg.Triple) int32 { return tr.Head }) {
		t.Errorf("InRel(Drama, genre) = %d triples (sorted by head: %v), want 7", len(got), sortedBy(g, got, func(tr kg.Triple) int32 { return tr.Head }))
	}
	// A relation used both ways between two entities.
	london, paris, twin := entity(t, g, "London"), entity(t, g, "Paris"), relation(t, g, "twinned_with")
	if len(g.OutRel(london, twin)) != 1 || len(g.InRel(london, twin)) != 2 || len(g.OutRel(paris, twin)) != 1 {
		t.Errorf("twinned_with: London out %d in %d, Paris out %d; want 1, 2, 1",
			len(g.OutRel(london, twin)), len(g.InRel(london, twin)), len(g.OutRel(paris, twin)))
	}
}

func testHasTriple(t *testing.T, g kg.Reader) {
	for _, tr := range Triples {
		if !g.HasTriple(entity(t, g, tr[0]), relation(t, g, tr[1]), entity(t, g, tr[2])) {
			t.Errorf("HasTriple%v = false", tr)
		}
	}
	nolan, london, born := entity(t, g, "Nolan"), entity(t, g, "London"), relation(t, g, "born_in")
	for _, c := range []struct {
		name    string
		h, r, t int32
	}{
		{"reversed", london, born, nolan},
		{"unknown head", -1, born, london},
		{"unknown relation", nolan, int32(g.NumRelations()), london},
		{"unknown tail", nolan, born, int32(g.NumEntities()) + 7},
	} {
		if g.HasTriple(c.h, c.r, c.t) {
			t.Errorf("HasTriple, %s: true", c.name)
		}
	}
}

func testNorm(t *testing.T, g kg.Reader) {
	got := g.EntitiesByNorm("NEW YORK!")
	want := []int32{entity(t, g, "New York"), entity(t, g, "new-york")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("EntitiesByNorm(NEW YORK!) = %v, want %v (in id order)", got, want)
	}
	if got := g.EntitiesByNorm("..."); got != nil {
		t.Errorf("EntitiesByNorm(...) = %v, want nil", got)
	}
	if got := g.EntitiesByNorm("Atlantis"); len(got) != 0 {
		t.Errorf("EntitiesByNorm(Atlantis) = %v", got)
	}
}
