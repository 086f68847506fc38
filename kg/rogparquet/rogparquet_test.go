package rogparquet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/rogparquet/rogparquettest"
)

var sample = []rogparquettest.Row{
	{ID: "WebQTest-0", Question: "what does jamaican people speak",
		Answer: []string{"Jamaican English", "Jamaican Creole English Language"}, QEntity: []string{"Jamaica"},
		AEntity: []string{"Jamaican English", "Jamaican Creole English Language"},
		Graph: [][]string{
			{"Jamaica", "location.country.languages_spoken", "Jamaican English"},
			{"Jamaica", "location.country.official_language", "Jamaican English"},
			{"Jamaica", "location.country.languages_spoken", "Jamaican Creole English Language"},
			{"Jamaica", "location.country.languages_spoken", "Jamaican English"}, // duplicate
		}},
	{ID: "WebQTest-1", Question: "what did james k polk do", Answer: []string{"Lawyer"},
		QEntity: []string{"James K. Polk"}, AEntity: []string{"Lawyer"},
		Graph: [][]string{{"James K. Polk", "people.person.profession", "Lawyer"}}, Choices: []string{"x"}},
	{ID: "WebQTest-2", Question: "empty graph", Graph: nil},
}

func readAll(t testing.TB, path string) ([]kg.RoGRow, error) {
	t.Helper()
	var rows []kg.RoGRow
	err := ReadFile(context.Background(), path, func(r kg.RoGRow) error {
		rows = append(rows, r)
		return nil
	})
	return rows, err
}

func TestSchemaIsListOfList(t *testing.T) {
	s := parquet.SchemaOf(rogparquettest.Row{}).String()
	for _, want := range []string{"group graph (LIST)", "group element (LIST)", "binary element (STRING)"} {
		if !strings.Contains(s, want) {
			t.Fatalf("schema lacks %q:\n%s", want, s)
		}
	}
}

