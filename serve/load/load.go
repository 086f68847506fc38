// Package load drives a stem server's HTTP API with concurrent clients and
// reports what it measured: throughput, client-side latency percentiles,
// errors by kind, and the server's resident memory and goroutines over
// time, read from its /metrics.
//
// It is a load generator, so it drives loopback servers only: Run refuses
// any other host.
package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stem-kgqa/stem/serve"
)

// Config says what to send where, how hard and for how long.
type Config struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:8080; it must
	// name this machine.
	URL string
	// Token, when not empty, is sent as "Authorization: Bearer TOKEN".
	Token string
	// Requests are the questions asked; the clients cycle through them
	// together, so each is asked about as often as the others.
	Requests []serve.AskRequest
	// Clients is the number of concurrent workers, each with its own
	// keep-alive connection (DefaultClients).
	Clients int
	// Duration and MaxRequests bound the run; it stops at whichever comes
	// first. At least one must be set. Requests in flight when the
	// duration ends are finished and counted.
	Duration    time.Duration
	MaxRequests int64
	// Interval is how often a progress line is printed and the server's
	// metrics are sampled (DefaultInterval).
	Interval time.Duration
	// Timeout bounds the wait for a reply's headers (DefaultTimeout);
	// beyond it the request counts as a "timeout" error.
	Timeout time.Duration
	// Expect maps a question to its answer names; a reply to that
	// question whose answers are not the same set counts as a "mismatch"
	// error. Questions it lacks are not checked.
	Expect map[string][]string
	// Progress, when not nil, gets a line per interval.
	Progress io.Writer
}

// Defaults of Config.
const (
	DefaultClients  = 1
	DefaultInterval = 5 * time.Second
	DefaultTimeout  = 60 * time.Second
)

// Error kinds besides HTTP statuses.
const (
	KindMismatch  = "mismatch"
	KindTimeout   = "timeout"
	KindTransport = "transport"
)

// check validates c and fills in its defaults.
func (c Config) check() (Config, *url.URL, error) {
	u, err := CheckLoopback(c.URL)
	if err != nil {
		return c, nil, err
	}
	if len(c.Requests) == 0 {
		return c, nil, errors.New("load: no requests to send")
	}
	for i, r := range c.Requests {
		if r.Question == "" {
			return c, nil, fmt.Errorf("load: request %d has no question", i+1)
		}
	}
	switch {
	case c.Clients < 0:
		return c, nil, fmt.Errorf("load: %d clients: want at least 1", c.Clients)
	case c.Duration < 0 || c.MaxRequests < 0 || c.Interval < 0 || c.Timeout < 0:
		return c, nil, errors.New("load: durations and counts cannot be negative")
	case c.Duration == 0 && c.MaxRequests == 0:
		return c, nil, errors.New("load: give a Duration or MaxRequests, or the run never ends")
	}
	if c.Clients == 0 {
		c.Clients = DefaultClients
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c, u, nil
}

// CheckLoopback parses a server's base URL and refuses one whose host is
// not this machine (localhost or a loopback address).
func CheckLoopback(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("load: server URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("load: server URL %q: want http://HOST:PORT", raw)
	}
	host := u.Hostname()
	if !serve.IsLocalHost(host) {
		return nil, fmt.Errorf("load: server URL %q: %q is not this machine; a load generator drives loopback servers only (127.0.0.1, ::1, localhost)", raw, host)
	}
	return u, nil
}

// route returns the URL of a route under the server's base URL, which may
// have a path of its own (a server behind a prefix) or none at all.
func route(base *url.URL, path string) *url.URL {
	u := base.JoinPath(path)
	if !strings.HasPrefix(u.Path, "/") {
		// A request line needs an absolute path: JoinPath on an empty
		// base path gives a relative one.
		u.Path = "/" + u.Path
	}
	return u
}

// client is one keep-alive connection to the server and what its requests
// share.
type client struct {
	tr   *http.Transport
	tmpl *http.Request
	// buf holds the last reply's body, reused so that reading replies
	// does not allocate once it has grown.
	buf bytes.Buffer
}

func newClient(ctx context.Context, u *url.URL, header http.Header, timeout time.Duration) *client {
	tr := &http.Transport{
		// Loopback only: no proxy, whatever the environment says.
		Proxy:       nil,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		// One connection per client, kept alive: the clients are the
		// concurrency, not the transport's pool.
		MaxConnsPerHost:       1,
		MaxIdleConnsPerHost:   1,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: timeout,
		DisableCompression:    true,
	}
	ask := route(u, "v1/ask")
	tmpl := (&http.Request{Method: http.MethodPost, URL: ask, Host: ask.Host, Header: header,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}).WithContext(ctx)
	return &client{tr: tr, tmpl: tmpl}
}

// post sends one pre-marshalled ask body and reads the whole reply into
// c.buf, so the connection can be reused.
func (c *client) post(body []byte) (int, error) {
	// A fresh request and reader each time: the transport may still be
	// writing the previous body when its reply arrives, so neither can be
	// reused. They are the only allocations of a request here.
	req := new(http.Request)
	*req = *c.tmpl
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := c.tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	c.buf.Reset()
	if _, err := c.buf.ReadFrom(resp.Body); err != nil {
		return resp.StatusCode, fmt.Errorf("read the reply: %w", err)
	}
	return resp.StatusCode, nil
}

// failure classifies a failed request: its error kind and a message for
// the report's examples.
func failure(status int, body []byte, err error) (kind, msg string) {
	if err != nil {
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			return KindTimeout, err.Error()
		}
		return KindTransport, err.Error()
	}
	// The server's errors carry a stable code: "503 busy" says more than
	// "503".
	var eb struct {
		Error string `json:"error"`
		Code  string `json:"code"`
	}
	kind = fmt.Sprint(status)
	if json.Unmarshal(body, &eb) == nil && eb.Code != "" {
		return kind + " " + eb.Code, eb.Error
	}
	return kind, strings.TrimSpace(string(body[:min(len(body), 200)]))
}

