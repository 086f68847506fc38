// Package llm is stem's client for chat-completion servers that speak
// OpenAI's POST /v1/chat/completions protocol: vLLM, llama.cpp's server,
// Ollama and OpenAI itself. It also asks POST /v1/completions for a
// prompt's token log-probabilities (PromptLogprobs), which GCR's path
// scorer reads. The planners (SGDA/SAGB prompts) and the answer
// generator depend only on the Chatter interface, so tests can substitute a
// fake; package llmtest provides a scripted fake server for the client itself.
//
// The client is written on net/http: the protocol is one JSON request and
// reply, and github.com/openai/openai-go, whose generated code covers the
// whole OpenAI API, took two thirds of the time of a first build of stem
// (51 of 76 CPU-seconds) for the few fields used here. Its retries could
// not be tuned either: their backoff is fixed at 0.5 s doubling. Retries,
// per-attempt timeouts, the concurrency limit, token accounting and an
// on-disk response cache (which makes evaluations repeatable and cheap to
// re-run) are done here.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stem-kgqa/stem/internal/retry"
)

// Message is one turn of a chat. Role is "system", "user" or "assistant".
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// System returns a system message.
func System(content string) Message { return Message{Role: "system", Content: content} }

// User returns a user message.
func User(content string) Message { return Message{Role: "user", Content: content} }

// Assistant returns an assistant message (for few-shot examples).
func Assistant(content string) Message { return Message{Role: "assistant", Content: content} }

// Request is one chat completion call. Zero values mean "server default",
// except Temperature, which is always sent because 0 (greedy decoding) is the
// value planners most often want.
type Request struct {
	Messages []Message
	// Temperature is the sampling temperature; 0 is greedy.
	Temperature float64
	// TopP is nucleus sampling mass in (0, 1]; 0 leaves it to the server.
	TopP float64
	// MaxTokens bounds each choice's length; 0 leaves it to the server.
	MaxTokens int
	// N is the number of choices (samples) wanted; 0 means 1.
	N int
	// Seed asks the server for reproducible sampling where supported.
	Seed *int64
	// Stop lists strings at which generation stops.
	Stop []string
}

// Reply is the result of a Chat call.
type Reply struct {
	// Choices holds exactly N completions, in the server's index order.
	Choices []string
	// FinishReasons is parallel to Choices ("stop", "length", ...); "length"
	// means the choice was cut off by MaxTokens.
	FinishReasons []string
	// Usage is what this call cost; zero when Cached.
	Usage Usage
	// Cached reports that the reply came from the on-disk cache.
	Cached bool
}

// Usage counts tokens and successful server requests.
type Usage struct {
	PromptTokens, CompletionTokens, Requests int64
}

// RootFailure returns the failure among parallel calls' errors that
// cancelled the others: the first error that is not a cancellation, else
// the first error; nil when all succeeded.
func RootFailure(errs []error) error {
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled)) {
			first = err
		}
	}
	return first
}

// Minus returns u less v: what was used between two readings.
func (u Usage) Minus(v Usage) Usage {
	return Usage{u.PromptTokens - v.PromptTokens, u.CompletionTokens - v.CompletionTokens, u.Requests - v.Requests}
}

// Plus returns the sum of u and v.
func (u Usage) Plus(v Usage) Usage {
	return Usage{u.PromptTokens + v.PromptTokens, u.CompletionTokens + v.CompletionTokens, u.Requests + v.Requests}
}

// Chatter is what code that needs a language model depends on. *Client
// implements it; tests implement it with fakes.
type Chatter interface {
	Chat(ctx context.Context, req Request) (Reply, error)
}

