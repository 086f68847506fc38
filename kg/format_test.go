package kg

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	// The dataset words pq and metaqa (stem eval --format) name their KG
	// files' formats wherever a KG format is asked for: `stem serve
	// --format metaqa` failed with "unknown KG format".
	for in, want := range map[string]Format{"": FormatAuto, "auto": FormatAuto, "TSV": FormatTSV, "pipe": FormatPipe,
		" nt ": FormatNTriples, "rog": FormatRoG, "Snapshot": FormatSnapshot, "metaqa": FormatPipe, "pq": FormatTSV,
		"freebase": FormatFreebase} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"csv":         `unknown KG format "csv" (valid: auto, tsv, pipe, nt, freebase, rog, snapshot; or the dataset words pq and metaqa, for their KG files' formats)`,
		"webqsp-mini": `unknown KG format "webqsp-mini": that is a dataset format (stem eval --format), whose questions bring their own graphs; a KG file's format is one of auto, tsv, pipe, nt, freebase, rog, snapshot (or pq, metaqa: their KG files' formats)`,
	} {
		if _, err := ParseFormat(in); !errors.Is(err, ErrUnknownFormat) || err.Error() != want {
			t.Errorf("ParseFormat(%s) err = %v", in, err)
		}
	}
}

// An output's name that says another format than the one written is
// refused; a name that says none is taken.
func TestCheckOutputName(t *testing.T) {
	for _, c := range []struct {
		path   string
		writes Format
		ok     bool
	}{
		{"kg.nt", FormatNTriples, true}, {"kg.NT", FormatTSV, false}, {"kg.tsv", FormatTSV, true}, {"kg.txt", FormatTSV, true},
		{"kg", FormatSnapshot, true}, {"kg.kg", FormatSnapshot, true}, {"kg.nt", FormatSnapshot, false}, {"kg.tsv", FormatPipe, false},
		{"kg.stemkg", FormatNTriples, false}, {"rows.jsonl", FormatTSV, false},
	} {
		err := CheckOutputName("--out", c.path, c.writes)
		if (err == nil) != c.ok {
			t.Errorf("%s written as %s: %v", c.path, c.writes, err)
		}
	}
}

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadAuto(t *testing.T) {
	ctx := context.Background()
	want := []string{"a|r|b", "b|s|c"}
	snap := filepath.Join(t.TempDir(), "g.bin")
	if err := WriteSnapshot(snap, build(t, "a r b", "b s c")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		format     Format
		want       []string
	}{
		{"tsv", write(t, "kb.txt", "a\tr\tb\nb\ts\tc\n"), FormatAuto, want},
		{"pipe", write(t, "kb.txt", "\n\na|r|b\nb|s|c\n"), FormatAuto, want},
		{"explicit pipe", write(t, "kb.txt", "a|r|b\nb|s|c\n"), FormatPipe, want},
		{"nt by extension", write(t, "kb.nt", "# c\n<a> <r> <b> .\n<b> <s> <c> .\n"), FormatAuto, want},
		{"nt by content", write(t, "kb.txt", "# comment\n<a> <r> <b> .\n<b>\t<s>\t<c> .\n"), FormatAuto, want},
		{"snapshot by magic", snap, FormatAuto, want},
		{"snapshot explicit", snap, FormatSnapshot, want},
		{"explicit tsv", write(t, "x.nt", "a\tr\tb\nb\ts\tc\n"), FormatTSV, want},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Load(ctx, tt.path, tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if got := allTriples(g); !slices.Equal(got, tt.want) {
				t.Errorf("triples = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "missing.txt")
	badLine := write(t, "kb.txt", "a|r|b\na|r\n")
	tests := []struct {
		name    string
		path    string
		format  Format
		wantErr error
		errMsg  string
	}{
		{"missing file", missing, FormatAuto, os.ErrNotExist, missing},
		{"missing snapshot", missing, FormatSnapshot, os.ErrNotExist, missing},
		{"unknown format", badLine, Format("csv"), ErrUnknownFormat, `unknown KG format "csv" (valid: auto`},
		{"rog refused", badLine, FormatRoG, nil, "read it with kg.ReadRoG"},
		{"jsonl refused", write(t, "rows.jsonl", `{"id":1}`), FormatAuto, nil, "kg.ReadRoG"},
		{"json content refused", write(t, "rows.txt", `{"id":1}`), FormatAuto, nil, "kg.ReadRoG"},
		{"undetectable", write(t, "kb.txt", "just words\n"), FormatAuto, ErrUnknownFormat, `cannot detect the format from the first line "just words"`},
		{"empty file", write(t, "kb.txt", "\n\n"), FormatAuto, ErrEmpty, "kb.txt: knowledge graph has no triples"},
		{"bad line names file and line", badLine, FormatAuto, ErrColumns, badLine + ":2: wrong number of columns (got 2 columns, want 3"},
		{"text as snapshot", badLine, FormatSnapshot, ErrCorrupt, "not a KG snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(ctx, tt.path, tt.format)
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) || !strings.Contains(err.Error(), tt.errMsg) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.wantErr, tt.errMsg)
			}
		})
	}
}

func TestLoadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := write(t, "kb.txt", strings.Repeat("a|r|b\n", 2*ctxCheckEvery))
	if _, err := Load(ctx, path, FormatAuto); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// The encoder writes what WriteNTriples writes for the same triples.
func TestNTriplesEncoder(t *testing.T) {
	g := build(t, "a r b", "b s m.0cvt1", "m.0cvt1 s AC/DC", "a r a")
	var want bytes.Buffer
	if _, err := WriteNTriples(context.Background(), &want, g, ""); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	e, err := NewNTriplesEncoder(&got, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.NumTriples() {
		tr := g.Triple(int32(i))
		e.Add(g.EntityName(tr.Head), g.RelationName(tr.Rel), g.EntityName(tr.Tail))
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := func(b bytes.Buffer) []string {
		l := strings.Split(strings.TrimSpace(b.String()), "\n")
		slices.Sort(l)
		return l
	}
	if a, b := lines(got), lines(want); !slices.Equal(a, b) {
		t.Errorf("encoder:\n%s\nWriteNTriples:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if e.Lines() != len(lines(want)) {
		t.Errorf("Lines() = %d, want %d", e.Lines(), len(lines(want)))
	}
}
