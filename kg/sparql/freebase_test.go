package sparql_test

// Freebase as the field serves it: entities are machine ids (ns:m.0abc)
// named by type.object.name, namesakes share a name, and CVTs (mediators
// with no name) sit between a film and its actors.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/sparql"
	"github.com/stem-kgqa/stem/projection/linking"
)

// freebaseNT is a small Freebase in its own shape.
var freebaseNT = func() string {
	ns := func(s string) string { return "<" + kg.FreebaseNS + s + ">" }
	var b strings.Builder
	for _, tr := range [][3]string{
		{"m.0film", "film.film.starring", "m.0perf1"},
		{"m.0perf1", "film.performance.actor", "m.0leo"},
		{"m.0perf1", "film.performance.character", "m.0cobb"},
		{"m.0film", "film.film.directed_by", "m.0nolan"},
		{"m.0nolan", "people.person.place_of_birth", "m.0london"},
		{"m.0paris1", "location.location.containedby", "m.0france"},
		{"m.0paris2", "location.location.containedby", "m.0texas"},
	} {
		fmt.Fprintf(&b, "%s %s %s .\n", ns(tr[0]), ns(tr[1]), ns(tr[2]))
	}
	for _, l := range [][3]string{
		{"m.0film", "type.object.name", `"Inception"@en`},
		{"m.0film", "type.object.name", `"Origen"@es`},
		{"m.0leo", "type.object.name", `"Leonardo DiCaprio"@en`},
		{"m.0cobb", "type.object.name", `"Dom Cobb"@en`},
		{"m.0nolan", "type.object.name", `"Christopher Nolan"@en`},
		{"m.0nolan", "common.topic.alias", `"Chris Nolan"@en`},
		{"m.0london", "type.object.name", `"London"@en`},
		{"m.0paris1", "type.object.name", `"Paris"@en`},
		{"m.0paris2", "type.object.name", `"Paris"@en`},
		{"m.0france", "type.object.name", `"France"@en`},
		{"m.0texas", "type.object.name", `"Texas"@en`},
	} {
		fmt.Fprintf(&b, "%s %s %s .\n", ns(l[0]), ns(l[1]), l[2])
	}
	return b.String()
}()

func openFreebase(t *testing.T, e *engine, cfg sparql.Config) *sparql.Graph {
	t.Helper()
	cfg.Endpoint, cfg.Graph = e.serveNT(t, freebaseNT)
	g, err := sparql.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Err(); err != nil {
			t.Errorf("the backend kept an error: %v", err)
		}
	})
	return g
}

// A hop walks through a CVT: the film's actor and character are one hop
// from the film, and the film one hop from the actor. Entities are named
// by their English names, the CVT by its id.
func TestNeighbourhoodWalksCVTs(t *testing.T) { eachEngine(t, testNeighbourhoodWalksCVTs) }

func testNeighbourhoodWalksCVTs(t *testing.T, e *engine) {
	ctx := context.Background()
	starring := [][3]string{
		{"Inception", "film.film.starring", "m.0perf1"},
		{"m.0perf1", "film.performance.actor", "Leonardo DiCaprio"},
		{"m.0perf1", "film.performance.character", "Dom Cobb"},
	}
	directed := [3]string{"Inception", "film.film.directed_by", "Christopher Nolan"}
	for _, tc := range []struct {
		name     string
		countCVT bool
		seeds    []string
		hops     int
		want     [][3]string
		steps    bool // NeighbourhoodSteps, which counts the CVT whatever the Config says
	}{
		{"film", false, []string{"Inception"}, 1, append(slices.Clone(starring), directed), false},
		{"film, CVT counted", true, []string{"Inception"}, 1, [][3]string{starring[0], directed}, false},
		{"actor", false, []string{"Leonardo DiCaprio"}, 1, starring, false},
		{"actor, CVT counted", true, []string{"Leonardo DiCaprio"}, 1, starring[1:2], false},
		{"actor, two hops", false, []string{"Leonardo DiCaprio"}, 2, append(slices.Clone(starring), directed), false},
		{"by id", false, []string{"m.0nolan"}, 1, [][3]string{directed, {"Christopher Nolan", "people.person.place_of_birth", "London"}}, false},
		{"namesake by id", false, []string{"Paris (m.0paris2)"}, 1, [][3]string{{"Paris (m.0paris2)", "location.location.containedby", "Texas"}}, false},
		{"ambiguous name", false, []string{"Paris"}, 1, nil, false},
		{"film, one step", false, []string{"Inception"}, 1, [][3]string{starring[0], directed}, true},
		{"film, two steps", false, []string{"Inception"}, 2, append(slices.Clone(starring), directed,
			[3]string{"Christopher Nolan", "people.person.place_of_birth", "London"}), true},
		{"actor, two steps", false, []string{"Leonardo DiCaprio"}, 2, starring, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := openFreebase(t, e, sparql.Config{CountCVT: tc.countCVT})
			fetch := g.Neighbourhood
			if tc.steps {
				fetch = g.NeighbourhoodSteps
			}
			sub, err := fetch(ctx, tc.seeds, tc.hops)
			if err != nil {
				t.Fatal(err)
			}
			want := sorted(tc.want)
			if got := sorted(triplesOf(sub)); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("within %d of %q:\n got %q\nwant %q", tc.hops, tc.seeds, got, want)
			}
		})
	}
}

