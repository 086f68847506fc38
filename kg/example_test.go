package kg_test

import (
	"fmt"
	"strings"

	"github.com/stem-kgqa/stem/kg"
)

// walk follows relations from an entity through any kg.Reader: the reads
// tracing makes, whatever backend serves the KG.
func walk(g kg.Reader, from string, rels ...string) []string {
	id, ok := g.Entity(from)
	if !ok {
		return nil
	}
	frontier := []int32{id}
	for _, name := range rels {
		r, ok := g.Relation(name)
		if !ok {
			return nil
		}
		var next []int32
		for _, e := range frontier {
			for _, t := range g.OutRel(e, r) {
				next = append(next, g.Triple(t).Tail)
			}
		}
		frontier = next
	}
	var out []string
	for _, e := range frontier {
		out = append(out, g.EntityName(e))
	}
	return out
}

// The stages read a KG through kg.Reader; *kg.Graph is the in-memory
// backend. Here: where was the director of Inception born?
func ExampleReader() {
	tsv := "Inception\tdirected_by\tChristopher_Nolan\n" +
		"Christopher_Nolan\tplace_of_birth\tLondon\n" +
		"London\tlocated_in\tUnited_Kingdom\n"
	g, err := kg.ReadTSV(strings.NewReader(tsv), "example.tsv")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(walk(g, "Inception", "directed_by", "place_of_birth"))
	// Output: [London]
}
