package benchmark

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stem-kgqa/stem/kg"
)

func TestUnion(t *testing.T) {
	g1, err := kg.GraphOf([][3]string{{"a", "r", "b"}, {"b", "s", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := kg.GraphOf([][3]string{{"b", "s", "c"}, {"c", "r", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := Union(context.Background(), []Question{{Graph: g1}, {}, {Graph: g2}})
	if err != nil {
		t.Fatal(err)
	}
	if u.NumTriples() != 3 || u.NumEntities() != 3 || u.NumRelations() != 2 {
		t.Fatalf("union: %d triples, %d entities, %d relations; want 3, 3, 2", u.NumTriples(), u.NumEntities(), u.NumRelations())
	}
	for _, tr := range [][3]string{{"a", "r", "b"}, {"b", "s", "c"}, {"c", "r", "a"}} {
		h, _ := u.Entity(tr[0])
		r, _ := u.Relation(tr[1])
		tl, _ := u.Entity(tr[2])
		if !u.HasTriple(h, r, tl) {
			t.Errorf("union lacks %v", tr)
		}
	}
}

// TestLoadOwnGraphsOverSharedKG: an own-graph format given --kg asks every
// question of that KG: the questions lose their own graphs.
func TestLoadOwnGraphsOverSharedKG(t *testing.T) {
	ctx := context.Background()
	src := Source{Format: "rog", Questions: []string{"testdata/rog_mini.jsonl"}}
	own, err := Load(ctx, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if own.Graph != nil || own.Questions[0].Graph == nil {
		t.Fatalf("own graphs: shared %v, question 0's graph %v", own.Graph, own.Questions[0].Graph)
	}
	u, err := Union(ctx, own.Questions)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "u.tsv")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kg.WriteTSV(ctx, f, u); err != nil {
		t.Fatal(err)
	}
	f.Close()
	src.KG = p
	shared, err := Load(ctx, src, kg.FileBackends().Opener(kg.OpenOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if shared.Graph == nil || shared.Graph.NumTriples() != u.NumTriples() {
		t.Fatalf("shared KG not loaded from %s", p)
	}
	for _, q := range shared.Questions {
		if q.Graph != nil {
			t.Errorf("%s keeps its own graph over a shared KG", q.ID)
		}
	}
}
