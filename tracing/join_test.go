package tracing

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

// joinKG is a small Freebase-shaped KG for conjunctions: films with a
// director and a language, and politicians holding offices through CVTs
// that name the office and the jurisdiction.
const joinKG = `Film_A	film.film.directed_by	Ann_Lee
Film_A	film.film.language	French
Film_B	film.film.directed_by	Ann_Lee
Film_B	film.film.language	German
Film_C	film.film.directed_by	Bob_Ray
Film_C	film.film.language	French
Film_D	film.film.directed_by	Ann_Lee
Film_D	film.film.language	French
Cal_Poe	government.politician.government_positions_held	m.01
m.01	government.government_position_held.office_position_or_title	Mayor
m.01	government.government_position_held.jurisdiction_of_office	Lyon
Cal_Poe	government.politician.government_positions_held	m.02
m.02	government.government_position_held.office_position_or_title	Senator
m.02	government.government_position_held.jurisdiction_of_office	Paris
Dee_Fox	government.politician.government_positions_held	m.03
m.03	government.government_position_held.office_position_or_title	Mayor
m.03	government.government_position_held.jurisdiction_of_office	Nice
`

// TestJoin traces graphs anchored at two nodes: the branches intersect at
// the answer (films by Ann Lee in French) and at a CVT (where Cal Poe was
// mayor, not where he was senator), and the evidence holds only the
// branches that reach both anchors. Each graph alone, from one anchor,
// binds more.
func TestJoin(t *testing.T) {
	g, err := kg.ReadTSV(strings.NewReader(joinKG), "join.tsv")
	if err != nil {
		t.Fatal(err)
	}
	tr := tracerOver(t, g, wordvec.New(nil, wordvec.Options{}), DefaultConfig())
	atAnswer := schema.Graph{Triples: []schema.Triple{
		{Head: "[ENT1]", Rel: "film.film.directed_by", Tail: "Ann_Lee"},
		{Head: "[ENT1]", Rel: "film.film.language", Tail: "French"},
	}, Answer: "[ENT1]"}
	atCVT := schema.Graph{Triples: []schema.Triple{
		{Head: "Cal_Poe", Rel: "government.politician.government_positions_held", Tail: "[ENT1]"},
		{Head: "[ENT1]", Rel: "government.government_position_held.jurisdiction_of_office", Tail: "[ENT2]"},
		{Head: "[ENT1]", Rel: "government.government_position_held.office_position_or_title", Tail: "Mayor"},
	}, Answer: "[ENT2]"}
	for _, c := range []struct {
		name     string
		g        schema.Graph
		mentions []string
		want     []string
	}{
		{"at the answer", atAnswer, []string{"Ann_Lee", "French"}, []string{"Film_A", "Film_D"}},
		{"at the answer, anchors the other way round", atAnswer, []string{"French", "Ann_Lee"}, []string{"Film_A", "Film_D"}},
		{"one anchor", atAnswer, []string{"Ann_Lee"}, []string{"Film_A", "Film_B", "Film_D"}},
		{"at a CVT, answer edge first", atCVT, []string{"Cal_Poe", "Mayor"}, []string{"Lyon"}},
		{"at a CVT, one anchor", atCVT, []string{"Cal_Poe"}, []string{"Lyon", "Paris"}},
		{"no branch reaches both", schema.Graph{Triples: []schema.Triple{
			{Head: "[ENT1]", Rel: "film.film.directed_by", Tail: "Bob_Ray"},
			{Head: "[ENT1]", Rel: "film.film.language", Tail: "German"},
		}, Answer: "[ENT1]"}, []string{"Bob_Ray", "German"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := mustTrace(t, tr, Request{Graphs: []schema.Graph{c.g}, Mentions: c.mentions, Strategy: schema.Breadth})
			if got := answerNames(res); !reflect.DeepEqual(got, c.want) {
				t.Errorf("answers %v, want %v", got, c.want)
			}
			for _, m := range res.Evidence {
				tt := g.Triple(m.Triple)
				h, tl := g.EntityName(tt.Head), g.EntityName(tt.Tail)
				if len(c.mentions) == 2 && (h == "Film_B" || h == "Film_C" || h == "m.02" || tl == "m.02") {
					t.Errorf("evidence holds a branch that misses an anchor: %s %s", h, tl)
				}
			}
		})
	}
}