func TestReadMatchesJSONL(t *testing.T) {
	path := rogparquettest.Write(t, "rog.parquet", sample)
	got, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	var jsonl bytes.Buffer
	for _, r := range sample {
		b, _ := json.Marshal(r)
		jsonl.Write(append(b, '\n'))
	}
	var want []kg.RoGRow
	if err := kg.ReadRoG(context.Background(), &jsonl, "rog.jsonl", func(r kg.RoGRow) error {
		want = append(want, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Question != w.Question || g.Line != i+1 ||
			!slices.Equal(g.Answers, w.Answers) || !slices.Equal(g.QEntities, w.QEntities) || !slices.Equal(g.AEntities, w.AEntities) {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
		if g.Graph == nil {
			t.Fatalf("row %d: nil graph", i)
		}
		gg, wg := g.Graph, w.Graph
		if gg.NumTriples() != wg.NumTriples() || gg.NumEntities() != wg.NumEntities() ||
			gg.NumRelations() != wg.NumRelations() || gg.Duplicates() != wg.Duplicates() {
			t.Errorf("row %d graph: %d/%d/%d/%d, want %d/%d/%d/%d", i,
				gg.NumTriples(), gg.NumEntities(), gg.NumRelations(), gg.Duplicates(),
				wg.NumTriples(), wg.NumEntities(), wg.NumRelations(), wg.Duplicates())
		}
		for _, tr := range sample[i].Graph {
			h, _ := gg.Entity(tr[0])
			r, _ := gg.Relation(tr[1])
			tl, _ := gg.Entity(tr[2])
			if !gg.HasTriple(h, r, tl) {
				t.Errorf("row %d: triple %q missing", i, tr)
			}
		}
	}
	if d := got[0].Graph.Duplicates(); d != 1 {
		t.Errorf("row 0 duplicates = %d, want 1", d)
	}
	if e := got[2].Graph; e.NumTriples() != 0 || e.NumEntities() != 0 {
		t.Errorf("empty graph row: %d triples", e.NumTriples())
	}
}

func TestSchemaErrors(t *testing.T) {
	type noGraph struct {
		ID       string   `parquet:"id"`
		Question string   `parquet:"question"`
		Answer   []string `parquet:"answer,list"`
		QEntity  []string `parquet:"q_entity,list"`
		AEntity  []string `parquet:"a_entity,list"`
	}
	type flatGraph struct {
		ID       string   `parquet:"id"`
		Question string   `parquet:"question"`
		Answer   []string `parquet:"answer,list"`
		QEntity  []string `parquet:"q_entity,list"`
		AEntity  []string `parquet:"a_entity,list"`
		Graph    []string `parquet:"graph,list"`
	}
	type intID struct {
		ID       int64      `parquet:"id"`
		Question string     `parquet:"question"`
		Answer   []string   `parquet:"answer,list"`
		QEntity  []string   `parquet:"q_entity,list"`
		AEntity  []string   `parquet:"a_entity,list"`
		Graph    [][]string `parquet:"graph,list"`
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing graph", rogparquettest.Write(t, "rog.parquet", []noGraph{{ID: "a"}}), `no column "graph" (want list<list<string>> of [head, relation, tail])`},
		{"flat graph", rogparquettest.Write(t, "rog.parquet", []flatGraph{{ID: "a", Graph: []string{"h", "r", "t"}}}), `column "graph" is list<string>, want list<list<string>> of [head, relation, tail]`},
		{"int id", rogparquettest.Write(t, "rog.parquet", []intID{{ID: 1}}), `column "id" is int64, want string`},
	} {
		_, err := readAll(t, tc.path)
		if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), tc.path+": ") {
			t.Errorf("%s: err = %v, want %q naming the file", tc.name, err, tc.want)
		}
	}
}

func TestBadTriple(t *testing.T) {
	rows := []rogparquettest.Row{sample[1], {ID: "bad-1", Graph: [][]string{{"h", "r", "t"}, {"h", "r"}}}}
	path := rogparquettest.Write(t, "rog.parquet", rows)
	n := 0
	err := ReadFile(context.Background(), path, func(kg.RoGRow) error { n++; return nil })
	want := path + `: row 1 (id "bad-1"): graph triple 2: wrong number of columns (got 2 columns, want 3)`
	if !errors.Is(err, kg.ErrColumns) || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if n != 1 {
		t.Errorf("%d rows before the error, want 1", n)
	}
	path = rogparquettest.Write(t, "rog.parquet", []rogparquettest.Row{{ID: "e", Graph: [][]string{{"h", "", "t"}}}})
	if _, err := readAll(t, path); !errors.Is(err, kg.ErrEmptyField) || !strings.Contains(err.Error(), `row 0 (id "e")`) {
		t.Errorf("empty relation: err = %v", err)
	}
}

func TestRowGroupsInOrder(t *testing.T) {
	var rows []rogparquettest.Row
	for i := range 25 {
		id := "q" + string(rune('a'+i))
		rows = append(rows, rogparquettest.Row{ID: id, Question: id + "?", Answer: []string{id},
			Graph: [][]string{{id, "r", "t"}, {"t", "r2", id}}})
	}
	path := rogparquettest.Write(t, "rog.parquet", rows, parquet.MaxRowsPerRowGroup(4))
	f, _ := os.Open(path)
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.RowGroups()); n < 2 {
		t.Fatalf("%d row groups, want several", n)
	}
	f.Close()
	got, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows, want %d", len(got), len(rows))
	}
	for i, r := range got {
		if r.ID != rows[i].ID || r.Line != i+1 || r.Graph.NumTriples() != 2 || !slices.Equal(r.Answers, rows[i].Answer) {
			t.Errorf("row %d = %q line %d, %d triples", i, r.ID, r.Line, r.Graph.NumTriples())
		}
	}
}

func TestTruncated(t *testing.T) {
	path := rogparquettest.Write(t, "rog.parquet", sample)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 3, 4, len(data) / 2, len(data) - 9, len(data) - 1} {
		err := Read(context.Background(), bytes.NewReader(data[:n]), int64(n), "cut.parquet", func(kg.RoGRow) error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), "cut.parquet: ") {
			t.Errorf("truncated to %d bytes: err = %v", n, err)
		}
	}
}

func TestCallbackErrorAndIsParquet(t *testing.T) {
	path := rogparquettest.Write(t, "rog.parquet", sample)
	stop := errors.New("stop")
	if err := ReadFile(context.Background(), path, func(kg.RoGRow) error { return stop }); err != stop {
		t.Errorf("err = %v, want fn's error unchanged", err)
	}
	if !IsParquet("x.PARQUET", nil) || !IsParquet("x.bin", []byte("PAR1...")) || IsParquet("x.jsonl", []byte(`{"id"`)) {
		t.Error("IsParquet")
	}
}

// FuzzRead checks that arbitrary bytes give an error, not a panic. It does
// not bound memory: parquet-go v0.32.0 allocates lengths read from corrupt
// page headers before checking them, so some inputs allocate gigabytes
// (see checkFrame for the footer case, which Read does guard).
func FuzzRead(f *testing.F) {
	data, err := os.ReadFile(rogparquettest.Write(f, "rog.parquet", sample[:2]))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = Read(context.Background(), bytes.NewReader(b), int64(len(b)), "fuzz.parquet", func(kg.RoGRow) error { return nil })
	})
}
