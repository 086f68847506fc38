// Package rogparquet reads the RoG question files (rmanluo/RoG-webqsp,
// RoG-cwq) in the Parquet form HuggingFace serves them, producing the same
// kg.RoGRow values as kg.ReadRoG does for the JSON Lines form.
//
// It is a package of its own, not part of package kg, because the Parquet
// library brings compression codecs (brotli, lz4, zstd) and a geometry
// package into the import graph; programs that only load N-Triples or TSV
// graphs through kg should not link them.
//
// The reader decodes the leaf values' repetition and definition levels
// itself rather than mapping rows onto a Go struct, so any conforming
// LIST layout works: pyarrow's list/element, the older list/item, and
// un-annotated three-level lists alike.
package rogparquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/stem-kgqa/stem/kg"
)

// Magic is the four bytes every Parquet file starts (and ends) with.
const Magic = "PAR1"

// ErrSchema means the file's columns are missing or of the wrong type for a
// RoG row; the message names the column and what was found.
var ErrSchema = errors.New("not a RoG Parquet schema")

// IsParquet reports whether a file is Parquet, judged by its name ending in
// ".parquet" or its first bytes (head, which may be shorter than 4 bytes)
// being the Parquet magic, so a renamed file is still recognised.
func IsParquet(name string, head []byte) bool {
	return strings.EqualFold(filepath.Ext(name), ".parquet") || bytes.HasPrefix(head, []byte(Magic))
}

// ReadFile opens path and streams its rows to fn; see Read.
func ReadFile(ctx context.Context, path string, fn func(kg.RoGRow) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read RoG parquet: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read RoG parquet: %w", err)
	}
	return Read(ctx, f, st.Size(), path, fn)
}

// Read streams a RoG Parquet file of size bytes, calling fn once per row in
// file order. The columns id and question (strings), answer, q_entity and
// a_entity (list<string>, or a plain string taken as a one-element list)
// and graph (list<list<string>>, each inner list a [head, relation, tail]
// triple) are required and checked before any row is read; other columns
// (choices, ...) are ignored. Rows are read a batch at a time within one
// row group, so memory holds the library's pages for one row group plus
// one row's subgraph. Each row's Graph is built as kg.ReadRoG builds it:
// duplicate triples dropped, a row without triples gets an empty Graph.
// RoGRow.Line is the 1-based row number in the file.
//
// Errors name the file; a bad triple names the row's 0-based index in the
// file and its id ("rog.parquet: row 7 (id \"WebQTest-7\"): graph triple
// 2: ..."), wrapping kg.ErrColumns or kg.ErrEmptyField as kg.ReadRoG does. An
// error from fn stops the read and is returned unchanged. A corrupt or
// truncated file is an error, never a panic: a panic inside the Parquet
// library is recovered and returned as an error.
func Read(ctx context.Context, r io.ReaderAt, size int64, name string, fn func(kg.RoGRow) error) error {
	if err := checkFrame(r, size); err != nil {
		return fmt.Errorf("%s: open parquet: %w", name, err)
	}
	var f *parquet.File
	err := guard(func() (err error) {
		f, err = parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: open parquet: %w", name, err)
	}
	cols, err := checkSchema(f.Schema())
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	b := kg.NewBuilder()
	buf := make([]parquet.Row, 16)
	index := 0 // 0-based row index in the file
	for _, rg := range f.RowGroups() {
		if err := readGroup(ctx, rg, name, cols, b, buf, &index, fn); err != nil {
			return err
		}
	}
	return nil
}

// readGroup streams one row group; split out so its Rows is closed on
// every path.
func readGroup(ctx context.Context, rg parquet.RowGroup, name string, cols *layout, b *kg.Builder, buf []parquet.Row, index *int, fn func(kg.RoGRow) error) (err error) {
	var rows parquet.Rows
	if err := guard(func() error { rows = rg.Rows(); return nil }); err != nil {
		return fmt.Errorf("%s: row %d: %w", name, *index, err)
	}
	defer func() {
		if cerr := guard(rows.Close); cerr != nil && err == nil {
			err = fmt.Errorf("%s: %w", name, cerr)
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: row %d: %w", name, *index, err)
		}
		var n int
		rerr := guard(func() (err error) { n, err = rows.ReadRows(buf); return err })
		for _, row := range buf[:n] {
			out, err := cols.decode(row, b)
			if err != nil {
				return fmt.Errorf("%s: row %d (id %q): %w", name, *index, out.ID, err)
			}
			out.Line = *index + 1
			*index++
			if err := fn(out); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("%s: row %d: %w", name, *index, rerr)
		}
	}
}

// checkFrame checks the magic at both ends and that the footer length fits
// in the file before handing it to the library: parquet-go v0.32.0
// allocates the footer's stated length (up to 4 GiB) before comparing it
// with the file size, so a few corrupt bytes could exhaust memory.
func checkFrame(r io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("corrupt parquet file: %d bytes is too short", size)
	}
	var head [4]byte
	var tail [8]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return err
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(head[:]) != Magic || string(tail[4:]) != Magic {
		return fmt.Errorf("corrupt parquet file: no %q magic at start and end (truncated?)", Magic)
	}
	if footer := int64(binary.LittleEndian.Uint32(tail[:4])); footer > size-12 {
		return fmt.Errorf("corrupt parquet file: footer of %d bytes in a %d-byte file", footer, size)
	}
	return nil
}

