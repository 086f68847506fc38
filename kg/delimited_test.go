package kg

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// allTriples renders a graph's triples in id order as "h|r|t".
func allTriples(g *Graph) []string {
	out := make([]string, g.NumTriples())
	for i := range out {
		tr := g.Triple(int32(i))
		out[i] = g.EntityName(tr.Head) + "|" + g.RelationName(tr.Rel) + "|" + g.EntityName(tr.Tail)
	}
	return out
}

func TestReadTSVAndPipe(t *testing.T) {
	type reader func(io.Reader, string) (*Graph, error)
	tests := []struct {
		name    string
		read    reader
		in      string
		want    []string // triples, "h|r|t"
		dups    int
		wantErr error
		errMsg  string // substring of the error, including file:line
	}{
		{name: "tsv basic", read: ReadTSV,
			in:   "ludwig_ii_of_bavaria\tparents\tmaximilian_ii_of_bavaria\nlothair_of_france\tparents\tgerberga_of_saxony\n",
			want: []string{"ludwig_ii_of_bavaria|parents|maximilian_ii_of_bavaria", "lothair_of_france|parents|gerberga_of_saxony"}},
		{name: "tsv CRLF, blank lines, no final newline", read: ReadTSV,
			in:   "a\tr\tb\r\n\r\n\n   \nb\tr\tc",
			want: []string{"a|r|b", "b|r|c"}},
		{name: "tsv BOM", read: ReadTSV, in: "\xef\xbb\xbfa\tr\tb\n", want: []string{"a|r|b"}},
		{name: "tsv names keep inner spaces and pipes, lose padding", read: ReadTSV,
			in: " a b \tr|s\tc\n", want: []string{"a b|r|s|c"}},
		{name: "tsv duplicates dropped", read: ReadTSV,
			in: "a\tr\tb\na\tr\tb\na\ts\tb\n", want: []string{"a|r|b", "a|s|b"}, dups: 1},
		{name: "pipe basic", read: ReadPipe,
			in:   "Kismet|directed_by|William Dieterle\nKismet|starred_actors|Marlene Dietrich\n",
			want: []string{"Kismet|directed_by|William Dieterle", "Kismet|starred_actors|Marlene Dietrich"}},
		{name: "pipe tabs in names", read: ReadPipe, in: "a\tb|r|c\r\n", want: []string{"a\tb|r|c"}},
		{name: "pipe whitespace-only line skipped", read: ReadPipe, in: "a|r|b\n \t \n", want: []string{"a|r|b"}},

		{name: "tsv two columns", read: ReadTSV, in: "a\tr\tb\na\tr\n",
			wantErr: ErrColumns, errMsg: "kb.txt:2: wrong number of columns (got 2 columns, want 3"},
		{name: "tsv four columns", read: ReadTSV, in: "a\tr\tb\tc\n",
			wantErr: ErrColumns, errMsg: "kb.txt:1: wrong number of columns (got 4 columns, want 3"},
		{name: "tsv pipe file", read: ReadTSV, in: "a|r|b\n",
			wantErr: ErrColumns, errMsg: "kb.txt:1: wrong number of columns (got 1 columns, want 3, separated by tabs)"},
		{name: "pipe one column", read: ReadPipe, in: "\n\nabc\n",
			wantErr: ErrColumns, errMsg: "kb.txt:3: wrong number of columns (got 1 columns, want 3, separated by '|')"},
		{name: "pipe four columns", read: ReadPipe, in: "a|b|c|d\n",
			wantErr: ErrColumns, errMsg: "kb.txt:1: wrong number of columns (got 4 columns"},
		{name: "empty head", read: ReadPipe, in: "|r|b\n", wantErr: ErrEmptyField, errMsg: "kb.txt:1: empty head"},
		{name: "empty relation", read: ReadTSV, in: "a\tr\tb\na\t\tb\n", wantErr: ErrEmptyField, errMsg: "kb.txt:2: empty relation"},
		{name: "empty tail CRLF", read: ReadPipe, in: "a|r|\r\n", wantErr: ErrEmptyField, errMsg: "kb.txt:1: empty tail"},
		{name: "tsv tabs-only line", read: ReadTSV, in: "\t\t\n", wantErr: ErrEmptyField, errMsg: "kb.txt:1: empty head"},
		{name: "empty file", read: ReadTSV, in: "", wantErr: ErrEmpty, errMsg: "kb.txt: knowledge graph has no triples"},
		{name: "only blank lines", read: ReadPipe, in: "\n\r\n  \n", wantErr: ErrEmpty, errMsg: "kb.txt: knowledge graph has no triples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := tt.read(strings.NewReader(tt.in), "kb.txt")
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
				t.Errorf("triples = %q, want %q", got, tt.want)
			}
			if g.Duplicates() != tt.dups {
				t.Errorf("Duplicates = %d, want %d", g.Duplicates(), tt.dups)
			}
			checkInvariants(t, g)
		})
	}
}

func TestParseErrorShape(t *testing.T) {
	_, err := ReadPipe(strings.NewReader("a|b|c\nx|y\n"), "data/kb.txt")
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %T %v, want *ParseError", err, err)
	}
	if pe.Name != "data/kb.txt" || pe.Line != 2 || pe.Err != ErrColumns {
		t.Errorf("ParseError = %+v", pe)
	}
	if want := "data/kb.txt:2: wrong number of columns (got 2 columns, want 3, separated by '|')"; err.Error() != want {
		t.Errorf("message = %q, want %q", err, want)
	}
}

func TestLongLines(t *testing.T) {
	long := strings.Repeat("x", 600<<10) // longer than the 256 KiB read buffer
	g, err := ReadTSV(strings.NewReader("a\tr\tb\n"+long+"\tr\t"+long+"y\nc\tr\td\n"), "long.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if g.NumTriples() != 3 || g.EntityName(2) != long || g.EntityName(3) != long+"y" {
		t.Errorf("long line not read intact: %d triples", g.NumTriples())
	}
	_, err = ReadTSV(strings.NewReader("a\tr\tb\n"+long+"\n"), "long.tsv")
	if !errors.Is(err, ErrColumns) || !strings.Contains(err.Error(), "long.tsv:2:") {
		t.Errorf("err = %v, want a column error on line 2", err)
	}
}

func TestTSVTrimsPadding(t *testing.T) {
	g, err := ReadTSV(strings.NewReader("A \tr\t B\nNew York  \t located in \tUS\n"), "pad.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"A", "B", "New York", "US"} {
		if _, ok := g.Entity(name); !ok {
			t.Errorf("entity %q missing (padding kept?)", name)
		}
	}
	if _, ok := g.Relation("located in"); !ok {
		t.Error(`relation "located in" missing: inner spaces must stay, outer ones go`)
	}
	if _, err := ReadTSV(strings.NewReader("A\t \tB\n"), "blank.tsv"); !errors.Is(err, ErrEmptyField) {
		t.Errorf("a relation of spaces: err = %v, want ErrEmptyField", err)
	}
	// Pipe files keep their bytes: MetaQA names may hold any spaces.
	p, err := ReadPipe(strings.NewReader("A |r| B\n"), "kb.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Entity("A "); !ok {
		t.Error("pipe fields were trimmed")
	}
}
