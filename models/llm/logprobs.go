package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/stem-kgqa/stem/internal/retry"
)

// PromptScorer is what code that scores text by a language model's
// log-probabilities depends on (GCR's path scorer). *Client implements it;
// tests use package llmtest's server.
type PromptScorer interface {
	PromptLogprobs(ctx context.Context, prompt string) (Logprobs, error)
}

var _ PromptScorer = (*Client)(nil)

// Logprobs is a prompt as the server's tokenizer split it, each token with
// its log-probability given the tokens before it.
type Logprobs struct {
	Tokens []string
	// Offsets[i] is the byte offset in the prompt where Tokens[i] starts.
	Offsets []int
	// Logprobs[i] is ln P(Tokens[i] | Tokens[:i]). The first token has no
	// context (the server sends null) and gets 0.
	Logprobs []float64
	// Usage is what the call cost.
	Usage Usage
}

// Sum returns the summed log-probability of the tokens that end in
// (from, to] of the prompt's bytes: the log-probability of prompt[from:to]
// given the text before it. A token that straddles from counts, since it
// carries text of the span; one that straddles to does not.
func (l Logprobs) Sum(from, to int) float64 {
	var sum float64
	for i, off := range l.Offsets {
		if end := off + len(l.Tokens[i]); end > from && end <= to {
			sum += l.Logprobs[i]
		}
	}
	return sum
}

// completionRequest is the body of POST /completions asking for the
// prompt's own log-probabilities: echo returns the prompt's tokens and
// max_tokens 1 (not 0, which llama.cpp's server rejects) generates one
// more, which PromptLogprobs cuts off.
type completionRequest struct {
	Model       string  `json:"model"`
	Prompt      string  `json:"prompt"`
	MaxTokens   int     `json:"max_tokens"`
	Echo        bool    `json:"echo"`
	Logprobs    int     `json:"logprobs"`
	Temperature float64 `json:"temperature"`
}

// completionReply is the part of a text completion PromptLogprobs reads.
type completionReply struct {
	Choices []struct {
		Logprobs *struct {
			Tokens        []string   `json:"tokens"`
			TokenLogprobs []*float64 `json:"token_logprobs"`
			TextOffset    []int      `json:"text_offset"`
		} `json:"logprobs"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// PromptLogprobs asks the server (POST BaseURL + "/completions", which
// vLLM and llama.cpp's server serve) for the log-probability of every
// token of prompt, through the same retries, backoff, concurrency limit
// and usage totals as Chat. Unlike Chat it retries a malformed reply too:
// the request has no sampling in it, so a reply without log-probabilities
// is a server's or proxy's hiccup (a body cut short under load) rather
// than an answer it would give again. Replies are not cached.
func (c *Client) PromptLogprobs(ctx context.Context, prompt string) (Logprobs, error) {
	if c.closed.Load() {
		return Logprobs{}, errors.New("llm: PromptLogprobs on a closed client")
	}
	if prompt == "" {
		return Logprobs{}, errors.New("llm: PromptLogprobs of an empty prompt")
	}
	body, err := json.Marshal(completionRequest{Model: c.cfg.Model, Prompt: prompt, MaxTokens: 1, Echo: true, Logprobs: 1})
	if err != nil {
		return Logprobs{}, fmt.Errorf("llm: encode completion request: %w", err)
	}
	endpoint := c.cfg.BaseURL + "/completions"
	l, err := retry.Do(ctx, c.cfg.MaxRetries, c.backoff(), func() (Logprobs, time.Duration, error) {
		return exchange(ctx, c, endpoint, "completions server", body, 1, func(status int, data []byte) (Logprobs, error) {
			return parseLogprobs(status, data, prompt)
		})
	})
	if err != nil {
		return Logprobs{}, fmt.Errorf("llm: prompt log-probabilities of %q: %w", oneLine(prompt), err)
	}
	c.mu.Lock()
	c.usage = c.usage.Plus(l.Usage)
	c.mu.Unlock()
	return l, nil
}

// parseLogprobs reads a completion reply's echoed prompt tokens, leaving
// out the generated ones: those past the prompt's token count, or, when
// the server does not report it, those starting at or after its end.
func parseLogprobs(status int, data []byte, prompt string) (Logprobs, error) {
	var comp completionReply
	if err := json.Unmarshal(data, &comp); err != nil {
		return Logprobs{}, fmt.Errorf("malformed response (%d %s): %v", status, http.StatusText(status), err)
	}
	if len(comp.Choices) == 0 || comp.Choices[0].Logprobs == nil {
		return Logprobs{}, errors.New("malformed response: no choices[0].logprobs (does the server support echo with logprobs?)")
	}
	lp := comp.Choices[0].Logprobs
	if len(lp.Tokens) == 0 || len(lp.TokenLogprobs) != len(lp.Tokens) || (lp.TextOffset != nil && len(lp.TextOffset) != len(lp.Tokens)) {
		return Logprobs{}, fmt.Errorf("malformed response: %d tokens, %d token_logprobs, %d text_offset", len(lp.Tokens), len(lp.TokenLogprobs), len(lp.TextOffset))
	}
	offsets := lp.TextOffset
	if offsets == nil {
		// Servers that leave text_offset out echo the prompt verbatim, so
		// the tokens' lengths place them.
		offsets = make([]int, len(lp.Tokens))
		at := 0
		for i, t := range lp.Tokens {
			offsets[i] = at
			at += len(t)
		}
	}
	n := len(lp.Tokens)
	if p := int(comp.Usage.PromptTokens); p > 0 && p <= n {
		n = p
	} else {
		for n > 0 && offsets[n-1] >= len(prompt) {
			n--
		}
	}
	out := Logprobs{Tokens: lp.Tokens[:n], Offsets: offsets[:n], Logprobs: make([]float64, n),
		Usage: Usage{PromptTokens: comp.Usage.PromptTokens, CompletionTokens: comp.Usage.CompletionTokens, Requests: 1}}
	for i, v := range lp.TokenLogprobs[:n] {
		switch {
		case v == nil && i == 0:
		case v == nil:
			return Logprobs{}, fmt.Errorf("malformed response: token %d (%q) has no log-probability", i, lp.Tokens[i])
		case math.IsNaN(*v) || *v > 0:
			return Logprobs{}, fmt.Errorf("malformed response: token %d (%q) has log-probability %g", i, lp.Tokens[i], *v)
		default:
			out.Logprobs[i] = *v
		}
	}
	return out, nil
}