// worker is one client's counts, written by the client and read by the
// reporter.
type worker struct {
	hist     hist
	requests atomic.Int64
	errors   atomic.Int64
	checked  atomic.Int64
	maxNS    atomic.Int64

	mu       sync.Mutex
	kinds    map[string]int64
	examples map[string]string
}

func (w *worker) record(d time.Duration, kind, msg string) {
	w.hist.add(d)
	if int64(d) > w.maxNS.Load() {
		w.maxNS.Store(int64(d))
	}
	if kind != "" {
		w.mu.Lock()
		w.kinds[kind]++
		if _, ok := w.examples[kind]; !ok {
			w.examples[kind] = msg
		}
		w.mu.Unlock()
		w.errors.Add(1)
	}
	// Counted last: a reporter that sees the request sees its error.
	w.requests.Add(1)
}

// run is one load run's shared state.
type run struct {
	cfg    Config
	bodies [][]byte
	// wants holds each request's expected answers, sorted; nil when the
	// request is not checked.
	wants  [][]string
	issued atomic.Int64
}

// prepare marshals every request once, so the hot loop sends bytes.
func prepare(c Config) (*run, error) {
	r := &run{cfg: c, bodies: make([][]byte, len(c.Requests)), wants: make([][]string, len(c.Requests))}
	for i, req := range c.Requests {
		b, err := json.Marshal(req)
		if err != nil {
			return nil, fmt.Errorf("load: marshal request %d (%q): %w", i+1, req.Question, err)
		}
		r.bodies[i] = b
		if want, ok := c.Expect[req.Question]; ok {
			r.wants[i] = slices.Sorted(slices.Values(want))
			if r.wants[i] == nil {
				r.wants[i] = []string{}
			}
		}
	}
	return r, nil
}

// work sends requests until the run's bounds are reached.
func (r *run) work(ctx context.Context, c *client, w *worker, deadline time.Time) {
	defer c.tr.CloseIdleConnections()
	var (
		got []string
		err error
	)
	for ctx.Err() == nil && (deadline.IsZero() || time.Now().Before(deadline)) {
		n := r.issued.Add(1)
		if r.cfg.MaxRequests > 0 && n > r.cfg.MaxRequests {
			return
		}
		i := int((n - 1) % int64(len(r.bodies)))
		start := time.Now()
		status, perr := c.post(r.bodies[i])
		d := time.Since(start)
		if perr != nil && ctx.Err() != nil {
			// Interrupted by the caller: neither an answer nor the
			// server's fault.
			return
		}
		kind, msg := "", ""
		switch {
		case perr != nil || status != http.StatusOK:
			kind, msg = failure(status, c.buf.Bytes(), perr)
		case r.wants[i] != nil:
			w.checked.Add(1)
			if got, err = answerNames(c.buf.Bytes(), got[:0]); err != nil {
				kind, msg = KindMismatch, err.Error()
				break
			}
			slices.Sort(got)
			if !slices.Equal(got, r.wants[i]) {
				kind, msg = KindMismatch, fmt.Sprintf("%q: answers %q, expected %q", r.cfg.Requests[i].Question, got, r.wants[i])
			}
		}
		w.record(d, kind, msg)
	}
}

