// Package rogparquettest writes small Parquet files in the layout of RoG's
// HuggingFace release (rmanluo/RoG-webqsp, RoG-cwq), for the tests of the
// packages that read them.
package rogparquettest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// Row has the RoG release's columns; the list tags give the
// LIST-of-LIST-of-string layout HuggingFace (pyarrow) writes. Its answer
// column is a list even where RoG's JSONL has a single string.
type Row struct {
	ID       string     `parquet:"id" json:"id"`
	Question string     `parquet:"question" json:"question"`
	Answer   []string   `parquet:"answer,list" json:"answer"`
	QEntity  []string   `parquet:"q_entity,list" json:"q_entity"`
	AEntity  []string   `parquet:"a_entity,list" json:"a_entity"`
	Graph    [][]string `parquet:"graph,list" json:"graph"`
	Choices  []string   `parquet:"choices,list" json:"choices"` // a column readers ignore
}

// Write writes rows, of Row or of any other Parquet-tagged type, to a file
// called name in a new temporary directory of t and returns its path.
func Write[T any](t testing.TB, name string, rows []T, opts ...parquet.WriterOption) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}
