package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/stem-kgqa/stem/internal/retry"
)

// Completer is what code that continues a raw prompt depends on (DoG
// writes its free text between triples that way). *Client implements it.
type Completer interface {
	Complete(ctx context.Context, prompt string, maxTokens int, stop []string) (string, error)
}

var _ Completer = (*Client)(nil)

// textRequest is the body of POST /completions continuing a prompt,
// greedily.
type textRequest struct {
	Model       string   `json:"model"`
	Prompt      string   `json:"prompt"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	Temperature float64  `json:"temperature"`
}

// textReply is the part of a text completion Complete reads.
type textReply struct {
	Choices []struct {
		Text string `json:"text"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// Complete continues prompt greedily (POST BaseURL + "/completions", a
// raw prompt with no chat template), up to maxTokens (0 leaves it to the
// server) or a stop string, through the same retries, concurrency limit
// and usage totals as Chat. Replies are not cached.
func (c *Client) Complete(ctx context.Context, prompt string, maxTokens int, stop []string) (string, error) {
	if c.closed.Load() {
		return "", errors.New("llm: Complete on a closed client")
	}
	if prompt == "" {
		return "", errors.New("llm: Complete of an empty prompt")
	}
	body, err := json.Marshal(textRequest{Model: c.cfg.Model, Prompt: prompt, MaxTokens: maxTokens, Stop: stop})
	if err != nil {
		return "", fmt.Errorf("llm: encode completion request: %w", err)
	}
	endpoint := c.cfg.BaseURL + "/completions"
	type result struct {
		text  string
		usage Usage
	}
	r, err := retry.Do(ctx, c.cfg.MaxRetries, c.backoff(), func() (result, time.Duration, error) {
		return exchange(ctx, c, endpoint, "completions server", body, 1, func(status int, data []byte) (result, error) {
			var rep textReply
			if err := json.Unmarshal(data, &rep); err != nil {
				return result{}, retry.Permanent(fmt.Errorf("malformed response (%d %s): %v", status, http.StatusText(status), err))
			}
			if len(rep.Choices) == 0 {
				return result{}, retry.Permanent(fmt.Errorf("malformed response (%d %s): no choices", status, http.StatusText(status)))
			}
			return result{rep.Choices[0].Text, Usage{PromptTokens: rep.Usage.PromptTokens, CompletionTokens: rep.Usage.CompletionTokens, Requests: 1}}, nil
		})
	})
	if err != nil {
		return "", fmt.Errorf("llm: continue %q: %w", oneLine(prompt), err)
	}
	c.mu.Lock()
	c.usage = c.usage.Plus(r.usage)
	c.mu.Unlock()
	return r.text, nil
}
