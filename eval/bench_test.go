package eval

import (
	"context"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
)

// benchEval answers qs over g with the oracle planner through the whole
// pipeline, one question at a time, and reports questions per second and
// Hits@1: what `stem eval` costs per question once the KG is loaded. The
// encoder is character n-grams only, so no vector file is needed.
func benchEval(b *testing.B, g *kg.Graph, qs []benchmark.Question) {
	ctx := context.Background()
	s := plan.DefaultSettings()
	s.Planner = "oracle"
	p, _, err := plan.Open(ctx, s, plan.Assets{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	var rep *Report
	for b.Loop() {
		if rep, err = Run(ctx, qs, Pipeline{p}, Options{Graph: g}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(qs)*b.N)/b.Elapsed().Seconds(), "q/s")
	b.ReportMetric(rep.Hits1, "hits@1")
}

func BenchmarkEvalPQ3H(b *testing.B) {
	ctx := context.Background()
	g, err := kg.Load(ctx, shareddata.Path(b, "pathquestion/3H-kb.txt"), kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := benchmark.LoadPathQuestion(ctx, shareddata.Path(b, "pathquestion/splits/PQ-3H.test.txt"))
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, g, qs)
}

func BenchmarkEvalMetaQA2Hop(b *testing.B) {
	ctx := context.Background()
	g, err := kg.Load(ctx, shareddata.Path(b, "metaqa/kb.txt"), kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := benchmark.LoadMetaQA(ctx, shareddata.Path(b, "metaqa/qa_test_2hop.txt"), shareddata.Path(b, "metaqa/qtype_test_2hop.txt"))
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, g, qs[:2000])
}
