package rogparquet

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestOptionalLayout reads the layout pyarrow (and so HuggingFace) writes:
// every field optional, including list elements, with null values in it.
func TestOptionalLayout(t *testing.T) {
	str := func() parquet.Node { return parquet.Optional(parquet.String()) }
	strList := func() parquet.Node { return parquet.Optional(parquet.List(str())) }
	schema := parquet.NewSchema("schema", parquet.Group{
		"id":       str(),
		"question": str(),
		"answer":   strList(),
		"q_entity": strList(),
		"a_entity": strList(),
		"graph":    parquet.Optional(parquet.List(strList())),
	})
	p := filepath.Join(t.TempDir(), "hf.parquet")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// The map and struct writers do not produce optional list elements, so
	// the rows are written as leveled values, as pyarrow lays them out.
	// Columns in schema order: a_entity, answer, graph, id, q_entity, question.
	str1 := func(col int, s string) parquet.Value { return parquet.ByteArrayValue([]byte(s)).Level(0, 1, col) }
	list := func(col int, items ...string) []parquet.Value { // nil items: empty list
		if len(items) == 0 {
			return []parquet.Value{parquet.NullValue().Level(0, 1, col)}
		}
		var vs []parquet.Value
		for i, it := range items {
			vs = append(vs, parquet.ByteArrayValue([]byte(it)).Level(min(i, 1), 3, col))
		}
		return vs
	}
	graph := func(triples ...[]string) []parquet.Value {
		if len(triples) == 0 {
			return []parquet.Value{parquet.NullValue().Level(0, 0, 2)} // null graph
		}
		var vs []parquet.Value
		for i, tr := range triples {
			for j, s := range tr {
				rep := 2
				if j == 0 {
					rep = min(i, 1)
				}
				vs = append(vs, parquet.ByteArrayValue([]byte(s)).Level(rep, 5, 2))
			}
		}
		return vs
	}
	row := func(id, q string, ans []string, g ...[]string) parquet.Row {
		var r parquet.Row
		r = append(r, list(0, ans...)...)
		r = append(r, list(1, ans...)...)
		r = append(r, graph(g...)...)
		r = append(r, str1(3, id))
		r = append(r, list(4, "h")...)
		r = append(r, str1(5, q))
		return r
	}
	w := parquet.NewWriter(f, schema)
	emptyGraph := row("c", "empty graph", nil)
	emptyGraph[2] = parquet.NullValue().Level(0, 1, 2) // empty, not null, list
	if _, err := w.WriteRows([]parquet.Row{
		row("a", "q?", []string{"x", "y"}, []string{"h", "r", "x"}, []string{"h", "r", "y"}),
		row("b", "null graph", nil),
		emptyGraph,
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := readAll(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d rows", len(got))
	}
	if g := got[0]; g.ID != "a" || !slices.Equal(g.Answers, []string{"x", "y"}) || g.Graph.NumTriples() != 2 || g.Graph.NumEntities() != 3 {
		t.Errorf("row 0 = %+v, %d triples", g, g.Graph.NumTriples())
	}
	for _, g := range got[1:] {
		if g.Graph == nil || g.Graph.NumTriples() != 0 || len(g.Answers) != 0 {
			t.Errorf("row %q = %+v", g.ID, g)
		}
	}
}
