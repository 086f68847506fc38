package openaiembed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer speaks the embeddings protocol. Each request is passed to
// respond with its 0-based sequence number; when respond returns false the
// server answers normally: vector of text t is [len(t), 1, 2, …] (not unit
// length, so the client's normalisation is visible), listed in reverse order
// with correct indices.
type fakeServer struct {
	*httptest.Server
	dim     int
	respond func(n int, w http.ResponseWriter, r *http.Request) bool

	mu       sync.Mutex
	requests []request
	inFlight atomic.Int32
	maxIn    atomic.Int32
}

type request struct {
	auth string
	body embeddingRequest
}

func newFakeServer(t *testing.T, dim int) *fakeServer {
	t.Helper()
	s := &fakeServer{dim: dim}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	in := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxIn.Load()
		if in <= m || s.maxIn.CompareAndSwap(m, in) {
			break
		}
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"no such route"}}`, http.StatusNotFound)
		return
	}
	var body embeddingRequest
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, request{auth: r.Header.Get("Authorization"), body: body})
	s.mu.Unlock()
	if s.respond != nil && s.respond(n, w, r) {
		return
	}
	writeVectors(w, body.Input, s.dim)
}

func writeVectors(w http.ResponseWriter, texts []string, dim int) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(texts) - 1; i >= 0; i-- {
		data = append(data, item{"embedding", i, rawVec(texts[i], dim)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "m"})
}

func rawVec(text string, dim int) []float32 {
	v := make([]float32, dim)
	v[0] = float32(len(text))
	for i := 1; i < dim; i++ {
		v[i] = float32(i)
	}
	return v
}

func unitVec(text string, dim int) []float32 {
	v := rawVec(text, dim)
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(s))
	}
	return v
}

func (s *fakeServer) got() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// fastConfig is a config with test-sized delays.
func (s *fakeServer) fastConfig() Config {
	return Config{
		BaseURL:     s.URL + "/v1",
		Model:       "test-embed",
		APIKeyEnv:   "STEM_TEST_EMBED_KEY",
		Dim:         s.dim,
		Timeout:     2 * time.Second,
		BackoffBase: time.Millisecond,
		BackoffMax:  5 * time.Millisecond,
	}
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func closeTo(a, b []float32) bool {
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return len(a) == len(b)
}

func TestEncodeSuccess(t *testing.T) {
	t.Setenv("STEM_TEST_EMBED_KEY", "sk-secret")
	s := newFakeServer(t, 3)
	c := newClient(t, s.fastConfig())
	if want := "openai:" + strings.TrimPrefix(s.URL, "http://") + "/test-embed"; c.Name() != want {
		t.Errorf("Name = %q, want %q", c.Name(), want)
	}
	texts := []string{"a", "bbbb", "cc"}
	dst := make([]float32, 9)
	if err := c.Encode(context.Background(), texts, dst); err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if got := dst[i*3 : i*3+3]; !closeTo(got, unitVec(text, 3)) {
			t.Errorf("vector %d = %v, want %v", i, got, unitVec(text, 3))
		}
	}
	reqs := s.got()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if want := (embeddingRequest{Model: "test-embed", Input: texts, EncodingFormat: "float"}); !slices.Equal(reqs[0].body.Input, want.Input) || reqs[0].body.Model != want.Model || reqs[0].body.EncodingFormat != "float" {
		t.Errorf("request body %+v, want %+v", reqs[0].body, want)
	}
	if reqs[0].auth != "Bearer sk-secret" {
		t.Errorf("Authorization = %q", reqs[0].auth)
	}
	if err := c.Encode(context.Background(), nil, nil); err != nil || len(s.got()) != 1 {
		t.Errorf("empty Encode: err %v, requests %d", err, len(s.got()))
	}
	if err := c.Encode(context.Background(), texts, make([]float32, 8)); err == nil {
		t.Error("short dst: no error")
	}
}

func TestNoKeyNoHeader(t *testing.T) {
	t.Setenv("STEM_TEST_EMBED_KEY", "")
	s := newFakeServer(t, 2)
	c := newClient(t, s.fastConfig())
	if err := c.Encode(context.Background(), []string{"x"}, make([]float32, 2)); err != nil {
		t.Fatal(err)
	}
	if auth := s.got()[0].auth; auth != "" {
		t.Errorf("Authorization = %q, want none", auth)
	}
}

func TestProbeLearnsDim(t *testing.T) {
	s := newFakeServer(t, 5)
	cfg := s.fastConfig()
	cfg.Dim = 0
	c := newClient(t, cfg)
	if c.Dim() != 5 {
		t.Errorf("Dim = %d, want 5", c.Dim())
	}
	if n := len(s.got()); n != 1 {
		t.Errorf("%d probe requests, want 1", n)
	}
}

func TestBatching(t *testing.T) {
	s := newFakeServer(t, 2)
	s.respond = func(n int, w http.ResponseWriter, r *http.Request) bool {
		// Hold the first request until a second is in flight (or 2 s pass),
		// so a broken limit would show as more than 2 at once.
		for deadline := time.Now().Add(2 * time.Second); n == 0 && s.maxIn.Load() < 2 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		return false
	}
	cfg := s.fastConfig()
	cfg.BatchSize = 3
	cfg.Concurrency = 2
	c := newClient(t, cfg)
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	dst := make([]float32, 20)
	if err := c.Encode(context.Background(), texts, dst); err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if !closeTo(dst[i*2:i*2+2], unitVec(text, 2)) {
			t.Errorf("vector %d = %v, want %v", i, dst[i*2:i*2+2], unitVec(text, 2))
		}
	}
	var sizes []int
	var all []string
	for _, r := range s.got() {
		sizes = append(sizes, len(r.body.Input))
		all = append(all, r.body.Input...)
	}
	slices.Sort(sizes)
	if want := []int{1, 3, 3, 3}; !slices.Equal(sizes, want) {
		t.Errorf("batch sizes %v, want %v", sizes, want)
	}
	slices.Sort(all)
	if sorted := slices.Sorted(slices.Values(texts)); !slices.Equal(all, sorted) {
		t.Errorf("texts sent %v, want each of %v once", all, sorted)
	}
	if m := s.maxIn.Load(); m != 2 {
		t.Errorf("max requests in flight = %d, want 2 (Concurrency)", m)
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		respond    func(n int, w http.ResponseWriter) bool
		wantReqs   int
		wantErr    string // "" for success
	}{
		{"429 then success", 4, func(n int, w http.ResponseWriter) bool {
			if n == 0 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
				return true
			}
			return false
		}, 2, ""},
		{"503 twice then success", 4, func(n int, w http.ResponseWriter) bool {
			if n < 2 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			}
			return false
		}, 3, ""},
		{"500 until retries run out", 2, func(n int, w http.ResponseWriter) bool {
			http.Error(w, `{"object":"error","message":"CUDA out of memory"}`, http.StatusInternalServerError)
			return true
		}, 3, "500 Internal Server Error: CUDA out of memory (gave up after 3 attempts)"},
		{"no retries when negative", -1, func(n int, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusBadGateway)
			return true
		}, 1, "502 Bad Gateway"},
		{"401 not retried", 4, func(n int, w http.ResponseWriter) bool {
			http.Error(w, `{"error":{"message":"Incorrect API key provided"}}`, http.StatusUnauthorized)
			return true
		}, 1, "/v1: 401 Unauthorized: check $STEM_TEST_EMBED_KEY: Incorrect API key provided"},
		{"403 not retried", 4, func(n int, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusForbidden)
			return true
		}, 1, "403 Forbidden: check $STEM_TEST_EMBED_KEY"},
		{"404 not retried", 4, func(n int, w http.ResponseWriter) bool {
			http.Error(w, `{"detail":"model 'test-embed' not found"}`, http.StatusNotFound)
			return true
		}, 1, `404 Not Found: check the base URL (requests go to http://`},
		{"400 not retried", 4, func(n int, w http.ResponseWriter) bool {
			http.Error(w, `{"error":{"message":"input too long"}}`, http.StatusBadRequest)
			return true
		}, 1, "400 Bad Request: input too long"},
		{"malformed JSON not retried", 4, func(n int, w http.ResponseWriter) bool {
			io.WriteString(w, `{"data": [`)
			return true
		}, 1, "malformed response"},
		{"wrong dimension", 4, func(n int, w http.ResponseWriter) bool {
			writeVectors(w, []string{"a", "b"}, 7)
			return true
		}, 1, "has dimension 7, want 2"},
		{"wrong count", 4, func(n int, w http.ResponseWriter) bool {
			writeVectors(w, []string{"a", "b", "c"}, 2)
			return true
		}, 1, "got 3 embeddings for 2 inputs"},
		{"repeated index", 4, func(n int, w http.ResponseWriter) bool {
			io.WriteString(w, `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`)
			return true
		}, 1, "index 0 out of range or repeated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("STEM_TEST_EMBED_KEY", "sk-secret")
			s := newFakeServer(t, 2)
			s.respond = func(n int, w http.ResponseWriter, r *http.Request) bool { return tc.respond(n, w) }
			cfg := s.fastConfig()
			cfg.MaxRetries = tc.maxRetries
			c := newClient(t, cfg)
			dst := make([]float32, 4)
			err := c.Encode(context.Background(), []string{"ab", "c"}, dst)
			if n := len(s.got()); n != tc.wantReqs {
				t.Errorf("%d requests, want %d", n, tc.wantReqs)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !closeTo(dst[:2], unitVec("ab", 2)) {
					t.Errorf("vector 0 = %v", dst[:2])
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), "embeddings server at "+s.URL+"/v1") {
				t.Errorf("err = %v, want it to name the server", err)
			}
			if strings.Contains(err.Error(), "sk-secret") {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
}

func TestUnsetKeyHint(t *testing.T) {
	t.Setenv("STEM_TEST_EMBED_KEY", "")
	s := newFakeServer(t, 2)
	s.respond = func(n int, w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}
	c := newClient(t, s.fastConfig())
	err := c.Encode(context.Background(), []string{"a"}, make([]float32, 2))
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized: check $STEM_TEST_EMBED_KEY (it is not set)") {
		t.Errorf("err = %v", err)
	}
}

func TestSlowServerTimesOut(t *testing.T) {
	s := newFakeServer(t, 2)
	s.respond = func(n int, w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		return true
	}
	cfg := s.fastConfig()
	cfg.Timeout = 30 * time.Millisecond
	cfg.MaxRetries = 1
	// Count attempts on the client side: a timed-out attempt may never
	// reach the handler on a loaded machine.
	var attempts atomic.Int32
	cfg.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		attempts.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := newClient(t, cfg)
	start := time.Now()
	err := c.Encode(context.Background(), []string{"a"}, make([]float32, 2))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 30ms") {
		t.Fatalf("err = %v, want a per-request timeout", err)
	}
	if n := attempts.Load(); n != 2 {
		t.Errorf("%d attempts, want 2 (timeouts are retried)", n)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestContextCancel(t *testing.T) {
	s := newFakeServer(t, 2)
	s.respond = func(n int, w http.ResponseWriter, r *http.Request) bool {
		<-r.Context().Done()
		return true
	}
	c := newClient(t, s.fastConfig())
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	err := c.Encode(ctx, []string{"a"}, make([]float32, 2))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := len(s.got()); n > 1 {
		t.Errorf("%d requests, want at most 1 (no retry after cancel)", n)
	}

	// Cancelled while waiting to retry.
	s2 := newFakeServer(t, 2)
	s2.respond = func(n int, w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	c2 := newClient(t, s2.fastConfig())
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	start := time.Now()
	err = c2.Encode(ctx2, []string{"a"}, make([]float32, 2))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err = %v, want deadline while waiting after a 429", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("waited %v despite the deadline", d)
	}
}

func TestConnectionErrorRetried(t *testing.T) {
	s := newFakeServer(t, 2)
	cfg := s.fastConfig()
	s.Close() // nothing listens any more
	cfg.MaxRetries = 2
	cfg.Dim = 2
	c := newClient(t, cfg)
	err := c.Encode(context.Background(), []string{"a"}, make([]float32, 2))
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") || !strings.Contains(err.Error(), "connect") {
		t.Errorf("err = %v", err)
	}
}

func TestFirstFailureStopsOtherBatches(t *testing.T) {
	s := newFakeServer(t, 2)
	s.respond = func(n int, w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}
	cfg := s.fastConfig()
	cfg.BatchSize = 1
	cfg.Concurrency = 1
	c := newClient(t, cfg)
	err := c.Encode(context.Background(), []string{"a", "b", "c", "d", "e", "f"}, make([]float32, 12))
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("err = %v", err)
	}
	if n := len(s.got()); n != 1 {
		t.Errorf("%d requests, want 1: the first 401 cancels the rest", n)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{BaseURL: "localhost:8000", Model: "m"}, "want http(s)://"},
		{Config{BaseURL: "http://h/v1"}, "no model"},
		{Config{BaseURL: "http://h/v1", Model: "m", Dim: -1}, "dimension -1"},
	}
	for _, tc := range tests {
		_, err := New(context.Background(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	// Probe failure surfaces from New.
	s := newFakeServer(t, 2)
	s.respond = func(n int, w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}
	cfg := s.fastConfig()
	cfg.Dim = 0
	if _, err := New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "probe for dimension") {
		t.Errorf("probe: err = %v", err)
	}
}

func TestDelay(t *testing.T) {
	c := &Client{cfg: Config{BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second}}
	for attempt, step := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
		step *= time.Millisecond
		for range 20 {
			if d := c.delay(attempt, -1); d < step/2 || d > step {
				t.Fatalf("attempt %d: delay %v outside [%v, %v]", attempt, d, step/2, step)
			}
		}
	}
	if d := c.delay(0, 3*time.Second); d != 3*time.Second {
		t.Errorf("Retry-After 3s: delay %v", d)
	}
	if d := c.delay(0, time.Hour); d != MaxRetryAfter {
		t.Errorf("Retry-After 1h: delay %v, want cap %v", d, MaxRetryAfter)
	}

	h := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		h        http.Header
		min, max time.Duration
	}{
		{h(), -1, -1},
		{h("Retry-After", "7"), 7 * time.Second, 7 * time.Second},
		{h("Retry-After", "0.5"), 500 * time.Millisecond, 500 * time.Millisecond},
		{h("Retry-After", future), 85 * time.Second, 90 * time.Second},
		{h("Retry-After", "soon"), -1, -1},
		{h("Retry-After-Ms", "250", "Retry-After", "1"), 250 * time.Millisecond, 250 * time.Millisecond},
	}
	for i, tc := range tests {
		if got := retryAfter(tc.h); got < tc.min || got > tc.max {
			t.Errorf("case %d %v: retryAfter = %v, want [%v, %v]", i, tc.h, got, tc.min, tc.max)
		}
	}
}

func ExampleNew() {
	// A local vLLM or llama.cpp server; the key (if any) is read from
	// $OPENAI_API_KEY, never from the config.
	c, err := New(context.Background(), Config{BaseURL: "http://localhost:8000/v1", Model: "Qwen/Qwen3-Embedding-0.6B", Dim: 1024})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Name(), c.Dim())
	// Output: openai:localhost:8000/Qwen/Qwen3-Embedding-0.6B 1024
}
