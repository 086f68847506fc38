package kg

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// roundTripNames are entity names of every kind a KG form must carry:
// spaces, punctuation an IRI escapes, quotes, percent signs (one already
// spelled as an escape), scripts other than Latin, an IRI, a blank-node
// spelling, CVT ids and namesakes after normalisation.
var roundTripNames = []string{
	"Paris", "Paris, Texas", "New York", "new-york", "NEW YORK", "Zürich", "Ångström", "東京", "Москва", "O'Brien",
	`Michelle "Mich" Obama`, "100% real", "a%2Fb", "AC/DC", "r#1", "x <y> {z}", `back\slash`, "Mission:Impossible",
	"-dash.", ".dot", "1999", "_:b1", "http://example.org/Zed", "urn:isbn:0451450523", "m.0cvt1", "g.11b6d2xh5_",
	"😀 emoji", "a|pipe", "Jr.", "José", "Jose", "∑ sum",
}

// roundTripRelations are relation names of every kind (no IRI among
// them: a relation that is an IRI is written as it is and reads back from
// N-Triples as its local name).
var roundTripRelations = []string{
	"people.person.nationality", "film.film.directed_by", "located in", "r#1", `back\slash`, "100%", "a/b",
	"Ünïcode rel", "directed_by", "type.object.type", "x:y",
}

// genKG draws a small KG from r: entities from roundTripNames, relations
// from roundTripRelations, with self-loops and parallel edges, and no
// duplicate triple.
func genKG(r *rand.Rand) [][3]string {
	ents := slices.Clone(roundTripNames)
	r.Shuffle(len(ents), func(i, j int) { ents[i], ents[j] = ents[j], ents[i] })
	ents = ents[:4+r.IntN(len(ents)-4)]
	rels := roundTripRelations[:1+r.IntN(len(roundTripRelations))]
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	seen := map[[3]string]bool{}
	var ts [][3]string
	add := func(h, rel, t string) {
		if x := [3]string{h, rel, t}; !seen[x] {
			seen[x] = true
			ts = append(ts, x)
		}
	}
	for range 1 + r.IntN(3*len(ents)) {
		add(pick(ents), pick(rels), pick(ents))
	}
	for range r.IntN(3) { // self-loops
		e := pick(ents)
		add(e, pick(rels), e)
	}
	for range r.IntN(3) { // parallel edges
		t := ts[r.IntN(len(ts))]
		add(t[0], pick(rels), t[2])
	}
	return ts
}

// kgForms writes g in every form stem writes and reads each back as stem
// reads it: TSV, N-Triples, gzipped N-Triples, Freebase's shape (read as
// FormatFreebase), a snapshot, and the snapshots kg build makes of the
// TSV, the gzipped N-Triples and the Freebase-shaped file (with
// its names spilled when mem is tiny; mem 0 builds none). It returns each
// form's name and graph.
func kgForms(t *testing.T, g *Graph, mem int64) map[string]*Graph {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	out := map[string]*Graph{}
	// The writers WriteFile calls, into memory: atomicfile's fsyncs would
	// cost more than the rest.
	var tsv, nt, fb, snap, gz bytes.Buffer
	if _, err := WriteTSV(ctx, &tsv, g); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFreebase(ctx, &fb, g); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteNTriples(ctx, &nt, g, ""); err != nil {
		t.Fatal(err)
	}
	if err := EncodeSnapshot(&snap, g); err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(&gz)
	zw.Write(nt.Bytes())
	zw.Close()
	for name, data := range map[string][]byte{"kg.tsv": tsv.Bytes(), "kg.nt": nt.Bytes(), "kg.nt.gz": gz.Bytes(), "freebase.nt": fb.Bytes(), "kg.stemkg": snap.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"kg.tsv", "kg.nt", "kg.nt.gz", "freebase.nt", "kg.stemkg"} {
		back, err := Load(ctx, filepath.Join(dir, name), FormatAuto)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		out[name] = back
	}
	for _, name := range []string{"kg.tsv", "kg.nt.gz", "freebase.nt"} {
		if mem == 0 {
			break
		}
		snap := filepath.Join(dir, name+".stemkg")
		if _, err := buildSnapshot(ctx, filepath.Join(dir, name), snap, BuildOptions{MaxMemory: mem}); err != nil {
			t.Fatalf("kg build %s: %v", name, err)
		}
		back, err := ReadSnapshot(snap)
		if err != nil {
			t.Fatal(err)
		}
		out["kg build "+name] = back
	}
	return out
}

