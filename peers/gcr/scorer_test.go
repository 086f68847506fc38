package gcr

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
)

// newLLM returns a client of s that retries twice with millisecond
// backoffs.
func newLLM(t *testing.T, s *llmtest.Server, timeout time.Duration) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: s.BaseURL(), Model: "gcr-test", APIKeyEnv: "STEM_GCR_TEST_KEY", Timeout: timeout,
		MaxRetries: 2, BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// favour is a fake language model that prefers the path children,
// parents: " children" and " parents" get the log-probability -0.1, " ->"
// -0.5 and " <-" -0.7, closing the path -0.1 after parents and -4
// elsewhere, and every other token -3.
func favour(before, tok string) float64 {
	switch tok {
	case " children", " parents":
		return -0.1
	case " ->":
		return -0.5
	case " <-":
		return -0.7
	case " </PATH>":
		if strings.HasSuffix(before, "-> parents") {
			return -0.1
		}
		return -4
	}
	return -3
}

const sonsFather = "what is the father of mumtaz_mahal 's son ?"

func sonsFatherRequest(t *testing.T, g kg.Reader) plan.Request {
	return plan.Request{Question: sonsFather, Graph: g, Anchors: []int32{ent(t, g, "mumtaz_mahal")},
		Mentions: []string{"mumtaz_mahal"}, Strategy: schema.Precision}
}

func TestPrompt(t *testing.T) {
	want := "Reasoning path is a sequence of triples in the KG that connects the topic entities in the question " +
		"to answer entities. Given a question, please generate some reasoning paths in the KG starting from " +
		"the topic entities to answer the question.\n\n# Question: \nwho is x ?\n# Topic entities: \na, b\n# Reasoning Path:\n<PATH>"
	if got := Prompt("who is x ?", []string{"a", "b"}); got != want {
		t.Errorf("Prompt = %q, want %q", got, want)
	}
}

// TestLLMScorerPromptsAndScores checks the prompts an LLM scorer sends
// and that a path's score sums its continuations' token log-probabilities.
func TestLLMScorerPromptsAndScores(t *testing.T) {
	g := mughals(t)
	s := llmtest.NewServer(t, llmtest.ScriptedReply{Repeat: true, TokenLogprob: favour})
	c := newLLM(t, s, 5*time.Second)
	trie, err := Build(context.Background(), g, []int32{ent(t, g, "mumtaz_mahal")}, 2, Limits{MaxReach: 100, MaxNodes: 100})
	if err != nil {
		t.Fatal(err)
	}
	score, err := LLMScorer{LLM: c}.Begin(context.Background(), Query{Question: sonsFather, Anchors: []string{"mumtaz_mahal"}, Graph: g, Trie: trie})
	if err != nil {
		t.Fatal(err)
	}
	head := Prompt(sonsFather, []string{"mumtaz_mahal"}) + " mumtaz_mahal"
	cases := []struct {
		path          []schema.Step
		prompt        string // the prompt sent for the path's last step
		prefix, whole float64
	}{
		{[]schema.Step{{Rel: "children"}}, head + " -> children </PATH>", -0.6, -4.6},
		{[]schema.Step{{Rel: "parents", Dir: schema.Inverse}}, head + " <- parents </PATH>", -0.8, -4.8},
		{[]schema.Step{{Rel: "children"}, {Rel: "parents"}}, head + " -> children -> parents </PATH>", -1.2, -1.3},
		{[]schema.Step{{Rel: "children"}, {Rel: "children", Dir: schema.Inverse}}, head + " -> children <- children </PATH>", -1.4, -5.4},
	}
	nodes := make([]int32, len(cases))
	for i, c := range cases {
		toks := make([]Token, len(c.path))
		for j, st := range c.path {
			rel, _ := g.Relation(st.Rel)
			toks[j] = Token{Rel: rel, Inverse: st.Dir == schema.Inverse}
		}
		n, ok := trie.Find(toks)
		if !ok {
			t.Fatalf("trie lacks %v", c.path)
		}
		nodes[i] = n
	}
	// One step at a time, as decoding goes: the prefixes first.
	prefix, whole, err := score(context.Background(), nodes[:2])
	if err != nil {
		t.Fatal(err)
	}
	p2, w2, err := score(context.Background(), nodes[2:])
	if err != nil {
		t.Fatal(err)
	}
	prefix, whole = append(prefix, p2...), append(whole, w2...)
	var prompts []string
	for _, r := range s.Requests() {
		prompts = append(prompts, r.Prompt)
		if r.Path != "/v1/completions" || !*r.Echo || r.Logprobs == nil || *r.MaxTokens != 1 {
			t.Errorf("request %s", r.Raw)
		}
	}
	for i, c := range cases {
		if math.Abs(float64(prefix[i])-c.prefix) > 1e-5 || math.Abs(float64(whole[i])-c.whole) > 1e-5 {
			t.Errorf("scores of %v = %g as a prefix and %g whole, want %g and %g", c.path, prefix[i], whole[i], c.prefix, c.whole)
		}
		if !slices.Contains(prompts, c.prompt) {
			t.Errorf("no prompt %q among %q", c.prompt, prompts)
		}
	}
	if len(prompts) != len(cases) {
		t.Errorf("%d prompts sent, want %d", len(prompts), len(cases))
	}
}