// The answers a constraint check fetches the edges of were named by a
// fetched graph: their edges come back the same as on a fresh Graph,
// with no query to find each one's IRI again (a time check over hundreds
// of answers sent a thousand such queries). A name that is no IRI (a
// literal) is still not found.
func TestMetNamesResolved(t *testing.T) { eachEngine(t, testMetNamesResolved) }

func testMetNamesResolved(t *testing.T, e *engine) {
	ctx := context.Background()
	seeds := []string{"Leonardo DiCaprio", "m.0perf1", "Dom Cobb", "Christopher Nolan", "Paris (m.0paris2)"}
	want := func() [][3]string {
		g := openFreebase(t, e, sparql.Config{})
		sub, err := g.OutEdgesEnding(ctx, seeds, []string{"actor", "place_of_birth", "containedby"})
		if err != nil {
			t.Fatal(err)
		}
		return sorted(triplesOf(sub))
	}()
	if len(want) == 0 {
		t.Fatal("no edges: the fixture changed")
	}
	var mu sync.Mutex
	var queries []string
	g := openFreebase(t, e, sparql.Config{Trace: func(q string, _ int, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		queries = append(queries, q)
	}})
	if _, err := g.Neighbourhood(ctx, []string{"Inception", "Texas"}, 2); err != nil {
		t.Fatal(err)
	}
	queries = nil
	sub, err := g.OutEdgesEnding(ctx, seeds, []string{"actor", "place_of_birth", "containedby"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sorted(triplesOf(sub)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after a fetch:\n got %q\nwant %q", got, want)
	}
	if len(queries) != 1 {
		t.Errorf("%d queries, want the one for the edges: %q", len(queries), queries)
	}
}

// The Reader names entities as Neighbourhood does; an id is another name
// of its entity; namesakes are told apart by id, and found by their
// shared name or an alias.
func TestFreebaseNames(t *testing.T) { eachEngine(t, testFreebaseNames) }

func testFreebaseNames(t *testing.T, e *engine) {
	ctx := context.Background()
	g := openFreebase(t, e, sparql.Config{})
	film, ok := g.Entity("Inception")
	if !ok || g.EntityName(film) != "Inception" {
		t.Fatalf("Entity(Inception) = %d, %v", film, ok)
	}
	if id, ok := g.Entity("m.0film"); !ok || id != film {
		t.Errorf("Entity(m.0film) = %d, %v; want Inception's id %d", id, ok, film)
	}
	var out []string
	for _, tr := range g.Out(film) {
		out = append(out, g.RelationName(g.Triple(tr).Rel)+" "+g.EntityName(g.Triple(tr).Tail))
	}
	slices.Sort(out)
	if want := []string{"film.film.directed_by Christopher Nolan", "film.film.starring m.0perf1"}; !slices.Equal(out, want) {
		t.Errorf("Out(Inception) = %q, want %q", out, want)
	}
	if _, ok := g.Entity("Paris"); ok {
		t.Errorf("Entity(Paris) found one of two namesakes")
	}
	if _, ok := g.Entity("Origen"); ok {
		t.Errorf("Entity(Origen) found a Spanish name; names are looked up in English")
	}
	found, err := g.LookupNames(ctx, []string{"paris", "chris nolan", "dom cobb", "rome"})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][]string{}
	for q, ids := range found {
		for _, id := range ids {
			names[q] = append(names[q], g.EntityName(id))
		}
		slices.Sort(names[q])
	}
	want := map[string][]string{
		"paris":       {"Paris (m.0paris1)", "Paris (m.0paris2)"},
		"chris nolan": {"Christopher Nolan"},
		"dom cobb":    {"Dom Cobb"},
	}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("LookupNames = %q, want %q", names, want)
	}
	if id, ok := g.Entity("Paris (m.0paris1)"); !ok || g.EntityName(id) != "Paris (m.0paris1)" {
		t.Errorf("Entity(Paris (m.0paris1)) = %d, %v", id, ok)
	}
	// With no opaque ids, entities are named by their IRIs' local names.
	raw := openFreebase(t, e, sparql.Config{IDs: "none"})
	if id, ok := raw.Entity("m.0film"); !ok || raw.EntityName(id) != "m.0film" {
		t.Errorf("IDs none: Entity(m.0film) = %d, %v", id, ok)
	}
	if _, err := sparql.Open(sparql.Config{Endpoint: "http://127.0.0.1:1/sparql", IDs: "m.("}); err == nil || !strings.Contains(err.Error(), `"m.("`) {
		t.Errorf("a bad ids pattern: %v", err)
	}
}

