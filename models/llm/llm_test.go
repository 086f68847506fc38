package llm

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/models/llm/llmtest"
)

// keyEnv is a variable no real setup uses, so tests never see a real key.
const keyEnv = "STEM_LLM_TEST_KEY"

// newClient returns a client for s with tiny backoffs, so retry tests take
// milliseconds; edit adjusts the config.
func newClient(t *testing.T, baseURL string, edit func(*Config)) *Client {
	t.Helper()
	cfg := Config{
		BaseURL:     baseURL,
		Model:       "test-model",
		APIKeyEnv:   keyEnv,
		Timeout:     5 * time.Second,
		MaxRetries:  2,
		BackoffBase: time.Millisecond,
		BackoffMax:  4 * time.Millisecond,
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ask(q string) Request { return Request{Messages: []Message{User(q)}} }

func TestChatSendsRequestAndReadsReply(t *testing.T) {
	t.Setenv(keyEnv, "sk-test-123")
	s := llmtest.NewServer(t, llmtest.ScriptedReply{Content: []string{"Paris"}, PromptTokens: 17, CompletionTokens: 2})
	c := newClient(t, s.BaseURL(), nil)
	seed := int64(42)
	req := Request{
		Messages:    []Message{System("Answer briefly."), User("Capital of France?"), Assistant("Paris."), User("Sure?")},
		Temperature: 0,
		TopP:        0.9,
		MaxTokens:   64,
		Seed:        &seed,
		Stop:        []string{"\n\n", "END"},
	}
	r, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Choices, []string{"Paris"}) || !slices.Equal(r.FinishReasons, []string{"stop"}) || r.Cached {
		t.Errorf("reply = %+v", r)
	}
	want := Usage{PromptTokens: 17, CompletionTokens: 2, Requests: 1}
	if r.Usage != want || c.Usage() != want {
		t.Errorf("usage: reply %+v, client %+v, want %+v", r.Usage, c.Usage(), want)
	}

	got := s.Requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	g := got[0]
	if g.Path != "/v1/chat/completions" || g.Model != "test-model" {
		t.Errorf("path %q model %q", g.Path, g.Model)
	}
	if a := g.Header.Get("Authorization"); a != "Bearer sk-test-123" {
		t.Errorf("Authorization = %q", a)
	}
	wantMsgs := []llmtest.Message{
		{Role: "system", Content: "Answer briefly."}, {Role: "user", Content: "Capital of France?"},
		{Role: "assistant", Content: "Paris."}, {Role: "user", Content: "Sure?"},
	}
	if !slices.Equal(g.Messages, wantMsgs) {
		t.Errorf("messages = %+v", g.Messages)
	}
	// Temperature 0 must be sent (greedy), n must be left out when 1.
	if g.Temperature == nil || *g.Temperature != 0 {
		t.Errorf("temperature = %v, want explicit 0", g.Temperature)
	}
	if g.N != nil {
		t.Errorf("n = %d, want absent", *g.N)
	}
	if g.TopP == nil || *g.TopP != 0.9 || g.MaxTokens == nil || *g.MaxTokens != 64 || g.MaxCompletionTokens != nil {
		t.Errorf("top_p %v max_tokens %v max_completion_tokens %v", g.TopP, g.MaxTokens, g.MaxCompletionTokens)
	}
	if g.Seed == nil || *g.Seed != 42 || !slices.Equal(g.Stop, []string{"\n\n", "END"}) {
		t.Errorf("seed %v stop %q", g.Seed, g.Stop)
	}
}

func TestChatOptionalFieldsAndNoKey(t *testing.T) {
	t.Setenv(keyEnv, "")
	s := llmtest.NewServer(t, llmtest.Reply("ok"))
	c := newClient(t, s.BaseURL()+"/", func(c *Config) { c.MaxCompletionTokens = true })
	if _, err := c.Chat(context.Background(), Request{Messages: []Message{User("hi")}, Temperature: 0.7, MaxTokens: 5}); err != nil {
		t.Fatal(err)
	}
	g := s.Requests()[0]
	if g.Path != "/v1/chat/completions" {
		t.Errorf("path %q (trailing slash on BaseURL)", g.Path)
	}
	if a := g.Header.Get("Authorization"); a != "" {
		t.Errorf("Authorization = %q, want none when $%s is unset", a, keyEnv)
	}
	if *g.Temperature != 0.7 || g.TopP != nil || g.Seed != nil || g.Stop != nil || g.MaxTokens != nil ||
		g.MaxCompletionTokens == nil || *g.MaxCompletionTokens != 5 {
		t.Errorf("request = %s", g.Raw)
	}
}

func TestChatNChoices(t *testing.T) {
	s := llmtest.NewServer(t,
		llmtest.Reply("a", "b", "c"),
		// Choices listed out of order must be put back in index order.
		llmtest.Malformed(`{"id":"x","object":"chat.completion","model":"m","choices":[`+
			`{"index":1,"message":{"role":"assistant","content":"second"},"finish_reason":"length"},`+
			`{"index":0,"message":{"role":"assistant","content":"first"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`),
	)
	c := newClient(t, s.BaseURL(), nil)
	r, err := c.Chat(context.Background(), Request{Messages: []Message{User("plan")}, Temperature: 1, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Choices, []string{"a", "b", "c"}) {
		t.Errorf("choices = %q", r.Choices)
	}
	if n := s.Requests()[0].N; n == nil || *n != 3 {
		t.Errorf("n = %v, want 3", n)
	}
	r, err = c.Chat(context.Background(), Request{Messages: []Message{User("plan")}, Temperature: 1, N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Choices, []string{"first", "second"}) || !slices.Equal(r.FinishReasons, []string{"stop", "length"}) {
		t.Errorf("reply = %+v", r)
	}
	if u := c.Usage(); u != (Usage{PromptTokens: 1 + 3, CompletionTokens: 3 + 4, Requests: 2}) {
		t.Errorf("usage = %+v", u)
	}
}

// A server that ignores n (Ollama) returns one choice; the client asks again
// for the rest, shifting the seed so the samples differ.
func TestChatTopsUpMissingChoices(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Reply("a"), llmtest.Reply("b"), llmtest.Reply("c"))
	c := newClient(t, s.BaseURL(), nil)
	seed := int64(10)
	r, err := c.Chat(context.Background(), Request{Messages: []Message{User("q")}, Temperature: 1, N: 3, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Choices, []string{"a", "b", "c"}) || r.Usage.Requests != 3 {
		t.Errorf("reply = %+v", r)
	}
	var ns, seeds []int64
	for _, g := range s.Requests() {
		n := int64(1)
		if g.N != nil {
			n = *g.N
		}
		ns = append(ns, n)
		seeds = append(seeds, *g.Seed)
	}
	if !slices.Equal(ns, []int64{3, 2, 1}) || !slices.Equal(seeds, []int64{10, 11, 12}) {
		t.Errorf("n per request %v, seeds %v; want [3 2 1], [10 11 12]", ns, seeds)
	}
}

func TestChatSplitN(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.ScriptedReply{Content: []string{"x"}, Repeat: true})
	c := newClient(t, s.BaseURL(), func(c *Config) { c.SplitN = true })
	seed := int64(7)
	r, err := c.Chat(context.Background(), Request{Messages: []Message{User("q")}, Temperature: 1, N: 3, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Choices) != 3 || r.Usage.Requests != 3 {
		t.Errorf("reply = %+v", r)
	}
	var seeds []int64
	for _, g := range s.Requests() {
		if g.N != nil {
			t.Errorf("n = %d sent with SplitN", *g.N)
		}
		seeds = append(seeds, *g.Seed)
	}
	slices.Sort(seeds)
	if !slices.Equal(seeds, []int64{7, 8, 9}) {
		t.Errorf("seeds = %v", seeds)
	}
}

func TestChatFailures(t *testing.T) {
	retryMs := http.Header{"Retry-After-Ms": {"80"}}
	slow := llmtest.ScriptedReply{Content: []string{"late"}, Delay: 2 * time.Second}
	tests := []struct {
		name         string
		replies      []llmtest.ScriptedReply
		n            int
		edit         func(*Config)
		wantErr      string // "" = success
		wantRequests int
		minGap       time.Duration // least time between first and second request
	}{
		{
			name:         "429 then success honours Retry-After-Ms",
			replies:      []llmtest.ScriptedReply{{Status: 429, Body: `{"error":{"message":"slow down"}}`, Header: retryMs}, llmtest.Reply("ok")},
			wantRequests: 2, minGap: 80 * time.Millisecond,
		},
		{
			name:         "503 plain text then success",
			replies:      []llmtest.ScriptedReply{{Status: 503, Body: "upstream overloaded", ContentType: "text/plain"}, llmtest.Reply("ok")},
			wantRequests: 2,
		},
		{
			name: "500 every time gives up after MaxRetries",
			replies: []llmtest.ScriptedReply{
				llmtest.Error(500, `{"error":{"message":"boom"}}`), llmtest.Error(500, `{"error":{"message":"boom"}}`), llmtest.Error(500, `{"error":{"message":"boom"}}`),
			},
			wantErr:      "chat server at {URL}: 500 Internal Server Error: boom (gave up after 3 attempts)",
			wantRequests: 3,
		},
		{
			name:         "401 is not retried and names the key variable",
			replies:      []llmtest.ScriptedReply{llmtest.Error(401, `{"error":{"message":"Incorrect API key"}}`)},
			wantErr:      "chat server at {URL}: 401 Unauthorized: check $" + keyEnv + " (it is not set): Incorrect API key",
			wantRequests: 1,
		},
		{
			name:         "404 points at base URL and model",
			replies:      []llmtest.ScriptedReply{llmtest.Error(404, `{"message":"model not found"}`)},
			wantErr:      `404 Not Found: check the base URL (requests go to {URL}/chat/completions) and model "test-model": {"message":"model not found"}`,
			wantRequests: 1,
		},
		{
			name:         "400 with n > 1 suggests SplitN",
			replies:      []llmtest.ScriptedReply{llmtest.Error(400, `{"error":{"message":"Only one completion choice is allowed"}}`)},
			n:            2,
			wantErr:      "400 Bad Request: Only one completion choice is allowed (if the server rejects n > 1, set Config.SplitN)",
			wantRequests: 1,
		},
		{
			name:         "slow reply times out, is retried, then fails",
			replies:      []llmtest.ScriptedReply{slow, slow, slow},
			edit:         func(c *Config) { c.Timeout = 40 * time.Millisecond },
			wantErr:      "chat server at {URL}: no answer within 40ms (Config.Timeout): context deadline exceeded (gave up after 3 attempts)",
			wantRequests: 3,
		},
		{
			name:         "slow reply then fast one succeeds",
			replies:      []llmtest.ScriptedReply{slow, llmtest.Reply("ok")},
			edit:         func(c *Config) { c.Timeout = 40 * time.Millisecond },
			wantRequests: 2,
		},
		{
			name:         "malformed JSON is not retried",
			replies:      []llmtest.ScriptedReply{llmtest.Malformed(`{"choices": [`)},
			wantErr:      "chat server at {URL}: malformed response (200 OK)",
			wantRequests: 1,
		},
		{
			name:         "non-JSON 200",
			replies:      []llmtest.ScriptedReply{{Body: "<html>proxy login</html>", ContentType: "text/html"}},
			wantErr:      "malformed response (200 OK)",
			wantRequests: 1,
		},
		{
			name:         "no choices",
			replies:      []llmtest.ScriptedReply{llmtest.Malformed(`{"id":"x","object":"chat.completion","choices":[]}`)},
			wantErr:      "malformed response: no choices",
			wantRequests: 1,
		},
		{
			name:         "more choices than asked",
			replies:      []llmtest.ScriptedReply{llmtest.Reply("a", "b")},
			wantErr:      "malformed response: 2 choices for n = 1",
			wantRequests: 1,
		},
		{
			name:         "negative MaxRetries never retries",
			replies:      []llmtest.ScriptedReply{llmtest.Error(502, "bad gateway")},
			edit:         func(c *Config) { c.MaxRetries = -1 },
			wantErr:      "chat server at {URL}: 502 Bad Gateway: bad gateway",
			wantRequests: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(keyEnv, "")
			s := llmtest.NewServer(t, tc.replies...)
			c := newClient(t, s.BaseURL(), tc.edit)
			r, err := c.Chat(context.Background(), Request{Messages: []Message{User("q")}, N: tc.n})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(r.Choices, []string{"ok"}) {
					t.Errorf("choices = %q", r.Choices)
				}
			} else {
				want := strings.ReplaceAll(tc.wantErr, "{URL}", s.BaseURL())
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("error = %v\nwant it to contain %q", err, want)
				}
			}
			got := s.Requests()
			if len(got) != tc.wantRequests {
				t.Errorf("%d requests, want %d", len(got), tc.wantRequests)
			}
			if tc.minGap > 0 && len(got) >= 2 {
				if gap := got[1].Received.Sub(got[0].Received); gap < tc.minGap {
					t.Errorf("retry came after %v, want >= %v (Retry-After ignored)", gap, tc.minGap)
				}
			}
		})
	}
}

