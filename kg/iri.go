package kg

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// FreebaseNS is Freebase's namespace, the default base under which
// WriteNTriples turns names into IRIs: KGQA benchmarks are Freebase
// subsets, and a KG exported under it looks to a SPARQL backend like the
// Freebase served by Virtuoso in the field (ns:m.0abc, ns:people.person.gender).
const FreebaseNS = "http://rdf.freebase.com/ns/"

// NamePredicate carries each exported entity's name, as Freebase's
// type.object.name does: `<e> <NamePredicate> "name"@en .`.
const NamePredicate = FreebaseNS + "type.object.name"

// FreebaseIDs matches Freebase's machine ids (m.02mjmr, g.11b6d2xh5_),
// the local names of its entities: opaque ids, named by type.object.name.
// An id with no name is a CVT (a mediator: a performance, a marriage).
const FreebaseIDs = `^[mg]\.[0-9a-z_]+$`

// IsFreebaseID reports whether name matches FreebaseIDs. Benchmarks built
// from Freebase (WebQSP, CWQ) name an entity by its id only when it has no
// name, which is what a CVT is.
func IsFreebaseID(name string) bool {
	if len(name) < 3 || (name[0] != 'm' && name[0] != 'g') || name[1] != '.' {
		return false
	}
	for _, c := range []byte(name[2:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || c == '_') {
			return false
		}
	}
	return true
}

// EntityIRI returns the IRI of an entity or relation name under base: base
// followed by the name with every byte outside the safe set written as %XX
// (upper-case hex, one per UTF-8 byte). The safe set is ASCII letters,
// digits and '_', '-' except first, '.' except first and last, and
// non-ASCII letters of SPARQL's PN_CHARS_BASE (so "Zürich" stays
// readable). Everything else is escaped: space, quotes, <>, '/', '#',
// '%', ':', '(' and so on, and bytes of invalid UTF-8. The local part is
// then a valid SPARQL local name (ns:Paris%2C%20Texas), and NameFromIRI
// inverts it exactly, for any string. A name that is already an IRI is
// escaped too: WriteNTriples decides, with IsIRI, whether to keep it.
func EntityIRI(base, name string) string {
	var b strings.Builder
	b.Grow(len(base) + len(name) + len(name)/4)
	b.WriteString(base)
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		if safeLocal(r, size, i == 0, i+size == len(name)) {
			b.WriteString(name[i : i+size])
		} else {
			for _, c := range []byte(name[i : i+size]) {
				b.WriteByte('%')
				b.WriteByte("0123456789ABCDEF"[c>>4])
				b.WriteByte("0123456789ABCDEF"[c&15])
			}
		}
		i += size
	}
	return b.String()
}

// safeLocal reports whether rune r (size bytes, RuneError of size 1 for a
// bad byte) may stand unescaped in a local name.
func safeLocal(r rune, size int, first, last bool) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return false
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_':
		return true
	case r == '-':
		return !first
	case r == '.':
		return !first && !last
	case r < 0x80:
		return false
	}
	// PN_CHARS_BASE above ASCII (SPARQL 1.1, production 164).
	return 0xC0 <= r && r <= 0xD6 || 0xD8 <= r && r <= 0xF6 || 0xF8 <= r && r <= 0x2FF ||
		0x370 <= r && r <= 0x37D || 0x37F <= r && r <= 0x1FFF || 0x200C <= r && r <= 0x200D ||
		0x2070 <= r && r <= 0x218F || 0x2C00 <= r && r <= 0x2FEF || 0x3001 <= r && r <= 0xD7FF ||
		0xF900 <= r && r <= 0xFDCF || 0xFDF0 <= r && r <= 0xFFFD || 0x10000 <= r && r <= 0xEFFFF
}