// Names are found by their words in Virtuoso's text index (names and
// aliases, in English), and degrees counted by the engine. An engine
// without the extension refuses the first search, which is then
// kg.ErrNoTextIndex, and so is every later one, without a query.
func TestSearchNames(t *testing.T) { eachEngine(t, testSearchNames) }

func testSearchNames(t *testing.T, e *engine) {
	ctx := context.Background()
	g := openFreebase(t, e, sparql.Config{})
	film, _ := g.Entity("Inception")
	leo, _ := g.Entity("Leonardo DiCaprio")
	if deg, err := g.Degrees(ctx, []int32{film, leo}); err != nil || !slices.Equal(deg, []int{2, 1}) {
		t.Errorf("Degrees(Inception, Leonardo DiCaprio) = %v, %v; want [2 1]", deg, err)
	}
	hits, err := g.SearchNames(ctx, []string{"CHRIS nolan", "born?"}, 10)
	if !e.textIndex {
		before := g.Stats().Queries
		_, again := g.SearchNames(ctx, []string{"paris"}, 10)
		if !errors.Is(err, kg.ErrNoTextIndex) || !errors.Is(again, kg.ErrNoTextIndex) || g.Stats().Queries != before {
			t.Errorf("%s: SearchNames = %v, then %v after %d queries; want kg.ErrNoTextIndex twice, the second without a query", e.name, err, again, g.Stats().Queries-before)
		}
		if err := g.Err(); err != nil {
			t.Errorf("the refused search was kept as the backend's error: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, g.EntityName(h.ID)+"="+h.Label)
		if h.Score <= 0 {
			t.Errorf("hit %+v has no score", h)
		}
	}
	// One hit per entity, by the label holding the phrase.
	if want := []string{"Christopher Nolan=Chris Nolan"}; !slices.Equal(got, want) {
		t.Errorf("SearchNames = %q, want %q", got, want)
	}
	if hits, err := g.SearchNames(ctx, []string{"nolan chris"}, 10); err != nil || len(hits) != 0 {
		t.Errorf("SearchNames(nolan chris) = %+v, %v; want none: a phrase's words are in order", hits, err)
	}
	if hits, err := g.SearchNames(ctx, []string{"origen", "paris"}, 10); err != nil || len(hits) != 2 {
		t.Errorf("SearchNames(origen paris) = %+v, %v; want the two Parises and no Spanish name", hits, err)
	}
	if hits, err := g.SearchNames(ctx, []string{"?!"}, 10); err != nil || len(hits) != 0 {
		t.Errorf("SearchNames of no words = %+v, %v", hits, err)
	}
	if _, err := openFreebase(t, e, sparql.Config{TextIndex: sparql.TextNone}).SearchNames(ctx, []string{"paris"}, 10); !errors.Is(err, kg.ErrNoTextIndex) {
		t.Errorf("TextNone: %v, want kg.ErrNoTextIndex", err)
	}
}

// The linker over an endpoint: n-grams looked up in one batch, in their
// common spellings, then the text index for names not spelled so
// ("DiCaprio"), which an engine without one leaves unlinked.
func TestLinkOverEndpoint(t *testing.T) { eachEngine(t, testLinkOverEndpoint) }

func testLinkOverEndpoint(t *testing.T, e *engine) {
	ctx := context.Background()
	g := openFreebase(t, e, sparql.Config{})
	l := linking.New(g, nil)
	for _, c := range []struct {
		q, want string
		byText  bool // found by the text index only
	}{
		{"who directed Inception", "Inception", false},
		{"where was CHRISTOPHER NOLAN born", "Christopher Nolan", false},
		{"which film did leonardo dicaprio star in", "Leonardo DiCaprio", true},
	} {
		links, err := l.Link(ctx, c.q)
		switch {
		case c.byText && !e.textIndex:
			if len(links) != 0 {
				t.Errorf("Link(%q) = %+v with no text index; want no link", c.q, links)
			}
		case err != nil || len(links) != 1 || links[0].Entity != c.want:
			t.Errorf("Link(%q) = %+v, %v; want %s", c.q, links, err, c.want)
		}
	}
}

// A Freebase dump read by kg (FormatFreebase: the snapshot stem kg build
// writes) names entities as this backend names the same lines served by
// Virtuoso: every entity's neighbourhood, looked up by its name, is the
// same set of named triples, machine ids and namesakes' shared names find
// the same entities, and literals are named by their lexical form.
func TestFreebaseDumpMatchesEndpoint(t *testing.T) { eachEngine(t, testFreebaseDumpMatchesEndpoint) }

func testFreebaseDumpMatchesEndpoint(t *testing.T, e *engine) {
	ctx := context.Background()
	// The fixture in the dump's own tab-separated form, with literal
	// objects too.
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(freebaseNT), "\n") {
		s, rest, _ := strings.Cut(line, " ")
		p, o, _ := strings.Cut(rest, " ")
		b.WriteString(s + "\t" + p + "\t" + strings.TrimSuffix(o, " .") + "\t.\n")
	}
	ns := "<" + kg.FreebaseNS
	b.WriteString(ns + "m.0film>\t" + ns + "film.film.initial_release_date>\t\"2010-07-08\"^^<http://www.w3.org/2001/XMLSchema#date>\t.\n")
	b.WriteString(ns + "m.0film>\t" + ns + "film.film.tagline>\t\"Your mind is the scene of the crime\"@en\t.\n")
	dump := b.String()
	mem, err := kg.LoadReader(ctx, strings.NewReader(dump), "freebase-rdf-latest", kg.FormatFreebase)
	if err != nil {
		t.Fatal(err)
	}
	endpoint, graph := e.serveNT(t, dump)
	g, err := sparql.Open(sparql.Config{Endpoint: endpoint, Graph: graph, CountCVT: true})
	if err != nil {
		t.Fatal(err)
	}
	for id := int32(0); int(id) < mem.NumEntities(); id++ {
		name := mem.EntityName(id)
		if kg.IsFreebaseID(name) && mem.Degree(id) > 0 && !strings.HasPrefix(name, "m.0perf") {
			t.Errorf("entity %q kept its machine id although it has a name", name)
		}
		if strings.HasPrefix(name, "2010") || strings.HasPrefix(name, "Your mind") {
			continue // literals: no walk starts at them over SPARQL
		}
		sameNeighbourhood(t, g, mem, name)
	}
	for _, name := range []string{"m.0nolan", "m.0film", "Paris (m.0paris2)"} {
		mid, ok1 := mem.Entity(name)
		sid, ok2 := g.Entity(name)
		if !ok1 || !ok2 || mem.EntityName(mid) != g.EntityName(sid) {
			t.Errorf("Entity(%q): from the dump %v %q, over SPARQL %v %q", name, ok1, mem.EntityName(mid), ok2, g.EntityName(sid))
		}
	}
	for _, q := range []string{"paris", "chris nolan"} {
		sameLookup(t, g, mem, q)
	}
}

// sameNeighbourhood fails t unless the entity named name has the same
// neighbourhood of one hop, as named triples, over SPARQL as in memory.
func sameNeighbourhood(t *testing.T, g *sparql.Graph, mem *kg.Graph, name string) {
	t.Helper()
	ctx := context.Background()
	want, err := kg.Neighbourhood(ctx, mem, []string{name}, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Neighbourhood(ctx, []string{name}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := sorted(triplesOf(got)), sorted(triplesOf(want)); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("around %q:\nover SPARQL %q\nin memory   %q", name, a, b)
	}
}

// sameLookup fails t unless name lookup (LookupNames) finds the entities
// over SPARQL that EntitiesByNorm finds in memory, and some.
func sameLookup(t *testing.T, g *sparql.Graph, mem *kg.Graph, q string) {
	t.Helper()
	found, err := g.LookupNames(context.Background(), []string{q})
	if err != nil {
		t.Fatal(err)
	}
	var a, b []string
	for _, id := range found[q] {
		a = append(a, g.EntityName(id))
	}
	for _, id := range mem.EntitiesByNorm(q) {
		b = append(b, mem.EntityName(id))
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) || len(a) == 0 {
		t.Errorf("names matching %q: over SPARQL %q, in memory %q", q, a, b)
	}
}
