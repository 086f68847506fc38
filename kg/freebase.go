package kg

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

// FormatFreebase is Google's Freebase dump as it is downloaded
// (freebase-rdf-latest.gz: tab-separated N-Triples, about 3 billion lines)
// or as the field's FilterEnglishTriplets.py leaves it. Reading it:
//
//  1. The filter. A line is kept exactly when FilterEnglishTriplets.py
//     (lanyunshi/Multi-hopComplexKBQA, used by ToG and dki-lab's
//     Freebase-Setup) keeps it: four tab-separated fields ending in ".",
//     the subject a machine id under ns: (m.… or g.…), the predicate under
//     ns:, and the object an IRI under ns:, or a literal in quotes that is
//     untagged or @en and does not start with '/' (which drops keys such
//     as "/wikipedia/en/…"), or a literal typed by an XML Schema datatype
//     (numbers, dates). Everything else goes: non-English names, non-ns:
//     predicates (rdf:type, rdfs:label), lines that are not triples.
//  2. Names, as stem's SPARQL backend names the same lines served by
//     Virtuoso (kg/sparql): type.object.name and common.topic.alias are
//     names, not edges. An entity whose IRI is a machine id is named by its
//     type.object.name (the @en one before an untagged one, the least in
//     code-point order among several); when other entities carry the same
//     name literal, the id is added, "Paris (m.05qtj)", so that namesakes
//     stay apart. An id with no name is a CVT and keeps its id ("m.0abc").
//     Other IRIs are named by their local name (film.film), literals by
//     their lexical form (a typed literal loses its datatype). Two terms
//     that end with the same name are one entity, as over SPARQL.
//  3. Relations are the predicates' local names (people.person.nationality).
//
// Entities get ids in the order their names first appear in an edge, as
// in every other format. A line the filter keeps but N-Triples cannot
// parse is skipped and counted (FreebaseStats), not fatal: one bad line
// should not end a build of hours.
const FormatFreebase Format = "freebase"

// FreebaseStats counts what reading a Freebase dump did.
type FreebaseStats struct {
	Lines int64 // lines read
	Kept  int64 // lines FilterEnglishTriplets keeps
	// Names and Aliases are the kept type.object.name and
	// common.topic.alias lines; Edges the other kept lines.
	Names, Aliases, Edges int64
	// Unparsable counts kept lines that are not valid N-Triples;
	// FirstUnparsable is the first one's line number and error.
	Unparsable      int64
	FirstUnparsable string
}

const (
	fbAliasPredicate = FreebaseNS + "common.topic.alias"
	xsdNS            = "http://www.w3.org/2001/XMLSchema#"
)

// freebaseKeep reports whether FilterEnglishTriplets.py keeps line (its
// trailing whitespace already removed): see FormatFreebase. It is the
// script's three regular expressions written out, tested against them.
func freebaseKeep(line []byte) bool {
	if len(line) == 0 || line[0] == '@' || line[len(line)-1] != '.' {
		return false
	}
	var f [4][]byte
	n := 0
	for rest := line; ; {
		i := bytes.IndexByte(rest, '\t')
		if n == 3 {
			if i >= 0 {
				return false // more than four fields
			}
			f[3] = rest
			break
		}
		if i < 0 {
			return false // fewer than four fields
		}
		f[n], rest = rest[:i], rest[i+1:]
		n++
	}
	for _, x := range f[:3] {
		if len(bytes.TrimSpace(x)) == 0 {
			return false
		}
	}
	if len(f[3]) != 1 || !nsIRI(f[0], true) || !nsIRI(f[1], false) {
		return false
	}
	o := f[2]
	return nsIRI(o, false) || englishLiteral(o) || xsdLiteral(o)
}

// nsIRI reports whether f is <ns:X> with X one or more characters other
// than '>', and, when mid is set, X starts "m." or "g.".
func nsIRI(f []byte, mid bool) bool {
	if len(f) < len(FreebaseNS)+3 || f[0] != '<' || f[len(f)-1] != '>' || string(f[1:1+len(FreebaseNS)]) != FreebaseNS {
		return false
	}
	x := f[1+len(FreebaseNS) : len(f)-1]
	if bytes.IndexByte(x, '>') >= 0 {
		return false
	}
	if mid {
		return len(x) >= 3 && (x[0] == 'm' || x[0] == 'g') && x[1] == '.'
	}
	return true
}

func isQuote(c byte) bool { return c == '"' || c == '\'' }

// englishLiteral is the script's ['"](?!/).+['"](?:@en)? over a whole
// field.
func englishLiteral(o []byte) bool {
	if len(o) < 3 || !isQuote(o[0]) || o[1] == '/' {
		return false
	}
	if isQuote(o[len(o)-1]) {
		return true
	}
	return len(o) >= 6 && bytes.HasSuffix(o, []byte("@en")) && isQuote(o[len(o)-4])
}

