package compose_test

import (
	"context"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

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
	ctx := context.Background()
	g, qs := metaQADev(b, 1000)
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
			start := threadCPU(b)
			if _, err := p.Predict(ctx, q.text, []string{q.entity}, nil); err != nil {
				b.Fatal(err)
			}
			times = append(times, threadCPU(b)-start)
		}
	}
	slices.Sort(times)
	var sum time.Duration
	for _, t := range times {
		sum += t
	}
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "cpu-p50-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "cpu-p95-ms")
	b.ReportMetric(float64(sum.Microseconds())/1000/float64(len(times)), "cpu-mean-ms")
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