// guard runs a library call, turning a panic (which some corrupt inputs
// provoke inside the decoder) into an error.
func guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt parquet file: %v", p)
		}
	}()
	return f()
}

// column is where one required field's values sit in a parquet.Row and
// the definition levels that say how much of its nesting is present.
type column struct {
	name  string
	leaf  int // leaf column index, as parquet.Value.Column reports it
	lists int // how many list levels: 0 string, 1 list<string>, 2 list<list<string>>
	// listDef[k] is the definition level at which list level k has at
	// least one element; maxDef is the level of a non-null string.
	listDef [2]int
	maxDef  int
}

// layout holds the six columns a RoG row needs.
type layout struct {
	id, question, answer, qEntity, aEntity, graph column
}

// checkSchema finds the RoG columns and checks their types up front, so a
// wrong file fails with one clear message instead of at some row.
func checkSchema(s *parquet.Schema) (*layout, error) {
	leaves := map[string]int{}
	next := 0
	var nodes = map[string]parquet.Node{}
	for _, f := range s.Fields() {
		leaves[f.Name()] = next
		nodes[f.Name()] = f
		next += countLeaves(f)
	}
	var l layout
	for _, c := range []struct {
		dst        *column
		name       string
		minL, maxL int
		want       string
	}{
		{&l.id, "id", 0, 0, "string"},
		{&l.question, "question", 0, 0, "string"},
		{&l.answer, "answer", 0, 1, "list<string>"},
		{&l.qEntity, "q_entity", 0, 1, "list<string>"},
		{&l.aEntity, "a_entity", 0, 1, "list<string>"},
		{&l.graph, "graph", 2, 2, "list<list<string>> of [head, relation, tail]"},
	} {
		n, ok := nodes[c.name]
		if !ok {
			return nil, fmt.Errorf("%w: no column %q (want %s)", ErrSchema, c.name, c.want)
		}
		col, ok := analyse(n)
		if !ok || col.lists < c.minL || col.lists > c.maxL {
			return nil, fmt.Errorf("%w: column %q is %s, want %s", ErrSchema, c.name, describe(n), c.want)
		}
		col.name, col.leaf = c.name, leaves[c.name]
		*c.dst = col
	}
	return &l, nil
}

func countLeaves(n parquet.Node) int {
	if n.Leaf() {
		return 1
	}
	k := 0
	for _, f := range n.Fields() {
		k += countLeaves(f)
	}
	return k
}

// listElem returns the element node of a three-level list (group of one
// repeated group of one field), the layout the Parquet spec and pyarrow
// use, whatever the inner names are.
func listElem(n parquet.Node) (parquet.Node, bool) {
	if n.Leaf() || n.Repeated() || len(n.Fields()) != 1 {
		return nil, false
	}
	rep := n.Fields()[0]
	if !rep.Repeated() || rep.Leaf() || len(rep.Fields()) != 1 {
		return nil, false
	}
	return rep.Fields()[0], true
}

func isString(n parquet.Node) bool {
	return n.Leaf() && !n.Repeated() && n.Type().Kind() == parquet.ByteArray
}

