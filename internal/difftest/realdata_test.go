package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
)

// Every KG form round-trips with identical answers on the benchmarks'
// real KGs (../shared/data; skipped where it is absent): PathQuestion's
// three KBs, MetaQA's kb.txt and WebQSP's shared KG (the union of its
// questions' graphs, as stem data union writes it). Each is written as
// TSV, N-Triples, gzipped N-Triples, Freebase's dump shape and a
// snapshot, and (PathQuestion's) built by kg build from the TSV, the
// .nt.gz and the Freebase-shaped file; each form read back must hold the
// same entities, relations and triples under the same ids, and the oracle
// planner (and on PathQuestion the schema planner) must give a sample of
// the benchmark's questions the same plans, answers and evidence over it
// as over the original.
func TestFormsRealData(t *testing.T) {
	if testing.Short() {
		// The race run (-short) would spend over a minute here; the
		// full run checks the same forms.
		t.Skip("-short: the real KGs in every form are checked by the full run")
	}
	ctx := context.Background()
	pq := func(kb, questions string) func(t *testing.T) (*kg.Graph, []benchmark.Question) {
		return func(t *testing.T) (*kg.Graph, []benchmark.Question) {
			g, err := kg.Load(ctx, shareddata.Path(t, kb), kg.FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			qs, err := benchmark.LoadPathQuestion(ctx, shareddata.Path(t, questions))
			if err != nil {
				t.Fatal(err)
			}
			return g, qs
		}
	}
	for _, ds := range []struct {
		name string
		load func(t *testing.T) (*kg.Graph, []benchmark.Question)
	}{
		{"PQ-2H", pq("pathquestion/2H-kb.txt", "pathquestion/splits/PQ-2H.test.txt")},
		{"PQ-3H", pq("pathquestion/3H-kb.txt", "pathquestion/splits/PQ-3H.test.txt")},
		{"PQL-2H", pq("pathquestion/PQL2-KB.txt", "pathquestion/splits/PQL-2H.test.txt")},
		{"MetaQA", func(t *testing.T) (*kg.Graph, []benchmark.Question) {
			g, err := kg.Load(ctx, shareddata.Path(t, "metaqa/kb.txt"), kg.FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			qs, err := benchmark.LoadMetaQA(ctx, shareddata.Path(t, "metaqa/qa_test_2hop.txt"), shareddata.Path(t, "metaqa/qtype_test_2hop.txt"))
			if err != nil {
				t.Fatal(err)
			}
			return g, qs
		}},
		{"WebQSP shared KG", func(t *testing.T) (*kg.Graph, []benchmark.Question) {
			f, err := benchmark.LookupFormat("webqsp-mini")
			if err != nil {
				t.Fatal(err)
			}
			qs, err := f.LoadQuestions(ctx, benchmark.Source{Format: f.Name,
				Questions: []string{shareddata.Path(t, "webqsp/gnnrag_sbert_test.jsonl"), shareddata.Path(t, "webqsp/gnnrag_lmsr_test.jsonl")},
				GoldPaths: shareddata.Path(t, "webqsp/rog_paths_test.jsonl")})
			if err != nil {
				t.Fatal(err)
			}
			g, err := benchmark.Union(ctx, qs)
			if err != nil {
				t.Fatal(err)
			}
			return g, qs
		}},
	} {
		t.Run(ds.name, func(t *testing.T) {
			start := time.Now()
			g, qs := ds.load(t)
			want, planners := FormNames, []string{"oracle", "schema"}
			if g.NumTriples() > 10000 {
				// Seconds, not a minute: kg build's snapshots are checked on
				// PathQuestion's KBs (and byte for byte against memory by
				// kg's tests), the schema planner too.
				want, planners = want[:5], planners[:1]
			}
			forms, err := Forms(ctx, g, t.TempDir(), want, 256<<20)
			if err != nil {
				t.Fatal(err)
			}
			for name, back := range forms {
				sameByID(t, name, g, back)
			}
			c := Case{Planners: planners}
			r := rand.New(rand.NewPCG(42, 0))
			for _, i := range r.Perm(len(qs)) {
				q := qs[i]
				if len(q.Gold) == 0 || len(q.Gold[0].Steps) == 0 || len(q.Entities) == 0 {
					continue
				}
				c.Questions = append(c.Questions, Question{Text: q.Text, Entities: q.Entities, Gold: q.Gold[0].Steps, Answers: q.Answers})
				if len(c.Questions) == 10 {
					break
				}
			}
			fixed := func(name string, g kg.Reader) Backend {
				return Backend{name, func(Case) (kg.Reader, error) { return g, nil }}
			}
			var others []Backend
			for _, name := range want {
				others = append(others, fixed(name, forms[name]))
			}
			diffs, err := Compare(ctx, wordvec.New(nil, wordvec.Options{}), c, fixed("original", g), others...)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs[:min(len(diffs), 5)] {
				t.Errorf("%v", d)
			}
			t.Logf("%d entities, %d triples, %d forms, %d questions answered alike, in %v",
				g.NumEntities(), g.NumTriples(), len(forms), len(c.Questions), time.Since(start).Round(time.Millisecond))
		})
	}
}

// sameByID fails t unless back holds g's entities, relations and triples
// under the same ids.
func sameByID(t *testing.T, form string, g, back *kg.Graph) {
	t.Helper()
	if g.NumEntities() != back.NumEntities() || g.NumRelations() != back.NumRelations() || g.NumTriples() != back.NumTriples() {
		t.Errorf("%s: %d entities, %d relations, %d triples; want %d, %d, %d", form,
			back.NumEntities(), back.NumRelations(), back.NumTriples(), g.NumEntities(), g.NumRelations(), g.NumTriples())
		return
	}
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 5 {
			t.Errorf("%s: %s", form, fmt.Sprintf(format, args...))
		}
	}
	for i := range int32(g.NumEntities()) {
		if a, b := g.EntityName(i), back.EntityName(i); a != b {
			report("entity %d is %q, want %q", i, b, a)
		}
	}
	for i := range int32(g.NumRelations()) {
		if a, b := g.RelationName(i), back.RelationName(i); a != b {
			report("relation %d is %q, want %q", i, b, a)
		}
	}
	for i := range int32(g.NumTriples()) {
		if a, b := g.Triple(i), back.Triple(i); a != b {
			report("triple %d is %v, want %v", i, b, a)
		}
	}
}
