package kg

import (
	"slices"
	"strings"
)

// typeRelations are the relations that state an entity's type outright:
// Freebase's type.object.type and common.topic.notable_types, RDF's
// rdf:type (as stem names an IRI's local part, "type"), Wikidata's P31.
var typeRelations = []string{"type.object.type", "common.topic.notable_types", "type", "rdf:type", "instance_of", "P31"}

// metaDomains are Freebase domains every topic has a relation of, which
// say nothing about what kind of thing it is.
var metaDomains = []string{"common", "freebase", "type", "user", "kg"}

// TypesOf returns entity e's types as the KG shows them, sorted: the names
// of the entities a type relation points it to (type.object.type,
// common.topic.notable_types, rdf:type), and the types its own relations
// belong to where relation names carry one (Freebase's "domain.type.property",
// PathQuestion's "__domain__type__property": location.us_state for an
// entity with location.us_state.capital). A KG whose relation names carry
// no type ("directed_by") and that has no type relation gives none.
func TypesOf(g Reader, e int32) []string {
	var out []string
	for _, tid := range g.Out(e) {
		t := g.Triple(tid)
		name := g.RelationName(t.Rel)
		if TypeRelation(name) {
			out = append(out, g.EntityName(t.Tail))
			continue
		}
		if d := RelationType(name); d != "" {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TypeRelation reports whether the relation named name states its
// subject's type outright (type.object.type, rdf:type, P31, ...): TypesOf
// reads its tails' names as types.
func TypeRelation(name string) bool { return slices.Contains(typeRelations, name) }

// RelationType is the type a relation name says its subject has: the name
// without its last part when it has at least three ("location.us_state.capital"
// is location.us_state's; "__people__person__spouse_s" is people.person's),
// "" otherwise and for Freebase's meta domains (common.topic, freebase.*).
func RelationType(name string) string {
	parts := strings.Split(strings.TrimPrefix(name, "__"), "__")
	if len(parts) < 3 {
		parts = strings.Split(name, ".")
	}
	if len(parts) < 3 || slices.Contains(metaDomains, parts[0]) {
		return ""
	}
	return strings.Join(parts[:len(parts)-1], ".")
}

// TypeWords returns the lowercase words of types ("location.us_state" and
// "US State" both give "location", "us", "state"), each once, sorted.
func TypeWords(types []string) []string {
	var out []string
	for _, t := range types {
		out = append(out, strings.FieldsFunc(strings.ToLower(t), func(r rune) bool {
			return r == '.' || r == '_' || r == ' ' || r == '-' || r == '/'
		})...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
