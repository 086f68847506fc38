package vecindex

import (
	"context"
	"fmt"
	"testing"
)

// benchIndex builds the 100k x 100 index of random unit vectors (fixed seed)
// that the search target is stated for, plus nq random queries.
func benchIndex(b *testing.B, n, dim, nq int) (*Flat, []float32) {
	b.Helper()
	f := NewFlat(dim)
	if err := f.Add(randVecs(42, n, dim)); err != nil {
		b.Fatal(err)
	}
	return f, randVecs(43, nq, dim)
}

// BenchmarkDot compares vek32.Dot (AVX2) with the plain Go loop; dot uses
// whichever wins.
func BenchmarkDot(b *testing.B) {
	for _, dim := range []int{100, 384, 1024} {
		x, y := randVecs(1, 1, dim), randVecs(2, 1, dim)
		var sink float32
		b.Run(fmt.Sprintf("vek32/dim=%d", dim), func(b *testing.B) {
			for b.Loop() {
				sink += dot(x, y)
			}
		})
		b.Run(fmt.Sprintf("go/dim=%d", dim), func(b *testing.B) {
			for b.Loop() {
				sink += dotGo(x, y)
			}
		})
		_ = sink
	}
}

// BenchmarkSearch100kx100 is the stated target: exact top-50 over 100,000
// random 100-dim unit vectors, one query at a time, as Search runs it.
func BenchmarkSearch100kx100(b *testing.B) {
	f, qs := benchIndex(b, 100_000, 100, 64)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := qs[(i%64)*100 : (i%64+1)*100]
		if _, err := f.Search(ctx, q, 50); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSearchSplit measures one query's scan on 1 goroutine against the
// scan split over 2, to justify parallelMin.
func BenchmarkSearchSplit(b *testing.B) {
	for _, size := range []struct{ n, dim int }{{100_000, 100}, {100_000, 384}, {2_000, 100}, {5_000, 100}} {
		f, qs := benchIndex(b, size.n, size.dim, 1)
		q := append([]float32(nil), qs...)
		normalize(q)
		for _, parts := range []int{1, 2} {
			b.Run(fmt.Sprintf("%dx%d/parts=%d", size.n, size.dim, parts), func(b *testing.B) {
				for b.Loop() {
					if _, err := f.search(context.Background(), q, 50, parts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSearchBatch100kx100 measures throughput of 64 queries at once,
// with the query block used by SearchBatch and with no blocking (1), and
// reports the cost per query.
func BenchmarkSearchBatch100kx100(b *testing.B) {
	const nq = 64
	f, qs := benchIndex(b, 100_000, 100, nq)
	for _, block := range []int{1, 4, queryBlock, 16} {
		b.Run(fmt.Sprintf("block=%d", block), func(b *testing.B) {
			for b.Loop() {
				if _, err := f.searchBatch(context.Background(), qs, 50, block); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nq), "ns/query")
		})
	}
}
