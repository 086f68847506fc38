package kg

import (
	"context"
	"fmt"
	"io"
	"unicode/utf8"
)

// ReadNTriples reads an N-Triples file: one "subject predicate object ." per
// line, subjects IRIs or blank nodes, predicates IRIs, objects IRIs, blank
// nodes or literals. It reads any RDF KG (DBpedia, Wikidata, a Freebase
// subset, what stem kg export writes) with names a question can use:
//
//   - Name triples are not edges: the literals of LabelPredicates
//     (rdfs:label, skos:prefLabel, schema:name, foaf:name, Freebase's
//     type.object.name) name their subject, those of AliasPredicates
//     (skos:altLabel, schema:alternateName, common.topic.alias) are its
//     aliases. Only names untagged or tagged @en count, as over SPARQL;
//     a name in another language, or one that is an IRI, is dropped.
//   - An IRI is named by its label (the @en one before an untagged one,
//     the least in code-point order among several), with its LocalName
//     added, "Paris (Paris,_Texas)", when other entities carry the same
//     label; its other labels and aliases are aliases. An IRI with no
//     label is named by its LocalName, percent-decoded, so a KG stem kg
//     export wrote reads back with its names exactly.
//   - A relation is its predicate's LocalName (dbo:birthPlace is
//     birthPlace, ns:people.person.nationality people.person.nationality).
//   - A blank node keeps its "_:label" form, a literal its unescaped
//     lexical form: the language tag and datatype are dropped, because
//     question answering matches answers by their text ("1961-08-04", not
//     "1961-08-04"^^xsd:date).
//
// Terms whose names coincide are one entity (a literal "Paris" and the
// entity labelled Paris; two IRIs ending in the same local name). Comment
// lines (#) and blank lines are skipped. Escapes \t \b \n \r \f \" \' \\
// \uXXXX \UXXXXXXXX are decoded; a UTF-16 surrogate pair written as two
// \u escapes is joined.
func ReadNTriples(r io.Reader, name string) (*Graph, error) {
	return readNTriples(context.Background(), r, name)
}

func readNTriples(ctx context.Context, r io.Reader, name string) (*Graph, error) {
	g, _, err := readRDF(ctx, r, name, ntDialect)
	return g, err
}

// ntParser parses one line at a time into three reusable term buffers.
type ntParser struct {
	line []byte
	pos  int
	term [4][]byte // subject, predicate, object, datatype scratch
	// The object's kind, for readers that name literals apart (Freebase):
	// lit says it was a literal, lang holds its language tag (nil for
	// none) and typed says it had a datatype.
	lit, typed bool
	lang       []byte
}

// parse reads one line. ok is false for blank and comment lines. Errors
// carry the column; the caller fills in the file name and line.
func (p *ntParser) parse(line []byte) (ok bool, err *ParseError) {
	p.line, p.pos = line, 0
	p.skipWS()
	if p.pos == len(line) || line[p.pos] == '#' {
		return false, nil
	}
	for i := range p.term {
		p.term[i] = p.term[i][:0]
	}
	p.lit, p.typed, p.lang = false, false, nil
	// subject
	switch {
	case p.peek('<'):
		err = p.iri(0)
	case p.peek('_'):
		err = p.bnode(0)
	case p.peek('"'):
		return false, p.errf("a literal cannot be a subject")
	default:
		return false, p.errf("expected '<' or '_:' to start the subject")
	}
	if err != nil {
		return false, err
	}
	p.skipWS()
	if !p.peek('<') {
		if p.pos == len(p.line) {
			return false, p.errf("missing predicate and object")
		}
		return false, p.errf("expected '<' to start the predicate (predicates must be IRIs)")
	}
	if err = p.iri(1); err != nil {
		return false, err
	}
	p.skipWS()
	switch {
	case p.peek('<'):
		err = p.iri(2)
	case p.peek('_'):
		err = p.bnode(2)
	case p.peek('"'):
		p.lit = true
		err = p.literal(2)
	case p.pos == len(p.line):
		return false, p.errf("missing object")
	default:
		return false, p.errf("expected '<', '_:' or '\"' to start the object")
	}
	if err != nil {
		return false, err
	}
	p.skipWS()
	if !p.peek('.') {
		if p.pos == len(p.line) {
			return false, p.errf("missing '.' at end of triple")
		}
		return false, p.errf("expected '.' after the object (more than 3 terms?)")
	}
	p.pos++
	p.skipWS()
	if p.pos < len(p.line) && p.line[p.pos] != '#' {
		return false, p.errf("unexpected text after '.'")
	}
	return true, nil
}

func (p *ntParser) peek(c byte) bool { return p.pos < len(p.line) && p.line[p.pos] == c }

func (p *ntParser) skipWS() {
	for p.pos < len(p.line) && (p.line[p.pos] == ' ' || p.line[p.pos] == '\t') {
		p.pos++
	}
}

// errf reports a syntax error at the current column (1-based).
func (p *ntParser) errf(format string, args ...any) *ParseError {
	return &ParseError{Msg: fmt.Sprintf("%v: %s (column %d)", ErrSyntax, fmt.Sprintf(format, args...), p.pos+1), Err: ErrSyntax}
}

