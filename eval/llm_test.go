package eval

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/generation"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/plan"
)

// llmQuestions are two demo questions; the second's gold answer is one
// the evidence (Inception written_by Christopher_Nolan) never reaches, so
// an LLM that names it guesses.
const llmQuestions = "who directed inception ?\tChristopher_Nolan(Christopher_Nolan/)\tInception#directed_by#Christopher_Nolan#<end>#Christopher_Nolan\n" +
	"who wrote inception ?\tChristopher_Nolan(Christopher_Nolan/Hans_Zimmer/)\tInception#written_by#Christopher_Nolan#<end>#Christopher_Nolan\n"

// forQuestion matches the P3 request of the question that contains s.
func forQuestion(s string) func(llmtest.Request) bool {
	return func(r llmtest.Request) bool { return strings.Contains(r.LastUser(), s) }
}

// llmPipeline is the oracle pipeline over g answering with generation.LLM
// through a client of srv that retries once, 10 ms later, and gives each
// attempt timeout.
func llmPipeline(t *testing.T, g *kg.Graph, srv *llmtest.Server, timeout time.Duration) Pipeline {
	t.Helper()
	p := oraclePipeline(t, g)
	c, err := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "test-llm", APIKeyEnv: "STEM_TEST_NO_KEY",
		Timeout: timeout, MaxRetries: 1, BackoffBase: 10 * time.Millisecond, BackoffMax: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p.Generator = generation.LLM{Chat: c}
	p.Usage = c.Usage
	return p
}

