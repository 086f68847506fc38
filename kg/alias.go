package kg

import (
	"cmp"
	"slices"
)

// aliasIndex holds other names of entities, for lookup only: a Freebase
// dump's machine ids of named entities ("m.0jcx"), the plain name of a
// namesake named "Paris (m.05qtj)", its other English names and its
// common.topic.alias values, as the SPARQL backend finds entities by them.
// It is a list of (alias, entity) entries, sorted by entity then alias,
// and a normalised-name index over the entries' aliases. Most KGs have
// none.
type aliasIndex struct {
	tab  nameTable // the entries' aliases (blob and offsets; no hash index)
	ent  []int32   // per entry: its entity
	norm normIndex // entries grouped by Normalize(alias)
}

// aliasEntry is one alias of an entity.
type aliasEntry struct {
	ent  int32
	name string
}

// newAliasIndex builds the index of entries, which it sorts and
// deduplicates.
func newAliasIndex(entries []aliasEntry) aliasIndex {
	slices.SortFunc(entries, func(a, b aliasEntry) int {
		if c := cmp.Compare(a.ent, b.ent); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	entries = slices.Compact(entries)
	x := aliasIndex{tab: nameTable{off: []uint32{0}}, ent: make([]int32, 0, len(entries))}
	for _, e := range entries {
		x.tab.blob = append(x.tab.blob, e.name...)
		x.tab.off = append(x.tab.off, uint32(len(x.tab.blob)))
		x.ent = append(x.ent, e.ent)
	}
	x.norm = buildNormIndex(&x.tab)
	return x
}

// orEmpty returns x, or a valid empty index when x is the zero value.
func (x *aliasIndex) orEmpty() *aliasIndex {
	if len(x.tab.off) == 0 {
		e := newAliasIndex(nil)
		return &e
	}
	return x
}

// len returns the number of entries.
func (x *aliasIndex) len() int { return x.tab.len() }

// byNorm appends to ids the entities with an alias whose normalised form
// is key.
func (x *aliasIndex) byNorm(ids []int32, key string) []int32 {
	if x.len() == 0 {
		return ids
	}
	for _, e := range x.norm.lookup(&x.tab, key) {
		ids = append(ids, x.ent[e])
	}
	return ids
}

// exact returns the entity with alias name, when exactly one has it.
func (x *aliasIndex) exact(name string) (int32, bool) {
	key := Normalize(name)
	if x.len() == 0 || key == "" {
		return 0, false
	}
	found := int32(-1)
	for _, e := range x.norm.lookup(&x.tab, key) {
		if x.tab.name(e) != name {
			continue
		}
		if found >= 0 && found != x.ent[e] {
			return 0, false // namesakes: the alias names neither
		}
		found = x.ent[e]
	}
	return found, found >= 0
}
