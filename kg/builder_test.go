package kg

import (
	"errors"
	"testing"
)

// An entity added without a triple is in the graph, found by name, with
// no edges; an empty name is refused at Build.
func TestBuilderAddEntity(t *testing.T) {
	b := NewBuilder()
	b.AddEntity("alone")
	b.Add("a", "r", "b")
	b.AddEntity("a")
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if g.NumEntities() != 3 || g.NumTriples() != 1 {
		t.Fatalf("%d entities, %d triples; want 3, 1", g.NumEntities(), g.NumTriples())
	}
	e, ok := g.Entity("alone")
	if !ok || len(g.Out(e)) != 0 || len(g.In(e)) != 0 {
		t.Errorf("alone: found %v, out %v, in %v", ok, g.Out(e), g.In(e))
	}
	b.AddEntity("")
	b.Add("a", "r", "b")
	if _, err := b.Build(); !errors.Is(err, ErrEmptyField) {
		t.Errorf("an empty entity name: %v, want ErrEmptyField", err)
	}
}
