package pattern

import (
	"reflect"
	"testing"

	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// TestConjunction reads gold two-anchor graphs as conjunction paths and
// builds the same graphs back from them: meeting at the answer, and at a
// CVT (the paths share the step after it).
func TestConjunction(t *testing.T) {
	for _, c := range []struct {
		name     string
		entities []string
		g        schema.Graph
		path     string
	}{
		{"at the answer", []string{"Ann Lee", "French"}, schema.Graph{Triples: []schema.Triple{
			{Head: "[ENT1]", Rel: "film.film.directed_by", Tail: "Ann Lee"},
			{Head: "[ENT1]", Rel: "film.film.language", Tail: "French"},
		}, Answer: "[ENT1]"}, "film.film.directed_by< &> film.film.language<"},
		{"at a CVT", []string{"Cal Poe", "Mayor"}, schema.Graph{Triples: []schema.Triple{
			{Head: "Cal Poe", Rel: "held", Tail: "[ENT1]"},
			{Head: "[ENT1]", Rel: "jurisdiction", Tail: "[ENT2]"},
			{Head: "[ENT1]", Rel: "title", Tail: "Mayor"},
		}, Answer: "[ENT2]"}, "held> jurisdiction> &> title< jurisdiction>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			steps, ok := ConjunctionPath(c.g, c.entities)
			if !ok {
				t.Fatal("no conjunction path")
			}
			if got := formatSteps(steps); got != c.path {
				t.Errorf("path %q, want %q", got, c.path)
			}
			g, ok := ConjunctionGraph(c.entities, steps)
			if !ok || !reflect.DeepEqual(g, c.g) {
				t.Errorf("graph %v, want %v", g, c.g)
			}
		})
	}
	if _, ok := ConjunctionPath(schema.PathGraph("A", []schema.Step{{Rel: "r"}}), []string{"A"}); ok {
		t.Error("one entity gave a conjunction path")
	}
	if _, ok := ConjunctionGraph([]string{"A"}, []schema.Step{{Rel: "r"}, {Rel: JoinRel}, {Rel: "s"}}); ok {
		t.Error("a two-part path anchored on one entity gave a graph")
	}
	in := projection.Input{Question: "which film has language french and director ann lee ?", Entities: []string{"Ann Lee", "French"}, Mentions: []string{"ann lee", "french"}}
	if got := textOrder(in); !reflect.DeepEqual(got, []string{"French", "Ann Lee"}) {
		t.Errorf("text order %v", got)
	}
}