// NameFromIRI inverts EntityIRI: the name an IRI under base stands for,
// its local part with %XX escapes decoded. ok is false for an IRI outside
// base or with a broken escape; such an IRI names itself, as the SPARQL
// backend names it (ReadNTriples names an IRI by its label, else its
// LocalName). An IRI under base that was a name of its own (IsIRI) reads
// back as its local part: the two namings share base.
func NameFromIRI(base, iri string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(iri, base)
	if !ok {
		return "", false
	}
	if strings.IndexByte(rest, '%') < 0 {
		return rest, true
	}
	b, ok := appendUnescaped(make([]byte, 0, len(rest)), []byte(rest))
	if !ok {
		return "", false
	}
	return string(b), true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// IsIRI reports whether a name is an absolute IRI that N-Triples can
// hold as it is: "scheme://..." (the rule kg/sparql names IRIs by) or
// "urn:...", valid UTF-8, with none of the characters an IRIREF forbids
// (controls, space, <>"{}|^`\). Names read from N-Triples are such IRIs;
// WriteNTriples keeps them.
func IsIRI(name string) bool {
	scheme, rest, ok := strings.Cut(name, ":")
	if !ok || scheme == "" || !(strings.HasPrefix(rest, "//") || strings.EqualFold(scheme, "urn")) || len(rest) <= 2 {
		return false
	}
	for i, c := range []byte(scheme) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	if !utf8.ValidString(rest) {
		return false
	}
	for _, c := range []byte(rest) {
		if c <= ' ' || c == 0x7f || strings.IndexByte("<>\"{}|^`\\", c) >= 0 {
			return false
		}
	}
	return true
}

// TermIRI is the IRI WriteNTriples writes for a name: the name itself
// when IsIRI, else EntityIRI(base, name).
func TermIRI(base, name string) string {
	if IsIRI(name) {
		return name
	}
	return EntityIRI(base, name)
}

// WriteNTriples writes g as N-Triples, streaming: every triple with its
// entities and relation as TermIRI(base, name), then one name triple per
// entity, `<e> <NamePredicate> "name"@en .`, so the exact name survives
// even where the IRI alone would not say it (an IRI under base). An entity
// named by a Freebase id (IsFreebaseID) gets no name triple: it is a CVT,
// which in Freebase has none, and the SPARQL backend walks through it. base
// empty means FreebaseNS. Entities read from literals become IRIs too: a
// SPARQL endpoint can only walk from IRIs. It returns the number of lines
// written and checks ctx between blocks of triples.
func WriteNTriples(ctx context.Context, w io.Writer, g Reader, base string) (int, error) {
	nw, err := newNTWriter(w, base)
	if err != nil {
		return 0, err
	}
	ents := make([]string, g.NumEntities()) // each name escaped once, not per edge
	for i := range ents {
		ents[i] = TermIRI(nw.base, g.EntityName(int32(i)))
	}
	rels := make([]string, g.NumRelations())
	for i := range rels {
		rels[i] = TermIRI(nw.base, g.RelationName(int32(i)))
	}
	for id := range g.NumTriples() {
		if id%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nw.n, fmt.Errorf("write N-Triples: %w", err)
			}
		}
		t := g.Triple(int32(id))
		nw.line(ents[t.Head], rels[t.Rel], ents[t.Tail], false)
	}
	for i, iri := range ents {
		if name := g.EntityName(int32(i)); named(name) {
			nw.line(iri, NamePredicate, name, true)
		}
	}
	return nw.n, nw.flush()
}

// named reports whether WriteNTriples writes a name triple for an entity
// named name: not for a CVT (IsFreebaseID), and not for a name that is
// not valid UTF-8, which a literal cannot hold but its IRI does (its
// escapes decode to the very bytes, see ReadNTriples).
func named(name string) bool { return !IsFreebaseID(name) && utf8.ValidString(name) }

// ntWriter writes N-Triples lines.
type ntWriter struct {
	bw   *bufio.Writer
	base string
	n    int
	sep  byte // between the terms: ' ', or '\t' in Freebase's shape
}

