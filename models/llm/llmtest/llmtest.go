// Package llmtest provides a scripted fake of an OpenAI-compatible
// chat-completions server, so that code which talks to a language model
// (package llm and the planners built on it) can be tested without one.
// It serves text completions with echoed prompt log-probabilities too
// (POST /v1/completions), over a whitespace tokenizer (Tokens).
//
// It lives in a non-test file so tests in any package can use it. It does not
// import package llm: it fakes the wire protocol, which keeps it honest about
// what a real server sees.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ScriptedReply is one answer the fake server gives. Exactly one kind of
// answer applies, checked in this order: Status set and not 200 gives an HTTP
// error whose body is Body; Body set gives a 200 with Body sent verbatim (for
// malformed replies); otherwise a normal completion with one choice per
// Content entry. Delay applies to every kind.
type ScriptedReply struct {
	// Match, when set, restricts this reply to requests it returns true for;
	// replies without Match are taken in order. See NewServer.
	Match func(Request) bool
	// Repeat keeps the reply in the script after use, so it answers every
	// request it matches (a default answer, or a canned answer per question).
	Repeat bool

	// Content holds one string per choice. The server returns exactly these,
	// whatever n the request asked for, so servers that ignore n can be faked.
	Content []string
	// FinishReason of every choice (default "stop").
	FinishReason string
	// PromptTokens and CompletionTokens are reported in "usage". When zero
	// they are the number of whitespace-separated words in the request's
	// messages and in Content, so token accounting is predictable.
	PromptTokens, CompletionTokens int64

	// Status is the HTTP status to answer with (0 means 200).
	Status int
	// Body is sent verbatim instead of a generated JSON completion.
	Body string
	// ContentType of a verbatim Body (default "application/json").
	ContentType string
	// Header is added to the response (for example Retry-After).
	Header http.Header
	// Delay holds the answer back this long, or until the client gives up.
	Delay time.Duration

	// TokenLogprob gives a text completion's token (of the prompt, then
	// of the generated Content[0]) its log-probability after the text
	// before it, as a language model would; nil gives -1 to every token.
	// The first token of an echoed prompt gets null, as servers send.
	TokenLogprob func(before, token string) float64
}

// Reply is a completion with one choice per content string.
func Reply(content ...string) ScriptedReply { return ScriptedReply{Content: content} }

// Error is an HTTP error with status code and body (an OpenAI-style error
// body is {"error":{"message":"..."}}).
func Error(status int, body string) ScriptedReply {
	return ScriptedReply{Status: status, Body: body}
}

// Malformed is a 200 response whose body is not a valid completion.
func Malformed(body string) ScriptedReply { return ScriptedReply{Body: body} }

// Request is what the server received, decoded from the wire. Optional
// sampling fields are nil when the client did not send them.
type Request struct {
	Path     string
	Header   http.Header
	Received time.Time
	Raw      []byte // the request body as sent

	Model               string
	Messages            []Message
	Temperature         *float64
	TopP                *float64
	MaxTokens           *int64
	MaxCompletionTokens *int64
	N                   *int64
	Seed                *int64
	Stop                []string

	// Prompt, Echo and Logprobs are a text completion request's (POST
	// /v1/completions); Prompt is "" and the others nil in a chat request.
	Prompt   string
	Echo     *bool
	Logprobs *int64
}

// Completion reports whether r is a text completion request rather than
// a chat one.
func (r Request) Completion() bool {
	return strings.HasSuffix(r.Path, "/completions") && !strings.HasSuffix(r.Path, "/chat/completions")
}

// Message is one chat message of a Request. Content given as an array of
// parts is flattened to the concatenation of its text parts.
type Message struct {
	Role    string
	Content string
}

// LastUser returns the content of the last "user" message, or "" if none;
// matchers usually key on it.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Server is the fake server. Point clients at BaseURL().
type Server struct {
	*httptest.Server
	t testing.TB

	mu       sync.Mutex
	script   []ScriptedReply
	requests []Request

	inFlight, maxInFlight atomic.Int32
}

