// Package openaiembed encodes texts through a server that speaks OpenAI's
// POST /v1/embeddings protocol: OpenAI itself, vLLM, llama.cpp's server,
// Ollama, text-embeddings-inference and others. It lets stem use transformer
// encoders (such as Qwen3-Embedding, the paper's PEM) that cannot run
// in-process.
//
// It is written on net/http rather than github.com/openai/openai-go: the
// protocol is one small JSON request, and the SDK's retry delay is fixed at
// 0.5 s doubling to 8 s, which can be neither tuned for a local server nor
// shortened in tests, and its errors cannot say which setting to fix.
package openaiembed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/stem-kgqa/stem/internal/retry"
	"github.com/stem-kgqa/stem/models"
)

// Config describes the server and how to talk to it. Zero values take the
// documented defaults. The API key itself never appears here: only the name of
// the environment variable that holds it, so configs can be shared safely.
type Config struct {
	// BaseURL is the API root, for example "http://localhost:8000/v1";
	// requests go to BaseURL + "/embeddings".
	BaseURL string
	// Model is sent as the request's "model" field.
	Model string
	// APIKeyEnv names the environment variable holding the bearer token
	// (default "OPENAI_API_KEY"). When it is unset no Authorization header is
	// sent, which local servers accept.
	APIKeyEnv string
	// Dim is the expected vector length. 0 means New asks the server once and
	// uses the length of the vector it returns.
	Dim int
	// Timeout bounds each HTTP attempt (default 30 s).
	Timeout time.Duration
	// MaxRetries is how many times a request is repeated after a transient
	// failure: 408, 429, 5xx, a timeout or a connection error (default 4;
	// negative means never retry).
	MaxRetries int
	// BackoffBase is the delay before the first retry; it doubles on each
	// further retry, with random jitter, up to BackoffMax. Defaults 500 ms and
	// 30 s. A Retry-After header from the server takes precedence (up to
	// MaxRetryAfter).
	BackoffBase, BackoffMax time.Duration
	// BatchSize is the most texts sent in one request (default 256; servers
	// commonly limit a request to 2048 inputs).
	BatchSize int
	// Concurrency is the most requests in flight at once from this client,
	// across all Encode calls (default 4).
	Concurrency int
	// HTTPClient sends the requests (default: a new http.Client).
	HTTPClient *http.Client
}

// MaxRetryAfter caps how long a server's Retry-After can make a retry wait.
const MaxRetryAfter = 2 * time.Minute

// maxBody bounds a response body; 2048 inputs x 4096 dims of JSON floats is
// about 200 MB.
const maxBody = 512 << 20

// Client is an models.Encoder backed by an embeddings server. It is safe for
// concurrent use.
type Client struct {
	cfg      Config
	endpoint string
	name     string
	key      string // read from the environment once; never printed
	sem      chan struct{}
	dim      int
}

// Compile-time check that Client satisfies models.Encoder.
var _ models.Encoder = (*Client)(nil)

// New checks cfg, fills in defaults and, when cfg.Dim is 0, sends one probe
// request to learn the dimension, so a wrong URL, model or key fails here
// rather than mid-run.
func New(ctx context.Context, cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openaiembed: base URL %q: want http(s)://host[:port]/path", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, errors.New("openaiembed: no model given")
	}
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("openaiembed: dimension %d, want >= 0", cfg.Dim)
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = "OPENAI_API_KEY"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	retry.FillDefaults(&cfg.MaxRetries, &cfg.BackoffBase, &cfg.BackoffMax)
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 256
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	c := &Client{
		cfg:      cfg,
		endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/embeddings",
		name:     "openai:" + u.Host + "/" + cfg.Model,
		key:      os.Getenv(cfg.APIKeyEnv),
		sem:      make(chan struct{}, cfg.Concurrency),
		dim:      cfg.Dim,
	}
	if c.dim == 0 {
		rows, err := c.request(ctx, []string{"dimension probe"})
		if err != nil {
			return nil, fmt.Errorf("openaiembed: probe for dimension: %w", err)
		}
		c.dim = len(rows[0])
	}
	return c, nil
}

// Name is "openai:" + server host + "/" + model, so vectors from different
// servers or models are never mixed up by caches.
func (c *Client) Name() string { return c.name }

// Dim returns the vector length (configured, or learnt by New).
func (c *Client) Dim() int { return c.dim }

