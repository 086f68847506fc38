package kg

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fbLine writes one line of Google's Freebase dump: four tab-separated
// fields, the last ".".
func fbLine(s, p, o string) string {
	ns := func(x string) string {
		if strings.HasPrefix(x, "<") || strings.HasPrefix(x, "\"") {
			return x
		}
		return "<" + FreebaseNS + x + ">"
	}
	return ns(s) + "\t" + ns(p) + "\t" + ns(o) + "\t.\n"
}

// freebaseFixture is a small dump in the download's exact format, with a
// line of every kind the filter keeps or drops.
func freebaseFixture() string {
	var b strings.Builder
	w := func(s, p, o string) { b.WriteString(fbLine(s, p, o)) }
	// Kept edges.
	w("m.0film", "film.film.starring", "m.0perf1")
	w("m.0perf1", "film.performance.actor", "m.0leo")
	w("m.0perf1", "film.performance.character", "m.0cobb")
	w("m.0film", "film.film.directed_by", "m.0nolan")
	w("m.0nolan", "people.person.place_of_birth", "m.0london")
	w("m.0paris1", "location.location.containedby", "m.0france")
	w("m.0paris2", "location.location.containedby", "m.0texas")
	w("m.0film", "film.film.initial_release_date", `"2010-07-08"^^<http://www.w3.org/2001/XMLSchema#date>`)
	w("m.0film", "film.film.tagline", `"Your mind is the scene of the crime"@en`)
	w("m.0film", "common.topic.notable_for", "g.11b6d2xh5_")
	w("m.0film", "type.object.type", "film.film")
	w("m.0leo", "people.person.height_meters", `"1.83"`)
	w("m.0leo", "base.x.nickname", `"London"`) // a literal spelled as an entity's name: one entity
	w("m.0leo", "base.x.code", `"m.0perf1"`)   // a literal spelled as a CVT's id: one entity too
	w("g.11b6d2xh5_", "common.notable_for.display", `"Film"`)
	w("m.0film", "film.film.starring", "m.0perf1") // a duplicate line
	// Names and aliases.
	w("m.0film", "type.object.name", `"Inception"@en`)
	w("m.0leo", "type.object.name", `"Leonardo DiCaprio"@en`)
	w("m.0leo", "type.object.name", `"Leo"`) // untagged: the @en one wins
	w("m.0cobb", "type.object.name", `"Dom Cobb"@en`)
	w("m.0nolan", "type.object.name", `"Christopher Nolan"@en`)
	w("m.0nolan", "common.topic.alias", `"Chris Nolan"@en`)
	w("m.0london", "type.object.name", `"London"@en`)
	w("m.0paris1", "type.object.name", `"Paris"@en`)
	w("m.0paris2", "type.object.name", `"Paris"@en`)
	w("m.0paris2", "type.object.name", `"Paris"@en`) // repeated: still two carriers, not three
	w("m.0france", "type.object.name", `"France"@en`)
	w("m.0france", "type.object.name", `"Frankreich"@de`) // dropped
	w("m.0texas", "type.object.name", `"Texas"`)          // untagged only
	w("m.0noedge", "type.object.name", `"Lonely"@en`)     // no edge: no entity
	// Dropped lines.
	w("m.0film", "type.object.key", `"/wikipedia/en/Inception"`)
	w("m.0film", "film.film.tagline", `"Origen"@es`)
	w("m.0film", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", "film.film")
	w("m.0film", "<http://www.w3.org/2000/01/rdf-schema#label>", `"Inception"@en`)
	w("film.film", "type.object.name", `"Film"@en`) // subject not a machine id
	w("m.0film", "film.film.website", "<http://inception.example/>")
	b.WriteString("@prefix ns: <http://rdf.freebase.com/ns/>.\n")
	b.WriteString("<" + FreebaseNS + "m.0film>\t<" + FreebaseNS + "film.film.genre>\t<" + FreebaseNS + "m.0scifi>\n")   // no full stop
	b.WriteString("<" + FreebaseNS + "m.0film>\t<" + FreebaseNS + "film.film.genre> <" + FreebaseNS + "m.0scifi>\t.\n") // three fields
	b.WriteString("\n")
	return b.String()
}

func TestFreebaseFilter(t *testing.T) {
	g, st, err := readFreebase(context.Background(), strings.NewReader(freebaseFixture()), "fb")
	if err != nil {
		t.Fatal(err)
	}
	if st.Names != 12 || st.Aliases != 1 || st.Edges != 16 || st.Unparsable != 0 {
		t.Errorf("stats %+v, want 12 names, 1 alias, 16 edges", st)
	}
	var got []string
	for i := range g.NumTriples() {
		tr := g.Triple(int32(i))
		got = append(got, g.EntityName(tr.Head)+" | "+g.RelationName(tr.Rel)+" | "+g.EntityName(tr.Tail))
	}
	want := []string{
		"Inception | film.film.starring | m.0perf1",
		"m.0perf1 | film.performance.actor | Leonardo DiCaprio",
		"m.0perf1 | film.performance.character | Dom Cobb",
		"Inception | film.film.directed_by | Christopher Nolan",
		"Christopher Nolan | people.person.place_of_birth | London",
		"Paris (m.0paris1) | location.location.containedby | France",
		"Paris (m.0paris2) | location.location.containedby | Texas",
		"Inception | film.film.initial_release_date | 2010-07-08",
		"Inception | film.film.tagline | Your mind is the scene of the crime",
		"Inception | common.topic.notable_for | g.11b6d2xh5_",
		"Inception | type.object.type | film.film",
		"Leonardo DiCaprio | people.person.height_meters | 1.83",
		"Leonardo DiCaprio | base.x.nickname | London",
		"Leonardo DiCaprio | base.x.code | m.0perf1",
		"g.11b6d2xh5_ | common.notable_for.display | Film",
	}
	if !slices.Equal(got, want) {
		t.Errorf("triples:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if g.Duplicates() != 1 {
		t.Errorf("%d duplicates, want 1", g.Duplicates())
	}
	if _, ok := g.Entity("Lonely"); ok {
		t.Error("a name without an edge became an entity")
	}
	// Aliases, as the SPARQL backend finds entities: a named entity by its
	// machine id, namesakes by their plain name, other names and
	// common.topic.alias values; a snapshot keeps them.
	dec, err := DecodeSnapshot(encode(t, g), "fb.kg")
	if err != nil {
		t.Fatal(err)
	}
	for _, kg := range []*Graph{g, dec} {
		id := func(name string) int32 {
			i, ok := kg.ents.lookup(name)
			if !ok {
				t.Fatalf("no entity %q", name)
			}
			return i
		}
		paris := []int32{id("Paris (m.0paris1)"), id("Paris (m.0paris2)")}
		for _, tc := range []struct {
			name string
			want int32 // -1: none
		}{
			{"m.0nolan", id("Christopher Nolan")},
			{"Chris Nolan", id("Christopher Nolan")},
			{"Leo", id("Leonardo DiCaprio")},
			{"m.0perf1", id("m.0perf1")},
			{"Paris", -1}, // two entities carry it
			{"m.0noedge", -1},
		} {
			got, ok := kg.Entity(tc.name)
			if tc.want < 0 && ok || tc.want >= 0 && (!ok || got != tc.want) {
				t.Errorf("Entity(%q) = %d, %v; want %d", tc.name, got, ok, tc.want)
			}
		}
		if got := kg.EntitiesByNorm("paris"); !slices.Equal(got, paris) {
			t.Errorf("EntitiesByNorm(paris) = %v, want %v", got, paris)
		}
		if got := kg.EntitiesByNorm("chris-nolan"); !slices.Equal(got, []int32{id("Christopher Nolan")}) {
			t.Errorf("EntitiesByNorm(chris-nolan) = %v", got)
		}
	}
}

// The filter is FilterEnglishTriplets.py's three regular expressions
// (lookahead written as RE2 can: (?!/). is [^/]).
var (
	fbRegexpEN  = regexp.MustCompile(`^<` + regexp.QuoteMeta(FreebaseNS) + `[mg]\.[^>]+>\t<` + regexp.QuoteMeta(FreebaseNS) + `[^>]+>\t['"][^/].*['"](?:@en)?\t\.$`)
	fbRegexpNS  = regexp.MustCompile(`^<` + regexp.QuoteMeta(FreebaseNS) + `[mg]\.[^>]+>\t<` + regexp.QuoteMeta(FreebaseNS) + `[^>]+>\t<` + regexp.QuoteMeta(FreebaseNS) + `[^>]+>\t.$`)
	fbRegexpXSD = regexp.MustCompile(`^<` + regexp.QuoteMeta(FreebaseNS) + `[mg]\.[^>]+>\t<` + regexp.QuoteMeta(FreebaseNS) + `[^>]+>\t.+<http://www\.w3\.org/2001/XMLSchema#[\w\x80-\x{10FFFF}]+>\t.$`)
)

func scriptKeeps(line string) bool {
	if line == "" || line[0] == '@' || line[len(line)-1] != '.' {
		return false
	}
	parts := strings.Split(line, "\t")
	if len(parts) != 4 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" || strings.TrimSpace(parts[2]) == "" {
		return false
	}
	return fbRegexpEN.MatchString(line) || fbRegexpNS.MatchString(line) || fbRegexpXSD.MatchString(line)
}

func TestFreebaseKeepMatchesScript(t *testing.T) {
	for _, line := range strings.Split(freebaseFixture(), "\n") {
		line = strings.TrimRight(line, " \t\r")
		if got, want := freebaseKeep([]byte(line)), scriptKeeps(line); got != want {
			t.Errorf("freebaseKeep(%q) = %v, the script says %v", line, got, want)
		}
	}
}

func FuzzFreebaseKeep(f *testing.F) {
	for _, line := range strings.Split(freebaseFixture(), "\n") {
		f.Add(line)
	}
	f.Add("<" + FreebaseNS + "m.0a>\t<" + FreebaseNS + "p>\t\"'\"\t.")
	f.Add("<" + FreebaseNS + "m.0a>\t<" + FreebaseNS + "p>\t\"x\"@en\"@en\t.")
	f.Add("<" + FreebaseNS + "g.0a>\t<" + FreebaseNS + "p>\tx<http://www.w3.org/2001/XMLSchema#int><http://www.w3.org/2001/XMLSchema#int>\t.")
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.TrimRight(line, " \t\r\n\v\f")
		if strings.ContainsAny(line, "\n") {
			return
		}
		if got, want := freebaseKeep([]byte(line)), scriptKeeps(line); got != want {
			t.Errorf("freebaseKeep(%q) = %v, the script says %v", line, got, want)
		}
	})
}

