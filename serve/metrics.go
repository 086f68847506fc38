package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stem-kgqa/stem/plan"
)

// metrics are a server's Prometheus series, in a registry of its own (two
// servers in one process, as in tests, count apart).
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	stages   *prometheus.HistogramVec
	inFlight prometheus.Gauge
	rejected prometheus.Counter
}

// Stage latencies run from 10 µs (a 1-hop trace) to 10 s (a remote fetch
// or an LLM call).
var stageBuckets = prometheus.ExponentialBucketsRange(1e-5, 10, 16)

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stem_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "stem_http_request_duration_seconds", Help: "HTTP request latency by route.", Buckets: stageBuckets,
		}, []string{"route"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "stem_stage_duration_seconds", Help: "Time per pipeline stage of answered questions (link, plan, fetch, guide, trace, generate).", Buckets: stageBuckets,
		}, []string{"stage"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stem_questions_in_flight", Help: "Questions being answered, or their replies written, now (each holds a --max-concurrent slot).",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stem_questions_rejected_total", Help: "Questions refused with 503 because the concurrency bound was reached.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.stages, m.inFlight, m.rejected,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// observeStages records an answered question's stage timings.
func (m *metrics) observeStages(t map[string]plan.Duration) {
	for stage, d := range t {
		m.stages.WithLabelValues(stage).Observe(time.Duration(d).Seconds())
	}
}

// instrument counts and times every request by its route pattern, so
// entity names in paths do not become label values.
func (m *metrics) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		m.requests.WithLabelValues(route, strconv.Itoa(rec.status)).Inc()
		m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// recorder remembers the status a handler wrote.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (MCP streams
// flush through it).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush passes flushes through.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
