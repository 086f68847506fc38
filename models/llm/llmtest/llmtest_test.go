package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func TestServerScript(t *testing.T) {
	byQuestion := func(q string) func(Request) bool {
		return func(r Request) bool { return r.LastUser() == q }
	}
	s := NewServer(t,
		ScriptedReply{Match: byQuestion("capital?"), Content: []string{"Paris"}, Repeat: true},
		Reply("first", "second"),
		ScriptedReply{Status: 429, Body: `{"error":{"message":"slow"}}`, Header: http.Header{"Retry-After": {"1"}}},
	)
	url := s.BaseURL() + "/chat/completions"

	// Matched reply, content given as parts, stop as a single string.
	code, _, body := post(t, url, `{"model":"m","messages":[{"role":"system","content":"s"},`+
		`{"role":"user","content":[{"type":"text","text":"capital"},{"type":"text","text":"?"}]}],"stop":"END","n":1}`)
	var c wireCompletion
	if err := json.Unmarshal([]byte(body), &c); err != nil || code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if len(c.Choices) != 1 || c.Choices[0].Message.Content != "Paris" || c.Object != "chat.completion" ||
		c.Model != "m" || c.Usage.PromptTokens != 2 || c.Usage.CompletionTokens != 1 || c.Usage.TotalTokens != 3 {
		t.Errorf("completion = %+v", c)
	}

	// Unmatched requests take the ordered replies; the Repeat reply stays.
	code, _, body = post(t, s.URL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"other"}]}`)
	if err := json.Unmarshal([]byte(body), &c); err != nil || code != 200 || len(c.Choices) != 2 ||
		c.Choices[1].Index != 1 || c.Choices[1].Message.Content != "second" || c.Choices[1].FinishReason != "stop" {
		t.Errorf("%d %s", code, body)
	}
	code, h, body := post(t, url, `{"model":"m","messages":[{"role":"user","content":"other"}]}`)
	if code != 429 || h.Get("Retry-After") != "1" || !strings.Contains(body, "slow") {
		t.Errorf("%d %v %s", code, h, body)
	}
	if s.Remaining() != 1 {
		t.Errorf("remaining = %d, want 1 (the Repeat reply)", s.Remaining())
	}
	s.Push(Malformed(`{"choices":`))
	if _, _, body = post(t, url, `{"model":"m","messages":[{"role":"user","content":"x"}]}`); body != `{"choices":` {
		t.Errorf("malformed body = %q", body)
	}

	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/chat/completions" || !slices.Equal(r.Stop, []string{"END"}) || *r.N != 1 ||
		r.Messages[1] != (Message{Role: "user", Content: "capital?"}) || r.Temperature != nil {
		t.Errorf("request 0 = %+v", r)
	}
	if reqs[1].Path != "/chat/completions" {
		t.Errorf("request 1 path %q", reqs[1].Path)
	}
	if s.MaxInFlight() != 1 {
		t.Errorf("max in flight = %d", s.MaxInFlight())
	}
}

func TestServerRejectsOtherRoutes(t *testing.T) {
	s := NewServer(t)
	if code, _, _ := post(t, s.URL+"/v1/embeddings", `{}`); code != http.StatusNotFound {
		t.Errorf("embeddings route: %d", code)
	}
	if code, _, _ := post(t, s.BaseURL()+"/chat/completions", `not json`); code != http.StatusBadRequest {
		t.Errorf("bad JSON: %d", code)
	}
	if len(s.Requests()) != 0 {
		t.Errorf("rejected requests were recorded")
	}
}

func TestTokens(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a bc", []string{"a", " bc"}},
		{" a\n# b ", []string{" a", "\n#", " b", " "}},
	} {
		if got := Tokens(c.text); !slices.Equal(got, c.want) || strings.Join(got, "") != c.text {
			t.Errorf("Tokens(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestServerTextCompletion(t *testing.T) {
	s := NewServer(t, ScriptedReply{Content: []string{" x y"}, TokenLogprob: func(before, tok string) float64 { return -float64(len(before)) / 2 }})
	code, _, body := post(t, s.BaseURL()+"/completions", `{"model":"m","prompt":"a bc d","max_tokens":1,"echo":true,"logprobs":1}`)
	var c wireTextCompletion
	if err := json.Unmarshal([]byte(body), &c); err != nil || code != 200 || len(c.Choices) != 1 {
		t.Fatalf("%d %s", code, body)
	}
	lp := c.Choices[0].Logprobs
	if c.Object != "text_completion" || c.Choices[0].Text != " x" || lp == nil ||
		!slices.Equal(lp.Tokens, []string{"a", " bc", " d", " x"}) || !slices.Equal(lp.TextOffset, []int{0, 1, 4, 6}) ||
		lp.TokenLogprobs[0] != nil || *lp.TokenLogprobs[1] != -0.5 || *lp.TokenLogprobs[2] != -2 || *lp.TokenLogprobs[3] != -3 ||
		c.Usage.PromptTokens != 3 || c.Usage.CompletionTokens != 1 {
		t.Errorf("completion = %s", body)
	}
	r := s.Requests()[0]
	if !r.Completion() || r.Prompt != "a bc d" || !*r.Echo || *r.Logprobs != 1 || *r.MaxTokens != 1 || r.LastUser() != "" {
		t.Errorf("request = %+v", r)
	}
}
