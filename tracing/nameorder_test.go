package tracing

import (
	"reflect"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

func TestRankNames(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  []int32
	}{
		{nil, []int32{}},
		{[]string{"b", "a", "c"}, []int32{1, 0, 2}},
		{[]string{"x", "a", "x", "a", ""}, []int32{2, 1, 2, 1, 0}},
		{[]string{"Ä", "Z", "z", "A"}, []int32{3, 1, 2, 0}},
	} {
		got := rankNames(len(tc.names), func(id int32) string { return tc.names[id] })
		if !slices.Equal(got, tc.want) {
			t.Errorf("rankNames(%q) = %v, want %v", tc.names, got, tc.want)
		}
	}
}

// TestNameOrderMatchesNames holds a tracer that orders tied evidence,
// chains and answers by its names' ranks to the very results (order,
// names, chains, alternatives) of one that reads and compares the names.
func TestNameOrderMatchesNames(t *testing.T) {
	g := demoGraph(t)
	enc := wordvec.New(nil, wordvec.Options{})
	ranked, err := New(g, enc, nil, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	named, err := New(g, enc, nil, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if ranked.names == nil {
		t.Fatal("the demo graph's names should be ranked")
	}
	named.names = nil
	path := schema.Path
	for _, req := range []Request{
		{Graphs: []schema.Graph{path("Inception", "directed_by", "place_of_birth", "located_in")}, Mentions: []string{"inception"}},
		{Graphs: []schema.Graph{path("Inception", "starred_actors")}, Strategy: schema.Breadth, Mentions: []string{"inception"}},
		{Graphs: []schema.Graph{path("Switzerland", "language spoken")}, Strategy: schema.Breadth, Mentions: []string{"switzerland"}},
		{Graphs: []schema.Graph{path("Christopher Nolan", "directed_by", "has_genre"), path("Christopher Nolan", "directed_by", "starred_actors"), path("Christopher Nolan", "directed_by")},
			Strategy: schema.Breadth, Mentions: []string{"christopher nolan"}, Ranked: true, Groups: []int{0, 1, 1}, Alternatives: true},
	} {
		a, b := mustTrace(t, ranked, req), mustTrace(t, named, req)
		if len(a.Evidence) == 0 || len(a.Chains) == 0 {
			t.Fatalf("%v: no evidence or chains", req.Graphs[0])
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%v: ranked names\n%+v\nread names\n%+v", req.Graphs[0], a, b)
		}
	}
}