func TestRunLLMGenerator(t *testing.T) {
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := benchmark.ReadPathQuestion(ctx, strings.NewReader(llmQuestions), "llm.txt")
	if err != nil {
		t.Fatal(err)
	}
	directed, wrote := forQuestion("who directed inception"), forQuestion("who wrote inception")
	nolan := llmtest.ScriptedReply{Match: directed, Content: []string{`["Christopher_Nolan"]`}}
	tests := []struct {
		name    string
		replies []llmtest.ScriptedReply
		timeout time.Duration
		// want
		hits1, hit  float64
		answers     [2][]string
		unsupported [2]int
		errors      int
		requests    int64 // HTTP requests the server saw
		calls       int64 // requests the client counts (successful ones)
		completion  int64
	}{
		{name: "supported answers are scored",
			replies: []llmtest.ScriptedReply{nolan, {Match: wrote, Content: []string{"Answer: Christopher_Nolan"}}},
			hits1:   100, hit: 100, answers: [2][]string{{"Christopher_Nolan"}, {"Christopher_Nolan"}},
			requests: 2, calls: 2, completion: 3},
		{name: "an unsupported answer equal to gold is counted, not scored",
			replies: []llmtest.ScriptedReply{nolan, {Match: wrote, Content: []string{`["Hans_Zimmer", "Ennio Morricone"]`}}},
			hits1:   50, hit: 50, answers: [2][]string{{"Christopher_Nolan"}, nil}, unsupported: [2]int{0, 2},
			requests: 2, calls: 2, completion: 4},
		{name: "prose that is no answer list is unsupported",
			replies: []llmtest.ScriptedReply{nolan, {Match: wrote, Content: []string{"I cannot tell from these paths."}}},
			hits1:   50, hit: 50, answers: [2][]string{{"Christopher_Nolan"}, nil}, unsupported: [2]int{0, 1},
			requests: 2, calls: 2, completion: 7},
		{name: "an empty answer list is answered with nothing",
			replies: []llmtest.ScriptedReply{nolan, {Match: wrote, Content: []string{"[]"}}},
			hits1:   50, hit: 50, answers: [2][]string{{"Christopher_Nolan"}, nil},
			requests: 2, calls: 2, completion: 2},
		{name: "a malformed reply is an error, kept going",
			replies: []llmtest.ScriptedReply{nolan, {Match: wrote, Repeat: true, Body: `{"choices": [`}},
			hits1:   50, hit: 50, answers: [2][]string{{"Christopher_Nolan"}, nil}, errors: 1,
			requests: 2, calls: 1, completion: 1},
		{name: "an HTTP 500 is retried",
			replies: []llmtest.ScriptedReply{nolan, {Match: wrote, Status: 500, Body: `{"error":{"message":"overloaded"}}`},
				{Match: wrote, Content: []string{`["Christopher_Nolan"]`}}},
			hits1: 100, hit: 100, answers: [2][]string{{"Christopher_Nolan"}, {"Christopher_Nolan"}},
			requests: 3, calls: 2, completion: 2},
		{name: "an HTTP 500 after the retries is an error",
			replies: []llmtest.ScriptedReply{nolan, {Match: wrote, Repeat: true, Status: 500, Body: `{"error":{"message":"down"}}`}},
			hits1:   50, hit: 50, answers: [2][]string{{"Christopher_Nolan"}, nil}, errors: 1,
			requests: 3, calls: 1, completion: 1},
		{name: "a stalled server times out",
			replies: []llmtest.ScriptedReply{nolan, {Match: wrote, Repeat: true, Delay: 10 * time.Second, Content: []string{`["Christopher_Nolan"]`}}},
			timeout: 100 * time.Millisecond,
			hits1:   50, hit: 50, answers: [2][]string{{"Christopher_Nolan"}, nil}, errors: 1,
			requests: 3, calls: 1, completion: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tt.replies...)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			start := time.Now()
			rep, err := Run(ctx, qs, llmPipeline(t, g, srv, timeout), Options{Graph: g, KeepGoing: true, PerQuestion: true})
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("run took %v", d)
			}
			if rep.N != 2 || rep.Hits1 != tt.hits1 || rep.Hit != tt.hit || rep.Errors != tt.errors {
				t.Errorf("n %d hits@1 %.2f hit %.2f errors %d; want 2, %.2f, %.2f, %d", rep.N, rep.Hits1, rep.Hit, rep.Errors, tt.hits1, tt.hit, tt.errors)
			}
			if want := tt.unsupported[0] + tt.unsupported[1]; rep.Unsupported != want || rep.Unbacked != want {
				t.Errorf("unsupported %d unbacked %d, want %d", rep.Unsupported, rep.Unbacked, want)
			}
			for i, r := range rep.Questions {
				if strings.Join(r.Answers, "|") != strings.Join(tt.answers[i], "|") || r.Unsupported != tt.unsupported[i] {
					t.Errorf("question %d: answers %q unsupported %d; want %q, %d", i, r.Answers, r.Unsupported, tt.answers[i], tt.unsupported[i])
				}
				if _, ok := r.StagesMS[plan.StageGenerate]; !ok && r.Err == "" {
					t.Errorf("question %d: no generate stage in %v", i, r.StagesMS)
				}
			}
			if _, ok := rep.StageMS[plan.StageGenerate]; !ok {
				t.Errorf("no generate stage latency in %v", rep.StageMS)
			}
			if n := int64(len(srv.Requests())); n != tt.requests {
				t.Errorf("server saw %d requests, want %d", n, tt.requests)
			}
			u := rep.LLM
			if u == nil {
				t.Fatal("no LLM use in the report")
			}
			// Each P3 prompt is 42 words (llmtest's tokens); failed requests
			// are not counted.
			if u.Requests != tt.calls || u.CompletionTokens != tt.completion || u.PromptTokens != 42*tt.calls {
				t.Errorf("llm use %+v; want %d calls, %d completion tokens, %d prompt tokens", *u, tt.calls, tt.completion, 42*tt.calls)
			}
			if u.PromptTokensPerQ != float64(u.PromptTokens)/2 || u.CompletionTokensPerQ != float64(tt.completion)/2 || u.RequestsPerQ != float64(tt.calls)/2 {
				t.Errorf("per question %+v", *u)
			}
		})
	}
}
