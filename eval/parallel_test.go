package eval

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
)

// mixedRetriever answers some questions fully, some with a wrong extra
// answer and some not at all, so that every metric is between 0 and 100,
// and sleeps a little, differently per question, so that with several
// workers questions finish out of order.
type mixedRetriever struct {
	calls atomic.Int64
}

func (r *mixedRetriever) Answer(ctx context.Context, q benchmark.Question) (Prediction, error) {
	r.calls.Add(1)
	n := len(q.ID) + int(q.ID[len(q.ID)-1])
	time.Sleep(time.Duration(n%4) * 200 * time.Microsecond)
	switch n % 3 {
	case 0:
		return Prediction{Answers: q.Answers, Stages: map[string]time.Duration{"trace": time.Millisecond}}, nil
	case 1:
		return Prediction{Answers: []string{"wrong", q.Answers[0]}, Unbacked: 1, Stages: map[string]time.Duration{"trace": 2 * time.Millisecond, "anchor": time.Millisecond}}, nil
	}
	return Prediction{}, nil
}

// timeless clears the fields that depend on timing, not on answers.
func timeless(r *Report) Report {
	c := *r
	c.Latency, c.ThroughputQPS, c.Workers, c.StageMS, c.Slowest = Latency{}, 0, 0, nil, nil
	c.Questions = nil
	for _, q := range r.Questions {
		q.LatencyMS, q.StagesMS = 0, nil
		c.Questions = append(c.Questions, q)
	}
	return c
}

