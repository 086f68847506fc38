package synth

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/train/dataset"
)

// BenchmarkSampleMetaQA measures validated items per second on the MetaQA
// KB (130k triples), the target being 10,000/s before any LLM
// call. One op is one emitted item (walk, answers by pattern, validation,
// masking, item built).
func BenchmarkSampleMetaQA(b *testing.B) {
	g, err := kg.Load(context.Background(), shareddata.Path(b, "metaqa/kb.txt"), kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name      string
		hops      []float64
		branch    float64
		maxDegree int
	}{
		{"hops1-3", []float64{1, 1, 1}, 0, 1000},
		{"hops1-3-branch0.3", []float64{1, 1, 1}, 0.3, 1000},
		{"hops1-3-nohubcap", []float64{1, 1, 1}, 0, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := NewSampler(g, Options{Hops: bc.hops, Branch: bc.branch, SkipEntity: regexp.MustCompile(DefaultSkipEntity), MaxDegree: bc.maxDegree, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			seeds := s.Seeds(0)
			kept, attempts := 0, 0
			start := time.Now()
			b.ResetTimer()
			for kept < b.N {
				st, err := s.Run(context.Background(), seeds, func(*dataset.Item) error {
					kept++
					if kept >= b.N {
						return errBenchStop
					}
					return nil
				})
				attempts += st.Attempts
				if err != nil && err != errBenchStop {
					b.Fatal(err)
				}
				if st.Kept == 0 && err == nil {
					b.Fatal("no items")
				}
			}
			el := time.Since(start).Seconds()
			b.ReportMetric(float64(kept)/el, "samples/s")
			b.ReportMetric(float64(kept)/float64(attempts), "kept/attempt")
		})
	}
}

var errBenchStop = errors.New("enough items")
