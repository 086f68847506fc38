package schema

import (
	"reflect"
	"testing"
)

func TestPathTo(t *testing.T) {
	g := Graph{Triples: []Triple{
		{Head: "A", Rel: "held", Tail: "[ENT1]"},
		{Head: "[ENT1]", Rel: "jurisdiction", Tail: "[ENT2]"},
		{Head: "[ENT1]", Rel: "title", Tail: "B"},
	}, Answer: "[ENT2]"}
	for _, c := range []struct {
		from string
		want []Step
		ok   bool
	}{
		{"A", []Step{{Rel: "held"}, {Rel: "jurisdiction"}}, true},
		{"B", []Step{{Rel: "title", Dir: Inverse}, {Rel: "jurisdiction"}}, true},
		{"[ent1]", []Step{{Rel: "jurisdiction"}}, true},
		{"C", nil, false},
		{"[ENT2]", nil, false},
	} {
		got, ok := g.PathTo(c.from)
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("PathTo(%q) = %v, %v; want %v, %v", c.from, got, ok, c.want, c.ok)
		}
	}
}