// Config describes the server and how to talk to it. Zero values take the
// documented defaults. The API key itself never appears here: only the name of
// the environment variable that holds it, so configs can be logged and shared.
type Config struct {
	// BaseURL is the API root, for example "http://localhost:8000/v1";
	// Chat requests go to BaseURL + "/chat/completions", PromptLogprobs
	// requests to BaseURL + "/completions".
	BaseURL string
	// Model is sent as the request's "model" field.
	Model string
	// APIKeyEnv names the environment variable holding the bearer token
	// (default "OPENAI_API_KEY"). When it is unset no Authorization header is
	// sent, which local servers accept. No other OPENAI_* variable is read.
	APIKeyEnv string
	// Timeout bounds each HTTP attempt (default 60 s). A slow generation that
	// exceeds it is retried, so set it above the longest expected reply.
	Timeout time.Duration
	// MaxRetries is how many times a request is repeated after a transient
	// failure: 408, 409, 429, 5xx, a timeout or a connection error (default
	// 4; negative means never retry).
	MaxRetries int
	// BackoffBase is the delay before the first retry; it doubles on each
	// further retry, with random jitter, up to BackoffMax. Defaults 500 ms and
	// 30 s. A Retry-After header from the server takes precedence (up to
	// MaxRetryAfter).
	BackoffBase, BackoffMax time.Duration
	// Concurrency is the most requests in flight at once from this client,
	// across all Chat calls (default 4).
	Concurrency int
	// CacheDir holds the response cache; "" disables it. See Client.
	CacheDir string
	// SplitN asks for N choices as N requests of one choice each, for servers
	// that reject n > 1 (llama.cpp's server). When Seed is set, request i
	// uses Seed+i so the samples differ.
	SplitN bool
	// MaxCompletionTokens sends MaxTokens as "max_completion_tokens" instead
	// of "max_tokens" (OpenAI's reasoning models accept only the former;
	// local servers commonly only the latter).
	MaxCompletionTokens bool
	// HTTPClient sends the requests (default: a client with its own
	// connection pool, released by Close).
	HTTPClient *http.Client
}

// MaxRetryAfter caps how long a server's Retry-After can make a retry wait.
const MaxRetryAfter = 2 * time.Minute

// Client is a Chatter backed by a chat-completions server. It is safe for
// concurrent use.
//
// With Config.CacheDir set, each distinct request (model, messages and every
// sampling parameter) is answered by the server once; the reply is stored as
// a small JSON file named by the SHA-256 of the request and later calls get it
// back with Cached set. Sampled replies (Temperature > 0) are cached too: an
// evaluation re-run then sees the same samples, which is the point. Change
// the Seed, or use a different CacheDir, to draw new ones.
type Client struct {
	cfg      Config
	http     *http.Client
	endpoint string // BaseURL + "/chat/completions"
	key      string // the API key, sent as a bearer token when set
	sem      chan struct{}
	cache    *cache
	ownHTTP  *http.Client // closed by Close when we made it
	closed   atomic.Bool

	mu    sync.Mutex
	usage Usage
}

var _ Chatter = (*Client)(nil)

// New checks cfg and fills in defaults. It sends no request, so it works
// before the server is up; the first Chat reports an unreachable server.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q: want http(s)://host[:port]/path", cfg.BaseURL)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Model == "" {
		return nil, errors.New("llm: no model given")
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = "OPENAI_API_KEY"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	retry.FillDefaults(&cfg.MaxRetries, &cfg.BackoffBase, &cfg.BackoffMax)
	if cfg.BackoffMax < cfg.BackoffBase {
		cfg.BackoffMax = cfg.BackoffBase
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	c := &Client{
		cfg:      cfg,
		endpoint: cfg.BaseURL + "/chat/completions",
		sem:      make(chan struct{}, cfg.Concurrency),
	}
	if cfg.CacheDir != "" {
		if c.cache, err = openCache(cfg.CacheDir); err != nil {
			return nil, fmt.Errorf("llm: %w", err)
		}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		c.ownHTTP = hc
	}
	c.http = hc
	// Only the configured variable is read: no OPENAI_BASE_URL or
	// OPENAI_ORG_ID behind the config's back.
	c.key = os.Getenv(cfg.APIKeyEnv)
	return c, nil
}

// Model returns the configured model name.
func (c *Client) Model() string { return c.cfg.Model }

// Usage returns the tokens and requests used so far by this client (cache
// hits excluded).
func (c *Client) Usage() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usage
}

// Close releases idle connections. It reports the first failure to write a
// cache file, if any: such failures do not fail Chat (the reply is good), but
// they mean a re-run will not be free.
func (c *Client) Close() error {
	c.closed.Store(true)
	if c.ownHTTP != nil {
		c.ownHTTP.CloseIdleConnections()
	}
	if c.cache != nil {
		if err := c.cache.writeErr(); err != nil {
			return fmt.Errorf("llm: response cache: %w", err)
		}
	}
	return nil
}

