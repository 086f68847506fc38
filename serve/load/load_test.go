package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/serve"
)

// fake is a server with canned replies: POST /v1/ask answers a question
// from answers, or fails as failures says; GET /metrics reports an RSS
// that grows by 1 MB per read.
type fake struct {
	answers  map[string][]string
	failures map[string]int // question -> status; 503 carries the server's "busy" code
	token    string

	asked   atomic.Int64
	scrapes atomic.Int64
	mu      sync.Mutex
	seen    map[string]int
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"this server wants Authorization: Bearer TOKEN","code":"unauthorized"}`)
		return
	}
	switch r.URL.Path {
	case "/metrics":
		n := f.scrapes.Add(1)
		fmt.Fprintf(w, "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines %d\n"+
			"go_goroutines_total 999\nprocess_resident_memory_bytes %g\n", 10+n, float64(n)*1e6)
	case "/v1/ask":
		var req serve.AskRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.Method != http.MethodPost {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		f.asked.Add(1)
		f.mu.Lock()
		f.seen[req.Question+"|"+strings.Join(req.Entities, ",")]++
		f.mu.Unlock()
		switch st := f.failures[req.Question]; st {
		case 0:
		case http.StatusServiceUnavailable:
			w.WriteHeader(st)
			fmt.Fprint(w, `{"error":"64 questions are being answered","code":"busy"}`)
			return
		default:
			http.Error(w, "it broke", st)
			return
		}
		v := struct {
			Question string `json:"question"`
			Answers  []any  `json:"answers"`
			Chains   []any  `json:"chains"`
		}{Question: req.Question, Answers: []any{}, Chains: []any{}}
		for _, a := range f.answers[req.Question] {
			v.Answers = append(v.Answers, map[string]any{"answer": a, "score": 1, "supported": true, "chains": []string{"x -> y"}})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	default:
		http.NotFound(w, r)
	}
}

func newFake(t *testing.T, f *fake) *httptest.Server {
	t.Helper()
	f.seen = map[string]int{}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	return ts
}

func asks(questions ...string) []serve.AskRequest {
	out := make([]serve.AskRequest, len(questions))
	for i, q := range questions {
		out[i] = serve.AskRequest{Question: q, Entities: []string{"E" + fmt.Sprint(i)}}
	}
	return out
}

func TestRunBoundsAndErrors(t *testing.T) {
	f := &fake{
		answers:  map[string][]string{"ok": {"b", "a"}, "wrong": {"a"}},
		failures: map[string]int{"busy": http.StatusServiceUnavailable, "broken": http.StatusInternalServerError},
	}
	ts := newFake(t, f)
	// Expect's order differs from the reply's: answers are a set.
	expect := map[string][]string{"ok": {"a", "b"}, "wrong": {"a", "c"}}
	for _, tc := range []struct {
		name      string
		questions []string
		clients   int
		max       int64
		kinds     map[string]int64
		checked   int64
	}{
		{"all answered, max requests bound", []string{"ok"}, 4, 37, map[string]int64{}, 37},
		{"cycles through every request", []string{"ok", "busy", "wrong", "broken", "unchecked"}, 3, 50,
			map[string]int64{"503 busy": 10, "500": 10, KindMismatch: 10}, 20},
		{"one client", []string{"ok", "wrong"}, 1, 7, map[string]int64{KindMismatch: 3}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.asked.Load()
			rep, err := Run(context.Background(), Config{URL: ts.URL, Requests: asks(tc.questions...), Clients: tc.clients,
				MaxRequests: tc.max, Duration: time.Minute, Expect: expect})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Requests != tc.max || f.asked.Load()-before != tc.max {
				t.Errorf("requests: report %d, server saw %d, want %d", rep.Requests, f.asked.Load()-before, tc.max)
			}
			var errs int64
			for _, n := range tc.kinds {
				errs += n
			}
			if rep.Errors != errs || fmt.Sprint(rep.ErrorKinds) != fmt.Sprint(tc.kinds) {
				t.Errorf("errors %d %v, want %d %v", rep.Errors, rep.ErrorKinds, errs, tc.kinds)
			}
			if rep.Checked != tc.checked {
				t.Errorf("checked %d, want %d", rep.Checked, tc.checked)
			}
			if n := tc.kinds[KindMismatch]; n > 0 && !strings.Contains(rep.ErrorExamples[KindMismatch], `expected ["a" "c"]`) {
				t.Errorf("mismatch example %q does not say what was expected", rep.ErrorExamples[KindMismatch])
			}
			if n := tc.kinds["503 busy"]; n > 0 && !strings.Contains(rep.ErrorExamples["503 busy"], "64 questions") {
				t.Errorf("503 example %q is not the server's message", rep.ErrorExamples["503 busy"])
			}
			if rep.Throughput <= 0 || rep.Latency.P50 <= 0 || rep.Latency.P50 > rep.Latency.P99 || rep.Latency.P99 > rep.Latency.Max*102/100 {
				t.Errorf("throughput %.1f, latency %+v: want positive, ordered percentiles", rep.Throughput, rep.Latency)
			}
		})
	}
	// The entities go with their question.
	if f.seen["ok|E0"] == 0 || f.seen["busy|E1"] == 0 {
		t.Errorf("the server saw %v: want each question with its entities", f.seen)
	}
}

func TestRunDurationAndSamples(t *testing.T) {
	f := &fake{answers: map[string][]string{"ok": {"a"}}}
	ts := newFake(t, f)
	var progress bytes.Buffer
	start := time.Now()
	rep, err := Run(context.Background(), Config{URL: ts.URL, Requests: asks("ok"), Clients: 2,
		Duration: 350 * time.Millisecond, Interval: 100 * time.Millisecond, Progress: &progress})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took < 350*time.Millisecond || took > 5*time.Second {
		t.Errorf("a 350 ms run took %s", took)
	}
	if rep.Requests == 0 || rep.Requests != f.asked.Load() || rep.Errors != 0 {
		t.Errorf("requests %d (server saw %d), errors %d", rep.Requests, f.asked.Load(), rep.Errors)
	}
	if e := time.Duration(rep.Elapsed); e < 350*time.Millisecond || e > took {
		t.Errorf("elapsed %s: want from 350 ms to %s", e, took)
	}
	// One sample before, one per tick, one at the end.
	n := len(rep.Samples)
	if n < 4 || int64(n) != f.scrapes.Load() {
		t.Fatalf("%d samples, %d scrapes: want one before, one per 100 ms and one at the end", n, f.scrapes.Load())
	}
	if rep.RSS.First != 1e6 || rep.RSS.Last != float64(n)*1e6 || rep.RSS.Max != rep.RSS.Last {
		t.Errorf("rss %+v over %d samples: want first 1e6, max = last = %d e6", rep.RSS, n, n)
	}
	if rep.Goroutines.First != 11 || rep.Goroutines.Last != float64(10+n) || rep.Samples[0].At != 0 {
		t.Errorf("goroutines %+v, first sample at %s", rep.Goroutines, rep.Samples[0].At)
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "q/s") || !strings.Contains(lines[0], "rss 2.0 MB") || !strings.Contains(lines[0], "goroutines 12") {
		t.Errorf("progress:\n%s", progress.String())
	}
}

func TestRunToken(t *testing.T) {
	f := &fake{answers: map[string][]string{"ok": {"a"}}, token: "s3cret"}
	ts := newFake(t, f)
	for _, tc := range []struct {
		token  string
		errors int64
		kind   string
	}{{"s3cret", 0, ""}, {"", 5, "401 unauthorized"}} {
		rep, err := Run(context.Background(), Config{URL: ts.URL, Token: tc.token, Requests: asks("ok"), MaxRequests: 5})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Errors != tc.errors || tc.kind != "" && rep.ErrorKinds[tc.kind] != 5 {
			t.Errorf("token %q: errors %v", tc.token, rep.ErrorKinds)
		}
		if wantScrapes := tc.token == ""; (rep.ScrapeErrors > 0) != wantScrapes {
			t.Errorf("token %q: %d scrape errors (%s)", tc.token, rep.ScrapeErrors, rep.ScrapeError)
		}
	}
}

func TestRunTransportErrors(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close() // nothing listens there now
	rep, err := Run(context.Background(), Config{URL: url, Requests: asks("ok"), Clients: 2, MaxRequests: 6})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 6 || rep.ErrorKinds[KindTransport] != 6 || !strings.Contains(rep.ErrorExamples[KindTransport], "refused") {
		t.Errorf("requests %d, errors %v %v: want 6 transport errors", rep.Requests, rep.ErrorKinds, rep.ErrorExamples)
	}
	if len(rep.Samples) != 0 || rep.ScrapeErrors == 0 {
		t.Errorf("%d samples, %d scrape errors from a server that is not there", len(rep.Samples), rep.ScrapeErrors)
	}
}

func TestRunInterrupted(t *testing.T) {
	f := &fake{answers: map[string][]string{"ok": {"a"}}}
	ts := newFake(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	rep, err := Run(ctx, Config{URL: ts.URL, Requests: asks("ok"), Clients: 2, Duration: time.Minute})
	if err == nil || rep == nil {
		t.Fatalf("report %v, error %v: want the report so far and an error", rep, err)
	}
	// A request cut off by the caller is not the server's error.
	if rep.Requests == 0 || rep.Errors != 0 {
		t.Errorf("requests %d, errors %v", rep.Requests, rep.ErrorKinds)
	}
}

func TestConfigRefused(t *testing.T) {
	ok := asks("ok")
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"remote host", Config{URL: "http://example.com:8080", Requests: ok, MaxRequests: 1}, "not this machine"},
		{"private address", Config{URL: "http://10.0.0.1:8080", Requests: ok, MaxRequests: 1}, "loopback servers only"},
		{"scheme", Config{URL: "ftp://127.0.0.1", Requests: ok, MaxRequests: 1}, "want http"},
		{"unparsable", Config{URL: "http://[::1", Requests: ok, MaxRequests: 1}, "server URL"},
		{"no requests", Config{URL: "http://127.0.0.1:1", MaxRequests: 1}, "no requests"},
		{"empty question", Config{URL: "http://127.0.0.1:1", Requests: asks(""), MaxRequests: 1}, "request 1 has no question"},
		{"unbounded", Config{URL: "http://127.0.0.1:1", Requests: ok}, "never ends"},
		{"negative clients", Config{URL: "http://127.0.0.1:1", Requests: ok, MaxRequests: 1, Clients: -1}, "at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	for _, u := range []string{"http://127.0.0.1:8080", "http://[::1]:8080/", "http://localhost", "https://127.0.0.2:1"} {
		if _, err := CheckLoopback(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestBaseline(t *testing.T) {
	f := &fake{answers: map[string][]string{"ok": {"b", "a"}, "none": nil},
		failures: map[string]int{"busy": http.StatusServiceUnavailable}}
	ts := newFake(t, f)
	got, failed, err := Baseline(context.Background(), Config{URL: ts.URL, Requests: asks("ok", "none", "busy", "ok"), Clients: 3})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "map[none:[] ok:[b a]]" || len(failed) != 1 || !strings.HasPrefix(failed["busy"], "503 busy: 64 questions") {
		t.Errorf("answers %v, failed %v", got, failed)
	}
	if f.asked.Load() != 4 {
		t.Errorf("asked %d times, want each request once", f.asked.Load())
	}
}

func TestParseGauges(t *testing.T) {
	const head = "# HELP process_resident_memory_bytes Resident memory size in bytes.\n# TYPE process_resident_memory_bytes gauge\n"
	for _, tc := range []struct {
		name, text string
		rss, gor   float64
		err        string
	}{
		{"exposition format", head + "process_resident_memory_bytes 8.5123072e+07\ngo_goroutines 17\n", 85123072, 17, ""},
		{"timestamps, other series, blank lines", "go_goroutines_total 3\n\ngo_gc_duration_seconds{quantile=\"0.5\"} 1e-05\n" +
			"go_goroutines 9 1700000000000\nprocess_resident_memory_bytes 1024\n", 1024, 9, ""},
		{"missing", head + "process_resident_memory_bytes 1\n", 0, 0, "no go_goroutines series"},
		{"bad value", "process_resident_memory_bytes lots\ngo_goroutines 1\n", 0, 0, `line 1: process_resident_memory_bytes value "lots"`},
		{"no value", "go_goroutines \nprocess_resident_memory_bytes 1\n", 0, 0, "line 1: go_goroutines has no value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := parseGauges(strings.NewReader(tc.text), "process_resident_memory_bytes", "go_goroutines")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || g[0] != tc.rss || g[1] != tc.gor {
				t.Errorf("got %v, %v; want %g, %g", g, err, tc.rss, tc.gor)
			}
		})
	}
}

func TestQuantiles(t *testing.T) {
	var h hist
	// 1..1000 µs: the q-quantile is q*1000 µs.
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Microsecond)
	}
	var c counts
	c.addFrom(&h)
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Microsecond}, {0.95, 950 * time.Microsecond}, {0.99, 990 * time.Microsecond}, {1, time.Millisecond}} {
		got := c.quantile(tc.q)
		if d := float64(got-tc.want) / float64(tc.want); d < -1.0/subBuckets || d > 1.0/subBuckets {
			t.Errorf("q%.2f = %s, want %s within %.1f%%", tc.q, got, tc.want, 100.0/subBuckets)
		}
	}
	var empty counts
	if empty.quantile(0.5) != 0 || c.minus(&c).total() != 0 {
		t.Error("an empty histogram has latencies")
	}
	for _, ns := range []int64{-5, 0, 63, 64, 127, 128, 1e9, 1 << 62} {
		b := bucketOf(ns)
		if b < 0 || b >= nBuckets {
			t.Fatalf("bucketOf(%d) = %d, out of range", ns, b)
		}
		if v := bucketValue(b); ns >= 0 && ns < 1<<50 && (float64(v-ns) > float64(ns)/subBuckets+1 || float64(ns-v) > float64(ns)/subBuckets+1) {
			t.Errorf("bucketOf(%d) = %d, whose value %d is off by more than 1/%d", ns, b, v, subBuckets)
		}
	}
}

func TestReportOutputs(t *testing.T) {
	rep := &Report{URL: "http://127.0.0.1:1", Clients: 8, Elapsed: Millis(60 * time.Second), Requests: 120000, Errors: 2,
		ErrorKinds: map[string]int64{"503 busy": 2}, ErrorExamples: map[string]string{"503 busy": "too many"}, Checked: 120000,
		Throughput: 2000, Latency: Latency{P50: Millis(1500 * time.Microsecond), P95: Millis(3 * time.Millisecond), P99: Millis(9 * time.Millisecond), Max: Millis(40 * time.Millisecond)},
		Samples: []Sample{{At: 0, RSS: 80e6, Goroutines: 10}, {At: Millis(time.Second), RSS: 95e6, Goroutines: 30}, {At: Millis(2 * time.Second), RSS: 90e6, Goroutines: 12}}}
	rep.summarise()
	if rep.RSS != (Gauge{First: 80e6, Max: 95e6, Last: 90e6}) || rep.Goroutines != (Gauge{First: 10, Max: 30, Last: 12}) {
		t.Errorf("rss %+v, goroutines %+v", rep.RSS, rep.Goroutines)
	}
	var tab bytes.Buffer
	if err := rep.WriteTable(&tab); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"throughput  2000.0 q/s", "p50 1.50 ms", "p99 9.00 ms", "503 busy", "first 80.0 MB  max 95.0 MB  last 90.0 MB", "60.0 s"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tab.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"p99": 9.000`) {
		t.Errorf("latencies are not in milliseconds:\n%s", js.String())
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Latency != rep.Latency || back.Requests != rep.Requests || len(back.Samples) != 3 || back.Elapsed != rep.Elapsed {
		t.Errorf("read back %+v, wrote %+v", back, rep)
	}
}