func newNTWriter(w io.Writer, base string) (*ntWriter, error) {
	if base == "" {
		base = FreebaseNS
	}
	if !IsIRI(base) {
		return nil, fmt.Errorf("write N-Triples: base %q is not an absolute IRI", base)
	}
	return &ntWriter{bw: bufio.NewWriterSize(w, 1<<16), base: base, sep: ' '}, nil
}

// line writes <s> <p> <o> ., or <s> <p> "o"@en . when lit, the terms
// separated by nw.sep.
func (nw *ntWriter) line(s, p, o string, lit bool) {
	bw := nw.bw
	bw.WriteByte('<')
	bw.WriteString(s)
	bw.WriteByte('>')
	bw.WriteByte(nw.sep)
	bw.WriteByte('<')
	bw.WriteString(p)
	bw.WriteByte('>')
	bw.WriteByte(nw.sep)
	if lit {
		writeLiteral(bw, o)
		bw.WriteString("@en")
	} else {
		bw.WriteByte('<')
		bw.WriteString(o)
		bw.WriteByte('>')
	}
	bw.WriteByte(nw.sep)
	bw.WriteString(".\n")
	nw.n++
}

func (nw *ntWriter) flush() error {
	if err := nw.bw.Flush(); err != nil {
		return fmt.Errorf("write N-Triples: %w", err)
	}
	return nil
}

// NTriplesEncoder writes triples given by name as N-Triples, as
// WriteNTriples writes a graph, for a writer that streams triples without
// building a graph (stem kg synth --out kg.nt). Each entity's name triple
// is written after its first triple; the names met are kept to write
// each once.
type NTriplesEncoder struct {
	nw    *ntWriter
	named map[string]bool
}

// NewNTriplesEncoder writes to w, with names under base ("" means
// FreebaseNS).
func NewNTriplesEncoder(w io.Writer, base string) (*NTriplesEncoder, error) {
	nw, err := newNTWriter(w, base)
	if err != nil {
		return nil, err
	}
	return &NTriplesEncoder{nw: nw, named: map[string]bool{}}, nil
}

// Add writes one triple (and the names of its entities not met before).
func (e *NTriplesEncoder) Add(head, rel, tail string) {
	h, t := TermIRI(e.nw.base, head), TermIRI(e.nw.base, tail)
	e.nw.line(h, TermIRI(e.nw.base, rel), t, false)
	for _, x := range [][2]string{{head, h}, {tail, t}} {
		if !e.named[x[0]] {
			e.named[x[0]] = true
			if named(x[0]) {
				e.nw.line(x[1], NamePredicate, x[0], true)
			}
		}
	}
}

// Lines returns the lines written so far.
func (e *NTriplesEncoder) Lines() int { return e.nw.n }

// Flush writes what is buffered.
func (e *NTriplesEncoder) Flush() error { return e.nw.flush() }

// writeLiteral writes s as an N-Triples STRING_LITERAL_QUOTE in the
// canonical form of RDF 1.1: \" \\ \n \r and \t \b \f as ECHAR, other
// control characters as \u00XX, the rest as UTF-8. N-Triples is UTF-8, so
// a byte of invalid UTF-8 becomes U+FFFD; the IRI keeps such a name exact.
func writeLiteral(w *bufio.Writer, s string) {
	w.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			w.WriteRune(utf8.RuneError)
		case r == '"':
			w.WriteString(`\"`)
		case r == '\\':
			w.WriteString(`\\`)
		case r == '\n':
			w.WriteString(`\n`)
		case r == '\r':
			w.WriteString(`\r`)
		case r == '\t':
			w.WriteString(`\t`)
		case r == '\b':
			w.WriteString(`\b`)
		case r == '\f':
			w.WriteString(`\f`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(w, `\u%04X`, r)
		default:
			w.WriteRune(r)
		}
	}
	w.WriteByte('"')
}
