package benchmark

import (
	"context"
	"testing"

	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
)

func TestLoadPathQuestionReal(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		file, kb string
		rows     int
	}{
		{"pathquestion/splits/PQ-2H.test.txt", "pathquestion/2H-kb.txt", 159},
		{"pathquestion/splits/PQ-3H.test.txt", "pathquestion/3H-kb.txt", 472},
		{"pathquestion/splits/PQL-2H.test.txt", "pathquestion/PQL2-KB.txt", 106},
		{"pathquestion/PQ-2H.txt", "pathquestion/2H-kb.txt", 1908},
		{"pathquestion/PQ-3H.txt", "pathquestion/3H-kb.txt", 5198},
		{"pathquestion/PQL-2H.txt", "pathquestion/PQL2-KB.txt", 1594},
	} {
		qs, err := LoadPathQuestion(ctx, shareddata.Path(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) != c.rows {
			t.Errorf("%s: %d questions, want %d", c.file, len(qs), c.rows)
		}
		g, err := kg.Load(ctx, shareddata.Path(t, c.kb), kg.FormatAuto)
		if err != nil {
			t.Fatal(err)
		}
		// Every gold-path triple must be a KB triple, and every question a
		// path of the file's hop count, or the parse is wrong.
		missing := 0
		for _, q := range qs {
			for _, tr := range q.Gold[0].Triples() {
				h, ok1 := g.Entity(tr[0])
				r, ok2 := g.Relation(tr[1])
				tl, ok3 := g.Entity(tr[2])
				if !ok1 || !ok2 || !ok3 || !g.HasTriple(h, r, tl) {
					missing++
				}
			}
		}
		t.Logf("%s: %d questions, %d gold triples missing from %s", c.file, len(qs), missing, c.kb)
		if missing > len(qs)/100 {
			t.Errorf("%s: %d gold triples not in the KB", c.file, missing)
		}
	}
}

func TestLoadMetaQAReal(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		qa, qt string
		rows   int
		hops   int
	}{
		{"metaqa/qa_test_1hop.txt", "metaqa/qtype_test_1hop.txt", 9947, 1},
		{"metaqa/qa_test_2hop.txt", "metaqa/qtype_test_2hop.txt", 14872, 2},
	} {
		qs, err := LoadMetaQA(ctx, shareddata.Path(t, c.qa), shareddata.Path(t, c.qt))
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) != c.rows {
			t.Errorf("%s: %d questions, want %d", c.qa, len(qs), c.rows)
		}
		for _, q := range qs {
			if q.Hops != c.hops {
				t.Fatalf("%s: %s has %d hops", c.qa, q.ID, q.Hops)
			}
		}
	}
}

func BenchmarkAnswerableMetaQA2Hop(b *testing.B) {
	ctx := context.Background()
	g, err := kg.Load(ctx, shareddata.Path(b, "metaqa/kb.txt"), kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := LoadMetaQA(ctx, shareddata.Path(b, "metaqa/qa_test_2hop.txt"), shareddata.Path(b, "metaqa/qtype_test_2hop.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Answerable(ctx, g, qs); err != nil {
			b.Fatal(err)
		}
	}
}