func TestChatKeyNeverInErrors(t *testing.T) {
	t.Setenv(keyEnv, "sk-secret-value")
	s := llmtest.NewServer(t, llmtest.Error(401, `{"error":{"message":"bad key"}}`))
	c := newClient(t, s.BaseURL(), nil)
	_, err := c.Chat(context.Background(), ask("q"))
	if err == nil || strings.Contains(err.Error(), "sk-secret") || strings.Contains(err.Error(), "not set") {
		t.Errorf("error = %v", err)
	}
}

func TestChatServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	c := newClient(t, base, func(c *Config) { c.MaxRetries = 1 })
	_, err = c.Chat(context.Background(), ask("q"))
	want := "chat server at " + base + " unreachable: "
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "gave up after 2 attempts") {
		t.Errorf("error = %v, want it to contain %q", err, want)
	}
}

func TestChatContextCancel(t *testing.T) {
	t.Run("during request", func(t *testing.T) {
		s := llmtest.NewServer(t, llmtest.ScriptedReply{Content: []string{"late"}, Delay: 10 * time.Second})
		c := newClient(t, s.BaseURL(), nil)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Millisecond, cancel)
		_, err := c.Chat(ctx, ask("q"))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
		if n := len(s.Requests()); n != 1 {
			t.Errorf("%d requests, want 1 (no retry after cancel)", n)
		}
	})
	t.Run("while waiting to retry", func(t *testing.T) {
		s := llmtest.NewServer(t, llmtest.Error(500, "boom"))
		c := newClient(t, s.BaseURL(), func(c *Config) { c.BackoffBase, c.BackoffMax = time.Minute, time.Minute })
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Millisecond, cancel)
		_, err := c.Chat(ctx, ask("q"))
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "while waiting to retry") {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		s := llmtest.NewServer(t)
		c := newClient(t, s.BaseURL(), nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.Chat(ctx, ask("q")); !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v", err)
		}
		if n := len(s.Requests()); n != 0 {
			t.Errorf("%d requests sent on a cancelled context", n)
		}
	})
}

