package chains

import (
	"context"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
)

// metaQA loads the MetaQA KB and dev questions (see ../../../shared/data/README.md).
func metaQA(b *testing.B, hops string) (*kg.Graph, []benchmark.Question) {
	b.Helper()
	ctx := context.Background()
	g, err := kg.Load(ctx, shareddata.Path(b, "metaqa/kb.txt"), kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := benchmark.LoadMetaQA(ctx, shareddata.Path(b, "metaqa/qa_dev_"+hops+".txt"), shareddata.Path(b, "metaqa/qtype_dev_"+hops+".txt"))
	if err != nil {
		b.Fatal(err)
	}
	return g, qs
}

// BenchmarkFindMetaQA measures the chain search alone (Finder.Find) on
// MetaQA dev questions; chains/s counts kept chains.
func BenchmarkFindMetaQA(b *testing.B) {
	for _, hops := range []string{"1hop", "2hop"} {
		b.Run(hops, func(b *testing.B) {
			g, qs := metaQA(b, hops)
			type q struct{ starts, answers []int32 }
			var in []q
			for _, e := range qs {
				var x q
				for _, n := range e.Entities {
					if id, ok := g.Entity(n); ok {
						x.starts = append(x.starts, id)
					}
				}
				for _, n := range e.Answers {
					if id, ok := g.Entity(n); ok {
						x.answers = append(x.answers, id)
					}
				}
				in = append(in, x)
			}
			f := NewFinder(g, Options{})
			chains := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				x := in[i%len(in)]
				chains += len(f.Find(x.starts, x.answers).Chains)
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(chains)/s, "chains/s")
			b.ReportMetric(float64(b.N)/s, "questions/s")
		})
	}
}

// BenchmarkExtractMetaQA measures whole items: name lookup, search,
// masking and the gold check.
func BenchmarkExtractMetaQA(b *testing.B) {
	g, qs := metaQA(b, "2hop")
	x := NewExtractor(g, Options{QuestionHops: true})
	chains := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		_, o := x.Extract(qs[i%len(qs)])
		chains += o.Chains
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(chains)/s, "chains/s")
	b.ReportMetric(float64(b.N)/s, "questions/s")
}