func TestRunWorkersDeterministic(t *testing.T) {
	qs, g := demoSet(t)
	ctx := context.Background()
	var reps []*Report
	for _, w := range []int{1, 4} {
		var order []string
		rep, err := Run(ctx, qs, &mixedRetriever{}, Options{Graph: g, PerQuestion: true, Workers: w,
			OnResult: func(r Result) error { order = append(order, r.ID); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Workers != w || rep.ThroughputQPS <= 0 || len(order) != len(qs) {
			t.Errorf("workers %d: report workers %d, qps %v, %d results recorded", w, rep.Workers, rep.ThroughputQPS, len(order))
		}
		if got := rep.StageMS["trace"]; got.Max != 2 || rep.StageMS["anchor"].P50 != 1 {
			t.Errorf("workers %d: stage_ms = %+v", w, rep.StageMS)
		}
		reps = append(reps, rep)
	}
	a, b := timeless(reps[0]), timeless(reps[1])
	if !reflect.DeepEqual(a, b) {
		t.Errorf("reports differ between 1 and 4 workers:\n%+v\n%+v", a.Scores, b.Scores)
	}
	// The retriever's mix shows in the figures, so equality is not trivial.
	if a.F1 <= 0 || a.F1 >= 100 || a.Unbacked == 0 || a.Hits1 >= a.Hit {
		t.Errorf("mixed retriever figures: %+v", a.Scores)
	}
	for i, r := range a.Questions {
		if r.ID != qs[i].ID {
			t.Fatalf("result %d is %s, want question order (%s)", i, r.ID, qs[i].ID)
		}
	}
}

// cancellingRetriever answers the gold answers and cancels the run once it
// has answered after questions; later calls wait for the cancellation.
type cancellingRetriever struct {
	after  int64
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (r *cancellingRetriever) Answer(ctx context.Context, q benchmark.Question) (Prediction, error) {
	n := r.calls.Add(1)
	if n > r.after {
		r.cancel()
		<-ctx.Done()
		return Prediction{}, ctx.Err()
	}
	return Prediction{Answers: q.Answers}, nil
}

func TestRunCancelKeepsPartial(t *testing.T) {
	qs, g := demoSet(t)
	for _, w := range []int{1, 3} {
		ctx, cancel := context.WithCancel(context.Background())
		r := &cancellingRetriever{after: 10, cancel: cancel}
		var recorded []Result
		rep, err := Run(ctx, qs, r, Options{Graph: g, Workers: w, PerQuestion: true,
			OnResult: func(res Result) error { recorded = append(recorded, res); return nil }})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("workers %d: error = %v, want context.Canceled", w, err)
		}
		if rep == nil {
			t.Fatalf("workers %d: no partial report", w)
		}
		if rep.N != 10 || len(recorded) != 10 || len(rep.Questions) != 10 || !rep.Partial || rep.Pending != len(qs)-10 || rep.Hit != 100 {
			t.Errorf("workers %d: partial report n %d, recorded %d, partial %v, pending %d, hit %v",
				w, rep.N, len(recorded), rep.Partial, rep.Pending, rep.Hit)
		}
		if rep.Errors != 0 {
			t.Errorf("workers %d: interrupted answers counted as %d errors", w, rep.Errors)
		}
		var buf bytes.Buffer
		if err := rep.WriteTable(&buf); err != nil || !strings.Contains(buf.String(), "partial: stopped with 27 questions not answered") {
			t.Errorf("workers %d: table (%v):\n%s", w, err, buf.String())
		}
	}
}

func TestRunFatalErrorStopsWorkers(t *testing.T) {
	qs, g := demoSet(t)
	for _, w := range []int{1, 4} {
		rep, err := Run(context.Background(), qs, failRetriever{}, Options{Graph: g, Workers: w})
		if rep != nil || !errors.Is(err, errFail) || !strings.Contains(err.Error(), "question questions.tsv:1") {
			t.Errorf("workers %d: %v, %v; want the first question's error and no report", w, rep, err)
		}
	}
	boom := errors.New("disk full")
	_, err := Run(context.Background(), qs, goldRetriever{g}, Options{Graph: g, Workers: 2,
		OnResult: func(Result) error { return boom }})
	if !errors.Is(err, boom) {
		t.Errorf("OnResult failure: %v", err)
	}
}

// runLogged runs qs with a results log at path, cancelling the run once
// stopAfter results are recorded (never when it is negative).
func runLogged(t *testing.T, path string, cfg map[string]string, resume bool, qs []benchmark.Question, ret Answerer, stopAfter int) (*Report, []Result, error) {
	t.Helper()
	l, prior, err := OpenLog(path, cfg, resume)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	n := 0
	rep, err := Run(ctx, qs, ret, Options{Graph: nil, Workers: 2, Done: prior, PerQuestion: true,
		OnResult: func(r Result) error {
			mu.Lock()
			defer mu.Unlock()
			if err := l.Write(r); err != nil {
				return err
			}
			if n++; n == stopAfter {
				cancel()
			}
			return nil
		}})
	if cerr := l.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	return rep, prior, err
}

func TestResumeAfterTruncatedLog(t *testing.T) {
	qs, g := demoSet(t)
	for i := range qs {
		qs[i].Graph = g // runLogged passes no shared graph
	}
	cfg := map[string]string{"format": "pq", "planner": "oracle"}
	full, err := Run(context.Background(), qs, &mixedRetriever{}, Options{PerQuestion: true})
	if err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(t.TempDir(), "run.jsonl")
	rep, _, err := runLogged(t, path, cfg, false, qs, &mixedRetriever{}, 12)
	if !errors.Is(err, context.Canceled) || rep == nil || rep.N < 12 {
		t.Fatalf("first run: %v, %+v", err, rep)
	}
	// Crash mid-write: the last line is cut in half.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	kept := lines[:len(lines)-2]                             // header + results, minus the last result
	torn := lines[len(lines)-2][:len(lines[len(lines)-2])/2] // half of it, no newline
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")+torn), 0o644); err != nil {
		t.Fatal(err)
	}
	wantPrior := len(kept) - 1

	// Without --resume the log is refused; with another configuration too.
	if _, _, err := OpenLog(path, cfg, false); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("reopen without resume: %v", err)
	}
	other := map[string]string{"format": "pq", "planner": "pattern"}
	if _, _, err := OpenLog(path, other, true); !errors.Is(err, ErrLogConfig) || !strings.Contains(err.Error(), `planner: "oracle" != "pattern"`) {
		t.Errorf("resume with another config: %v", err)
	}

	ret := &mixedRetriever{}
	rep, prior, err := runLogged(t, path, cfg, true, qs, ret, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(prior) != wantPrior || rep.Resumed != wantPrior || ret.calls.Load() != int64(len(qs)-wantPrior) {
		t.Errorf("resume: %d prior results (want %d), resumed %d, retriever called %d times (want %d)",
			len(prior), wantPrior, rep.Resumed, ret.calls.Load(), len(qs)-wantPrior)
	}
	fa, fb := timeless(full), timeless(rep)
	fb.Resumed = 0
	if !reflect.DeepEqual(fa, fb) {
		t.Errorf("resumed report differs from an uninterrupted run:\n%+v\n%+v", fb.Scores, fa.Scores)
	}
	// The log now holds every question once, and no torn line.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, rs, good, err := ReadLog(f, path)
	st, _ := f.Stat()
	if err != nil || len(rs) != len(qs) || good != st.Size() || h.Config["planner"] != "oracle" {
		t.Errorf("final log: %d results, good %d of %d, header %+v, %v", len(rs), good, st.Size(), h, err)
	}
}

func TestReadLog(t *testing.T) {
	const head = `{"stem_eval_log":1,"config":{"a":"b"}}` + "\n"
	const r1 = `{"id":"q1","f1":1}` + "\n"
	const r2 = `{"id":"q2","f1":0.5}` + "\n"
	tests := []struct {
		name    string
		in      string
		ids     []string
		good    int
		wantErr string
	}{
		{"whole", head + r1 + r2, []string{"q1", "q2"}, len(head + r1 + r2), ""},
		{"torn last line", head + r1 + r2[:7], []string{"q1"}, len(head + r1), ""},
		{"garbled last line", head + r1 + "{\"id\":\x00\x00\n", []string{"q1"}, len(head + r1), ""},
		{"blank lines", head + "\n" + r1, []string{"q1"}, len(head + "\n" + r1), ""},
		{"header only", head, nil, len(head), ""},
		{"garbled middle line", head + "nonsense\n" + r1, nil, 0, "log:2"},
		{"no header", r1 + r2, nil, 0, "log:1: not a stem eval results log"},
		{"torn header", head[:10], nil, 0, "no whole header line"},
		{"other version", `{"stem_eval_log":2}` + "\n", nil, 0, "version 2"},
		{"empty", "", nil, 0, "no whole header line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, rs, good, err := ReadLog(strings.NewReader(tc.in), "log")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range rs {
				ids = append(ids, r.ID)
			}
			if !reflect.DeepEqual(ids, tc.ids) || good != int64(tc.good) || h.Config["a"] != "b" {
				t.Errorf("ids %v good %d header %+v, want %v %d", ids, good, h, tc.ids, tc.good)
			}
		})
	}
}

