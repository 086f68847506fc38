package compose_test

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection/compose"
)

// BenchmarkPlanCPUMetaQA plans the first 1,000 MetaQA dev 2-hop questions
// once, with a new compose planner (so what it keeps across questions
// starts empty, as in one stem eval run), and reports the median, 95th
// percentile and mean of the CPU time each question's planning took on
// its thread: unlike wall time, it does not grow with the other jobs of a
// shared machine, so it can be compared across runs.
//
//	GOEXPERIMENT=simd go test -run '^$' -bench PlanCPUMetaQA -benchtime 1x ./projection/compose
func BenchmarkPlanCPUMetaQA(b *testing.B) {
	g, qs := metaQADev(b, 1000)
	planCPU(b, g, qs, false)
}

// BenchmarkPlanCPUMetaQAWarm is BenchmarkPlanCPUMetaQA with what the
// planner keeps across questions warm, as a server's is after its first
// questions: each round plans the 1,000 questions once untimed, then
// again timed. The gap to BenchmarkPlanCPUMetaQA is the cost of first
// meeting a hub or an entity's kind.
//
//	GOEXPERIMENT=simd go test -run '^$' -bench PlanCPUMetaQAWarm -benchtime 1x ./projection/compose
func BenchmarkPlanCPUMetaQAWarm(b *testing.B) {
	g, qs := metaQADev(b, 1000)
	planCPU(b, g, qs, true)
}

// planCPU plans qs over g with a fresh planner each round, timing each
// question's planning in CPU time on one locked thread, and reports them;
// with warm, each round plans qs once untimed first.
func planCPU(b *testing.B, g kg.Reader, qs []metaQAQuestion, warm bool) {
	ctx := context.Background()
	enc, lex := realEncoder(b), realLexicon(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var times []time.Duration
	for b.Loop() {
		p, err := compose.New(ctx, g, enc, compose.Config{Lexicon: lex})
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range qs {
			if !warm {
				break
			}
			if _, err := p.Predict(ctx, q.text, []string{q.entity}, nil); err != nil {
				b.Fatal(err)
			}
		}
		for _, q := range qs {
			start := threadCPU(b)
			if _, err := p.Predict(ctx, q.text, []string{q.entity}, nil); err != nil {
				b.Fatal(err)
			}
			times = append(times, threadCPU(b)-start)
		}
	}
	reportCPU(b, times)
}

// threadCPU returns the CPU time the calling thread has used, to the
// nanosecond (CLOCK_THREAD_CPUTIME_ID; getrusage counts in ticks).
func threadCPU(b *testing.B) time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		b.Fatal(errno)
	}
	return time.Duration(ts.Nano())
}

// BenchmarkPlanCPUKG is BenchmarkPlanCPUMetaQA on a KG of your own: the KG
// STEM_BENCH_KG (a snapshot or any file stem kg reads) and the first 100
// PathQuestion-format questions of STEM_BENCH_QUESTIONS (each anchored on
// its answer path's first entity), e.g. on the 10M synthetic KG of
// stem kg synth:
//
//	STEM_BENCH_KG=fb10m.stemkg STEM_BENCH_QUESTIONS=fb10m-q.txt \
//	  GOEXPERIMENT=simd go test -run '^$' -bench PlanCPUKG -benchtime 1x ./projection/compose
func BenchmarkPlanCPUKG(b *testing.B) {
	kgPath, qPath := os.Getenv("STEM_BENCH_KG"), os.Getenv("STEM_BENCH_QUESTIONS")
	if kgPath == "" || qPath == "" {
		b.Skip("set STEM_BENCH_KG and STEM_BENCH_QUESTIONS")
	}
	ctx := context.Background()
	g, err := kg.Load(ctx, kgPath, kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(qPath)
	if err != nil {
		b.Fatal(err)
	}
	var qs []metaQAQuestion
	for line := range strings.Lines(string(data)) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) < 3 {
			continue
		}
		if e, _, _ := strings.Cut(f[2], "#"); e != "" && len(qs) < 100 {
			qs = append(qs, metaQAQuestion{f[0], e})
		}
	}
	planCPU(b, g, qs, false)
}

// reportCPU reports the median, 95th percentile and mean of times.
func reportCPU(b *testing.B, times []time.Duration) {
	slices.Sort(times)
	var sum time.Duration
	for _, t := range times {
		sum += t
	}
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "cpu-p50-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "cpu-p95-ms")
	b.ReportMetric(float64(sum.Microseconds())/1000/float64(len(times)), "cpu-mean-ms")
}
