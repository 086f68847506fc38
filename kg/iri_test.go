package kg

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/internal/shareddata"
)

func TestEntityIRI(t *testing.T) {
	tests := []struct{ name, want string }{
		{"m.0abc12", FreebaseNS + "m.0abc12"},
		{"people.person.gender", FreebaseNS + "people.person.gender"},
		{"ludwig_ii_of_bavaria", FreebaseNS + "ludwig_ii_of_bavaria"},
		{"William Dieterle", FreebaseNS + "William%20Dieterle"},
		{`say "hi" <now>`, FreebaseNS + "say%20%22hi%22%20%3Cnow%3E"},
		{"AC/DC", FreebaseNS + "AC%2FDC"},
		{"100%", FreebaseNS + "100%25"},
		{"Zürich", FreebaseNS + "Zürich"},
		{"東京", FreebaseNS + "東京"},
		{"a\x80b", FreebaseNS + "a%80b"},
		{".hidden.", FreebaseNS + "%2Ehidden%2E"},
		{"-x-", FreebaseNS + "%2Dx-"},
		{"Star Wars: Episode IV (1977)", FreebaseNS + "Star%20Wars%3A%20Episode%20IV%20%281977%29"},
		{"×", FreebaseNS + "%C3%97"}, // U+00D7 is outside PN_CHARS_BASE
		{"", FreebaseNS},
	}
	for _, tc := range tests {
		got := EntityIRI(FreebaseNS, tc.name)
		if got != tc.want {
			t.Errorf("EntityIRI(%q) = %q, want %q", tc.name, got, tc.want)
		}
		if back, ok := NameFromIRI(FreebaseNS, got); !ok || back != tc.name {
			t.Errorf("NameFromIRI(%q) = %q, %v; want %q", got, back, ok, tc.name)
		}
	}
}

func TestNameFromIRI(t *testing.T) {
	tests := []struct {
		iri, name string
		ok        bool
	}{
		{FreebaseNS + "m.0abc", "m.0abc", true},
		{FreebaseNS + "a%2fb", "a/b", true}, // lower-case hex, as other tools write it
		{FreebaseNS + "a/b", "a/b", true},
		{"http://dbpedia.org/resource/Paris", "", false},
		{FreebaseNS + "bad%2", "", false},
		{FreebaseNS + "bad%zz", "", false},
	}
	for _, tc := range tests {
		name, ok := NameFromIRI(FreebaseNS, tc.iri)
		if name != tc.name || ok != tc.ok {
			t.Errorf("NameFromIRI(%q) = %q, %v; want %q, %v", tc.iri, name, ok, tc.name, tc.ok)
		}
	}
}