func TestChatCache(t *testing.T) {
	dir := t.TempDir()
	s := llmtest.NewServer(t,
		llmtest.ScriptedReply{Content: []string{"a1", "a2"}, PromptTokens: 5, CompletionTokens: 6},
		llmtest.ScriptedReply{Content: []string{"b1", "b2"}, PromptTokens: 5, CompletionTokens: 6},
	)
	c := newClient(t, s.BaseURL(), func(c *Config) { c.CacheDir = dir })
	req := Request{Messages: []Message{System("s"), User("q")}, Temperature: 0.8, N: 2}

	first, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached || !second.Cached || !slices.Equal(second.Choices, []string{"a1", "a2"}) ||
		!slices.Equal(second.FinishReasons, []string{"stop", "stop"}) || second.Usage != (Usage{}) {
		t.Errorf("first %+v\nsecond %+v", first, second)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if u := c.Usage(); u != (Usage{5, 6, 1}) {
		t.Errorf("usage %+v counts the cache hit", u)
	}

	// Any sampling parameter change is a different request.
	other := req
	other.Temperature = 0.9
	r, err := c.Chat(context.Background(), other)
	if err != nil || r.Cached || r.Choices[0] != "b1" {
		t.Errorf("changed temperature: %+v, %v", r, err)
	}

	// The cache outlives the client; the file is where the layout says.
	key, err := cacheKey("test-model", req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, key[:2], key+".json")); err != nil {
		t.Error(err)
	}
	c2 := newClient(t, s.BaseURL(), func(c *Config) { c.CacheDir = dir })
	r, err = c2.Chat(context.Background(), req)
	if err != nil || !r.Cached || r.Choices[1] != "a2" {
		t.Errorf("new client: %+v, %v", r, err)
	}
	// Another model never sees these entries.
	if k2, _ := cacheKey("other-model", req); k2 == key {
		t.Error("model is not part of the cache key")
	}
}