// TestLLMScorerRetrieve decodes with the LLM alone (no plan term) and
// counts the tokens the client spent.
func TestLLMScorerRetrieve(t *testing.T) {
	g := mughals(t)
	s := llmtest.NewServer(t, llmtest.ScriptedReply{Repeat: true, TokenLogprob: favour})
	c := newLLM(t, s, 5*time.Second)
	r := newOn(t, g, Config{Scorer: ScorerLLM, LLM: c, Beam: 1})
	if r.cfg.Temperature != 1 {
		t.Errorf("temperature %g, want 1 under the LLM scorer", r.cfg.Temperature)
	}
	ev, err := r.Retrieve(context.Background(), sonsFatherRequest(t, g))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range ev.Trace.Answers {
		got = append(got, a.Name)
	}
	if want := []string{"mumtaz_mahal", "shah_jahan"}; !slices.Equal(got, want) {
		t.Errorf("answers %q, want %q (chains %q)", got, want, ev.Trace.Chains)
	}
	var want llm.Usage
	for _, req := range s.Requests() {
		want.PromptTokens += int64(len(llmtest.Tokens(req.Prompt)))
		want.Requests++
	}
	// Beam 1: the root's 2 children, then the best one's 2 children.
	if u := c.Usage(); u != want || want.Requests != 4 {
		t.Errorf("usage %+v, want %+v over 4 requests", u, want)
	}
}

// TestLLMScorerFailures checks that a failing language model fails the
// question, with an error that names it, and not the retriever.
func TestLLMScorerFailures(t *testing.T) {
	cases := []struct {
		name     string
		reply    llmtest.ScriptedReply // every request's until healed
		deadline time.Duration
		wantErr  string
		wantIs   error
	}{
		{name: "malformed replies are retried, then fail the question", reply: llmtest.Malformed(`{"choices":[{"text":"","logprobs":null}]}`),
			wantErr: "no choices[0].logprobs (does the server support echo with logprobs?) (gave up after 3 attempts)"},
		{name: "a stalled server meets the question's deadline", reply: llmtest.ScriptedReply{Delay: 5 * time.Second},
			deadline: 50 * time.Millisecond, wantErr: "context deadline exceeded", wantIs: context.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := mughals(t)
			var healed atomic.Bool
			tc.reply.Repeat = true
			tc.reply.Match = func(llmtest.Request) bool { return !healed.Load() }
			s := llmtest.NewServer(t, tc.reply)
			r := newOn(t, g, Config{Scorer: ScorerLLM, LLM: newLLM(t, s, 10*time.Second), Beam: 1})
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			start := time.Now()
			_, err := r.Retrieve(ctx, sonsFatherRequest(t, g))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), sonsFather) {
				t.Fatalf("error %v, want one naming the question and containing %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v is not %v", err, tc.wantIs)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("failure took %v", d)
			}
			if n := len(s.Requests()); tc.deadline == 0 && n < 3 {
				t.Errorf("%d requests, want a retried one", n)
			}
			// The retriever still answers the next question.
			healed.Store(true)
			s.Push(llmtest.ScriptedReply{Repeat: true, TokenLogprob: favour})
			if _, err := r.Retrieve(context.Background(), sonsFatherRequest(t, g)); err != nil {
				t.Errorf("next question: %v", err)
			}
		})
	}
}

func TestLLMScorerConfig(t *testing.T) {
	g := mughals(t)
	for _, cfg := range []Config{{Scorer: ScorerLLM}, {Scorer: "gpt"}} {
		if _, err := newRetriever(plan.Env{Graph: g}, cfg); err == nil {
			t.Errorf("config %+v: no error", cfg)
		}
	}
	// The LLM scorer needs no encoder.
	s := llmtest.NewServer(t)
	if _, err := newRetriever(plan.Env{Graph: g}, Config{Scorer: ScorerLLM, LLM: newLLM(t, s, time.Second)}); err != nil {
		t.Error(err)
	}
}