// Chat sends req, retrying transient failures, and returns exactly
// max(req.N, 1) choices. Servers that return fewer choices than asked for
// (Ollama ignores n) are asked again for the rest.
func (c *Client) Chat(ctx context.Context, req Request) (Reply, error) {
	if c.closed.Load() {
		return Reply{}, errors.New("llm: Chat on a closed client")
	}
	if err := check(req); err != nil {
		return Reply{}, fmt.Errorf("llm: %w", err)
	}
	n := max(req.N, 1)
	var key string
	if c.cache != nil {
		var err error
		if key, err = cacheKey(c.cfg.Model, req); err != nil {
			return Reply{}, fmt.Errorf("llm: %w", err)
		}
		if r, ok := c.cache.get(key, n); ok {
			return r, nil
		}
	}
	var (
		r   Reply
		err error
	)
	if c.cfg.SplitN && n > 1 {
		r, err = c.split(ctx, req, n)
	} else {
		r, err = c.fill(ctx, req, n)
	}
	if err != nil {
		return Reply{}, fmt.Errorf("llm: %w", err)
	}
	if c.cache != nil {
		c.cache.put(key, c.cfg.Model, r)
	}
	return r, nil
}

// check rejects requests no server would accept, before spending a call.
func check(req Request) error {
	if len(req.Messages) == 0 {
		return errors.New("request has no messages")
	}
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return fmt.Errorf("message %d: role %q, want system, user or assistant", i, m.Role)
		}
	}
	switch {
	case math.IsNaN(req.Temperature) || math.IsNaN(req.TopP):
		return errors.New("temperature or top_p is NaN")
	case req.N < 0:
		return fmt.Errorf("n = %d, want >= 0", req.N)
	case req.MaxTokens < 0:
		return fmt.Errorf("max tokens = %d, want >= 0", req.MaxTokens)
	case req.Temperature < 0 || req.Temperature > 2:
		return fmt.Errorf("temperature = %g, want 0..2", req.Temperature)
	case req.TopP < 0 || req.TopP > 1:
		return fmt.Errorf("top_p = %g, want 0..1", req.TopP)
	}
	return nil
}

// fill asks for n choices, then asks again for any the server left out.
func (c *Client) fill(ctx context.Context, req Request, n int) (Reply, error) {
	var r Reply
	for len(r.Choices) < n {
		part, err := c.call(ctx, req, n-len(r.Choices), int64(len(r.Choices)))
		if err != nil {
			return Reply{}, err
		}
		// Never keep more than asked for: a server that pads is as wrong as
		// one that ignores n, and callers rely on len(Choices) == N.
		take := min(len(part.Choices), n-len(r.Choices))
		r.Choices = append(r.Choices, part.Choices[:take]...)
		r.FinishReasons = append(r.FinishReasons, part.FinishReasons[:take]...)
		r.Usage = r.Usage.Plus(part.Usage)
	}
	return r, nil
}

