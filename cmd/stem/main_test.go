package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
)

// run executes the CLI in-process and returns what it printed and the error
// main would print.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errw bytes.Buffer
	err = newApp(&out, &errw).RunContext(context.Background(), append([]string{"stem"}, args...))
	return out.String(), errw.String(), err
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const tinyVectors = "testdata/tiny.glove"

func TestDemo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"default entity", nil, []string{
			"entities 279 relations 26 triples 447",
			"Q: who directed inception ?", "Christopher_Nolan because Inception -> directed_by -> Christopher_Nolan",
			"Q: in which country was the director of inception born ? ", "United_Kingdom because Inception -> directed_by -> Christopher_Nolan -> place_of_birth -> London",
			"neighbourhood of \"Christopher_Nolan\", found by name",
			"<- directed_by <- Inception, Oppenheimer, The_Dark_Knight",
			"-> place_of_birth -> London",
		}},
		{"normalised name", []string{"--entity", "christopher nolan"}, []string{
			"found by name", "Christopher_Nolan (7 out, 7 in)",
		}},
		{"misspelt name resolved by the encoder", []string{"--entity", "Christopher Nolen"}, []string{
			"is not an entity name; nearest entities:", "found by the encoder", "Christopher_Nolan (7 out, 7 in)",
		}},
		{"hub with limit", []string{"--entity", demo.Hub, "--limit", "2"}, []string{
			"United_States (3 out, 61 in)", "more)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, append([]string{"demo", "--shared=false", "--vectors", tinyVectors}, tc.args...)...)
			if err != nil {
				t.Fatalf("demo: %v", err)
			}
			flat := strings.Join(strings.Fields(out), " ")
			for _, w := range tc.want {
				if !strings.Contains(flat, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestKGBuildStatsNeighbours(t *testing.T) {
	in := writeFile(t, "kb.txt", "a|r1|b\na|r2|b\nb|r1|c\na|r1|b\n")
	snap := filepath.Join(t.TempDir(), "kb.kg")
	out, _, err := run(t, "kg", "build", "--out", snap, in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "3 entities, 2 relations, 3 triples (1 duplicate lines dropped)") {
		t.Errorf("build output: %s", out)
	}
	out, _, err = run(t, "kg", "stats", snap)
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, w := range []string{"entities 3 relations 2 triples 3 duplicate lines dropped 1", "degree max / p50 / p99 3 / 2 / 3", "top relations: 2 r1 1 r2"} {
		if !strings.Contains(flat, w) {
			t.Errorf("stats lacks %q:\n%s", w, out)
		}
	}
	out, _, err = run(t, "kg", "neighbours", snap, "B")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"b  (1 out, 2 in)", "-> r1 -> c", "<- r1 <- a", "<- r2 <- a"} {
		if !strings.Contains(out, w) {
			t.Errorf("neighbours lacks %q:\n%s", w, out)
		}
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, "good.txt", "a\tr\tb\n")
	snap := filepath.Join(dir, "good.kg")
	if _, _, err := run(t, "kg", "build", "--out", snap, good); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(snap)
	truncated := filepath.Join(dir, "trunc.kg")
	os.WriteFile(truncated, data[:len(data)/2], 0o644)
	badVec := writeFile(t, "bad.glove", "a 0.1 0.2 0.3\nb 0.1 0.2\n")

	tests := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"missing file", []string{"kg", "stats", filepath.Join(dir, "nope.txt")}, "nope.txt"},
		{"wrong column count", []string{"kg", "stats", writeFile(t, "cols.txt", "a\tr\tb\nc\td\n")}, "cols.txt:2:"},
		{"empty KG", []string{"kg", "stats", writeFile(t, "empty.txt", "\n\n")}, "empty.txt"},
		{"unknown format", []string{"kg", "stats", "--format", "csv", good}, "csv"},
		{"truncated snapshot", []string{"kg", "stats", truncated}, "trunc.kg"},
		{"vector file with wrong dimension", []string{"demo", "--vectors", badVec}, "bad.glove:2"},
		{"missing vector file", []string{"demo", "--vectors", filepath.Join(dir, "none.vec")}, "none.vec"},
		{"no argument", []string{"kg", "stats"}, "want one FILE or URL argument"},
		{"unknown entity", []string{"kg", "neighbours", good, "zzz"}, `entity "zzz" not found`},
		{"onnx without model dir", []string{"encode", "--encoder", "onnx", "x"}, "--model-dir"},
		{"unknown encoder", []string{"encode", "--encoder", "bert", "x"}, `--encoder "bert"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, tc.args...)
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not mention %q", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

func TestBuildFailureWritesNothing(t *testing.T) {
	bad := writeFile(t, "bad.txt", "a\tr\tb\nbroken line\n")
	out := filepath.Join(t.TempDir(), "out.kg")
	if _, _, err := run(t, "kg", "build", "--out", out, bad); err == nil {
		t.Fatal("want error")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output file exists after a failed build (err %v)", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 0 {
		t.Errorf("left files behind: %v", entries)
	}
}

func TestEncodeAndSearch(t *testing.T) {
	cacheDir := t.TempDir()
	t.Setenv(wordvec.CacheEnv, cacheDir)
	out, _, err := run(t, "encode", "--vectors", tinyVectors, "directed", "director", "born")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "3 texts") || !strings.Contains(out, "[0] directed") {
		t.Errorf("encode output:\n%s", out)
	}
	kb := writeFile(t, "kb.txt", "Inception\tdirected_by\tChristopher_Nolan\nChristopher_Nolan\tplace_of_birth\tLondon\n")
	out, _, err = run(t, "search", "--vectors", tinyVectors, "--kg", kb, "--k", "1", "christopher nolan", "londn")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasSuffix(lines[1], "Christopher_Nolan") || !strings.HasSuffix(lines[3], "London") {
		t.Errorf("search output:\n%s", out)
	}
	if beside, _ := filepath.Glob(kb + ".*"); len(beside) != 0 {
		t.Errorf("files written beside the KG: %v", beside)
	}
	if cached, _ := filepath.Glob(filepath.Join(cacheDir, "entities", "*.vx")); len(cached) != 1 {
		t.Errorf("entity index not cached in the cache directory: %v", cached)
	}
}

func TestKGExport(t *testing.T) {
	in := writeFile(t, "kb.txt", "AC/DC|genre|hard rock\nAC/DC|formed in|\"Sydney\"\n")
	out, _, err := run(t, "kg", "export", in)
	if err != nil {
		t.Fatal(err)
	}
	want := `<http://rdf.freebase.com/ns/AC%2FDC> <http://rdf.freebase.com/ns/genre> <http://rdf.freebase.com/ns/hard%20rock> .
<http://rdf.freebase.com/ns/AC%2FDC> <http://rdf.freebase.com/ns/formed%20in> <http://rdf.freebase.com/ns/%22Sydney%22> .
<http://rdf.freebase.com/ns/AC%2FDC> <http://rdf.freebase.com/ns/type.object.name> "AC/DC"@en .
<http://rdf.freebase.com/ns/hard%20rock> <http://rdf.freebase.com/ns/type.object.name> "hard rock"@en .
<http://rdf.freebase.com/ns/%22Sydney%22> <http://rdf.freebase.com/ns/type.object.name> "\"Sydney\""@en .
`
	if out != want {
		t.Errorf("export to stdout:\n%s\nwant:\n%s", out, want)
	}

	nt := filepath.Join(t.TempDir(), "kb.nt")
	out, _, err = run(t, "kg", "export", "--base-iri", "http://example.org/", "--out", nt, in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "5 lines (2 triples, 3 entity names)") {
		t.Errorf("export --out printed %q", out)
	}
	// The file is N-Triples stem reads back: 2 triples between 3
	// entities, the names being labels, not edges.
	out, _, err = run(t, "kg", "stats", nt)
	if err != nil {
		t.Fatal(err)
	}
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "entities 3 relations 2 triples 2") {
		t.Errorf("stats of the export:\n%s", out)
	}
	// In Freebase's shape, read back as a Freebase dump and built into a
	// snapshot: the same KG.
	fb := filepath.Join(t.TempDir(), "fb.nt")
	if _, _, err := run(t, "kg", "export", "--format", "freebase", "--out", fb, in); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(t.TempDir(), "fb.stemkg")
	if _, _, err := run(t, "kg", "build", "--format", "freebase", "--out", snap, fb); err != nil {
		t.Fatal(err)
	}
	back, err := kg.Load(context.Background(), snap, kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := back.Entity("AC/DC"); !ok || back.NumTriples() != 2 || back.NumEntities() != 3 || len(back.Out(h)) != 2 {
		t.Errorf("the Freebase-shaped export read back: %d triples, %d entities, AC/DC %v", back.NumTriples(), back.NumEntities(), ok)
	}

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"exists", []string{"kg", "export", "--out", nt, in}, "--force"},
		{"out is the input", []string{"kg", "export", "--force", "--out", in, in}, "is also an input"},
		{"unknown output format", []string{"kg", "export", "--format", "turtle", in}, `--format "turtle"`},
		{"bad base", []string{"kg", "export", "--base-iri", "ns:", in}, `--base-iri "ns:"`},
		{"bad input format", []string{"kg", "export", "--in-format", "csv", in}, "csv"},
		{"no KG", []string{"kg", "export"}, "want one KG argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
