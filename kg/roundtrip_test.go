package kg

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sameKG fails t unless got and want hold the same KG by name: the same
// entity names, relation names and triples (ids may differ).
func sameKG(t *testing.T, what string, got, want Reader) {
	t.Helper()
	names := func(n int, name func(int32) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = name(int32(i))
		}
		slices.Sort(out)
		return out
	}
	if a, b := names(got.NumEntities(), got.EntityName), names(want.NumEntities(), want.EntityName); !slices.Equal(a, b) {
		t.Errorf("%s: entities differ:\n%s", what, diffSorted(a, b))
	}
	if a, b := names(got.NumRelations(), got.RelationName), names(want.NumRelations(), want.RelationName); !slices.Equal(a, b) {
		t.Errorf("%s: relations differ:\n%s", what, diffSorted(a, b))
	}
	triples := func(g Reader) []string {
		out := make([]string, g.NumTriples())
		for i := range out {
			tr := g.Triple(int32(i))
			out[i] = g.EntityName(tr.Head) + "\x00" + g.RelationName(tr.Rel) + "\x00" + g.EntityName(tr.Tail)
		}
		slices.Sort(out)
		return out
	}
	if a, b := triples(got), triples(want); !slices.Equal(a, b) {
		t.Errorf("%s: triples differ:\n%s", what, diffSorted(a, b))
	}
}

// diffSorted lists, up to ten of each, what sorted a has that b lacks
// (+) and the reverse (-).
func diffSorted(a, b []string) string {
	var out []string
	more := func(sign string, x, y []string) {
		n := 0
		for _, s := range x {
			if _, ok := slices.BinarySearch(y, s); !ok {
				if n++; n <= 10 {
					out = append(out, sign+" "+strconv.Quote(strings.ReplaceAll(s, "\x00", " | ")))
				}
			}
		}
		if n > 10 {
			out = append(out, sign+" ...")
		}
	}
	more("+", a, b)
	more("-", b, a)
	return strings.Join(out, "\n")
}

// A name that is not valid UTF-8 gets no name triple (a literal would
// hold U+FFFD instead of its bytes) and reads back from its IRI, exactly.
func TestWriteNTriplesInvalidUTF8(t *testing.T) {
	g, out, _ := export(t, [][3]string{{"bad\xffbyte", "r", "Zürich"}, {"Zürich", "r\xfe", "bad\xffbyte"}})
	if strings.Contains(out.String(), "\uFFFD") {
		t.Errorf("export holds U+FFFD:\n%s", out.String())
	}
	back, err := ReadNTriples(out, "bad.nt")
	if err != nil {
		t.Fatal(err)
	}
	sameKG(t, "bad.nt", back, g)
}
