package tripgnn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchExample is a random graph of the size of a large WebQSP/CWQ
// question subgraph: 2,000 entities, 9,000 triples over 50 relations,
// 1024-dim encoder vectors (Qwen3-Embedding-0.6B), 3 schema triples.
func benchExample(dEnc int) *Example {
	rng := rand.New(rand.NewPCG(42, 42))
	const n, e, r = 2000, 9000, 50
	ex := &Example{
		NumEntities: n,
		Heads:       make([]int32, e), Rels: make([]int32, e), Tails: make([]int32, e),
		RelVecs:    randVecs(rng, 2*r, dEnc),
		SchemaVecs: randVecs(rng, 9, dEnc),
		Question:   []int32{0, 1},
		Labels:     make([]float32, n),
	}
	for i := range e {
		ex.Heads[i], ex.Rels[i], ex.Tails[i] = int32(rng.IntN(n)), int32(rng.IntN(r)), int32(rng.IntN(n))
	}
	for i := range 20 {
		ex.Labels[rng.IntN(n)] = 1
		_ = i
	}
	return ex
}

// benchCases are the engines and widths the benchmarks compare.
var benchCases = []struct {
	engine Engine
	width  int
}{{Native, 128}, {Native, 256}, {Native, 512}, {GoMLX, 256}, {GoMLX, 512}}

func BenchmarkPredict(b *testing.B) {
	ex := benchExample(1024)
	for _, c := range benchCases {
		b.Run(fmt.Sprintf("%s/width%d", c.engine, c.width), func(b *testing.B) {
			if c.engine == GoMLX && !haveGoMLX {
				b.Skip("the GoMLX engine needs -tags gomlx")
			}
			m := newTest(b, Config{EncoderDim: 1024, Width: c.width, Layers: 6})
			m.SetEngine(c.engine)
			ctx := context.Background()
			if _, err := m.Predict(ctx, ex); err != nil { // compile
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := m.Predict(ctx, ex); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTrainStep(b *testing.B) {
	ex := benchExample(1024)
	for _, c := range benchCases {
		b.Run(fmt.Sprintf("%s/width%d", c.engine, c.width), func(b *testing.B) {
			if c.engine == GoMLX && !haveGoMLX {
				b.Skip("the GoMLX engine needs -tags gomlx")
			}
			m := newTest(b, Config{EncoderDim: 1024, Width: c.width, Layers: 6})
			m.SetEngine(c.engine)
			ctx := context.Background()
			batch := []*Example{ex}
			if _, err := m.TrainStep(ctx, batch); err != nil { // compile
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := m.TrainStep(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
