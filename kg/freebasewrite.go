package kg

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteFreebase writes g in the shape of Google's Freebase dump, which
// FormatFreebase reads (in memory, and by stem kg build in bounded
// memory) and a SPARQL backend serves as it serves Freebase: four
// tab-separated fields per line, every subject a machine id under ns:.
// Each named entity gets a machine id of its own (m.0s followed by its id
// in base 36, with '_' added while another entity is named so) and its
// name as type.object.name @en; an entity named by a machine id (a CVT)
// keeps it and gets no name. Relations are ns: IRIs (EntityIRI), so their
// names come back exactly. The triples come first, in id order, then the
// names, so the KG reads back with the same ids.
//
// A dump cannot carry every name: the filter FormatFreebase applies drops
// a name that starts with '/' (Freebase's keys), a name of spaces only
// names nothing, a literal cannot hold invalid UTF-8, and a relation named
// type.object.name or common.topic.alias would be read as names. Such a
// name is an error naming it. It returns the lines written and checks
// ctx between blocks of triples.
func WriteFreebase(ctx context.Context, w io.Writer, g Reader) (int, error) {
	rels := make([]string, g.NumRelations())
	for i := range rels {
		name := g.RelationName(int32(i))
		if iri := EntityIRI(FreebaseNS, name); iri == NamePredicate || iri == fbAliasPredicate {
			return 0, fmt.Errorf("write Freebase: relation %q would be read as names", name)
		}
		rels[i] = EntityIRI(FreebaseNS, name)
	}
	ids := make([]string, g.NumEntities())
	for i := range ids {
		name := g.EntityName(int32(i))
		if IsFreebaseID(name) {
			ids[i] = FreebaseNS + name
			continue
		}
		if strings.HasPrefix(name, "/") || strings.TrimSpace(name) == "" || !utf8.ValidString(name) {
			return 0, fmt.Errorf("write Freebase: entity %q: a Freebase dump cannot carry this name (it starts with '/', is blank or is not UTF-8)", name)
		}
		mid := "m.0s" + strconv.FormatInt(int64(i), 36)
		for {
			if _, taken := g.Entity(mid); !taken {
				break
			}
			mid += "_"
		}
		ids[i] = FreebaseNS + mid
	}
	nw, err := newNTWriter(w, "")
	if err != nil {
		return 0, err
	}
	nw.sep = '\t'
	for id := range g.NumTriples() {
		if id%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nw.n, fmt.Errorf("write Freebase: %w", err)
			}
		}
		t := g.Triple(int32(id))
		nw.line(ids[t.Head], rels[t.Rel], ids[t.Tail], false)
	}
	for i, iri := range ids {
		if name := g.EntityName(int32(i)); !IsFreebaseID(name) {
			nw.line(iri, NamePredicate, name, true)
		}
	}
	return nw.n, nw.flush()
}