// NewServer starts a fake server that answers POST /v1/chat/completions and
// /v1/completions (and both without /v1) from replies. For each request it uses the first
// remaining reply whose Match is nil or returns true; a used reply is dropped
// unless Repeat is set. A request no reply fits is answered 500 and reported
// with t.Errorf, since it means the code under test sent more, or other,
// requests than the test expected. The server is closed by t.Cleanup.
func NewServer(t testing.TB, replies ...ScriptedReply) *Server {
	t.Helper()
	s := &Server{t: t, script: append([]ScriptedReply(nil), replies...)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the API root a client should be configured with
// (server URL + "/v1").
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Push appends replies to the script.
func (s *Server) Push(replies ...ScriptedReply) {
	s.mu.Lock()
	s.script = append(s.script, replies...)
	s.mu.Unlock()
}

// Requests returns a copy of the chat requests received so far, in arrival
// order (including ones answered with errors).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining is the number of replies left in the script (Repeat replies
// included).
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// MaxInFlight is the largest number of requests the server was handling at
// the same moment, for checking a client's concurrency limit.
func (s *Server) MaxInFlight() int { return int(s.maxInFlight.Load()) }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	in := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxInFlight.Load()
		if in <= m || s.maxInFlight.CompareAndSwap(m, in) {
			break
		}
	}
	switch r.URL.Path {
	case "/v1/chat/completions", "/chat/completions", "/v1/completions", "/completions":
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("llmtest: no route %s %s", r.Method, r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusNotFound, fmt.Sprintf("llmtest: no route %s %s", r.Method, r.URL.Path))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: reading body: "+err.Error())
		return
	}
	req, err := decodeRequest(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: "+err.Error())
		return
	}
	req.Path = r.URL.Path
	req.Header = r.Header.Clone()
	req.Received = time.Now()

	s.mu.Lock()
	s.requests = append(s.requests, req)
	reply, ok := s.take(req)
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("llmtest: no scripted reply left for request %d (last user message %q, prompt %q)", len(s.Requests()), req.LastUser(), req.Prompt)
		writeError(w, http.StatusInternalServerError, "llmtest: no scripted reply left")
		return
	}

	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	switch {
	case reply.Status != 0 && reply.Status != http.StatusOK:
		w.Header().Set("Content-Type", "application/json")
		if reply.ContentType != "" {
			w.Header().Set("Content-Type", reply.ContentType)
		}
		w.WriteHeader(reply.Status)
		io.WriteString(w, reply.Body)
	case reply.Body != "":
		ct := reply.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		io.WriteString(w, reply.Body)
	case req.Completion():
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(textCompletion(req, reply))
	default:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(completion(req, reply))
	}
}

// take removes and returns the first reply that fits req. s.mu must be held.
func (s *Server) take(req Request) (ScriptedReply, bool) {
	for i, r := range s.script {
		if r.Match != nil && !r.Match(req) {
			continue
		}
		if !r.Repeat {
			s.script = append(s.script[:i:i], s.script[i+1:]...)
		}
		return r, true
	}
	return ScriptedReply{}, false
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "llmtest"}})
}

type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	N                   *int64          `json:"n"`
	Seed                *int64          `json:"seed"`
	Stop                json.RawMessage `json:"stop"`
	Prompt              json.RawMessage `json:"prompt"`
	Echo                *bool           `json:"echo"`
	// Logprobs is a number in a text completion request, a boolean in a
	// chat one.
	Logprobs json.RawMessage `json:"logprobs"`
}

func decodeRequest(raw []byte) (Request, error) {
	var w wireRequest
	if err := json.Unmarshal(raw, &w); err != nil {
		return Request{}, fmt.Errorf("request body is not JSON: %v", err)
	}
	req := Request{
		Raw: raw, Model: w.Model, Temperature: w.Temperature, TopP: w.TopP,
		MaxTokens: w.MaxTokens, MaxCompletionTokens: w.MaxCompletionTokens, N: w.N, Seed: w.Seed, Echo: w.Echo,
	}
	if len(w.Prompt) > 0 && string(w.Prompt) != "null" {
		if err := json.Unmarshal(w.Prompt, &req.Prompt); err != nil {
			return Request{}, fmt.Errorf("prompt: want one string: %v", err)
		}
	}
	var lp int64
	if len(w.Logprobs) > 0 && json.Unmarshal(w.Logprobs, &lp) == nil {
		req.Logprobs = &lp
	}
	for i, m := range w.Messages {
		text, err := flatten(m.Content)
		if err != nil {
			return Request{}, fmt.Errorf("message %d content: %v", i, err)
		}
		req.Messages = append(req.Messages, Message{Role: m.Role, Content: text})
	}
	if len(w.Stop) > 0 && string(w.Stop) != "null" {
		var one string
		if json.Unmarshal(w.Stop, &one) == nil {
			req.Stop = []string{one}
		} else if err := json.Unmarshal(w.Stop, &req.Stop); err != nil {
			return Request{}, fmt.Errorf("stop: %v", err)
		}
	}
	return req, nil
}