// iri reads <...> into term i.
func (p *ntParser) iri(i int) *ParseError {
	start := p.pos
	p.pos++ // '<'
	for p.pos < len(p.line) {
		c := p.line[p.pos]
		switch {
		case c == '>':
			p.pos++
			if len(p.term[i]) == 0 {
				p.pos = start
				return p.errf("empty IRI")
			}
			return nil
		case c == '\\':
			if err := p.escape(i, false); err != nil {
				return err
			}
			continue
		case c <= ' ' || c == '<' || c == '"':
			return p.errf("invalid character %q in IRI", c)
		}
		p.term[i] = append(p.term[i], c)
		p.pos++
	}
	p.pos = start
	return p.errf("unterminated IRI (no closing '>')")
}

// bnode reads _:label into term i, keeping the "_:" prefix so blank nodes
// cannot collide with IRIs or literals.
func (p *ntParser) bnode(i int) *ParseError {
	if p.pos+1 >= len(p.line) || p.line[p.pos+1] != ':' {
		return p.errf("expected ':' after '_' in a blank node")
	}
	start := p.pos
	p.pos += 2
	for p.pos < len(p.line) {
		c := p.line[p.pos]
		if c == ' ' || c == '\t' || c == '<' || c == '"' || c == '#' {
			break
		}
		p.pos++
	}
	// A label may contain '.' but not end with one: "_:b." is "_:b" then '.'.
	for p.pos > start+2 && p.line[p.pos-1] == '.' {
		p.pos--
	}
	if p.pos == start+2 {
		return p.errf("empty blank node label")
	}
	p.term[i] = append(p.term[i], p.line[start:p.pos]...)
	return nil
}

// literal reads "..." with an optional @lang or ^^<datatype> into term i
// (the lexical form only).
func (p *ntParser) literal(i int) *ParseError {
	start := p.pos
	p.pos++ // '"'
	for {
		if p.pos >= len(p.line) {
			p.pos = start
			return p.errf("unterminated literal (no closing '\"')")
		}
		c := p.line[p.pos]
		if c == '"' {
			p.pos++
			break
		}
		if c == '\\' {
			if err := p.escape(i, true); err != nil {
				return err
			}
			continue
		}
		p.term[i] = append(p.term[i], c)
		p.pos++
	}
	switch {
	case p.peek('@'):
		p.pos++
		tagStart := p.pos
		for p.pos < len(p.line) {
			c := p.line[p.pos]
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || (p.pos > tagStart && (c == '-' || '0' <= c && c <= '9')) {
				p.pos++
				continue
			}
			break
		}
		if p.pos == tagStart {
			return p.errf("empty language tag after '@'")
		}
		p.lang = p.line[tagStart:p.pos]
	case p.peek('^'):
		if p.pos+1 >= len(p.line) || p.line[p.pos+1] != '^' {
			return p.errf("expected '^^<datatype>' after literal")
		}
		p.pos += 2
		if !p.peek('<') {
			return p.errf("expected '<' to start the datatype IRI")
		}
		// The datatype is validated but not kept: it goes to the scratch slot.
		p.typed = true
		p.term[3] = p.term[3][:0]
		if err := p.iri(3); err != nil {
			return err
		}
	}
	if len(p.term[i]) == 0 {
		p.pos = start
		return &ParseError{Msg: fmt.Sprintf("empty literal as object (column %d): every entity needs a name", p.pos+1), Err: ErrEmptyField}
	}
	return nil
}

// escape decodes the escape at p.pos into term i. IRIs allow only \u and
// \U; literals also allow the ECHAR set.
func (p *ntParser) escape(i int, literal bool) *ParseError {
	if p.pos+1 >= len(p.line) {
		return p.errf("'\\' at end of line")
	}
	c := p.line[p.pos+1]
	if literal {
		var e byte
		switch c {
		case 't':
			e = '\t'
		case 'b':
			e = '\b'
		case 'n':
			e = '\n'
		case 'r':
			e = '\r'
		case 'f':
			e = '\f'
		case '"', '\'', '\\':
			e = c
		}
		if e != 0 {
			p.term[i] = append(p.term[i], e)
			p.pos += 2
			return nil
		}
	}
	var n int
	switch c {
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return p.errf("invalid escape \\%c", c)
	}
	r, ok := hexRune(p.line, p.pos+2, n)
	if !ok {
		return p.errf("\\%c needs %d hex digits", c, n)
	}
	adv := 2 + n
	if 0xD800 <= r && r < 0xDC00 && n == 4 { // high surrogate: join with a following \uDC00-\uDFFF
		if lo, ok := hexRune(p.line, p.pos+adv+2, 4); ok && p.pos+adv+1 < len(p.line) &&
			p.line[p.pos+adv] == '\\' && p.line[p.pos+adv+1] == 'u' && 0xDC00 <= lo && lo < 0xE000 {
			r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
			adv += 6
		}
	}
	if r < 0 || r > utf8.MaxRune || (0xD800 <= r && r < 0xE000) {
		return p.errf("escape \\%c gives invalid code point U+%04X", c, r)
	}
	p.term[i] = utf8.AppendRune(p.term[i], r)
	p.pos += adv
	return nil
}

// hexRune decodes n hex digits at s[at:].
func hexRune(s []byte, at, n int) (rune, bool) {
	if at < 0 || at+n > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[at : at+n] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
