package kg

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// build is a test helper: a graph from "h r t" strings.
func build(t testing.TB, triples ...string) *Graph {
	t.Helper()
	b := NewBuilder()
	for _, s := range triples {
		f := strings.Fields(s)
		if len(f) != 3 {
			t.Fatalf("bad test triple %q", s)
		}
		b.Add(f[0], f[1], f[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// names renders triple ids as "h r t" for readable comparisons.
func names(g *Graph, ids []int32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		tr := g.Triple(id)
		out[i] = g.EntityName(tr.Head) + " " + g.RelationName(tr.Rel) + " " + g.EntityName(tr.Tail)
	}
	return out
}

func TestBuilderIDsAndAdjacency(t *testing.T) {
	g := build(t,
		"obama born_in honolulu",
		"obama spouse michelle",
		"michelle born_in chicago",
		"honolulu located_in hawaii",
		"obama born_in hawaii",
	)
	if got, want := [3]int{g.NumEntities(), g.NumRelations(), g.NumTriples()}, [3]int{5, 3, 5}; got != want {
		t.Fatalf("counts = %v, want %v", got, want)
	}
	// First-seen order.
	for i, want := range []string{"obama", "honolulu", "michelle", "chicago", "hawaii"} {
		if got := g.EntityName(int32(i)); got != want {
			t.Errorf("entity %d = %q, want %q", i, got, want)
		}
	}
	for i, want := range []string{"born_in", "spouse", "located_in"} {
		if got := g.RelationName(int32(i)); got != want {
			t.Errorf("relation %d = %q, want %q", i, got, want)
		}
	}
	if tr := g.Triple(3); g.EntityName(tr.Head) != "honolulu" || g.RelationName(tr.Rel) != "located_in" || g.EntityName(tr.Tail) != "hawaii" {
		t.Errorf("Triple(3) = %v, want honolulu located_in hawaii", tr)
	}
	obama, _ := g.Entity("obama")
	hawaii, _ := g.Entity("hawaii")
	// Out rows are sorted by (relation id, tail id).
	if got, want := names(g, g.Out(obama)), []string{"obama born_in honolulu", "obama born_in hawaii", "obama spouse michelle"}; !slices.Equal(got, want) {
		t.Errorf("Out(obama) = %q, want %q", got, want)
	}
	if got, want := names(g, g.In(hawaii)), []string{"obama born_in hawaii", "honolulu located_in hawaii"}; !slices.Equal(got, want) {
		t.Errorf("In(hawaii) = %q, want %q", got, want)
	}
	if got := g.Degree(obama); got != 3 {
		t.Errorf("Degree(obama) = %d, want 3", got)
	}
	if got := g.Degree(hawaii); got != 2 {
		t.Errorf("Degree(hawaii) = %d, want 2", got)
	}
	bornIn, _ := g.Relation("born_in")
	if got, want := names(g, g.OutRel(obama, bornIn)), []string{"obama born_in honolulu", "obama born_in hawaii"}; !slices.Equal(got, want) {
		t.Errorf("OutRel(obama, born_in) = %q, want %q", got, want)
	}
	spouse, _ := g.Relation("spouse")
	if got := g.InRel(hawaii, spouse); len(got) != 0 {
		t.Errorf("InRel(hawaii, spouse) = %v, want none", got)
	}
	honolulu, _ := g.Entity("honolulu")
	if !g.HasTriple(obama, bornIn, honolulu) || !g.HasTriple(obama, bornIn, hawaii) {
		t.Error("HasTriple misses a stored triple")
	}
	if g.HasTriple(honolulu, bornIn, obama) || g.HasTriple(obama, spouse, hawaii) {
		t.Error("HasTriple finds a triple that is not stored")
	}
	for _, bad := range [][3]int32{{-1, 0, 0}, {0, -1, 0}, {0, 0, -1}, {6, 0, 0}, {0, 3, 0}, {0, 0, 6}} {
		if g.HasTriple(bad[0], bad[1], bad[2]) {
			t.Errorf("HasTriple%v = true for out-of-range ids", bad)
		}
	}
	if _, ok := g.Entity("Obama"); ok {
		t.Error("Entity is exact: Obama should not be found")
	}
	if _, ok := g.Relation("nope"); ok {
		t.Error("Relation(nope) found")
	}
	if got := g.EntityText(obama); got != "obama" {
		t.Errorf("EntityText = %q", got)
	}
	if got := g.RelationText(bornIn); got != "born in" {
		t.Errorf("RelationText = %q", got)
	}
	// Out slices are capacity-clipped: appending must not clobber the next row.
	row := g.Out(obama)
	_ = append(row, 99)
	if got := g.Out(honolulu); len(got) != 1 || got[0] != 3 {
		t.Errorf("append to Out(obama) changed Out(honolulu): %v", got)
	}
}

func TestParallelEdgesKeptDuplicatesDropped(t *testing.T) {
	g := build(t,
		"a r1 b",
		"a r2 b", // parallel edge: same pair, different relation
		"a r1 b", // exact duplicate
		"b r1 a", // reverse direction: a different triple
		"a r1 b", // duplicate again
		"a r1 a", // self-loop
	)
	if g.NumTriples() != 4 || g.Duplicates() != 2 {
		t.Fatalf("triples = %d, duplicates = %d, want 4 and 2", g.NumTriples(), g.Duplicates())
	}
	want := []string{"a r1 b", "a r2 b", "b r1 a", "a r1 a"} // first occurrences, in input order
	all := make([]int32, g.NumTriples())
	for i := range all {
		all[i] = int32(i)
	}
	if got := names(g, all); !slices.Equal(got, want) {
		t.Errorf("triples = %q, want %q", got, want)
	}
	a, _ := g.Entity("a")
	// r1 (id 0) before r2 (id 1); within r1, tail a (id 0) before b (id 1).
	if got, want := names(g, g.Out(a)), []string{"a r1 a", "a r1 b", "a r2 b"}; !slices.Equal(got, want) {
		t.Errorf("Out(a) = %q, want %q", got, want)
	}
	if g.Degree(a) != 5 { // 3 out + 2 in (the self-loop counts in both)
		t.Errorf("Degree(a) = %d, want 5", g.Degree(a))
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := NewBuilder().Build(); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty Build: err = %v, want ErrEmpty", err)
	}
	for _, tr := range [][3]string{{"", "r", "t"}, {"h", "", "t"}, {"h", "r", ""}} {
		b := NewBuilder()
		b.Add("x", "y", "z")
		b.Add(tr[0], tr[1], tr[2])
		b.Add("x", "y", "w")
		_, err := b.Build()
		if !errors.Is(err, ErrEmptyField) || !strings.Contains(err.Error(), "triple 2") {
			t.Errorf("Add%q: err = %v, want ErrEmptyField at triple 2", tr, err)
		}
	}
}

func TestBuilderReuse(t *testing.T) {
	b := NewBuilder()
	b.Add("a", "r", "b")
	g1, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	b.Add("c", "s", "d")
	b.Add("c", "s", "e")
	g2, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if g1.NumEntities() != 2 || g2.NumEntities() != 3 {
		t.Errorf("entities = %d, %d, want 2, 3", g1.NumEntities(), g2.NumEntities())
	}
	if _, ok := g1.Entity("c"); ok {
		t.Error("a later Add leaked into an earlier graph")
	}
}

// TestCSRAgainstBruteForce checks the adjacency, duplicate removal and
// HasTriple against a direct scan on random multigraphs.
func TestCSRAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 60; trial++ {
		nE := 1 + rng.IntN(40)
		nR := 1 + rng.IntN(6)
		nT := 1 + rng.IntN(300)
		b := NewBuilder()
		var raw [][3]string
		for i := 0; i < nT; i++ {
			tr := [3]string{fmt.Sprint("e", rng.IntN(nE)), fmt.Sprint("r", rng.IntN(nR)), fmt.Sprint("e", rng.IntN(nE))}
			raw = append(raw, tr)
			b.Add(tr[0], tr[1], tr[2])
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		// Expected triples: first occurrences in input order.
		seen := map[[3]string]bool{}
		var want [][3]string
		for _, tr := range raw {
			if !seen[tr] {
				seen[tr] = true
				want = append(want, tr)
			}
		}
		if g.NumTriples() != len(want) || g.Duplicates() != len(raw)-len(want) {
			t.Fatalf("trial %d: %d triples, %d dups; want %d, %d", trial, g.NumTriples(), g.Duplicates(), len(want), len(raw)-len(want))
		}
		for i, tr := range want {
			got := g.Triple(int32(i))
			if g.EntityName(got.Head) != tr[0] || g.RelationName(got.Rel) != tr[1] || g.EntityName(got.Tail) != tr[2] {
				t.Fatalf("trial %d: triple %d = %v, want %v", trial, i, got, tr)
			}
		}
		checkInvariants(t, g)
		// HasTriple on every possible (h, r, t) of a sample.
		for q := 0; q < 200; q++ {
			h, r, tl := int32(rng.IntN(g.NumEntities())), int32(rng.IntN(g.NumRelations())), int32(rng.IntN(g.NumEntities()))
			key := [3]string{g.EntityName(h), g.RelationName(r), g.EntityName(tl)}
			if got := g.HasTriple(h, r, tl); got != seen[key] {
				t.Fatalf("trial %d: HasTriple%v = %v, want %v", trial, key, got, seen[key])
			}
		}
	}
}

// checkInvariants verifies a graph's internal consistency by brute force:
// every Out/In row holds exactly the triples with that head/tail, sorted by
// (relation, other end, id), no triple appears twice, names round-trip.
func checkInvariants(t testing.TB, g *Graph) {
	t.Helper()
	nE, nT := int32(g.NumEntities()), int32(g.NumTriples())
	wantOut := make([][]int32, nE)
	wantIn := make([][]int32, nE)
	seen := map[Triple]bool{}
	for i := int32(0); i < nT; i++ {
		tr := g.Triple(i)
		if tr.Head < 0 || tr.Head >= nE || tr.Tail < 0 || tr.Tail >= nE || tr.Rel < 0 || int(tr.Rel) >= g.NumRelations() {
			t.Fatalf("triple %d = %v out of range", i, tr)
		}
		if seen[tr] {
			t.Fatalf("triple %v stored twice", tr)
		}
		seen[tr] = true
		wantOut[tr.Head] = append(wantOut[tr.Head], i)
		wantIn[tr.Tail] = append(wantIn[tr.Tail], i)
	}
	for e := int32(0); e < nE; e++ {
		slices.SortFunc(wantOut[e], func(a, b int32) int {
			ta, tb := g.Triple(a), g.Triple(b)
			return cmp2(ta.Rel, ta.Tail, tb.Rel, tb.Tail)
		})
		slices.SortFunc(wantIn[e], func(a, b int32) int {
			ta, tb := g.Triple(a), g.Triple(b)
			return cmp2(ta.Rel, ta.Head, tb.Rel, tb.Head)
		})
		if got := g.Out(e); !slices.Equal(got, wantOut[e]) {
			t.Fatalf("Out(%d) = %v, want %v", e, got, wantOut[e])
		}
		if got := g.In(e); !slices.Equal(got, wantIn[e]) {
			t.Fatalf("In(%d) = %v, want %v", e, got, wantIn[e])
		}
		if g.Degree(e) != len(wantOut[e])+len(wantIn[e]) {
			t.Fatalf("Degree(%d) = %d", e, g.Degree(e))
		}
		if id, ok := g.Entity(g.EntityName(e)); !ok || id != e {
			t.Fatalf("Entity(EntityName(%d)) = %d, %v", e, id, ok)
		}
		for r := int32(0); r < int32(g.NumRelations()); r++ {
			for _, id := range g.OutRel(e, r) {
				if tr := g.Triple(id); tr.Head != e || tr.Rel != r {
					t.Fatalf("OutRel(%d, %d) holds %v", e, r, tr)
				}
			}
		}
	}
	for r := int32(0); r < int32(g.NumRelations()); r++ {
		if id, ok := g.Relation(g.RelationName(r)); !ok || id != r {
			t.Fatalf("Relation(RelationName(%d)) = %d, %v", r, id, ok)
		}
	}
	for tr := range seen {
		if !g.HasTriple(tr.Head, tr.Rel, tr.Tail) {
			t.Fatalf("HasTriple%v = false for a stored triple", tr)
		}
	}
}

func TestEntitiesByNorm(t *testing.T) {
	g := build(t,
		"Barack_Obama r Honolulu",
		"barack_obama r x", // a different entity, same normalised name
		"BARACK-OBAMA r $",
		"x r Honolulu",
	)
	ids := g.EntitiesByNorm("barack obama")
	if got, want := len(ids), 3; got != want {
		t.Fatalf("EntitiesByNorm(barack obama) = %v, want 3 entities", ids)
	}
	for i, want := range []string{"Barack_Obama", "barack_obama", "BARACK-OBAMA"} {
		if g.EntityName(ids[i]) != want {
			t.Errorf("match %d = %q, want %q", i, g.EntityName(ids[i]), want)
		}
	}
	if got := g.EntitiesByNorm("  HONOLULU "); len(got) != 1 || g.EntityName(got[0]) != "Honolulu" {
		t.Errorf("EntitiesByNorm(HONOLULU) = %v", got)
	}
	if got := g.EntitiesByNorm("$"); got != nil {
		t.Errorf("EntitiesByNorm($) = %v, want nil (empty key)", got)
	}
	if got := g.EntitiesByNorm("michelle"); got != nil {
		t.Errorf("EntitiesByNorm(michelle) = %v, want nil", got)
	}
}

// A miss ends at the first group whose home slot is past the key's, so
// every name must still be found, and every absent one missed, at the
// index's full load: 3,000 names, some normalising alike ("Name_7" and
// "name 7") and some not ASCII-normal.
func TestEntitiesByNormFullTable(t *testing.T) {
	b := NewBuilder()
	want := map[string][]string{}
	for i := range 3000 {
		name := fmt.Sprintf("Name_%d", i)
		if i%5 == 0 {
			name = fmt.Sprintf("name %d", i/5) // a namesake of Name_{i/5}
		}
		b.Add(name, "r", "hub")
		want[Normalize(name)] = append(want[Normalize(name)], name)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for key, names := range want {
		var got []string
		for _, id := range g.EntitiesByNorm(key) {
			got = append(got, g.EntityName(id))
		}
		if !slices.Equal(got, names) {
			t.Fatalf("EntitiesByNorm(%q) = %q, want %q", key, got, names)
		}
	}
	for i := range 3000 {
		if key := fmt.Sprintf("other %d", i); g.EntitiesByNorm(key) != nil {
			t.Fatalf("EntitiesByNorm(%q) = %v, want nil", key, g.EntitiesByNorm(key))
		}
	}
}

func TestConcurrentReads(t *testing.T) {
	g := build(t, "Barack_Obama r Honolulu", "a r b", "b s a")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := g.EntitiesByNorm("barack obama"); len(got) != 1 {
				t.Errorf("EntitiesByNorm = %v", got)
			}
			_ = g.Stats(2)
			_ = g.HasTriple(1, 0, 2)
		}()
	}
	wg.Wait()
}

func TestStats(t *testing.T) {
	g := build(t,
		"hub r1 a", "hub r1 b", "hub r1 c", "hub r2 d",
		"a r2 b", "hub r1 a",
	)
	s := g.Stats(1)
	want := Stats{
		Entities: 5, Relations: 2, Triples: 5, Duplicates: 1,
		MaxDegree: 4, P50Degree: 2, P99Degree: 4,
		TopRelations: []RelationCount{{"r1", 3}},
	}
	// degrees: hub 4, a 2, b 2, c 1, d 1 -> sorted 1 1 2 2 4; p50 = 3rd = 2.
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Errorf("Stats(1) = %+v, want %+v", s, want)
	}
	if got := g.Stats(10).TopRelations; len(got) != 2 || got[1] != (RelationCount{"r2", 2}) {
		t.Errorf("Stats(10).TopRelations = %v", got)
	}
	if got := g.Stats(0).TopRelations; got != nil {
		t.Errorf("Stats(0).TopRelations = %v, want nil", got)
	}
}