func TestCacheKeyCoversSamplingParameters(t *testing.T) {
	seed1, seed2 := int64(1), int64(2)
	base := Request{Messages: []Message{User("q")}, Temperature: 0.5}
	variants := map[string]Request{
		"base":        base,
		"message":     {Messages: []Message{User("q2")}, Temperature: 0.5},
		"role":        {Messages: []Message{System("q")}, Temperature: 0.5},
		"temperature": {Messages: base.Messages, Temperature: 0.6},
		"top_p":       {Messages: base.Messages, Temperature: 0.5, TopP: 0.9},
		"max_tokens":  {Messages: base.Messages, Temperature: 0.5, MaxTokens: 10},
		"n":           {Messages: base.Messages, Temperature: 0.5, N: 2},
		"seed1":       {Messages: base.Messages, Temperature: 0.5, Seed: &seed1},
		"seed2":       {Messages: base.Messages, Temperature: 0.5, Seed: &seed2},
		"stop":        {Messages: base.Messages, Temperature: 0.5, Stop: []string{"x"}},
	}
	seen := map[string]string{}
	for name, r := range variants {
		k, err := cacheKey("m", r)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[k]; ok {
			t.Errorf("%s and %s share a cache key", name, prev)
		}
		seen[k] = name
	}
	// Normalisations: N 0 == 1, empty Stop == nil.
	k0, _ := cacheKey("m", base)
	k1, _ := cacheKey("m", Request{Messages: base.Messages, Temperature: 0.5, N: 1, Stop: []string{}})
	if k0 != k1 {
		t.Error("N=0/nil Stop and N=1/empty Stop give different keys")
	}
}

