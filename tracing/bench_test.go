package tracing

import (
	"context"
	"testing"

	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

func benchTracer(b *testing.B, rel string) (*kg.Graph, *Tracer) {
	b.Helper()
	g, err := kg.Load(context.Background(), shareddata.Path(b, rel), kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := New(g, wordvec.New(nil, wordvec.Options{}), nil, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	return g, tr
}

// BenchmarkTraceHub traces a 2-hop schema from MetaQA's biggest hub, the
// genre Drama (4,030 in-edges): films of the genre, then their directors.
func BenchmarkTraceHub(b *testing.B) {
	g, tr := benchTracer(b, "metaqa/kb.txt")
	drama, ok := g.Entity("Drama")
	if !ok {
		b.Fatal("no Drama in kb.txt")
	}
	for _, st := range []schema.Strategy{schema.Precision, schema.Breadth} {
		b.Run(st.String(), func(b *testing.B) {
			req := Request{Graphs: []schema.Graph{{Triples: []schema.Triple{
				{Head: "[ENT1]", Rel: "has_genre", Tail: "Drama"},
				{Head: "[ENT1]", Rel: "directed_by", Tail: "[ENT2]"},
			}, Answer: "[ENT2]"}}, Strategy: st, Anchors: []int32{drama}}
			var n int
			for b.Loop() {
				res, err := tr.Trace(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				n = len(res.Answers)
			}
			b.ReportMetric(float64(n), "answers")
		})
	}
}

// BenchmarkNewMetaQA measures the one-off encoding of every entity and
// relation of MetaQA into additive parts.
func BenchmarkNewMetaQA(b *testing.B) {
	g, _ := benchTracer(b, "metaqa/kb.txt")
	enc := wordvec.New(nil, wordvec.Options{})
	for b.Loop() {
		if _, err := New(g, enc, nil, DefaultConfig()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTracePQ traces the first PQ-2H question's gold path over the
// PathQuestion 2-hop KB.
func BenchmarkTracePQ(b *testing.B) {
	g, tr := benchTracer(b, "pathquestion/2H-kb.txt")
	subj, ok := g.Entity("frederica_of_mecklenburg-strelitz")
	if !ok {
		b.Fatal("no subject entity")
	}
	req := Request{Graphs: []schema.Graph{schema.Path("frederica_of_mecklenburg-strelitz", "spouse", "nationality")},
		Anchors: []int32{subj}}
	for b.Loop() {
		res, err := tr.Trace(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Answers) == 0 || res.Answers[0].Name != "united_kingdom" {
			b.Fatalf("answers %+v", res.Answers)
		}
	}
}