// analyse reports n's list depth and definition levels if n is a string
// or a (nested) list of strings.
func analyse(n parquet.Node) (column, bool) {
	var c column
	def := 0
	for depth := 0; ; depth++ {
		if n.Optional() {
			def++
		}
		if isString(n) {
			c.maxDef = def
			return c, true
		}
		elem, ok := listElem(n)
		if !ok || depth >= 2 {
			return c, false
		}
		def++ // the repeated group
		c.listDef[c.lists] = def
		c.lists++
		n = elem
	}
}

// describe renders a node's type in the list<...> notation of the errors.
func describe(n parquet.Node) string {
	if n.Leaf() {
		t := n.Type()
		s := strings.ToLower(t.Kind().String())
		if t.Kind() == parquet.ByteArray {
			s = "binary"
			if lt := t.LogicalType(); lt != nil {
				if _, ok := lt.Value.(*format.StringType); ok {
					s = "string"
				}
			}
		}
		if n.Repeated() {
			return "repeated " + s
		}
		return s
	}
	if elem, ok := listElem(n); ok {
		return "list<" + describe(elem) + ">"
	}
	if n.Repeated() {
		return "repeated group"
	}
	return "struct"
}

// decode turns one Parquet row into a RoGRow, its graph built with b. On
// error the returned row still carries the id, for the message.
func (l *layout) decode(row parquet.Row, b *kg.Builder) (kg.RoGRow, error) {
	var out kg.RoGRow
	// A Row holds each leaf column's values contiguously, in column order.
	var triples [][]string
	var err error
	row.Range(func(leaf int, vals []parquet.Value) bool {
		switch leaf {
		case l.id.leaf:
			out.ID = first(l.id.strings(vals))
		case l.question.leaf:
			out.Question = first(l.question.strings(vals))
		case l.answer.leaf:
			out.Answers = l.answer.strings(vals)
		case l.qEntity.leaf:
			out.QEntities = l.qEntity.strings(vals)
		case l.aEntity.leaf:
			out.AEntities = l.aEntity.strings(vals)
		case l.graph.leaf:
			triples = l.graph.nested(vals)
		}
		return true
	})
	for i, t := range triples {
		if len(t) != 3 {
			return out, fmt.Errorf("graph triple %d: %w (got %d columns, want 3)", i+1, kg.ErrColumns, len(t))
		}
		for j, what := range [3]string{"head", "relation", "tail"} {
			if t[j] == "" {
				return out, fmt.Errorf("graph triple %d: %w: empty %s", i+1, kg.ErrEmptyField, what)
			}
		}
		b.Add(t[0], t[1], t[2])
	}
	out.Graph, err = b.BuildAllowEmpty()
	if err != nil {
		return out, fmt.Errorf("graph: %w", err)
	}
	return out, nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// str copies a value's bytes (the library reuses its buffers); a null
// string reads as "", as a JSON null does.
func (c *column) str(v parquet.Value) string {
	if v.DefinitionLevel() < c.maxDef || v.IsNull() {
		return ""
	}
	return string(v.ByteArray())
}

// strings decodes a string or list<string> column's values for one row:
// nil for a null or empty list.
func (c *column) strings(vals []parquet.Value) []string {
	if c.lists == 0 {
		if len(vals) == 0 || vals[0].DefinitionLevel() < c.maxDef {
			return nil
		}
		return []string{c.str(vals[0])}
	}
	var out []string
	for _, v := range vals {
		if v.DefinitionLevel() >= c.listDef[0] {
			out = append(out, c.str(v))
		}
	}
	return out
}

// nested decodes a list<list<string>> column's values for one row.
// Repetition level 0 or 1 starts an outer element (a triple); a definition
// level short of the inner list's means that triple is null or empty.
func (c *column) nested(vals []parquet.Value) [][]string {
	var out [][]string
	for _, v := range vals {
		if v.DefinitionLevel() < c.listDef[0] {
			continue // null or empty graph
		}
		if v.RepetitionLevel() <= 1 || len(out) == 0 {
			out = append(out, nil)
		}
		if v.DefinitionLevel() >= c.listDef[1] {
			out[len(out)-1] = append(out[len(out)-1], c.str(v))
		}
	}
	return out
}
