package eval

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
)

// BenchmarkTraceScale answers the questions in $STEM_BENCH_QUESTIONS
// (PathQuestion format, as `stem kg synth --questions` writes them) over
// the KG in $STEM_BENCH_KG (a snapshot from `stem kg build`, or any KG
// file) with the oracle planner, through the whole pipeline, and reports
// the per-question latency p50, p95, p99 and max in milliseconds, the load time and
// Hits@1: tracing at the scale of the KG given, hubs included.
//
//	stem kg synth --triples 10000000 --out /tmp/s.tsv --questions /tmp/s-q.txt
//	stem kg build /tmp/s.tsv --out /tmp/s.stemkg
//	STEM_BENCH_KG=/tmp/s.stemkg STEM_BENCH_QUESTIONS=/tmp/s-q.txt \
//	  go test ./eval -run XXX -bench TraceScale -benchtime 1x
func BenchmarkTraceScale(b *testing.B) {
	kgPath, qPath := os.Getenv("STEM_BENCH_KG"), os.Getenv("STEM_BENCH_QUESTIONS")
	if kgPath == "" || qPath == "" {
		b.Skip("STEM_BENCH_KG and STEM_BENCH_QUESTIONS not set: give a KG and its questions (stem kg synth, then stem kg build)")
	}
	ctx := context.Background()
	start := time.Now()
	g, err := kg.Load(ctx, kgPath, kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	load := time.Since(start)
	qs, err := benchmark.LoadPathQuestion(ctx, qPath)
	if err != nil {
		b.Fatal(err)
	}
	s := plan.DefaultSettings()
	s.Planner = "oracle"
	rep := loop(b, s, plan.Assets{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})}, g, qs)
	b.ReportMetric(rep.Latency.P50, "p50_ms")
	b.ReportMetric(rep.Latency.P95, "p95_ms")
	b.ReportMetric(rep.Latency.P99, "p99_ms")
	b.ReportMetric(rep.Latency.Max, "max_ms")
	b.ReportMetric(load.Seconds(), "load_s")
	b.ReportMetric(rep.Hits1, "hits@1")
	b.ReportMetric(float64(g.NumTriples()), "triples")
}
