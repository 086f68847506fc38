package graphraft

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
)

// family is a small KG: anna's son rudolf has parents anna and enno, her
// spouse; rudolf was born in aurich.
func family(t testing.TB) *kg.Graph {
	t.Helper()
	g, err := kg.GraphOf([][3]string{
		{"anna", "children", "rudolf"},
		{"rudolf", "parents", "anna"},
		{"rudolf", "parents", "enno"},
		{"anna", "spouse", "enno"},
		{"rudolf", "place_of_birth", "aurich"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func ids(t testing.TB, g kg.Reader, names ...string) []int32 {
	t.Helper()
	var out []int32
	for _, n := range names {
		id, ok := g.Entity(n)
		if !ok {
			t.Fatalf("no entity %q", n)
		}
		out = append(out, id)
	}
	return out
}

func rel(t testing.TB, g kg.Reader, name string) int32 {
	t.Helper()
	id, ok := g.Relation(name)
	if !ok {
		t.Fatalf("no relation %q", name)
	}
	return id
}

func names(g kg.Reader, es []int32) []string {
	var out []string
	for _, e := range es {
		out = append(out, g.EntityName(e))
	}
	slices.Sort(out)
	return out
}

func TestExecute(t *testing.T) {
	g := family(t)
	anna := ids(t, g, "anna")
	children, parents, spouse := rel(t, g, "children"), rel(t, g, "parents"), rel(t, g, "spouse")
	placeOfBirth := rel(t, g, "place_of_birth")
	for _, tc := range []struct {
		name string
		q    Query
		want []string
	}{
		{"one hop out", Query{OneHop, []Step{{Rel: children, Inverse: false}}, anna}, []string{"rudolf"}},
		{"one hop in", Query{OneHop, []Step{{Rel: parents, Inverse: true}}, anna}, []string{"rudolf"}},
		// The son's parents: both, anna by the son's own parents triple.
		{"two hop", Query{TwoHop, []Step{{Rel: children, Inverse: false}, {Rel: parents, Inverse: false}}, anna}, []string{"anna", "enno"}},
		// Back over the same relation: only other triples count, so anna's
		// children walked back reach no one but anna, by the same triple.
		{"two hop never back over the same triple", Query{TwoHop, []Step{{Rel: children, Inverse: false}, {Rel: children, Inverse: true}}, anna}, nil},
		{"three hop", Query{ThreeHop, []Step{{Rel: spouse, Inverse: false}, {Rel: parents, Inverse: true}, {Rel: placeOfBirth, Inverse: false}}, anna}, []string{"aurich"}},
		{"three hop through the anchor", Query{ThreeHop, []Step{{Rel: children, Inverse: false}, {Rel: parents, Inverse: false}, {Rel: spouse, Inverse: false}}, anna}, []string{"enno"}},
		{"three hop never back over the same triple", Query{ThreeHop, []Step{{Rel: children, Inverse: false}, {Rel: parents, Inverse: false}, {Rel: parents, Inverse: true}}, anna}, nil},
		{"between", Query{Between, []Step{{Rel: children, Inverse: false}, {Rel: parents, Inverse: false}}, ids(t, g, "anna", "enno")}, []string{"rudolf"}},
		{"between nothing", Query{Between, []Step{{Rel: spouse, Inverse: false}, {Rel: parents, Inverse: true}}, ids(t, g, "anna", "aurich")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths, err := Execute(context.Background(), g, tc.q, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(g, Answers(paths)); !slices.Equal(got, tc.want) {
				t.Errorf("answers %v, want %v", got, tc.want)
			}
			for _, p := range paths {
				if len(p.Triples) != len(tc.q.Steps) {
					t.Errorf("path %+v: %d triples for %d steps", p, len(p.Triples), len(tc.q.Steps))
				}
			}
		})
	}
	if _, err := Execute(context.Background(), g, Query{Template: TwoHop, Steps: []Step{{Rel: children, Inverse: false}}, Anchors: anna}, 0); err == nil {
		t.Error("a two-hop query with one step ran")
	}
	if _, err := Execute(context.Background(), g, Query{Template: OneHop, Steps: []Step{{Rel: 99, Inverse: false}}, Anchors: anna}, 0); err == nil {
		t.Error("a query with an unknown relation ran")
	}
}

func TestSPARQLAndCypher(t *testing.T) {
	g := family(t)
	children, parents, spouse := rel(t, g, "children"), rel(t, g, "parents"), rel(t, g, "spouse")
	placeOfBirth := rel(t, g, "place_of_birth")
	const base = "http://x.org/"
	for _, tc := range []struct {
		name         string
		q            Query
		sparql, cyph string
	}{
		{"one hop in", Query{OneHop, []Step{{Rel: parents, Inverse: true}}, ids(t, g, "anna")},
			"SELECT DISTINCT ?x WHERE {\n  ?x <http://x.org/parents> <http://x.org/anna> .\n}",
			"MATCH ({name: \"anna\"})<-[:`parents`]-(x) RETURN DISTINCT x"},
		{"two hop", Query{TwoHop, []Step{{Rel: children, Inverse: false}, {Rel: parents, Inverse: false}}, ids(t, g, "anna")},
			"SELECT DISTINCT ?x WHERE {\n  <http://x.org/anna> <http://x.org/children> ?y .\n  ?y <http://x.org/parents> ?x .\n}",
			"MATCH ({name: \"anna\"})-[:`children`]->(y)-[:`parents`]->(x) RETURN DISTINCT x"},
		{"two hop back", Query{TwoHop, []Step{{Rel: parents, Inverse: true}, {Rel: parents, Inverse: false}}, ids(t, g, "anna")},
			"SELECT DISTINCT ?x WHERE {\n  ?y <http://x.org/parents> <http://x.org/anna> .\n  ?y <http://x.org/parents> ?x .\n  FILTER(?x != <http://x.org/anna>)\n}",
			"MATCH ({name: \"anna\"})<-[:`parents`]-(y)-[:`parents`]->(x) RETURN DISTINCT x"},
		{"three hop", Query{ThreeHop, []Step{{Rel: spouse, Inverse: false}, {Rel: parents, Inverse: true}, {Rel: placeOfBirth, Inverse: false}}, ids(t, g, "anna")},
			"SELECT DISTINCT ?x WHERE {\n  <http://x.org/anna> <http://x.org/spouse> ?y1 .\n  ?y2 <http://x.org/parents> ?y1 .\n  ?y2 <http://x.org/place_of_birth> ?x .\n}",
			"MATCH ({name: \"anna\"})-[:`spouse`]->(y1)<-[:`parents`]-(y2)-[:`place_of_birth`]->(x) RETURN DISTINCT x"},
		{"three hop back", Query{ThreeHop, []Step{{Rel: children, Inverse: false}, {Rel: parents, Inverse: false}, {Rel: parents, Inverse: true}}, ids(t, g, "anna")},
			"SELECT DISTINCT ?x WHERE {\n  <http://x.org/anna> <http://x.org/children> ?y1 .\n  ?y1 <http://x.org/parents> ?y2 .\n  ?x <http://x.org/parents> ?y2 .\n  FILTER(?x != ?y1)\n}",
			"MATCH ({name: \"anna\"})-[:`children`]->(y1)-[:`parents`]->(y2)<-[:`parents`]-(x) RETURN DISTINCT x"},
		{"between", Query{Between, []Step{{Rel: children, Inverse: false}, {Rel: parents, Inverse: false}}, ids(t, g, "anna", "enno")},
			"SELECT DISTINCT ?x WHERE {\n  <http://x.org/anna> <http://x.org/children> ?x .\n  ?x <http://x.org/parents> <http://x.org/enno> .\n}",
			"MATCH ({name: \"anna\"})-[:`children`]->(x)-[:`parents`]->({name: \"enno\"}) RETURN DISTINCT x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.q.SPARQL(g, base); got != tc.sparql {
				t.Errorf("SPARQL\n%s\nwant\n%s", got, tc.sparql)
			}
			if got := tc.q.Cypher(g); got != tc.cyph {
				t.Errorf("Cypher %s, want %s", got, tc.cyph)
			}
		})
	}
}

func TestEnumerate(t *testing.T) {
	g := family(t)
	qs, err := Enumerate(context.Background(), g, ids(t, g, "anna", "enno"), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, q := range qs {
		keys = append(keys, q.Template.String()+" "+g.EntityName(q.Anchors[0])+" "+q.Key(g))
		paths, err := Execute(context.Background(), g, q, 0)
		if err != nil || len(paths) == 0 {
			t.Errorf("%s: enumerated but matches nothing (%v)", keys[len(keys)-1], err)
		}
	}
	for _, want := range []string{
		"one-hop anna children>", "one-hop anna parents<", "one-hop anna spouse>",
		"two-hop anna children>parents>", "two-hop anna children>place_of_birth>", "two-hop anna spouse>parents<",
		"between anna between:children>parents>",
		"one-hop enno spouse<", "between enno between:parents<parents>",
	} {
		if !slices.Contains(keys, want) {
			t.Errorf("missing %q in %q", want, keys)
		}
	}
	// children> then children< only walks back over the same triple.
	if slices.Contains(keys, "two-hop anna children>children<") {
		t.Errorf("enumerated a query that matches nothing: %q", keys)
	}
}

func TestEnumerateHops(t *testing.T) {
	g := family(t)
	keysOf := func(hops int, anchors ...string) []string {
		t.Helper()
		qs, err := Enumerate(context.Background(), g, ids(t, g, anchors...), hops, 0)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, q := range qs {
			keys = append(keys, q.Template.String()+" "+q.Key(g))
		}
		return keys
	}
	three := keysOf(3, "anna")
	for _, want := range []string{"one-hop children>", "two-hop children>parents>", "three-hop spouse>parents<place_of_birth>", "three-hop children>parents>spouse>"} {
		if !slices.Contains(three, want) {
			t.Errorf("3 hops: missing %q in %q", want, three)
		}
	}
	if slices.Contains(three, "three-hop children>parents>parents<") {
		t.Errorf("3 hops: enumerated a query that matches nothing: %q", three)
	}
	one := keysOf(1, "anna", "enno")
	if slices.ContainsFunc(one, func(k string) bool { return strings.HasPrefix(k, "two-hop") }) || !slices.Contains(one, "between between:children>parents>") {
		t.Errorf("1 hop: %q: want one-hop and between queries only", one)
	}
	for _, hops := range []int{0, 4} {
		if _, err := Enumerate(context.Background(), g, ids(t, g, "anna"), hops, 0); err == nil {
			t.Errorf("%d hops: no error", hops)
		}
	}
}

// TestEnumerateComplete checks Enumerate against brute force on random
// graphs: the chain and between queries it returns are exactly those of
// every step sequence that Execute matches at least once.
func TestEnumerateComplete(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 40 {
		var triples [][3]string
		ents := 4 + rng.IntN(6)
		for range 6 + rng.IntN(14) {
			triples = append(triples, [3]string{fmt.Sprint("e", rng.IntN(ents)), fmt.Sprint("r", rng.IntN(3)), fmt.Sprint("e", rng.IntN(ents))})
		}
		g, err := kg.GraphOf(triples)
		if err != nil {
			t.Fatal(err)
		}
		var all []Step
		for r := range int32(g.NumRelations()) {
			all = append(all, Step{Rel: r, Inverse: false}, Step{Rel: r, Inverse: true})
		}
		anchors := []int32{int32(rng.IntN(g.NumEntities())), int32(rng.IntN(g.NumEntities()))}
		anchors = slices.Compact(anchors)
		hops := 1 + rng.IntN(MaxHops)
		want := map[string]bool{}
		var seqs func(prefix []Step)
		seqs = func(prefix []Step) {
			for _, s := range all {
				steps := append(slices.Clone(prefix), s)
				for _, a := range anchors {
					q := Query{chainTemplate(len(steps)), steps, []int32{a}}
					if p, _ := Execute(context.Background(), g, q, 0); len(steps) <= hops && len(p) > 0 {
						want[fmt.Sprint(q)] = true
					}
					for _, b := range anchors {
						q := Query{Between, steps, []int32{a, b}}
						if p, _ := Execute(context.Background(), g, q, 0); b != a && len(steps) == 2 && len(p) > 0 {
							want[fmt.Sprint(q)] = true
						}
					}
				}
				if len(steps) < MaxHops {
					seqs(steps)
				}
			}
		}
		seqs(nil)
		qs, err := Enumerate(context.Background(), g, anchors, hops, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, q := range qs {
			got[fmt.Sprint(q)] = true
		}
		for k := range want {
			if !got[k] {
				t.Errorf("trial %d (%d hops, %v): missing %s", trial, hops, triples, k)
			}
		}
		for k := range got {
			if !want[k] {
				t.Errorf("trial %d (%d hops, %v): enumerated %s, which matches nothing", trial, hops, triples, k)
			}
		}
		if len(got) != len(qs) {
			t.Errorf("trial %d: %d queries, %d distinct", trial, len(qs), len(got))
		}
	}
}
