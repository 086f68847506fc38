package kg

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestReadNTriples(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr error
		errMsg  string
	}{
		{name: "IRIs", in: "<http://dbpedia.org/resource/Barack_Obama> <http://dbpedia.org/ontology/birthPlace> <http://dbpedia.org/resource/Honolulu> .\n",
			want: []string{"Barack_Obama|birthPlace|Honolulu"}},
		{name: "comments, blank lines, CRLF, tabs, no space before dot",
			in:   "# a comment\n\n\t<http://a>\t<http://p>\t<http://b>.\r\n   # indented comment\n<http://a> <http://p> <http://c> . # trailing comment\n",
			want: []string{"a|p|b", "a|p|c"}},
		{name: "blank nodes", in: "_:b0 <http://p> _:b1 .\n_:b1 <http://p> _:x.y.\n",
			want: []string{"_:b0|p|_:b1", "_:b1|p|_:x.y"}},
		{name: "literals: lang and datatype dropped",
			in: `<http://a> <http://name> "Barack Obama"@en .` + "\n" +
				`<http://a> <http://born> "1961-08-04"^^<http://www.w3.org/2001/XMLSchema#date> .` + "\n" +
				`<http://a> <http://name> "Барак Обама"@ru-Cyrl-1 .` + "\n",
			want: []string{"a|name|Barack Obama", "a|born|1961-08-04", "a|name|Барак Обама"}},
		{name: "escapes",
			in: `<http://a> <http://p> "tab\there \"q\" back\\slash \u00E9 \U0001F600 \uD83D\uDE00 nl\n cr\r \b\f\'" .` + "\n" +
				`<http://a\u00E9> <http://p> <http://x> .` + "\n",
			want: []string{"a|p|tab\there \"q\" back\\slash é 😀 😀 nl\n cr\r \b\f'", "aé|p|x"}},
		{name: "literal with # and dot inside", in: `<http://a> <http://p> "a # b ." .` + "\n",
			want: []string{"a|p|a # b ."}},
		{name: "same text as IRI and literal are one entity",
			in:   "<http://a> <http://p> \"x\" .\n<http://b> <http://p> \"x\"@en .\n",
			want: []string{"a|p|x", "b|p|x"}},

		{name: "labels name IRIs, local names the rest, name triples are no edges",
			in: "<http://dbpedia.org/resource/Barack_Obama> <http://dbpedia.org/ontology/birthPlace> <http://dbpedia.org/resource/Honolulu> .\n" +
				"<http://dbpedia.org/resource/Barack_Obama> <http://www.w3.org/2000/01/rdf-schema#label> \"Barack Obama\"@en .\n" +
				"<http://dbpedia.org/resource/Barack_Obama> <http://www.w3.org/2000/01/rdf-schema#label> \"Барак Обама\"@ru .\n" +
				"<http://dbpedia.org/resource/Barack_Obama> <http://www.w3.org/2004/02/skos/core#altLabel> \"Obama\"@en .\n" +
				"<http://dbpedia.org/resource/Honolulu> <http://schema.org/name> <http://dbpedia.org/resource/Name> .\n",
			want: []string{"Barack Obama|birthPlace|Honolulu"}},
		{name: "percent escapes and fragments",
			in:   "<http://example.org/kb/AC%2FDC> <http://example.org/onto#genre> <urn:x:Hard%20rock> .\n<http://example.org/> <http://example.org/onto#genre> <http://example.org/kb/bad%zz> .\n",
			want: []string{"AC/DC|genre|Hard rock", "http://example.org/|genre|bad%zz"}},
		{name: "literal subject", in: `"x" <http://p> <http://b> .`, wantErr: ErrSyntax, errMsg: "kb.nt:1: syntax error: a literal cannot be a subject (column 1)"},
		{name: "unterminated IRI", in: "<http://a> <http://p <http://b> .\n", wantErr: ErrSyntax, errMsg: "kb.nt:1: syntax error: invalid character ' ' in IRI (column 21)"},
		{name: "unterminated IRI at end", in: "<http://a> <http://p> <http://b", wantErr: ErrSyntax, errMsg: "kb.nt:1: syntax error: unterminated IRI (no closing '>') (column 23)"},
		{name: "missing dot", in: "<http://a> <http://p> <http://b>\n", wantErr: ErrSyntax, errMsg: "kb.nt:1: syntax error: missing '.' at end of triple"},
		{name: "four terms", in: "\n<http://a> <http://p> <http://b> <http://c> .\n", wantErr: ErrSyntax, errMsg: "kb.nt:2: syntax error: expected '.' after the object (more than 3 terms?) (column 34)"},
		{name: "two terms", in: "<http://a> <http://p> .\n", wantErr: ErrSyntax, errMsg: "kb.nt:1: syntax error: expected '<', '_:' or '\"' to start the object"},
		{name: "one term", in: "<http://a>\n", wantErr: ErrSyntax, errMsg: "kb.nt:1: syntax error: missing predicate and object"},
		{name: "blank node predicate", in: "<http://a> _:p <http://b> .\n", wantErr: ErrSyntax, errMsg: "predicates must be IRIs"},
		{name: "text after dot", in: "<http://a> <http://p> <http://b> . x\n", wantErr: ErrSyntax, errMsg: "kb.nt:1: syntax error: unexpected text after '.'"},
		{name: "unterminated literal", in: `<http://a> <http://p> "abc .`, wantErr: ErrSyntax, errMsg: "unterminated literal"},
		{name: "bad escape", in: `<http://a> <http://p> "a\qb" .`, wantErr: ErrSyntax, errMsg: `invalid escape \q`},
		{name: "short \\u", in: `<http://a> <http://p> "a\u00G9" .`, wantErr: ErrSyntax, errMsg: `\u needs 4 hex digits`},
		{name: "lone surrogate", in: `<http://a> <http://p> "\uD800" .`, wantErr: ErrSyntax, errMsg: "invalid code point U+D800"},
		{name: "code point too large", in: `<http://a> <http://p> "\U00110000" .`, wantErr: ErrSyntax, errMsg: "invalid code point U+110000"},
		{name: "escape ECHAR in IRI", in: `<http://a\n> <http://p> <http://b> .`, wantErr: ErrSyntax, errMsg: `invalid escape \n`},
		{name: "empty IRI", in: "<> <http://p> <http://b> .", wantErr: ErrSyntax, errMsg: "empty IRI (column 1)"},
		{name: "empty bnode", in: "_: <http://p> <http://b> .", wantErr: ErrSyntax, errMsg: "empty blank node label"},
		{name: "bad bnode", in: "_x <http://p> <http://b> .", wantErr: ErrSyntax, errMsg: "expected ':' after '_'"},
		{name: "empty lang", in: `<http://a> <http://p> "x"@ .`, wantErr: ErrSyntax, errMsg: "empty language tag"},
		{name: "bad datatype", in: `<http://a> <http://p> "x"^^xsd:int .`, wantErr: ErrSyntax, errMsg: "expected '<' to start the datatype IRI"},
		{name: "single caret", in: `<http://a> <http://p> "x"^<http://t> .`, wantErr: ErrSyntax, errMsg: "expected '^^<datatype>'"},
		{name: "empty literal", in: "<http://a> <http://p> <http://b> .\n<http://a> <http://p> \"\"@en .\n", wantErr: ErrEmptyField, errMsg: "kb.nt:2: empty literal as object (column 23)"},
		{name: "only comments", in: "# nothing\n\n", wantErr: ErrEmpty, errMsg: "kb.nt: knowledge graph has no triples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ReadNTriples(strings.NewReader(tt.in), "kb.nt")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errMsg) {
					t.Fatalf("err = %q, want it to contain %q", err, tt.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := allTriples(g); !slices.Equal(got, tt.want) {
				t.Errorf("triples =\n%q\nwant\n%q", got, tt.want)
			}
			checkInvariants(t, g)
		})
	}
}

func TestNTriplesText(t *testing.T) {
	g, err := ReadNTriples(strings.NewReader("<http://dbpedia.org/resource/Barack_Obama> <http://dbpedia.org/ontology/birthPlace> <http://dbpedia.org/resource/Honolulu> .\n"), "x.nt")
	if err != nil {
		t.Fatal(err)
	}
	if got := g.EntityText(0); got != "barack obama" {
		t.Errorf("EntityText = %q", got)
	}
	if got := g.RelationText(0); got != "birth place" {
		t.Errorf("RelationText = %q", got)
	}
}