func TestChatCorruptCacheFileIgnored(t *testing.T) {
	dir := t.TempDir()
	req := ask("q")
	key, err := cacheKey("test-model", req)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, key[:2], key+".json")
	corrupt := map[string]string{
		"truncated":     `{"v":1,"choices":["x"`,
		"wrong n":       `{"v":1,"model":"test-model","choices":["x","y"],"finish_reasons":["stop","stop"]}`,
		"wrong version": `{"v":99,"model":"test-model","choices":["x"],"finish_reasons":["stop"]}`,
		"empty":         ``,
	}
	for name, content := range corrupt {
		t.Run(name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			s := llmtest.NewServer(t, llmtest.Reply("fresh"))
			c := newClient(t, s.BaseURL(), func(c *Config) { c.CacheDir = dir })
			r, err := c.Chat(context.Background(), req)
			if err != nil || r.Cached || r.Choices[0] != "fresh" {
				t.Fatalf("reply %+v, err %v", r, err)
			}
			var e entry
			data, _ := os.ReadFile(path)
			if err := json.Unmarshal(data, &e); err != nil || !slices.Equal(e.Choices, []string{"fresh"}) {
				t.Errorf("cache file not overwritten: %s", data)
			}
			if r, err := c.Chat(context.Background(), req); err != nil || !r.Cached {
				t.Errorf("second call: %+v, %v", r, err)
			}
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestCloseReportsCacheWriteFailure(t *testing.T) {
	dir := t.TempDir()
	req := ask("q")
	key, _ := cacheKey("test-model", req)
	// A file where the shard directory should be makes the write fail.
	if err := os.WriteFile(filepath.Join(dir, key[:2]), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := llmtest.NewServer(t, llmtest.Reply("ok"))
	c := newClient(t, s.BaseURL(), func(c *Config) { c.CacheDir = dir })
	if r, err := c.Chat(context.Background(), req); err != nil || r.Choices[0] != "ok" {
		t.Fatalf("reply %+v, err %v (a cache write failure must not fail Chat)", r, err)
	}
	if err := c.Close(); err == nil || !strings.Contains(err.Error(), "response cache") {
		t.Errorf("Close = %v, want the cache write error", err)
	}
	if _, err := c.Chat(context.Background(), req); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Chat after Close = %v", err)
	}
}

func TestChatConcurrencyLimit(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.ScriptedReply{Content: []string{"ok"}, Delay: 30 * time.Millisecond, Repeat: true})
	c := newClient(t, s.BaseURL(), func(c *Config) { c.Concurrency = 2 })
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = c.Chat(context.Background(), ask("q")) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m := s.MaxInFlight(); m != 2 {
		t.Errorf("max in flight = %d, want 2", m)
	}
	if u := c.Usage(); u.Requests != 8 {
		t.Errorf("usage = %+v, want 8 requests", u)
	}
}

func TestChatRejectsBadRequests(t *testing.T) {
	s := llmtest.NewServer(t)
	c := newClient(t, s.BaseURL(), nil)
	tests := map[string]Request{
		"no messages":  {},
		"bad role":     {Messages: []Message{{Role: "tool", Content: "x"}}},
		"negative n":   {Messages: []Message{User("q")}, N: -1},
		"negative max": {Messages: []Message{User("q")}, MaxTokens: -5},
		"temperature":  {Messages: []Message{User("q")}, Temperature: 3},
		"NaN":          {Messages: []Message{User("q")}, Temperature: math.NaN()},
		"top_p":        {Messages: []Message{User("q")}, TopP: 1.5},
	}
	for name, req := range tests {
		if _, err := c.Chat(context.Background(), req); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{BaseURL: "", Model: "m"},
		{BaseURL: "localhost:8000", Model: "m"},
		{BaseURL: "ftp://host/v1", Model: "m"},
		{BaseURL: "http://localhost:8000/v1"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
	c, err := New(Config{BaseURL: "http://localhost:8000/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{BaseURL: "http://localhost:8000/v1", Model: "m", APIKeyEnv: "OPENAI_API_KEY", Timeout: 60 * time.Second,
		MaxRetries: 4, BackoffBase: 500 * time.Millisecond, BackoffMax: 30 * time.Second, Concurrency: 4}
	if c.cfg != want {
		t.Errorf("defaults = %+v\nwant %+v", c.cfg, want)
	}
}

func TestDelay(t *testing.T) {
	c := &Client{cfg: Config{BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second}}
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{0, -1, 50 * time.Millisecond, 100 * time.Millisecond},
		{1, -1, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, -1, 400 * time.Millisecond, 800 * time.Millisecond},
		{4, -1, 500 * time.Millisecond, time.Second}, // capped
		{60, -1, 500 * time.Millisecond, time.Second},
		{0, 3 * time.Second, 3 * time.Second, 3 * time.Second},
		{0, time.Hour, MaxRetryAfter, MaxRetryAfter},
		{0, 0, 0, 0},
	}
	for _, tc := range tests {
		for range 20 {
			if d := c.delay(tc.attempt, tc.retryAfter); d < tc.lo || d > tc.hi {
				t.Errorf("delay(%d, %v) = %v, want in [%v, %v]", tc.attempt, tc.retryAfter, d, tc.lo, tc.hi)
				break
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		h      http.Header
		lo, hi time.Duration
	}{
		{http.Header{}, -1, -1},
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond, 250 * time.Millisecond},
		{http.Header{"Retry-After": {future}}, 59 * time.Minute, time.Hour},
		{http.Header{"Retry-After": {"soon"}}, -1, -1},
		{http.Header{"Retry-After": {"-3"}}, -1, -1},
	}
	for _, tc := range tests {
		if d := retryAfter(tc.h); d < tc.lo || d > tc.hi {
			t.Errorf("retryAfter(%v) = %v, want in [%v, %v]", tc.h, d, tc.lo, tc.hi)
		}
	}
}
