package benchmark

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg/rogparquet/rogparquettest"
)

// TestRoGFormatParquet converts the JSONL fixture to two Parquet files
// (one named .parquet, one recognised by its magic alone) and checks that
// --format rog reads them as the same questions.
func TestRoGFormatParquet(t *testing.T) {
	f, err := os.Open("testdata/rog_mini.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []rogparquettest.Row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var raw struct {
			ID, Question string
			Answer       json.RawMessage
			QEntity      []string `json:"q_entity"`
			AEntity      []string `json:"a_entity"`
			Graph        [][]string
		}
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		r := rogparquettest.Row{ID: raw.ID, Question: raw.Question, QEntity: raw.QEntity, AEntity: raw.AEntity, Graph: raw.Graph}
		if err := json.Unmarshal(raw.Answer, &r.Answer); err != nil {
			var one string
			if err := json.Unmarshal(raw.Answer, &one); err != nil {
				t.Fatal(err)
			}
			r.Answer = []string{one}
		}
		rows = append(rows, r)
	}
	a := rogparquettest.Write(t, "test-00000-of-00002.parquet", rows[:2])
	b := rogparquettest.Write(t, "test-00001-of-00002.bin", rows[2:])

	ctx := context.Background()
	want, err := LoadRoG(ctx, "testdata/rog_mini.jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Load(ctx, Source{Format: "rog", Questions: []string{a, b}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := d.Questions
	if len(got) != len(want) {
		t.Fatalf("%d questions, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Text != w.Text || !slices.Equal(g.Answers, w.Answers) || !slices.Equal(g.Entities, w.Entities) ||
			g.Hops != w.Hops || g.Graph.NumTriples() != w.Graph.NumTriples() || g.Graph.NumEntities() != w.Graph.NumEntities() {
			t.Errorf("question %d = %+v, want %+v", i, g, w)
		}
	}

	// A bad Parquet file fails naming it; JSONL keeps working alongside.
	bad := filepath.Join(t.TempDir(), "bad.parquet")
	if err := os.WriteFile(bad, []byte("PAR1 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ctx, Source{Format: "rog", Questions: []string{"testdata/rog_mini.jsonl", bad}}, nil); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad parquet: err = %v", err)
	}
}
