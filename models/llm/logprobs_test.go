package llm

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/models/llm/llmtest"
)

// halves gives a token the log-probability -n/2 after n bytes of text.
func halves(before, _ string) float64 { return -float64(len(before)) / 2 }

func TestPromptLogprobsSendsRequestAndReadsReply(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.ScriptedReply{Content: []string{" next"}, TokenLogprob: halves})
	c := newClient(t, s.BaseURL(), nil)
	l, err := c.PromptLogprobs(context.Background(), "a bc d")
	if err != nil {
		t.Fatal(err)
	}
	// The generated " next" is cut off; the first token has no context.
	if !slices.Equal(l.Tokens, []string{"a", " bc", " d"}) || !slices.Equal(l.Offsets, []int{0, 1, 4}) ||
		!slices.Equal(l.Logprobs, []float64{0, -0.5, -2}) {
		t.Errorf("logprobs %+v", l)
	}
	if want := (Usage{PromptTokens: 3, CompletionTokens: 1, Requests: 1}); l.Usage != want || c.Usage() != want {
		t.Errorf("usage %+v, client %+v, want %+v", l.Usage, c.Usage(), want)
	}
	r := s.Requests()[0]
	var body map[string]any
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	if r.Path != "/v1/completions" || r.Prompt != "a bc d" || r.Model != "test-model" || !*r.Echo || *r.Logprobs != 1 ||
		*r.MaxTokens != 1 || *r.Temperature != 0 || len(body) != 6 {
		t.Errorf("request %s", r.Raw)
	}
	// Tokens "a" [0,1), " bc" [1,4), " d" [4,6).
	for _, c := range []struct {
		from, to int
		want     float64
	}{{0, 6, -2.5}, {1, 6, -2.5}, {2, 6, -2.5}, {4, 6, -2}, {6, 6, 0}, {0, 4, -0.5}, {0, 5, -0.5}, {1, 4, -0.5}} {
		if got := l.Sum(c.from, c.to); got != c.want {
			t.Errorf("Sum(%d, %d) = %g, want %g", c.from, c.to, got, c.want)
		}
	}
}

func TestPromptLogprobsCutsGeneratedTokens(t *testing.T) {
	// A server that leaves usage and text_offset out: the tokens' lengths
	// place them, and the prompt's length places the cut.
	body := `{"choices":[{"text":" z","logprobs":{"tokens":["a"," b"," z"],"token_logprobs":[null,-0.25,-3]}}]}`
	s := llmtest.NewServer(t, llmtest.Malformed(body))
	c := newClient(t, s.BaseURL(), nil)
	l, err := c.PromptLogprobs(context.Background(), "a b")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.Tokens, []string{"a", " b"}) || !slices.Equal(l.Offsets, []int{0, 1}) || !slices.Equal(l.Logprobs, []float64{0, -0.25}) {
		t.Errorf("logprobs %+v", l)
	}
}

func TestPromptLogprobsFailures(t *testing.T) {
	good := llmtest.ScriptedReply{TokenLogprob: halves}
	slow := llmtest.ScriptedReply{Delay: time.Second, TokenLogprob: halves}
	cases := []struct {
		name         string
		replies      []llmtest.ScriptedReply
		edit         func(*Config)
		ctxTimeout   time.Duration
		wantErr      string // "" for success
		wantRequests int
	}{
		{name: "malformed then good is retried", replies: []llmtest.ScriptedReply{llmtest.Malformed(`{"choices": [`), good}, wantRequests: 2},
		{name: "no logprobs then good is retried", replies: []llmtest.ScriptedReply{llmtest.Malformed(`{"choices":[{"text":""}]}`), good}, wantRequests: 2},
		{name: "malformed every time gives up", replies: []llmtest.ScriptedReply{
			llmtest.Malformed(`{"choices": [`), llmtest.Malformed(`{"choices":[{"logprobs":{"tokens":["a"],"token_logprobs":[]}}]}`),
			llmtest.Malformed(`{"choices":[{"logprobs":{"tokens":["a"," b"],"token_logprobs":[null,null]}}]}`)},
			wantErr:      `llm: prompt log-probabilities of "a b": completions server at {URL}: malformed response: token 1 (" b") has no log-probability (gave up after 3 attempts)`,
			wantRequests: 3},
		{name: "404 names the completions endpoint", replies: []llmtest.ScriptedReply{llmtest.Error(404, `{"error":{"message":"no such route"}}`)},
			wantErr: "404 Not Found: check the base URL (requests go to {URL}/completions)", wantRequests: 1},
		{name: "500 then good", replies: []llmtest.ScriptedReply{llmtest.Error(500, "boom"), good}, wantRequests: 2},
		{name: "stalled server hits the caller's deadline", replies: []llmtest.ScriptedReply{slow},
			ctxTimeout: 50 * time.Millisecond, wantErr: "context deadline exceeded", wantRequests: 1},
		{name: "stalled server hits the attempt timeout, then answers", replies: []llmtest.ScriptedReply{slow, good},
			edit: func(c *Config) { c.Timeout = 40 * time.Millisecond }, wantRequests: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.NewServer(t, tc.replies...)
			c := newClient(t, s.BaseURL(), tc.edit)
			ctx := context.Background()
			if tc.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
				defer cancel()
			}
			l, err := c.PromptLogprobs(ctx, "a b")
			want := strings.ReplaceAll(tc.wantErr, "{URL}", s.BaseURL())
			switch {
			case want == "" && err != nil:
				t.Fatalf("error %v", err)
			case want == "" && !slices.Equal(l.Logprobs, []float64{0, -0.5}):
				t.Errorf("logprobs %+v", l)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("error %v, want one containing %q", err, want)
			}
			if tc.ctxTimeout > 0 && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v is not a deadline", err)
			}
			if n := len(s.Requests()); n != tc.wantRequests {
				t.Errorf("%d requests, want %d", n, tc.wantRequests)
			}
		})
	}
}

func TestPromptLogprobsRejects(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1/v1", nil)
	if _, err := c.PromptLogprobs(context.Background(), ""); err == nil {
		t.Error("empty prompt: no error")
	}
	c.Close()
	if _, err := c.PromptLogprobs(context.Background(), "a"); err == nil {
		t.Error("closed client: no error")
	}
}

// Complete continues a raw prompt through /completions, greedily, with
// the stop strings and token bound sent, and counts its usage.
func TestComplete(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Reply(" This tells us X. Therefore, the answer is * Y."), llmtest.Malformed(`{"choices": []}`))
	c, err := New(Config{BaseURL: s.BaseURL(), Model: "m", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.Complete(context.Background(), "1. < A -> r -> B >", 64, []string{"<"})
	if err != nil || got != " This tells us X. Therefore, the answer is * Y." {
		t.Fatalf("Complete = %q, %v", got, err)
	}
	req := s.Requests()[0]
	if !req.Completion() || req.Prompt != "1. < A -> r -> B >" || req.MaxTokens == nil || *req.MaxTokens != 64 || len(req.Stop) != 1 || req.Stop[0] != "<" || req.Echo != nil {
		t.Errorf("request %+v", req)
	}
	if u := c.Usage(); u.Requests != 1 || u.CompletionTokens == 0 {
		t.Errorf("usage %+v", u)
	}
	if _, err := c.Complete(context.Background(), "p", 0, nil); err == nil || !strings.Contains(err.Error(), "no choices") {
		t.Errorf("malformed: %v", err)
	}
	if _, err := c.Complete(context.Background(), "", 0, nil); err == nil {
		t.Error("empty prompt accepted")
	}
}