func FuzzReadLog(f *testing.F) {
	f.Add([]byte(`{"stem_eval_log":1,"config":{"a":"b"}}` + "\n" + `{"id":"q1","f1":1}` + "\n" + `{"id":"q2"`))
	f.Add([]byte(`{"stem_eval_log":1}` + "\n\n" + `{"id":"x"}` + "\n" + "junk\n"))
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, rs, good, err := ReadLog(bytes.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		if good < 0 || good > int64(len(in)) || good > 0 && in[good-1] != '\n' {
			t.Fatalf("good = %d of %d bytes", good, len(in))
		}
		// The prefix up to good reads back to the same results, whole.
		_, again, good2, err := ReadLog(bytes.NewReader(in[:good]), "fuzz")
		if err != nil || good2 != good || len(again) != len(rs) {
			t.Fatalf("re-read of the good prefix: %d results, good %d, %v; first read %d, %d", len(again), good2, err, len(rs), good)
		}
	})
}

// TestLogOneWriter: a second writer of a results log is refused, naming
// the first, until the first closes it.
func TestLogOneWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	cfg := map[string]string{"planner": "oracle"}
	first, _, err := OpenLog(path, cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenLog(path, cfg, true); err == nil || !strings.Contains(err.Error(), "being written by another stem run (pid ") {
		t.Fatalf("second writer: err = %v, want a refusal naming the first", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the lock note outlived the writer: %v", err)
	}
	second, _, err := OpenLog(path, cfg, true)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	second.Close()
}