// xsdLiteral is the script's .+<xsd#\w+> over a whole field.
func xsdLiteral(o []byte) bool {
	i := bytes.LastIndex(o, []byte("<"+xsdNS))
	if i < 1 || o[len(o)-1] != '>' {
		return false
	}
	w := o[i+1+len(xsdNS) : len(o)-1]
	if len(w) == 0 {
		return false
	}
	for _, c := range w {
		if !(c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80) {
			return false
		}
	}
	return true
}

// appendLocal appends the name of IRI iri under Freebase's namespace, as
// NameFromIRI and the SPARQL backend give it: the local part,
// percent-decoded, or the whole IRI when it is outside ns:, is ns: itself
// or has a broken escape.
func appendLocal(dst, iri []byte) []byte {
	rest, ok := bytes.CutPrefix(iri, []byte(FreebaseNS))
	if !ok || len(rest) == 0 {
		return append(dst, iri...)
	}
	if out, ok := appendUnescaped(dst, rest); ok {
		return out
	}
	return append(dst, iri...)
}

// A term's key while reading RDF: an IRI's key (rdfDialect.key), or 0x00
// and a literal's lexical form, so that a literal never meets an IRI of
// the same spelling before names are given (a literal "m.0abc" is not the
// entity m.0abc). rdfDialect.display gives the final name.
const literalMark = 0

// freebaseLabels answers, for a labelled term's key, its chosen name and
// how many entities carry that name literal.
type freebaseLabels interface {
	label(mid []byte) (name []byte, carriers uint32, ok bool)
}

// betterLabel reports whether name literal a (tagged @en or not) is
// chosen over b: the SPARQL backend takes the tagged one, then the least.
func betterLabel(a []byte, aTagged bool, b []byte, bTagged bool) bool {
	if aTagged != bTagged {
		return aTagged
	}
	return bytes.Compare(a, b) < 0
}

// scanRDF streams RDF lines as dialect d reads them: the edges go to edge
// with term keys (see literalMark), the names and aliases in English or
// untagged to name (the subject's key, the literal, whether it was @en,
// and whether it was an alias). A Freebase dump's lines are first
// filtered as FilterEnglishTriplets keeps them, and a kept line that does
// not parse is counted and skipped; other N-Triples stop at a bad line.
func scanRDF(ctx context.Context, r io.Reader, file string, d *rdfDialect, st *FreebaseStats,
	edge func(h, rel, t []byte) error, name func(mid, lit []byte, tagged, alias bool) error) error {
	lr := newLineReader(r, file)
	var (
		p          ntParser
		hk, rk, tk []byte
	)
	return lr.each(ctx, func(line []byte) error {
		st.Lines++
		if d.freebase {
			line = bytes.TrimRight(line, " \t\r\n\v\f")
			if !freebaseKeep(line) {
				return nil
			}
		}
		ok, perr := p.parse(line)
		if perr != nil && !d.freebase {
			perr.Name, perr.Line = file, lr.line
			return perr
		}
		if !d.freebase && !ok {
			return nil // a blank or comment line
		}
		st.Kept++
		if perr != nil || !ok {
			st.Unparsable++
			if st.FirstUnparsable == "" {
				if perr != nil {
					perr.Name, perr.Line = file, lr.line
					st.FirstUnparsable = perr.Error()
				} else {
					st.FirstUnparsable = fmt.Sprintf("%s:%d: not a triple", file, lr.line)
				}
			}
			return nil
		}
		hk = d.key(hk[:0], p.term[0])
		if kind := d.nameKind(bytesView(p.term[1])); kind != 0 {
			alias := kind == 2
			if alias {
				st.Aliases++
			} else {
				st.Names++
			}
			if !p.lit || !english(p.lang) {
				return nil // a name that is an IRI or in another language: SPARQL's language filter drops it
			}
			return name(hk, p.term[2], p.lang != nil, alias)
		}
		st.Edges++
		rk = d.relation(rk[:0], p.term[1])
		if p.lit {
			tk = append(append(tk[:0], literalMark), p.term[2]...)
		} else {
			tk = d.key(tk[:0], p.term[2])
		}
		return edge(hk, rk, tk)
	})
}

// memLabels holds a dump's names in memory, for readFreebase.
type memLabels struct {
	best    map[string]labelChoice
	carrier map[labelKey]int    // name literal -> entities carrying it
	seen    map[[2]string]bool  // (machine id, tag and literal) counted
	all     map[string][]string // machine id -> its names and aliases
}