// split asks for n choices as n concurrent one-choice requests.
func (c *Client) split(ctx context.Context, req Request, n int) (Reply, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	parts := make([]Reply, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			parts[i], errs[i] = c.call(ctx, req, 1, int64(i))
			if errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	if err := RootFailure(errs); err != nil {
		return Reply{}, err
	}
	var r Reply
	for _, p := range parts {
		r.Choices = append(r.Choices, p.Choices[0])
		r.FinishReasons = append(r.FinishReasons, p.FinishReasons[0])
		r.Usage = r.Usage.Plus(p.Usage)
	}
	return r, nil
}

// chatRequest is the body of POST /chat/completions. Optional fields are
// left out when unset: some servers reject fields they do not know, and n
// is left out when 1 for the same reason.
type chatRequest struct {
	Model               string    `json:"model"`
	Messages            []Message `json:"messages"`
	Temperature         float64   `json:"temperature"`
	N                   int       `json:"n,omitempty"`
	TopP                float64   `json:"top_p,omitempty"`
	MaxTokens           int       `json:"max_tokens,omitempty"`
	MaxCompletionTokens int       `json:"max_completion_tokens,omitempty"`
	Seed                *int64    `json:"seed,omitempty"`
	Stop                []string  `json:"stop,omitempty"`
}

// chatReply is the part of a chat completion stem reads.
type chatReply struct {
	Choices []struct {
		Index        int    `json:"index"`
		FinishReason string `json:"finish_reason"`
		Message      *struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// body encodes req as the request body, asking for n choices and shifting
// the seed by seedShift so repeated requests draw new samples.
func (c *Client) body(req Request, n int, seedShift int64) ([]byte, error) {
	p := chatRequest{Model: c.cfg.Model, Messages: req.Messages, Temperature: req.Temperature, TopP: req.TopP, Stop: req.Stop}
	if n > 1 {
		p.N = n
	}
	if req.MaxTokens > 0 {
		if c.cfg.MaxCompletionTokens {
			p.MaxCompletionTokens = req.MaxTokens
		} else {
			p.MaxTokens = req.MaxTokens
		}
	}
	if req.Seed != nil {
		seed := *req.Seed + seedShift
		p.Seed = &seed
	}
	return json.Marshal(p)
}

// call makes one logical request for n choices, retrying transient failures.
func (c *Client) call(ctx context.Context, req Request, n int, seedShift int64) (Reply, error) {
	p, err := c.body(req, n, seedShift)
	if err != nil {
		return Reply{}, retry.Permanent(fmt.Errorf("encode request: %w", err))
	}
	r, err := retry.Do(ctx, c.cfg.MaxRetries, c.backoff(), func() (Reply, time.Duration, error) { return c.attempt(ctx, p, n) })
	if err != nil {
		return Reply{}, err
	}
	c.mu.Lock()
	c.usage = c.usage.Plus(r.Usage)
	c.mu.Unlock()
	return r, nil
}

// attempt makes one chat request (see exchange); a reply that is not a
// completion is not retried, since a server that sends one for a chat
// request sends it again.
func (c *Client) attempt(ctx context.Context, body []byte, n int) (Reply, time.Duration, error) {
	return exchange(ctx, c, c.endpoint, "chat server", body, n, func(status int, data []byte) (Reply, error) {
		var comp chatReply
		if err := json.Unmarshal(data, &comp); err != nil {
			// A 2xx that is not JSON, or not a completion.
			return Reply{}, retry.Permanent(fmt.Errorf("malformed response (%d %s): %v", status, http.StatusText(status), err))
		}
		r, err := parse(&comp, n)
		if err != nil {
			return Reply{}, retry.Permanent(err)
		}
		return r, nil
	})
}

// exchange makes one HTTP request to endpoint under the concurrency limit
// and the per-attempt timeout, and decodes a 2xx reply with decode. It
// returns the server's Retry-After delay (-1 when absent) alongside a
// retryable error, and a retry.Fatal for failures that must not be
// retried; decode says which its errors are. Every error names the
// server (what, at the base URL). n is the choices asked for, which an
// error 400 hint mentions.
func exchange[T any](ctx context.Context, c *Client, endpoint, what string, body []byte, n int, decode func(status int, data []byte) (T, error)) (T, time.Duration, error) {
	var zero T
	where := what + " at " + c.cfg.BaseURL
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return zero, -1, fmt.Errorf("%s: %w", where, ctx.Err())
	}
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	res, data, err := c.post(actx, endpoint, body)
	timedOut := actx.Err() != nil
	cancel()
	<-c.sem

	switch {
	case ctx.Err() != nil:
		return zero, -1, fmt.Errorf("%s: %w", where, ctx.Err())
	case res != nil && res.StatusCode >= 400:
		after, err := c.statusError(where, endpoint, res, data, n)
		return zero, after, err
	case err != nil && timedOut:
		return zero, -1, fmt.Errorf("%s: no answer within %v (Config.Timeout): %w", where, c.cfg.Timeout, context.DeadlineExceeded)
	case err != nil:
		return zero, -1, fmt.Errorf("%s unreachable: %w", where, err)
	}
	v, err := decode(res.StatusCode, data)
	if err != nil {
		var fatal *retry.Fatal
		if errors.As(err, &fatal) {
			return zero, -1, retry.Permanent(fmt.Errorf("%s: %w", where, fatal.Err))
		}
		return zero, -1, fmt.Errorf("%s: %w", where, err)
	}
	return v, -1, nil
}

// maxReply bounds the bytes read of one reply: far above any completion
// stem asks for, it stops a broken server from filling memory.
const maxReply = 64 << 20

// post sends one request to endpoint and reads the whole reply body. res is non-nil
// whenever the server answered, even if reading its body then failed.
func (c *Client) post(ctx context.Context, endpoint string, body []byte) (*http.Response, []byte, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.key)
	}
	res, err := c.http.Do(hreq)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxReply+1))
	if err == nil && len(data) > maxReply {
		err = fmt.Errorf("reply over %d MiB", maxReply>>20)
	}
	if err != nil && res.StatusCode < 400 {
		return nil, nil, fmt.Errorf("read reply: %w", err)
	}
	return res, data, nil
}