func TestIsIRI(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"http://dbpedia.org/resource/Paris", true},
		{"https://example.org/a#b", true},
		{"urn:isbn:0451450523", true},
		{"http://rdf.freebase.com/ns/m.0abc", true},
		{"Mission:Impossible", false},
		{"Star Wars: Episode IV", false},
		{"http://a b", false},
		{"http://a<b>", false},
		{"http://", false},
		{"1http://x", false},
		{"m.0abc", false},
		{"_:b1", false},
		{"http://\xff", false},
	}
	for _, tc := range tests {
		if got := IsIRI(tc.name); got != tc.want {
			t.Errorf("IsIRI(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWriteLiteral(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`a "q" \ b`, `"a \"q\" \\ b"`},
		{"l1\nl2\r\t\b\f", `"l1\nl2\r\t\b\f"`},
		{"bell\x07del\x7f", `"bell\u0007del\u007F"`},
		{"Zürich 東京", `"Zürich 東京"`},
		{"bad\xffbyte", "\"bad\uFFFDbyte\""},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		writeLiteral(w, tc.in)
		w.Flush()
		if b.String() != tc.want {
			t.Errorf("writeLiteral(%q) = %s, want %s", tc.in, b.String(), tc.want)
		}
	}
}

// awkwardKG has names of every kind an export must survive.
var awkwardKG = [][3]string{
	{"Barack Obama", "people.person.spouse", `Michelle "Mich" Obama`},
	{"AC/DC", "music.artist.genre", "Hard rock & roll"},
	{"Zürich", "located in", "東京 <Tokyo>"},
	{"100% real", "r#1", "tab\there"},
	{"http://dbpedia.org/resource/Paris", "http://dbpedia.org/ontology/country", "http://dbpedia.org/resource/France"},
	{"_:b1", "back\\slash", "line\nbreak"},
	{"Mission:Impossible", "film.film.sequel", "-dash."},
}

// TestWriteNTriplesRoundTrip exports a KG with awkward names, reads the
// file back with stem's own N-Triples reader, and checks that the same
// KG comes back: every name exactly (the labels of the name triples,
// percent escapes decoded), every relation by its name. A relation that
// is an IRI itself is written as it is and reads back as its LocalName.
func TestWriteNTriplesRoundTrip(t *testing.T) {
	g, out, n := export(t, awkwardKG)
	if want := g.NumTriples() + g.NumEntities(); n != want || strings.Count(out.String(), "\n") != want {
		t.Errorf("wrote %d lines (%d newlines), want %d triples + names", n, strings.Count(out.String(), "\n"), want)
	}
	back, err := ReadNTriples(bytes.NewReader(out.Bytes()), "export.nt")
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := slices.Clone(awkwardKG)
	for i, tr := range want {
		if IsIRI(tr[1]) {
			want[i][1] = LocalName(tr[1])
		}
	}
	wg, err := GraphOf(want)
	if err != nil {
		t.Fatal(err)
	}
	sameKG(t, "export.nt", back, wg)
	for _, w := range []string{
		"<http://dbpedia.org/resource/Paris> <http://dbpedia.org/ontology/country> <http://dbpedia.org/resource/France> .\n",
		"<" + FreebaseNS + "Barack%20Obama> <" + NamePredicate + "> \"Barack Obama\"@en .\n",
		"<" + FreebaseNS + "_%3Ab1> <" + FreebaseNS + "back%5Cslash> <" + FreebaseNS + "line%0Abreak> .\n",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("export lacks line %q", w)
		}
	}
}

func TestWriteNTriplesErrors(t *testing.T) {
	g, err := ReadPipe(strings.NewReader("a|r|b\n"), "kb.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteNTriples(context.Background(), new(bytes.Buffer), g, "not an iri"); err == nil || !strings.Contains(err.Error(), `"not an iri"`) {
		t.Errorf("bad base: error %v, want one naming the base", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := WriteNTriples(ctx, new(bytes.Buffer), g, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v, want context.Canceled", err)
	}
	out := new(bytes.Buffer)
	if _, err := WriteNTriples(context.Background(), out, g, "http://example.org/kb/"); err != nil || !strings.HasPrefix(out.String(), "<http://example.org/kb/a> <http://example.org/kb/r> <http://example.org/kb/b> .\n") {
		t.Errorf("custom base: %v\n%s", err, out.String())
	}
}

// FuzzEntityIRI: NameFromIRI inverts EntityIRI for every string, and the
// IRI is one N-Triples accepts as it is.
func FuzzEntityIRI(f *testing.F) {
	for _, s := range []string{"", "m.0abc", "a b", "%", "%25", "Zürich", "\xff", ".", "-", "a\"<>b", "東京/京都#x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		iri := EntityIRI(FreebaseNS, name)
		back, ok := NameFromIRI(FreebaseNS, iri)
		if !ok || back != name {
			t.Fatalf("NameFromIRI(EntityIRI(%q)) = %q, %v (IRI %q)", name, back, ok, iri)
		}
		if name != "" && !IsIRI(iri) {
			t.Fatalf("EntityIRI(%q) = %q is not an IRI N-Triples can hold", name, iri)
		}
	})
}

// TestExportPathQuestion exports PathQuestion's 3H KB and reads it back:
// every triple plus one name per entity is written, and the same KG
// comes back.
func TestExportPathQuestion(t *testing.T) {
	path := shareddata.Path(t, "pathquestion/3H-kb.txt")
	g, err := Load(context.Background(), path, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	out, n := exportGraph(t, g)
	if n != 2839+1836 {
		t.Errorf("wrote %d lines, want 2839 triples + 1836 names", n)
	}
	back, err := ReadNTriples(out, "3H.nt")
	if err != nil {
		t.Fatal(err)
	}
	sameKG(t, "3H.nt", back, g)
}

func TestIsFreebaseID(t *testing.T) {
	re := regexp.MustCompile(FreebaseIDs)
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"m.02mjmr", true}, {"g.11b6d2xh5_", true}, {"m.0", true},
		{"m.", false}, {"m", false}, {"x.02mjmr", false}, {"m.02MJMR", false}, {"m.02-mj", false},
		{"Barack Obama", false}, {"m.02mjmr ", false}, {"film.film.starring", false}, {"", false},
	} {
		if got := IsFreebaseID(tc.name); got != tc.want {
			t.Errorf("IsFreebaseID(%q) = %v, want %v", tc.name, got, tc.want)
		}
		if re.MatchString(tc.name) != tc.want {
			t.Errorf("FreebaseIDs matches %q: %v, want %v", tc.name, !tc.want, tc.want)
		}
	}
}

// FuzzIsFreebaseID holds the fast test to the pattern the SPARQL backend
// compiles.
func FuzzIsFreebaseID(f *testing.F) {
	re := regexp.MustCompile(FreebaseIDs)
	for _, s := range []string{"m.0abc", "g.1_", "m.", "M.0", "m.0\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if IsFreebaseID(s) != re.MatchString(s) {
			t.Errorf("IsFreebaseID(%q) = %v, the pattern says %v", s, IsFreebaseID(s), re.MatchString(s))
		}
	})
}

// A CVT, named by its Freebase id in the benchmarks, is exported without
// a name, as Freebase holds it; named entities keep theirs.
func TestWriteNTriplesCVT(t *testing.T) {
	_, out, n := export(t, [][3]string{
		{"Inception", "film.film.starring", "m.0cvt1"},
		{"m.0cvt1", "film.performance.actor", "Leonardo DiCaprio"},
	})
	if n != 2+2 || strings.Contains(out.String(), "\"m.0cvt1\"") || !strings.Contains(out.String(), "<"+FreebaseNS+"Inception> <"+NamePredicate+"> \"Inception\"@en .\n") {
		t.Errorf("wrote %d lines, want 2 triples and the names of the 2 named entities:\n%s", n, out.String())
	}
}

// export builds a KG of triples and writes it as N-Triples under
// FreebaseNS, returning the KG, the text and the lines written.
func export(t *testing.T, triples [][3]string) (*Graph, *bytes.Buffer, int) {
	t.Helper()
	b := NewBuilder()
	for _, tr := range triples {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	out, n := exportGraph(t, g)
	return g, out, n
}

// exportGraph writes g as N-Triples under FreebaseNS.
func exportGraph(t *testing.T, g Reader) (*bytes.Buffer, int) {
	t.Helper()
	var out bytes.Buffer
	n, err := WriteNTriples(context.Background(), &out, g, "")
	if err != nil {
		t.Fatal(err)
	}
	return &out, n
}
