package kg

import "bytes"

// The predicates whose literals name an RDF entity (labels) and give it
// other names (aliases) when N-Triples are read (see ReadNTriples), and
// which the SPARQL backend reads for names too. Name and alias triples
// are not edges.
var (
	// LabelPredicates name an entity: rdfs:label, skos:prefLabel,
	// schema:name (http and https), foaf:name and Freebase's
	// type.object.name (NamePredicate, which stem kg export writes).
	LabelPredicates = []string{
		"http://www.w3.org/2000/01/rdf-schema#label",
		"http://www.w3.org/2004/02/skos/core#prefLabel",
		"http://schema.org/name",
		"https://schema.org/name",
		"http://xmlns.com/foaf/0.1/name",
		NamePredicate,
	}
	// AliasPredicates give an entity other names: skos:altLabel,
	// schema:alternateName (http and https) and Freebase's
	// common.topic.alias.
	AliasPredicates = []string{
		"http://www.w3.org/2004/02/skos/core#altLabel",
		"http://schema.org/alternateName",
		"https://schema.org/alternateName",
		fbAliasPredicate,
	}
)

// LocalName returns the short name of an IRI, as ReadNTriples names
// relations and the entities that have no label: the part after its last
// '#', else its last '/', else its last ':' (dbo:birthPlace is
// "birthPlace", wdt:P19 "P19", ns:people.person.nationality
// "people.person.nationality"), with %XX escapes decoded, so that a name
// stem kg export wrote as an IRI (EntityIRI) comes back exactly. An IRI
// whose last part is empty ("http://example.org/") is its own name; a
// part with a broken escape is kept as it is.
func LocalName(iri string) string {
	return string(appendLocalName(nil, stringBytes(iri)))
}

// appendLocalName appends LocalName(iri) to dst.
func appendLocalName(dst, iri []byte) []byte {
	i := bytes.LastIndexByte(iri, '#')
	if i < 0 {
		i = bytes.LastIndexByte(iri, '/')
	}
	if i < 0 {
		i = bytes.LastIndexByte(iri, ':')
	}
	local := iri[i+1:]
	if len(local) == 0 {
		return append(dst, iri...)
	}
	if out, ok := appendUnescaped(dst, local); ok {
		return out
	}
	return append(dst, local...)
}

// appendUnescaped appends s with its %XX escapes decoded to dst; ok is
// false, and dst returned as it was, when an escape is broken.
func appendUnescaped(dst, s []byte) (out []byte, ok bool) {
	if bytes.IndexByte(s, '%') < 0 {
		return append(dst, s...), true
	}
	start := len(dst)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			dst = append(dst, c)
			continue
		}
		if i+2 >= len(s) {
			return dst[:start], false
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return dst[:start], false
		}
		dst = append(dst, hi<<4|lo)
		i += 2
	}
	return dst, true
}

// rdfDialect says how a reader of RDF lines names their terms: as a
// Freebase dump (FormatFreebase) or as generic N-Triples (FormatNTriples).
// Both read the same way in the end: name and alias triples are set
// apart, each term gets a key (keys of literals start with literalMark),
// and once every label is known a key is given its name (display), terms
// whose names coincide being one entity.
type rdfDialect struct {
	// freebase: FilterEnglishTriplets' filter, a line it keeps but
	// cannot parse skipped, keys the local names under ns:, labels for
	// machine ids alone. Otherwise every line is parsed (a bad one is an
	// error), keys are whole IRIs, relations their LocalName, and every
	// IRI with a label is named by it, the others by their LocalName.
	freebase bool
}

var (
	freebaseDialect = &rdfDialect{freebase: true}
	ntDialect       = &rdfDialect{}
)

// nameKind says whether predicate pred names (1) or aliases (2) its
// subject, or neither (0).
func (d *rdfDialect) nameKind(pred string) int {
	if d.freebase {
		switch pred {
		case NamePredicate:
			return 1
		case fbAliasPredicate:
			return 2
		}
		return 0
	}
	for _, p := range LabelPredicates {
		if p == pred {
			return 1
		}
	}
	for _, p := range AliasPredicates {
		if p == pred {
			return 2
		}
	}
	return 0
}

// key appends the key of an IRI or blank node term.
func (d *rdfDialect) key(dst, term []byte) []byte {
	if d.freebase {
		return appendLocal(dst, term)
	}
	return append(dst, term...)
}

// relation appends the name of predicate pred.
func (d *rdfDialect) relation(dst, pred []byte) []byte {
	if d.freebase {
		return appendLocal(dst, pred)
	}
	return appendLocalName(dst, pred)
}

// labelled reports whether the term with key key is named by its label
// when it has one: a machine id in a Freebase dump, any IRI otherwise.
func (d *rdfDialect) labelled(key []byte) bool {
	if d.freebase {
		return IsFreebaseID(bytesView(key))
	}
	return len(key) > 0 && key[0] != literalMark && !bytes.HasPrefix(key, []byte("_:"))
}

// fallback appends the name of the term with key key when it has no
// label: the key itself in a Freebase dump, an IRI's LocalName otherwise.
func (d *rdfDialect) fallback(dst, key []byte) []byte {
	if d.freebase || !d.labelled(key) {
		if len(key) > 0 && key[0] == literalMark {
			return append(dst, key[1:]...)
		}
		return append(dst, key...)
	}
	return appendLocalName(dst, key)
}

// display returns the name of the term with key key (see FormatFreebase
// and ReadNTriples), appended to dst: its label, with its id (its
// fallback name) added when other entities carry the same label, or else
// its fallback name.
func (d *rdfDialect) display(dst, key []byte, labels freebaseLabels) []byte {
	if d.labelled(key) {
		if name, n, ok := labels.label(key); ok && len(bytes.TrimSpace(name)) > 0 {
			dst = append(dst, name...)
			if n > 1 {
				dst = append(dst, " ("...)
				dst = d.fallback(dst, key)
				dst = append(dst, ')')
			}
			return dst
		}
	}
	return d.fallback(dst, key)
}

// aliases calls add with the aliases of the term with key key, named
// shown: its names and aliases other than shown and, in a Freebase dump,
// its machine id when it has a name of its own.
func (d *rdfDialect) aliases(key, shown []byte, lits func(yield func(lit []byte) error) error, add func(alias []byte) error) error {
	if !d.labelled(key) {
		return nil
	}
	if d.freebase && !bytes.Equal(key, shown) {
		if err := add(key); err != nil {
			return err
		}
	}
	return lits(func(lit []byte) error {
		if len(bytes.TrimSpace(lit)) == 0 || bytes.Equal(lit, shown) {
			return nil
		}
		return add(lit)
	})
}

// english reports whether a name literal's language tag (nil for none)
// is one a name is taken in: none or "en", as the SPARQL backend's
// language filter keeps (Config.Lang). A Freebase dump's filter has
// dropped the others already.
func english(lang []byte) bool {
	return lang == nil || string(lang) == "en"
}