// Encode sends texts in batches of at most BatchSize, up to Concurrency at a
// time, and writes the unit-normalised vectors into dst. The first failed
// batch cancels the rest.
func (c *Client) Encode(ctx context.Context, texts []string, dst []float32) error {
	if err := models.CheckDst(c.name, len(texts), c.dim, dst); err != nil {
		return err
	}
	if len(texts) == 0 {
		return nil
	}
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error // the failure that cancelled the other batches
		wg    sync.WaitGroup
	)
	for lo := 0; lo < len(texts); lo += c.cfg.BatchSize {
		hi := min(lo+c.cfg.BatchSize, len(texts))
		wg.Go(func() {
			select {
			case c.sem <- struct{}{}:
			case <-bctx.Done():
				return
			}
			defer func() { <-c.sem }()
			if bctx.Err() != nil {
				return
			}
			rows, err := c.request(bctx, texts[lo:hi])
			if err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("texts %d..%d: %w", lo, hi-1, err)
					cancel()
				}
				mu.Unlock()
				return
			}
			for i, row := range rows {
				v := dst[(lo+i)*c.dim : (lo+i+1)*c.dim]
				copy(v, row)
				models.Normalize(v)
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err() // cancelled before some batch started
	}
	if first != nil {
		return fmt.Errorf("openaiembed: %s: %w", c.name, first)
	}
	return nil
}

// request embeds one batch, retrying transient failures, and returns one
// vector per text in input order.
func (c *Client) request(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingRequest{Model: c.cfg.Model, Input: texts, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	return retry.Do(ctx, c.cfg.MaxRetries, c.backoff(), func() ([][]float32, time.Duration, error) { return c.attempt(ctx, body, len(texts)) })
}

// attempt makes one HTTP request. It returns the server's Retry-After delay
// (-1 when absent) alongside a retryable error, and a retry.Fatal for
// failures that must not be retried.
func (c *Client) attempt(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	where := "embeddings server at " + c.cfg.BaseURL
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, -1, retry.Permanent(fmt.Errorf("%s: %w", where, err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return nil, -1, fmt.Errorf("%s: no answer within %v: %w", where, c.cfg.Timeout, actx.Err())
		}
		return nil, -1, fmt.Errorf("%s: %w", where, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, -1, fmt.Errorf("%s: reading response: %w", where, err)
	}
	if len(data) > maxBody {
		return nil, -1, retry.Permanent(fmt.Errorf("%s: response larger than %d bytes", where, maxBody))
	}
	status := fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	switch code := resp.StatusCode; {
	case code == http.StatusOK:
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return nil, retryAfter(resp.Header), fmt.Errorf("%s: %s%s", where, status, serverMessage(data))
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		hint := "check $" + c.cfg.APIKeyEnv
		if c.key == "" {
			hint += " (it is not set)"
		}
		return nil, -1, retry.Permanent(fmt.Errorf("%s: %s: %s%s", where, status, hint, serverMessage(data)))
	case code == http.StatusNotFound:
		return nil, -1, retry.Permanent(fmt.Errorf("%s: %s: check the base URL (requests go to %s) and model %q%s", where, status, c.endpoint, c.cfg.Model, serverMessage(data)))
	default:
		return nil, -1, retry.Permanent(fmt.Errorf("%s: %s%s", where, status, serverMessage(data)))
	}
	rows, err := c.parse(data, n)
	if err != nil {
		return nil, -1, retry.Permanent(fmt.Errorf("%s: %w", where, err))
	}
	return rows, -1, nil
}

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// parse decodes a 200 response and checks it holds one vector of the right
// length for each of the n inputs. Vectors are placed by their "index" field
// because the protocol does not promise response order.
func (c *Client) parse(data []byte, n int) ([][]float32, error) {
	var r embeddingResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("malformed response (%v): %s", err, snippet(data))
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("got %d embeddings for %d inputs", len(r.Data), n)
	}
	rows := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || rows[d.Index] != nil {
			return nil, fmt.Errorf("embedding index %d out of range or repeated (%d inputs)", d.Index, n)
		}
		want := c.dim
		if want == 0 {
			want = len(r.Data[0].Embedding)
		}
		if len(d.Embedding) != want || want == 0 {
			return nil, fmt.Errorf("embedding %d has dimension %d, want %d", d.Index, len(d.Embedding), want)
		}
		rows[d.Index] = d.Embedding
	}
	return rows, nil
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

// serverMessage extracts the error text servers put in a failed response
// (OpenAI: {"error":{"message":…}}, vLLM: {"message":…}, TEI/FastAPI:
// {"detail":…}), formatted as ": text", or "" when there is none.
func serverMessage(data []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			return ": " + inner.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return ": " + s
		case e.Message != "":
			return ": " + e.Message
		case json.Unmarshal(e.Detail, &s) == nil && s != "":
			return ": " + s
		case len(e.Detail) > 0:
			return ": " + snippet(e.Detail)
		}
	}
	if s := snippet(data); s != "" {
		return ": " + s
	}
	return ""
}

// snippet returns the start of a body for an error message.
func snippet(data []byte) string {
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
