package load

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Millis is a duration that JSON-encodes as milliseconds.
type Millis time.Duration

// MarshalJSON writes the duration in milliseconds.
func (m Millis) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(m)/1e6, 'f', 3, 64), nil
}

// UnmarshalJSON reads milliseconds, so a report read back is the one
// written.
func (m *Millis) UnmarshalJSON(b []byte) error {
	ms, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("a duration in milliseconds: %w", err)
	}
	*m = Millis(ms * 1e6)
	return nil
}

// String prints the duration in milliseconds: every latency in a report
// reads in one unit.
func (m Millis) String() string { return fmt.Sprintf("%.2f ms", float64(m)/1e6) }

// Report is what a run measured.
type Report struct {
	URL     string `json:"url"`
	Clients int    `json:"clients"`
	// Elapsed runs from the first request sent to the last reply read.
	Elapsed  Millis `json:"elapsed_ms"`
	Requests int64  `json:"requests"`
	// Errors counts failed requests: Requests - Errors were answered as
	// expected.
	Errors int64 `json:"errors"`
	// ErrorKinds counts errors by kind: the HTTP status and the server's
	// error code ("503 busy"), KindMismatch, KindTimeout or
	// KindTransport.
	ErrorKinds map[string]int64 `json:"error_kinds"`
	// ErrorExamples holds the first message of each kind.
	ErrorExamples map[string]string `json:"error_examples,omitempty"`
	// Checked counts the replies compared with Config.Expect.
	Checked int64 `json:"checked"`
	// Throughput is requests per second over Elapsed.
	Throughput float64 `json:"throughput_qps"`
	// Latency is measured by the client, from sending the request to
	// reading the whole reply.
	Latency Latency `json:"latency_ms"`
	// RSS and Goroutines summarise the server's Samples.
	RSS        Gauge `json:"rss_bytes"`
	Goroutines Gauge `json:"goroutines"`
	// Samples are the server's gauges read from /metrics before the
	// load, at every interval and at the end.
	Samples []Sample `json:"samples"`
	// ScrapeErrors counts /metrics reads that failed; the first one's
	// message is ScrapeError.
	ScrapeErrors int    `json:"scrape_errors,omitempty"`
	ScrapeError  string `json:"scrape_error,omitempty"`
}

// Latency holds latency percentiles.
type Latency struct {
	P50 Millis `json:"p50"`
	P95 Millis `json:"p95"`
	P99 Millis `json:"p99"`
	Max Millis `json:"max"`
}

// Gauge summarises a gauge's samples over a run.
type Gauge struct {
	First float64 `json:"first"`
	Max   float64 `json:"max"`
	Last  float64 `json:"last"`
}

// Sample is the server's gauges at one moment.
type Sample struct {
	// At is the time since the load started (0 for the sample before).
	At         Millis  `json:"at_ms"`
	RSS        float64 `json:"rss_bytes"`
	Goroutines int     `json:"goroutines"`
}

// sample reads the server's gauges and keeps them; nil when the read
// failed (counted in ScrapeErrors).
func (r *Report) sample(ctx context.Context, sc *scraper, at time.Duration) *Sample {
	s, err := sc.scrape(ctx)
	if err != nil {
		if r.ScrapeErrors == 0 {
			r.ScrapeError = err.Error()
		}
		r.ScrapeErrors++
		return nil
	}
	s.At = Millis(at)
	r.Samples = append(r.Samples, s)
	return &s
}

// summarise fills RSS and Goroutines from Samples.
func (r *Report) summarise() {
	if len(r.Samples) == 0 {
		return
	}
	first, last := r.Samples[0], r.Samples[len(r.Samples)-1]
	r.RSS = Gauge{First: first.RSS, Last: last.RSS, Max: first.RSS}
	r.Goroutines = Gauge{First: float64(first.Goroutines), Last: float64(last.Goroutines), Max: float64(first.Goroutines)}
	for _, s := range r.Samples {
		r.RSS.Max = max(r.RSS.Max, s.RSS)
		r.Goroutines.Max = max(r.Goroutines.Max, float64(s.Goroutines))
	}
}

// WriteTable prints the report as a small table.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "server\t%s, %d clients, %.1f s\n", r.URL, r.Clients, time.Duration(r.Elapsed).Seconds())
	fmt.Fprintf(tw, "requests\t%d (%d checked against the expected answers)\n", r.Requests, r.Checked)
	fmt.Fprintf(tw, "throughput\t%.1f q/s\n", r.Throughput)
	fmt.Fprintf(tw, "latency\tp50 %s\tp95 %s\tp99 %s\tmax %s\n", r.Latency.P50, r.Latency.P95, r.Latency.P99, r.Latency.Max)
	fmt.Fprintf(tw, "errors\t%d\n", r.Errors)
	kinds := make([]string, 0, len(r.ErrorKinds))
	for k := range r.ErrorKinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", k, r.ErrorKinds[k], clip(r.ErrorExamples[k], 120))
	}
	if len(r.Samples) > 0 {
		fmt.Fprintf(tw, "server rss\tfirst %s\tmax %s\tlast %s\n", megabytes(r.RSS.First), megabytes(r.RSS.Max), megabytes(r.RSS.Last))
		fmt.Fprintf(tw, "goroutines\tfirst %.0f\tmax %.0f\tlast %.0f\n", r.Goroutines.First, r.Goroutines.Max, r.Goroutines.Last)
	}
	if r.ScrapeErrors > 0 {
		fmt.Fprintf(tw, "metrics\t%d reads of /metrics failed: %s\n", r.ScrapeErrors, clip(r.ScrapeError, 120))
	}
	return tw.Flush()
}

// WriteJSON prints the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	e.SetEscapeHTML(false)
	return e.Encode(r)
}

func megabytes(b float64) string { return fmt.Sprintf("%.1f MB", b/1e6) }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// scraper reads the server's /metrics on a connection of its own, so
// sampling never waits behind the load.
type scraper struct {
	client *http.Client
	url    string
	token  string
}

func newScraper(base *url.URL, token string, timeout time.Duration) *scraper {
	return &scraper{
		client: &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}},
		url:    route(base, "metrics").String(),
		token:  token,
	}
}

func (s *scraper) close() { s.client.CloseIdleConnections() }

// scrape reads the resident memory and goroutines from /metrics.
func (s *scraper) scrape(ctx context.Context) (Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return Sample{}, fmt.Errorf("metrics %s: %w", s.url, err)
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return Sample{}, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return Sample{}, fmt.Errorf("metrics %s: HTTP %s", s.url, resp.Status)
	}
	g, err := parseGauges(resp.Body, "process_resident_memory_bytes", "go_goroutines")
	if err != nil {
		return Sample{}, fmt.Errorf("metrics %s: %w", s.url, err)
	}
	return Sample{RSS: g[0], Goroutines: int(g[1])}, nil
}

// parseGauges reads the values of the named unlabelled series from
// Prometheus text exposition format. A name missing is an error.
func parseGauges(r io.Reader, names ...string) ([]float64, error) {
	out := make([]float64, len(names))
	found := make([]bool, len(names))
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 0; sc.Scan(); {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		// name value [timestamp]; these gauges carry no labels.
		name, rest, _ := strings.Cut(text, " ")
		i := slices.Index(names, name)
		if i < 0 {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return nil, fmt.Errorf("line %d: %s has no value", line, name)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s value %q: %w", line, name, fields[0], err)
		}
		out[i], found[i] = v, true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	for i, ok := range found {
		if !ok {
			return nil, fmt.Errorf("no %s series (is this a stem server's /metrics?)", names[i])
		}
	}
	return out, nil
}