type labelKey struct {
	lit    string
	tagged bool
}

type labelChoice struct {
	name   string
	tagged bool
}

func (m *memLabels) add(mid, lit []byte, tagged, alias bool) {
	m.all[string(mid)] = append(m.all[string(mid)], string(lit))
	if alias {
		return
	}
	k := labelKey{string(lit), tagged}
	pair := [2]string{string(mid), string(tagByte(tagged)) + k.lit}
	if !m.seen[pair] {
		m.seen[pair] = true
		m.carrier[k]++
	}
	b, ok := m.best[string(mid)]
	if !ok || betterLabel(lit, tagged, []byte(b.name), b.tagged) {
		m.best[string(mid)] = labelChoice{k.lit, tagged}
	}
}

func (m *memLabels) label(mid []byte) ([]byte, uint32, bool) {
	b, ok := m.best[string(mid)]
	if !ok {
		return nil, 0, false
	}
	return []byte(b.name), uint32(m.carrier[labelKey{b.name, b.tagged}]), true
}

// readFreebase reads a Freebase dump into memory (see FormatFreebase):
// the edges with term keys first, then each key is given its name and the
// triples are added again by name, in order, so that terms ending with
// the same name merge. BuildSnapshot gives the same graph in bounded
// memory.
func readFreebase(ctx context.Context, r io.Reader, file string) (*Graph, *FreebaseStats, error) {
	return readRDF(ctx, r, file, freebaseDialect)
}

// readRDF reads RDF lines as dialect d names them, into memory.
func readRDF(ctx context.Context, r io.Reader, file string, d *rdfDialect) (*Graph, *FreebaseStats, error) {
	st := &FreebaseStats{}
	raw := NewBuilder()
	labels := &memLabels{best: map[string]labelChoice{}, carrier: map[labelKey]int{}, seen: map[[2]string]bool{}, all: map[string][]string{}}
	err := scanRDF(ctx, r, file, d, st, func(h, rel, t []byte) error {
		raw.addBytes(h, rel, t)
		return nil
	}, func(mid, lit []byte, tagged, alias bool) error {
		labels.add(mid, lit, tagged, alias)
		return nil
	})
	if err == nil && d.freebase {
		err = notDump(file, st)
	}
	if err != nil {
		return nil, st, err
	}
	rg, err := raw.Build()
	if err != nil {
		return nil, st, wrapBuildErr(file, err)
	}
	names := make([]string, rg.NumEntities())
	var buf []byte
	for i := range names {
		buf = d.display(buf[:0], stringBytes(rg.EntityName(int32(i))), labels)
		names[i] = string(buf)
	}
	b := NewBuilder()
	for i := range rg.NumTriples() {
		tr := rg.Triple(int32(i))
		b.Add(names[tr.Head], rg.RelationName(tr.Rel), names[tr.Tail])
	}
	g, err := b.Build()
	if err != nil {
		return nil, st, wrapBuildErr(file, err)
	}
	g.dups += rg.dups
	var entries []aliasEntry
	for i, shown := range names {
		key := rg.EntityName(int32(i))
		id, _ := g.ents.lookup(shown)
		lits := func(yield func([]byte) error) error {
			for _, l := range labels.all[key] {
				if err := yield([]byte(l)); err != nil {
					return err
				}
			}
			return nil
		}
		d.aliases(stringBytes(key), stringBytes(shown), lits, func(alias []byte) error {
			entries = append(entries, aliasEntry{id, string(alias)})
			return nil
		})
	}
	g.alias = newAliasIndex(entries)
	return g, st, nil
}

// notDump is the error for an input read as a Freebase dump of which
// FilterEnglishTriplets keeps no line, though it has lines: N-Triples
// such as stem kg export writes, whose subjects are not machine ids, once
// gave "knowledge graph has no triples". nil when a line was kept or the
// input is empty.
func notDump(file string, st *FreebaseStats) error {
	if st.Kept > 0 || st.Lines == 0 {
		return nil
	}
	return fmt.Errorf("load %s: %w: none of its %d lines is in a Freebase dump's shape (four tab-separated fields, the subject a machine id under %s, as FilterEnglishTriplets.py keeps them): read N-Triples, such as stem kg export writes, with --format nt",
		file, ErrUnknownFormat, st.Lines, FreebaseNS)
}

// looksFreebase reports whether a first data line is in the dump's own
// shape: tab-separated, its subject a machine id under ns:. Plain
// N-Triples under ns: (stem kg export) use spaces and named subjects.
func looksFreebase(line []byte) bool {
	i := bytes.IndexByte(line, '\t')
	return i > 0 && nsIRI(line[:i], true) && strings.Count(string(line), "\t") >= 3
}
