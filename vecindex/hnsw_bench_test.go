package vecindex

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// benchVectors is the index size of BenchmarkIVF and BenchmarkHNSW:
// 1,000,000, or env STEM_BENCH_VECTORS.
func benchVectors(b *testing.B) int {
	b.Helper()
	n := 1_000_000
	if s := os.Getenv("STEM_BENCH_VECTORS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("STEM_BENCH_VECTORS=%q: want a positive integer", s)
		}
		n = v
	}
	return n
}

// bestOf3 runs every query of qs through search three times and returns the
// results of the last pass and the fastest pass's time per query: the
// minimum resists noise from other load on a shared machine, which only
// benchData encodes the benchmark's names (benchVectors of them and 200
// held-out queries, see structured) and returns them with the exact index
// over the names that approximate indexes are measured against.
func benchData(b *testing.B) (data, queries []float32, dim int, flat *Flat) {
	n := benchVectors(b)
	const nq = 200
	start := time.Now()
	data, queries, dim = structured(b, n, nq)
	b.Logf("encoded %d names (dim %d) in %v", n+nq, dim, time.Since(start).Round(time.Millisecond))
	flat = NewFlat(dim)
	if err := flat.Add(data); err != nil {
		b.Fatal(err)
	}
	return data, queries, dim, flat
}

// ever adds time.
func bestOf3(b *testing.B, qs []float32, dim int, search func(q []float32) ([]Hit, error)) ([][]Hit, time.Duration) {
	b.Helper()
	nq := len(qs) / dim
	out := make([][]Hit, nq)
	best := time.Duration(-1)
	for range 3 {
		start := time.Now()
		for i := range len(qs) / dim {
			hits, err := search(qs[i*dim : (i+1)*dim])
			if err != nil {
				b.Fatal(err)
			}
			out[i] = hits
		}
		if d := time.Since(start); best < 0 || d < best {
			best = d
		}
	}
	return out, best / time.Duration(nq)
}

// BenchmarkHNSW measures the graph index against the exact one on the data
// of BenchmarkIVF: N (default 1,000,000; env STEM_BENCH_VECTORS) synthetic
// entity names encoded to 128 dimensions and 200 held-out names as queries.
// Flat and HNSW are each timed as the best of 3 passes over the queries, one
// query at a time. It reports recall@50 of HNSW against Flat, speedup_x
// (Flat time / HNSW time), the per-query times and the build time (on
// GOMAXPROCS goroutines), and logs recall and time for a range of ef: the
// trade-off behind DefaultEfSearch.
//
//	go test ./vecindex -run '^$' -bench 'BenchmarkHNSW$' -benchtime 1x -timeout 30m
func BenchmarkHNSW(b *testing.B) {
	const k = 50
	ctx := context.Background()
	data, qs, dim, flat := benchData(b)
	start := time.Now()
	x, err := BuildHNSW(ctx, dim, data, HNSWOptions{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	build := time.Since(start)
	b.Logf("built HNSW: M %d, efConstruction %d, efSearch %d, %v", x.M(), x.EfConstruction(), x.EfSearch(), build.Round(time.Millisecond))

	exact, flatPer := bestOf3(b, qs, dim, func(q []float32) ([]Hit, error) { return flat.Search(ctx, q, k) })
	for _, ef := range []int{50, 64, 96, 128, 160, 200, 256, 384, 512} {
		out, per := bestOf3(b, qs, dim, func(q []float32) ([]Hit, error) { return x.SearchEf(ctx, q, k, ef) })
		b.Logf("ef %4d: recall@%d %.3f, %v/query, speedup %.1fx", ef, k, recallAt(exact, out), per, float64(flatPer)/float64(per))
	}
	approx, hnswPer := bestOf3(b, qs, dim, func(q []float32) ([]Hit, error) { return x.Search(ctx, q, k) })
	b.ResetTimer()
	for b.Loop() {
		for i := range len(qs) / dim {
			if _, err := x.Search(ctx, qs[i*dim:(i+1)*dim], k); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(recallAt(exact, approx), "recall@50")
	b.ReportMetric(float64(flatPer)/float64(hnswPer), "speedup_x")
	b.ReportMetric(float64(hnswPer.Nanoseconds())/1e3, "hnsw_us/query")
	b.ReportMetric(float64(flatPer.Nanoseconds())/1e3, "flat_us/query")
	b.ReportMetric(build.Seconds(), "build_s")
}