// Run drives the server at c.URL as c says and reports what it measured.
// When ctx ends first, the report covers the requests answered until then
// and the error says the run was interrupted.
func Run(ctx context.Context, c Config) (*Report, error) {
	c, u, err := c.check()
	if err != nil {
		return nil, err
	}
	r, err := prepare(c)
	if err != nil {
		return nil, err
	}
	header := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if c.Token != "" {
		header.Set("Authorization", "Bearer "+c.Token)
	}
	// A sample that takes longer than an interval would hold up the
	// progress lines; a few seconds is plenty for /metrics.
	sc := newScraper(u, c.Token, max(c.Interval, 5*time.Second))
	defer sc.close()
	rep := &Report{URL: c.URL, Clients: c.Clients, ErrorKinds: map[string]int64{}, ErrorExamples: map[string]string{}}
	// The first sample is the server before this load: a server that only
	// grows shows it against this.
	rep.sample(ctx, sc, 0)

	workers := make([]*worker, c.Clients)
	start := time.Now()
	var deadline time.Time
	if c.Duration > 0 {
		deadline = start.Add(c.Duration)
	}
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{kinds: map[string]int64{}, examples: map[string]string{}}
		workers[i] = w
		cl := newClient(ctx, u, header, c.Timeout)
		wg.Go(func() { r.work(ctx, cl, w, deadline) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	tick := time.NewTicker(c.Interval)
	defer tick.Stop()
	var prev interval
	prev.at = start
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-tick.C:
		}
		now := take(workers, time.Now())
		s := rep.sample(ctx, sc, now.at.Sub(start))
		// The last, partial interval gets a line only when it is long
		// enough to say something: a run ending on a tick has said
		// everything, and the report has the totals.
		if running || now.requests > prev.requests && now.at.Sub(prev.at) >= c.Interval/10 {
			c.progress(now.line(&prev, start, s))
		}
		prev = now
	}
	elapsed := prev.at.Sub(start)

	all := new(counts)
	for _, w := range workers {
		all.addFrom(&w.hist)
		rep.Checked += w.checked.Load()
		rep.Latency.Max = max(rep.Latency.Max, Millis(w.maxNS.Load()))
		for k, n := range w.kinds {
			rep.ErrorKinds[k] += n
			if _, ok := rep.ErrorExamples[k]; !ok {
				rep.ErrorExamples[k] = w.examples[k]
			}
		}
	}
	rep.Elapsed = Millis(elapsed)
	rep.Requests, rep.Errors = prev.requests, prev.errors
	if elapsed > 0 {
		rep.Throughput = float64(rep.Requests) / elapsed.Seconds()
	}
	rep.Latency.P50 = Millis(all.quantile(0.50))
	rep.Latency.P95 = Millis(all.quantile(0.95))
	rep.Latency.P99 = Millis(all.quantile(0.99))
	rep.summarise()
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("load: interrupted after %d requests: %w", rep.Requests, err)
	}
	return rep, nil
}

func (c Config) progress(line string) {
	if c.Progress != nil {
		fmt.Fprintln(c.Progress, line)
	}
}

// interval is the workers' counts at one moment.
type interval struct {
	at       time.Time
	requests int64
	errors   int64
	hist     counts
}

// take reads every worker's counts. They are read one after another, not
// at one instant: a request counted is read with its error (record counts
// it last), but one finishing meanwhile may be in this histogram and the
// next interval's count. Once the workers are done, the counts are exact.
func take(ws []*worker, at time.Time) interval {
	iv := interval{at: at}
	for _, w := range ws {
		iv.requests += w.requests.Load()
		iv.errors += w.errors.Load()
		iv.hist.addFrom(&w.hist)
	}
	return iv
}

// line is the progress line of the interval from prev to iv.
func (iv *interval) line(prev *interval, start time.Time, s *Sample) string {
	n := iv.requests - prev.requests
	secs := iv.at.Sub(prev.at).Seconds()
	qps := 0.0
	if secs > 0 {
		qps = float64(n) / secs
	}
	h := iv.hist.minus(&prev.hist)
	var b strings.Builder
	fmt.Fprintf(&b, "%6.1fs  requests %8d  %8.1f q/s  p50 %s  p99 %s  errors %d",
		iv.at.Sub(start).Seconds(), iv.requests, qps, Millis(h.quantile(0.5)), Millis(h.quantile(0.99)), iv.errors)
	if s != nil {
		fmt.Fprintf(&b, "  rss %s  goroutines %d", megabytes(s.RSS), s.Goroutines)
	} else {
		b.WriteString("  (no /metrics sample)")
	}
	return b.String()
}