// flatten reads message content given as a string or as an array of parts.
func flatten(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

type wireChoice struct {
	Index   int `json:"index"`
	Message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"message"`
	FinishReason string `json:"finish_reason"`
}

type wireCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
	} `json:"usage"`
}

func completion(req Request, r ScriptedReply) wireCompletion {
	c := wireCompletion{ID: "chatcmpl-llmtest", Object: "chat.completion", Created: 1700000000, Model: req.Model}
	c.Choices = make([]wireChoice, len(r.Content))
	fr := r.FinishReason
	if fr == "" {
		fr = "stop"
	}
	var words int64
	for i, text := range r.Content {
		c.Choices[i].Index = i
		c.Choices[i].Message.Role = "assistant"
		c.Choices[i].Message.Content = text
		c.Choices[i].FinishReason = fr
		words += int64(len(strings.Fields(text)))
	}
	c.Usage.PromptTokens = r.PromptTokens
	if c.Usage.PromptTokens == 0 {
		for _, m := range req.Messages {
			c.Usage.PromptTokens += int64(len(strings.Fields(m.Content)))
		}
	}
	c.Usage.CompletionTokens = r.CompletionTokens
	if c.Usage.CompletionTokens == 0 {
		c.Usage.CompletionTokens = words
	}
	c.Usage.TotalTokens = c.Usage.PromptTokens + c.Usage.CompletionTokens
	return c
}

// Tokens is the fake's tokenizer: each run of non-space characters with
// the whitespace before it (so the tokens concatenate to text, as a BPE
// tokenizer's do), and trailing whitespace as a token of its own.
func Tokens(text string) []string {
	var out []string
	start := 0
	inWord := false
	for i, r := range text {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if space && inWord {
			out = append(out, text[start:i])
			start = i
		}
		inWord = !space
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

type wireLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

type wireTextChoice struct {
	Index        int           `json:"index"`
	Text         string        `json:"text"`
	Logprobs     *wireLogprobs `json:"logprobs"`
	FinishReason string        `json:"finish_reason"`
}

type wireTextCompletion struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []wireTextChoice `json:"choices"`
	Usage   struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
	} `json:"usage"`
}

// textCompletion answers a text completion request: Content[0] (cut to
// max_tokens tokens) as the generated text, and, when the request asks
// for logprobs, the log-probabilities of the prompt's tokens (with echo)
// and the generated ones. Usage counts tokens unless the reply sets it.
func textCompletion(req Request, r ScriptedReply) wireTextCompletion {
	c := wireTextCompletion{ID: "cmpl-llmtest", Object: "text_completion", Created: 1700000000, Model: req.Model}
	var gen []string
	if len(r.Content) > 0 {
		gen = Tokens(r.Content[0])
	}
	if req.MaxTokens != nil && int64(len(gen)) > *req.MaxTokens {
		gen = gen[:*req.MaxTokens]
	}
	fr := r.FinishReason
	if fr == "" {
		fr = "length"
	}
	ch := wireTextChoice{Text: strings.Join(gen, ""), FinishReason: fr}
	prompt := Tokens(req.Prompt)
	if req.Logprobs != nil {
		lp := &wireLogprobs{}
		echo := req.Echo != nil && *req.Echo
		var toks []string
		if echo {
			toks = append(toks, prompt...)
		}
		toks = append(toks, gen...)
		text := req.Prompt + strings.Join(gen, "")
		at := 0
		if !echo {
			at = len(req.Prompt)
		}
		for i, tok := range toks {
			lp.Tokens = append(lp.Tokens, tok)
			lp.TextOffset = append(lp.TextOffset, at)
			before := text[:at]
			at += len(tok)
			if i == 0 && echo {
				lp.TokenLogprobs = append(lp.TokenLogprobs, nil)
				lp.TopLogprobs = append(lp.TopLogprobs, nil)
				continue
			}
			v := -1.0
			if r.TokenLogprob != nil {
				v = r.TokenLogprob(before, tok)
			}
			lp.TokenLogprobs = append(lp.TokenLogprobs, &v)
			lp.TopLogprobs = append(lp.TopLogprobs, map[string]float64{tok: v})
		}
		ch.Logprobs = lp
	}
	c.Choices = []wireTextChoice{ch}
	c.Usage.PromptTokens = r.PromptTokens
	if c.Usage.PromptTokens == 0 {
		c.Usage.PromptTokens = int64(len(prompt))
	}
	c.Usage.CompletionTokens = r.CompletionTokens
	if c.Usage.CompletionTokens == 0 {
		c.Usage.CompletionTokens = int64(len(gen))
	}
	c.Usage.TotalTokens = c.Usage.PromptTokens + c.Usage.CompletionTokens
	return c
}
