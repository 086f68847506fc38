package gcr

import (
	"context"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// mughals is PathQuestion's KG around mumtaz_mahal: her son's parents
// triple is a triple of its own, apart from her children triple.
func mughals(t testing.TB) *kg.Graph {
	t.Helper()
	b := kg.NewBuilder()
	for _, tr := range [][3]string{
		{"mumtaz_mahal", "children", "shah_shuja"},
		{"shah_shuja", "parents", "mumtaz_mahal"},
		{"shah_shuja", "parents", "shah_jahan"},
		{"shah_jahan", "children", "aurangzeb"},
	} {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGroundPathOwnEntity checks that a path's ends leave out only what
// stepping straight back over the arrival triple reaches.
func TestGroundPathOwnEntity(t *testing.T) {
	mg, mv := mughals(t), movies(t)
	fwd := func(rel string) schema.Step { return schema.Step{Rel: rel} }
	inv := func(rel string) schema.Step { return schema.Step{Rel: rel, Dir: schema.Inverse} }
	cases := []struct {
		name   string
		g      *kg.Graph
		anchor string
		steps  []schema.Step
		want   []string // ends, sorted by name
		trips  int      // triples kept over all steps
	}{
		// PQ-2H test: "what is the father of mumtaz_mahal 's son ?",
		// gold answer mumtaz_mahal.
		{name: "own entity by another triple", g: mg, anchor: "mumtaz_mahal", steps: []schema.Step{fwd("children"), fwd("parents")},
			want: []string{"mumtaz_mahal", "shah_jahan"}, trips: 3},
		{name: "own entity against the other triple", g: mg, anchor: "mumtaz_mahal", steps: []schema.Step{inv("parents"), inv("children")},
			want: []string{"mumtaz_mahal"}, trips: 2},
		{name: "straight back over the same triple", g: mg, anchor: "mumtaz_mahal", steps: []schema.Step{fwd("children"), inv("children")},
			want: nil, trips: 0},
		{name: "back over the same relation, another triple", g: mv, anchor: "Al Pacino",
			steps: []schema.Step{inv("starred_actors"), fwd("starred_actors")}, want: []string{"Robert De Niro"}, trips: 2},
		{name: "another relation's triple back to the anchor", g: mg, anchor: "shah_shuja",
			steps: []schema.Step{fwd("parents"), fwd("children")}, want: []string{"aurangzeb", "shah_shuja"}, trips: 4},
		{name: "no way on but back", g: mv, anchor: "Heat",
			steps: []schema.Step{fwd("directed_by"), inv("directed_by")}, want: []string{"Collateral"}, trips: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			toks := make([]Token, len(c.steps))
			for i, s := range c.steps {
				rel, ok := c.g.Relation(s.Rel)
				if !ok {
					t.Fatalf("no relation %q", s.Rel)
				}
				toks[i] = Token{Rel: rel, Inverse: s.Dir == schema.Inverse}
			}
			gr := groundPath(c.g, []int32{ent(t, c.g, c.anchor)}, toks, 100)
			var got []string
			for _, e := range gr.ends {
				got = append(got, c.g.EntityName(e))
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("ends %q, want %q", got, c.want)
			}
			n := 0
			for _, s := range gr.steps {
				n += len(s)
			}
			if n != c.trips {
				t.Errorf("%d triples kept, want %d (%v)", n, c.trips, gr.steps)
			}
		})
	}
}

// TestRetrieveOwnEntity answers the PQ-2H question whose answer is its
// own entity, through Retrieve with the oracle's gold path.
func TestRetrieveOwnEntity(t *testing.T) {
	g := mughals(t)
	r := newOn(t, g, DefaultConfig())
	req := plan.Request{Question: "what is the father of mumtaz_mahal 's son ?", Graph: g,
		Anchors: []int32{ent(t, g, "mumtaz_mahal")}, Mentions: []string{"mumtaz_mahal"},
		Projection: pathPlan(g, "mumtaz_mahal", schema.Step{Rel: "children"}, schema.Step{Rel: "parents"}),
		Strategy:   schema.Precision}
	ev, err := r.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range ev.Trace.Answers {
		got = append(got, a.Name)
	}
	if want := []string{"mumtaz_mahal", "shah_jahan"}; !slices.Equal(got, want) {
		t.Errorf("answers %q, want %q (chains %q)", got, want, ev.Trace.Chains)
	}
	if !slices.Contains(ev.Trace.Chains, "mumtaz_mahal -> children -> shah_shuja -> parents -> mumtaz_mahal") {
		t.Errorf("chains %q lack the path back to mumtaz_mahal", ev.Trace.Chains)
	}
	if n := tracing.Audit(g, ev.Trace); n != 0 {
		t.Errorf("%d answers unbacked", n)
	}
}
