package kg

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

func TestMaskRelations(t *testing.T) {
	// FNV-1a 64 of "children" is 0x6b725d068c3cf2b2.
	if got := MaskRelation("children"); got != "r8c3cf2b2" {
		t.Fatalf("MaskRelation(children) = %q, want r8c3cf2b2", got)
	}
	tests := []struct {
		name, in string
	}{
		{"two relations", "a\tchildren\tb\nb\tspouse\tc\na\tspouse\td\n"},
		{"one triple", "x y\tplace_of_birth\tz\n"},
	}
	triples := func(g *Graph, rel func(string) string) []string {
		var out []string
		for i := range int32(g.NumTriples()) {
			tr := g.Triple(i)
			out = append(out, g.EntityName(tr.Head)+"|"+rel(g.RelationName(tr.Rel))+"|"+g.EntityName(tr.Tail))
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ReadTSV(strings.NewReader(tc.in), "in.tsv")
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			n, err := WriteMaskedTSV(context.Background(), &buf, g)
			if err != nil || n != g.NumTriples() {
				t.Fatalf("WriteMaskedTSV = %d, %v; want %d triples", n, err, g.NumTriples())
			}
			m, err := ReadTSV(&buf, "masked.tsv")
			if err != nil {
				t.Fatal(err)
			}
			want := triples(g, MaskRelation)
			if got := triples(m, func(s string) string { return s }); !slices.Equal(got, want) {
				t.Errorf("masked triples %q, want %q", got, want)
			}
			if m.NumRelations() != g.NumRelations() {
				t.Errorf("%d masked relations, want %d", m.NumRelations(), g.NumRelations())
			}
		})
	}
}

func TestWriteTSVRoundTrip(t *testing.T) {
	in := "a\tchildren\tb\nb\tspouse\tc\nx y\tplace of birth\tz\n"
	g, err := ReadTSV(strings.NewReader(in), "in.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if n, err := WriteTSV(context.Background(), &buf, g); err != nil || n != 3 {
		t.Fatalf("WriteTSV = %d, %v; want 3 triples", n, err)
	}
	back, err := ReadTSV(&buf, "out.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if back.NumTriples() != 3 || back.NumEntities() != g.NumEntities() || back.NumRelations() != 2+1 {
		t.Fatalf("read back %d triples, %d entities, %d relations", back.NumTriples(), back.NumEntities(), back.NumRelations())
	}
	bad, err := GraphOf([][3]string{{"a\tb", "r", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteTSV(context.Background(), &buf, bad); err == nil || !strings.Contains(err.Error(), "tab or a newline") {
		t.Errorf("WriteTSV of a name with a tab: %v", err)
	}
}

func TestWriteFile(t *testing.T) {
	ctx := context.Background()
	g, err := ReadTSV(strings.NewReader("Anna\tchildren\tBo\nBo\tplace_of_birth\tOslo\n"), "in.tsv")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// N-Triples name every entity in a triple of its own (NamePredicate),
	// which reads back as its name, not as an edge.
	for name, triples := range map[string]int{"g.tsv": 2, "g.TXT": 2, "g.nt": 2, "g.stemkg": 2} {
		path := dir + "/" + name
		if err := WriteFile(ctx, path, g, FreebaseNS); err != nil {
			t.Fatalf("WriteFile(%s): %v", name, err)
		}
		back, err := Load(ctx, path, FormatAuto)
		if err != nil {
			t.Fatalf("Load(%s): %v", name, err)
		}
		if back.NumTriples() != triples || len(Lookup(back, "Oslo")) != 1 {
			t.Errorf("%s read back: %d triples, Oslo %v; want %d and one Oslo", name, back.NumTriples(), Lookup(back, "Oslo"), triples)
		}
	}
	if err := WriteFile(ctx, dir+"/g.json", g, FreebaseNS); err == nil || !strings.Contains(err.Error(), "the extension says") {
		t.Errorf("WriteFile(g.json) = %v, want the extension refused", err)
	}
}