// sameForms fails t unless every form of g is g: the same names,
// relations and triples, and the same snapshot byte for byte (the same
// ids, so the same answers to any question). Read from Freebase's shape,
// the graph has its machine ids as aliases besides: it must then have
// the same ids, names, triples and adjacency.
func sameForms(t *testing.T, g *Graph, forms map[string]*Graph) {
	t.Helper()
	want := encode(t, g)
	for name, back := range forms {
		sameKG(t, name, back, g)
		if strings.Contains(name, "freebase") {
			graphsEqual(t, g, back)
			continue
		}
		if !bytes.Equal(encode(t, back), want) {
			t.Errorf("%s: the snapshot of the graph read back differs from the original's", name)
		}
	}
}

// Every KG form round-trips: generated KGs with awkward names, self-loops
// and parallel edges, written through every writer and read back through
// every reader, come back the same.
func TestKGFormsRoundTrip(t *testing.T) {
	n := 24
	if testing.Short() {
		n = 6
	}
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, 42))
		ts := genKG(r)
		g, err := GraphOf(ts)
		if err != nil {
			t.Fatal(err)
		}
		// kg build (a quarter of a second of scratch files per build) on
		// a third of the cases, half of them with names spilled.
		var mem int64
		switch seed % 6 {
		case 0:
			mem = 4 << 10
		case 3:
			mem = 64 << 20
		}
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { sameForms(t, g, kgForms(t, g, mem)) })
	}
}

// WriteFreebase writes the dump's shape, which FilterEnglishTriplets
// keeps line for line, and refuses a name the dump cannot carry.
func TestWriteFreebase(t *testing.T) {
	g, err := GraphOf([][3]string{{"Inception", "film.film.starring", "m.0cvt1"}, {"m.0cvt1", "film.performance.actor", "m.0s0"}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	n, err := WriteFreebase(context.Background(), &b, g)
	if err != nil {
		t.Fatal(err)
	}
	ns := FreebaseNS
	want := "<" + ns + "m.0s0_>\t<" + ns + "film.film.starring>\t<" + ns + "m.0cvt1>\t.\n" +
		"<" + ns + "m.0cvt1>\t<" + ns + "film.performance.actor>\t<" + ns + "m.0s0>\t.\n" +
		"<" + ns + "m.0s0_>\t<" + NamePredicate + ">\t\"Inception\"@en\t.\n"
	if b.String() != want || n != 3 {
		t.Errorf("wrote %d lines:\n%s\nwant:\n%s", n, b.String(), want)
	}
	for _, line := range strings.SplitAfter(b.String(), "\n")[:3] {
		if !freebaseKeep([]byte(strings.TrimRight(line, "\n"))) {
			t.Errorf("the filter drops %q", line)
		}
	}
	for _, bad := range [][3]string{{"/wikipedia/en/X", "r", "b"}, {"a", "r", "  "}, {"a", "type.object.name", "b"}, {"a\xff", "r", "b"}} {
		g, err := GraphOf([][3]string{bad})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := WriteFreebase(context.Background(), new(bytes.Buffer), g); err == nil || !strings.Contains(err.Error(), "write Freebase") {
			t.Errorf("WriteFreebase of %q: %v, want it refused", bad, err)
		}
	}
}
