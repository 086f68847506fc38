package dog

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
	c, err := llm.New(llm.Config{BaseURL: s.BaseURL(), Model: "dog-test", APIKeyEnv: "STEM_DOG_TEST_KEY", Timeout: timeout,
		MaxRetries: 2, BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// father is a fake language model that knows shah_jahan is shah_shuja's
// father: every token gets -0.2 but " children" and " parents" (-0.1),
// " shah_jahan" (-0.05) and " mumtaz_mahal" after "parents ->" (-3).
// Concluding (" Therefore,") gets -0.01 after the triple naming
// shah_jahan, -6 after a chain's first triple and -1 after any other; the
// rest of the conclusion 0.
func father(before, tok string) float64 {
	switch tok {
	case " children", " parents":
		return -0.1
	case " shah_jahan":
		return -0.05
	case " mumtaz_mahal":
		if strings.HasSuffix(before, "parents ->") {
			return -3
		}
	case " the", " answer", " is":
		return 0
	case " Therefore,":
		// The examples of the prompt conclude too: only the question's
		// own answer counts.
		answer := before[strings.LastIndex(before, "to the question."):]
		switch {
		case strings.HasSuffix(before, "shah_jahan >"):
			return -0.01
		case !strings.Contains(answer, " 2. <"):
			return -6
		}
		return -1
	}
	return -0.2
}

const sonsFather = "what is the father of mumtaz_mahal 's son ?"

func sonsFatherRequest(t *testing.T, g kg.Reader) plan.Request {
	return plan.Request{Question: sonsFather, Graph: g, Anchors: []int32{ent(t, g, "mumtaz_mahal")},
		Mentions: []string{"mumtaz_mahal"}, Strategy: schema.Precision}
}

func TestPrompt(t *testing.T) {
	p := Prompt("who is x ?", []string{"a -> r -> b", "b -> s -> c"})
	for _, want := range []string{
		"You are a helpful assistant that can analyse the knowledge graphs",
		"1. < Grand Bahama -> location.location.containedby -> Bahamas >",
		"Therefore, the answer is * Ice Hockey.",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if want := "*Example 4:** Context: [ a -> r -> b | b -> s -> c ] Question: who is x ? Answer: Let’s break down the steps to find the answer to the question."; !strings.HasSuffix(p, want) {
		t.Errorf("prompt ends %q, want %q", p[len(p)-len(want):], want)
	}
}

// TestLLMScorerPromptsAndScores checks the prompts the LLM scorer sends
// and the scores it reads off their log-probabilities.
func TestLLMScorerPromptsAndScores(t *testing.T) {
	g := mughals(t)
	s := llmtest.NewServer(t, llmtest.ScriptedReply{Repeat: true, TokenLogprob: father})
	c := newLLM(t, s, 5*time.Second)
	mm := ent(t, g, "mumtaz_mahal")
	score, err := LLMScorer{LLM: c, ContextTriples: 2}.Begin(context.Background(), Query{Question: sonsFather, Graph: g, Anchors: []int32{mm}})
	if err != nil {
		t.Fatal(err)
	}
	head := Prompt(sonsFather, []string{"mumtaz_mahal -> children -> shah_shuja", "shah_shuja -> parents -> mumtaz_mahal"})
	first, _ := candidates(g, []int32{mm}, Chain{}, 10)
	next, end, err := score(context.Background(), Chain{}, first)
	if err != nil {
		t.Fatal(err)
	}
	// shah_shuja's parents triple, walked back from mumtaz_mahal, is still
	// written head to tail.
	stop1 := math.Log(-math.Expm1(-6))
	want := []struct {
		prompt    string
		next, end float64
	}{
		{head + " 1. < mumtaz_mahal -> children -> shah_shuja >" + Conclude, -1.5 + stop1, -7.5},
		{head + " 1. < shah_shuja -> parents -> mumtaz_mahal >" + Conclude, -4.3 + stop1, -10.3},
	}
	var prompts []string
	for _, r := range s.Requests() {
		prompts = append(prompts, r.Prompt)
		if r.Path != "/v1/completions" || !*r.Echo || r.Logprobs == nil {
			t.Errorf("request %s", r.Raw)
		}
	}
	for i, w := range want {
		if math.Abs(float64(next[i])-w.next) > 1e-5 || math.Abs(float64(end[i])-w.end) > 1e-5 {
			t.Errorf("step %d: next %g, end %g; want %g, %g", i, next[i], end[i], w.next, w.end)
		}
		if !slices.Contains(prompts, w.prompt) {
			t.Errorf("no prompt %q", w.prompt)
		}
	}
	// The second step extends the first chain's score and prompt.
	c1 := Chain{Steps: first[:1], Score: next[0]}
	second, _ := candidates(g, []int32{mm}, c1, 10)
	next2, end2, err := score(context.Background(), c1, second)
	if err != nil {
		t.Fatal(err)
	}
	// second holds the parents triples back to mumtaz_mahal and on to
	// shah_jahan, in triple id order.
	wantNext := []float64{float64(next[0]) - 4.3 + math.Log(-math.Expm1(-1)), float64(next[0]) - 1.35 + math.Log(-math.Expm1(-0.01))}
	wantEnd := []float64{float64(next[0]) - 5.3, float64(next[0]) - 1.36}
	for i := range second {
		if math.Abs(float64(next2[i])-wantNext[i]) > 1e-4 || math.Abs(float64(end2[i])-wantEnd[i]) > 1e-4 {
			t.Errorf("second step %d: next %g, end %g; want %g, %g", i, next2[i], end2[i], wantNext[i], wantEnd[i])
		}
	}
	last := s.Requests()[len(s.Requests())-1].Prompt
	if !strings.HasPrefix(last, head+" 1. < mumtaz_mahal -> children -> shah_shuja > 2. < shah_shuja -> parents -> ") {
		t.Errorf("second step prompt %q", last[len(head):])
	}
}

// TestLLMRetrieve decodes with the LLM: the chain to shah_jahan wins, as
// the fake model concludes after it.
func TestLLMRetrieve(t *testing.T) {
	g := mughals(t)
	s := llmtest.NewServer(t, llmtest.ScriptedReply{Repeat: true, TokenLogprob: father})
	c := newLLM(t, s, 5*time.Second)
	r, err := newRetriever(plan.Env{}, Config{Scorer: ScorerLLM, LLM: c, Beam: 2, Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := r.Retrieve(context.Background(), sonsFatherRequest(t, g))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(ev.Trace.Answers), []string{"shah_jahan"}; !slices.Equal(got, want) {
		t.Errorf("answers %q, want %q (chains %q)", got, want, ev.Trace.Chains)
	}
	if want := []string{"mumtaz_mahal -> children -> shah_shuja -> parents -> shah_jahan"}; !slices.Equal(ev.Trace.Chains, want) {
		t.Errorf("chains %q, want %q", ev.Trace.Chains, want)
	}
	if ev.Trace.Unbacked != 0 {
		t.Errorf("unbacked %d", ev.Trace.Unbacked)
	}
	// Beam 2: mumtaz_mahal's 2 triples, then 2 continuations of each.
	if u := c.Usage(); u.Requests != 6 {
		t.Errorf("usage %+v, want 6 requests", u)
	}
}

// TestLLMFailures checks that a failing language model fails the
// question, with an error that names it, and not the retriever.
func TestLLMFailures(t *testing.T) {
	cases := []struct {
		name     string
		reply    llmtest.ScriptedReply // every request's until healed
		deadline time.Duration
		wantErr  string
		wantIs   error
	}{
		{name: "malformed replies are retried, then fail the question", reply: llmtest.Malformed(`{"choices":[{"text":"","logprobs":null}]}`),
			wantErr: "no choices[0].logprobs"},
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
			r, err := newRetriever(plan.Env{}, Config{Scorer: ScorerLLM, LLM: newLLM(t, s, 10*time.Second), Beam: 1})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			start := time.Now()
			_, err = r.Retrieve(ctx, sonsFatherRequest(t, g))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), sonsFather) {
				t.Fatalf("error %v, want one naming the question and containing %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v is not %v", err, tc.wantIs)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("failure took %v", d)
			}
			healed.Store(true)
			s.Push(llmtest.ScriptedReply{Repeat: true, TokenLogprob: father})
			if _, err := r.Retrieve(context.Background(), sonsFatherRequest(t, g)); err != nil {
				t.Errorf("next question: %v", err)
			}
		})
	}
}
