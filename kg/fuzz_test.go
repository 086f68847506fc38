package kg

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// fuzzText is shared by the text-format fuzzers: any input must either
// fail with an error that names the input, or give a consistent graph that
// survives a snapshot round trip unchanged.
func fuzzText(t *testing.T, read func(io.Reader, string) (*Graph, error), name, data string) {
	g, err := read(strings.NewReader(data), name)
	if err != nil {
		if !strings.HasPrefix(err.Error(), name+":") {
			t.Fatalf("error does not name the input: %v", err)
		}
		return
	}
	checkInvariants(t, g)
	enc := encode(t, g)
	h, err := DecodeSnapshot(enc, "rt.kg")
	if err != nil {
		t.Fatalf("snapshot of a loaded graph does not decode: %v", err)
	}
	graphsEqual(t, g, h)
}

func FuzzReadTSV(f *testing.F) {
	for _, s := range []string{
		"ludwig_ii_of_bavaria\tparents\tmaximilian_ii_of_bavaria\n",
		"a\tr\tb\r\n\r\na\tr\tb\na\ts\tb",
		"\xef\xbb\xbfa\tr\tb\n",
		"a\tr\n", "\t\t\n", "a\tb\tc\td\n", "", "   \n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) { fuzzText(t, ReadTSV, "fuzz.tsv", data) })
}

func FuzzReadPipe(f *testing.F) {
	for _, s := range []string{
		"Kismet|directed_by|William Dieterle\n$|has_tags|bd-r\n",
		"a|r|b\r\na|r|b\n\n|r|b\n", "a|b|c|d", "a|r|\n", "x\ty|r|z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) { fuzzText(t, ReadPipe, "fuzz.txt", data) })
}

func FuzzReadNTriples(f *testing.F) {
	for _, s := range []string{
		"<http://a> <http://p> <http://b> .\n",
		"# c\n_:b0 <http://p> _:x.y.\n",
		`<http://a> <http://p> "x\u00e9\U0001F600\uD83D\uDE00\t"@en-GB .` + "\n",
		`<http://a> <http://p> "1"^^<http://www.w3.org/2001/XMLSchema#int> . # c` + "\n",
		`<http://a\u0041> <http://p> "" .`, "<a> <b> <c> <d> .", `"x" <p> <o> .`, "_: <p> <o> .",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) { fuzzText(t, ReadNTriples, "fuzz.nt", data) })
}

func FuzzReadSnapshot(f *testing.F) {
	good := encode(f, sampleGraph(f))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(encode(f, build(f, "a r a")))
	f.Add([]byte("STEMKG"))
	f.Add([]byte("a|r|b\n"))
	// Seeds that reach each structural check behind the checksum: a graph
	// with shared normalised names, and one with many entities so that the
	// hash indexes have collisions and probe chains.
	f.Add(encode(f, build(f, "Barack_Obama r Honolulu", "barack_obama r x", "BARACK-OBAMA r $", "x s Honolulu")))
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("e%d r%d e%d", i, i%3, (i*7)%40))
	}
	f.Add(encode(f, build(f, many...)))
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeCheck(t, data)
		// Random bytes almost never carry a valid CRC; fix it up so the
		// structural checks behind the checksum get fuzzed too.
		if len(data) >= 10 {
			decodeCheck(t, patch(data, func([]byte) {}))
		}
	})
}

func decodeCheck(t *testing.T, data []byte) {
	g, err := DecodeSnapshot(data, "fuzz.kg")
	if err != nil {
		if !strings.HasPrefix(err.Error(), "fuzz.kg: ") {
			t.Fatalf("error does not name the input: %v", err)
		}
		return
	}
	checkInvariants(t, g)
	// The format is canonical: what decodes re-encodes to the same bytes.
	if enc := encode(t, g); !bytes.Equal(enc, data) {
		t.Fatalf("re-encoding differs: %d bytes vs %d", len(enc), len(data))
	}
}

// FuzzNormEqual checks that the allocation-free comparison used by the
// normalised-name index agrees with Normalize, and that the index finds
// every name by its normalised form.
func FuzzNormEqual(f *testing.F) {
	for _, s := range [][2]string{{"Café_Müller", "café müller"}, {"$", ""}, {"ÉCOLE—Normale", "école normale"}, {"a  b", "a b"}, {"\xff", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, key string) {
		if got, want := normEqual(name, key), Normalize(name) == key; got != want {
			t.Fatalf("normEqual(%q, %q) = %v, Normalize gives %q", name, key, got, Normalize(name))
		}
		if got := normEqual(name, Normalize(name)); !got {
			t.Fatalf("normEqual(%q, Normalize) = false", name)
		}
		if name == "" || key == "" {
			return
		}
		g, err := GraphOf([][3]string{{name, "r", key}})
		if err != nil {
			t.Fatal(err)
		}
		for id := int32(0); int(id) < g.NumEntities(); id++ {
			if n := g.EntityName(id); Normalize(n) != "" && !slices.Contains(g.EntitiesByNorm(n), id) {
				t.Fatalf("EntitiesByNorm(%q) = %v, misses %d", n, g.EntitiesByNorm(n), id)
			}
		}
	})
}
