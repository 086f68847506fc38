package pattern

import (
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// TestAnchored plans a path from the question's entity it leads from,
// whichever the list gives first, and joins the other entity where it
// links to the path's CVT; a path neither leads from, or one entity
// alone, is anchored on the first as before.
func TestAnchored(t *testing.T) {
	b := kg.NewBuilder()
	for _, tr := range [][3]string{
		{"kate", "actor.film", "p1"}, {"p1", "performance.character", "paul"}, {"p1", "performance.film", "dune"},
		{"kate", "actor.film", "p2"}, {"p2", "performance.character", "leto"}, {"p2", "performance.film", "arrival"},
		{"fr", "borders", "alps"}, {"ch", "borders", "alps"},
		{"cdg", "containedby", "fr"}, {"cdg", "serves", "paris"}, {"zrh", "containedby", "ch"}, {"zrh", "serves", "zurich"},
	} {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	borders := []schema.Step{{Rel: "borders", Dir: schema.Inverse}}
	perf := []schema.Step{{Rel: "actor.film", Dir: schema.Either}, {Rel: "performance.character", Dir: schema.Either}}
	for _, tt := range []struct {
		name     string
		entities []string
		steps    []schema.Step
		hops     int
		want     string
	}{
		{"second entity leads", []string{"dune", "kate"}, perf, 0,
			"(kate, actor.film, [ENT1]); ([ENT1], performance.character, [ENT2]); ([ENT1], performance.film, dune)"},
		{"one entity", []string{"kate"}, perf, 0, "(kate, actor.film, [ENT1]); ([ENT1], performance.character, [ENT2])"},
		{"neither leads", []string{"dune", "kate"}, []schema.Step{{Rel: "born_in", Dir: schema.Either}}, 0, "(dune, born_in, [ENT1])"},
		{"graph too shallow", []string{"dune", "kate"}, perf, 1, "(dune, actor.film, [ENT1]); ([ENT1], performance.character, [ENT2])"},
		// "which country bordering the alps contains an airport that
		// serves paris": joined through the airport, where the graph
		// holds the second thing's neighbours' edges.
		{"through an entity", []string{"alps", "paris"}, borders, 0,
			"([ENT1], borders, alps); ([ENT2], containedby, [ENT1]); ([ENT2], serves, paris)"},
		{"through an entity, two steps deep", []string{"alps", "paris"}, borders, 2,
			"([ENT1], borders, alps); ([ENT2], containedby, [ENT1]); ([ENT2], serves, paris)"},
		{"through an entity, one step deep", []string{"alps", "paris"}, borders, 1, "([ENT1], borders, alps)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _, deeper := anchored(g, tt.hops, tt.entities, tt.steps)
			if got.String() != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			// One step deep, a join through an entity asks for two.
			if want := map[bool]int{true: 2}[tt.name == "through an entity, one step deep"]; deeper != want {
				t.Errorf("deeper %d, want %d", deeper, want)
			}
		})
	}
	// A joined reading goes first.
	cands := []projection.Candidate{{Score: 0.5}, {Score: 0.3}, {Score: 0.2, Variant: true}}
	got := joinedFirst(cands, []bool{false, false, true})
	if got[0].Score != 0.2 || got[0].Variant || got[1].Score != 0.5 || got[2].Score != 0.3 {
		t.Errorf("joinedFirst = %+v", got)
	}
}