// statusError turns an HTTP error status into an error saying what to fix,
// retryable or not.
func (c *Client) statusError(where, endpoint string, res *http.Response, body []byte, n int) (time.Duration, error) {
	code := res.StatusCode
	status := fmt.Sprintf("%d %s", code, http.StatusText(code))
	msg := serverMessage(body)
	switch {
	case code == http.StatusRequestTimeout || code == http.StatusConflict || code == http.StatusTooManyRequests || code >= 500:
		return retryAfter(res.Header), fmt.Errorf("%s: %s%s", where, status, msg)
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		hint := "check $" + c.cfg.APIKeyEnv
		if c.key == "" {
			hint += " (it is not set)"
		}
		return -1, retry.Permanent(fmt.Errorf("%s: %s: %s%s", where, status, hint, msg))
	case code == http.StatusNotFound:
		return -1, retry.Permanent(fmt.Errorf("%s: %s: check the base URL (requests go to %s) and model %q%s", where, status, endpoint, c.cfg.Model, msg))
	case code == http.StatusBadRequest && n > 1:
		return -1, retry.Permanent(fmt.Errorf("%s: %s%s (if the server rejects n > 1, set Config.SplitN)", where, status, msg))
	default:
		return -1, retry.Permanent(fmt.Errorf("%s: %s%s", where, status, msg))
	}
}

// serverMessage extracts the error text of a failed response, formatted as
// ": text", or "" when there is none: OpenAI's {"error":{"message":...}},
// vLLM's {"message":...}, or a proxy's plain text quoted as it is.
func serverMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return ": " + oneLine(e.Error.Message)
	}
	if s := oneLine(string(body[:min(len(body), 4096)])); s != "" {
		return ": " + s
	}
	return ""
}

// oneLine trims s to a short single line for an error message.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// parse checks a decoded completion and orders its choices by index.
func parse(comp *chatReply, n int) (Reply, error) {
	if len(comp.Choices) == 0 {
		return Reply{}, errors.New("malformed response: no choices")
	}
	if len(comp.Choices) > n {
		return Reply{}, fmt.Errorf("malformed response: %d choices for n = %d", len(comp.Choices), n)
	}
	choices := slices.Clone(comp.Choices)
	sort.SliceStable(choices, func(i, j int) bool { return choices[i].Index < choices[j].Index })
	r := Reply{
		Choices:       make([]string, len(choices)),
		FinishReasons: make([]string, len(choices)),
		Usage: Usage{
			PromptTokens:     comp.Usage.PromptTokens,
			CompletionTokens: comp.Usage.CompletionTokens,
			Requests:         1,
		},
	}
	for i, ch := range choices {
		if ch.Message == nil {
			return Reply{}, fmt.Errorf("malformed response: choice %d has no message", ch.Index)
		}
		r.Choices[i] = ch.Message.Content
		r.FinishReasons[i] = ch.FinishReason
	}
	return r, nil
}

// delay is how long to wait before retry number attempt+1 (see
// retry.Backoff.Delay).
func (c *Client) delay(attempt int, retryAfter time.Duration) time.Duration {
	return c.backoff().Delay(attempt, retryAfter)
}

// backoff is the client's waiting rule between retries.
func (c *Client) backoff() retry.Backoff {
	return retry.Backoff{Base: c.cfg.BackoffBase, Max: c.cfg.BackoffMax, MaxRetryAfter: MaxRetryAfter}
}

// retryAfter reads the server's requested delay; -1 when there is none.
func retryAfter(h http.Header) time.Duration { return retry.After(h) }