// BuildSnapshot gives a Freebase dump, gzipped as downloaded, the graph
// readFreebase gives in memory, byte for byte, whatever the memory bound.
func TestBuildSnapshotFreebase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// The fixture, then enough generated entities to spill at a tiny bound:
	// namesakes and CVTs spread over many runs.
	var b strings.Builder
	b.WriteString(freebaseFixture())
	for i := 0; i < 3000; i++ {
		b.WriteString(fbLine(fmt.Sprintf("m.0e%d", i), "people.person.nationality", fmt.Sprintf("m.0c%d", i%7)))
		b.WriteString(fbLine(fmt.Sprintf("m.0e%d", i), "people.person.spouse_s", fmt.Sprintf("m.0cvt%d", i)))
		b.WriteString(fbLine(fmt.Sprintf("m.0cvt%d", i), "people.marriage.spouse", fmt.Sprintf("m.0e%d", (i*7)%3000)))
		b.WriteString(fbLine(fmt.Sprintf("m.0e%d", i), "type.object.name", fmt.Sprintf(`"Person %d"@en`, i%2500)))
		if i%3 == 0 {
			b.WriteString(fbLine(fmt.Sprintf("m.0e%d", i), "base.x.label", fmt.Sprintf(`"Person %d"`, i)))
		}
	}
	for i := 0; i < 7; i++ {
		b.WriteString(fbLine(fmt.Sprintf("m.0c%d", i), "type.object.name", fmt.Sprintf(`"Country %d"@en`, i)))
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(b.String()))
	zw.Close()
	in := filepath.Join(dir, "freebase-rdf-latest.gz")
	if err := os.WriteFile(in, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Load(ctx, in, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := g.Entity("Person 100 (m.0e2600)"); !ok || g.Degree(id) == 0 {
		t.Fatalf("namesake not named with its id (found %v)", ok)
	}
	want := encode(t, g)
	for _, mem := range []int64{64 << 20, 32 << 10} {
		out := filepath.Join(dir, fmt.Sprintf("fb-%d.stemkg", mem))
		st, err := buildSnapshot(ctx, in, out, BuildOptions{MaxMemory: mem})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(out)
		if !bytes.Equal(got, want) {
			t.Fatalf("memory %d: snapshot differs from the in-memory one (%d vs %d bytes, first difference at %d)", mem, len(got), len(want), firstDiff(got, want))
		}
		if st.Freebase == nil || st.Freebase.Edges != 16+3000*3+1000 {
			t.Errorf("memory %d: Freebase stats %+v", mem, st.Freebase)
		}
	}
}
