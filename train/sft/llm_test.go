package sft

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
)

var (
	zwickQ      = "what are the languages spoken in the films directed by Joel Zwick"
	zwickMasked = [][3]string{{"[ENT1]", "directed_by", "Joel Zwick"}, {"[ENT1]", "in_language", "[ENT2]"}}
	zwickReply  = `["[ENT1] is a film directed by Joel Zwick.", "[ENT1] is in the [ENT2] language."]`
	zwickWant   = []string{"[ENT1] is a film directed by Joel Zwick.", "[ENT1] is in the [ENT2] language."}
)

// testClient is a client of srv with tiny timeouts and backoff.
func testClient(t *testing.T, srv *llmtest.Server, cacheDir string, timeout time.Duration) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{
		BaseURL: srv.BaseURL(), Model: "test-model", APIKeyEnv: "SFT_TEST_NO_SUCH_KEY",
		Timeout: timeout, MaxRetries: 2, BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond,
		CacheDir: cacheDir,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func newLLM(t *testing.T, chat llm.Chatter, cfg LLMConfig) *LLM {
	t.Helper()
	cfg.Chat = chat
	a, err := NewLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestLLMGoodReply(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply("Sure, here they are:\n"+zwickReply))
	a := newLLM(t, testClient(t, srv, "", 5*time.Second), LLMConfig{Seed: 42})
	got, err := a.Assert(context.Background(), zwickQ, zwickMasked)
	if err != nil || !slices.Equal(got, zwickWant) {
		t.Fatalf("got %q, %v; want %q", got, err, zwickWant)
	}
	if a.Source() != "llm:test-model" {
		t.Errorf("source %q", a.Source())
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Temperature == nil || *r.Temperature != 1.0 || r.Seed == nil || *r.Seed != 42 {
		t.Errorf("temperature %v seed %v, want 1.0 and 42", r.Temperature, r.Seed)
	}
	want := RenderAssertionPrompt(zwickQ, zwickMasked, DefaultAssertExamples())
	if len(r.Messages) != 1 || r.Messages[0].Role != "user" || r.Messages[0].Content != want {
		t.Fatalf("request messages %+v, want one user message with P4", r.Messages)
	}
	for _, s := range []string{
		"Please construct appropriate declarative assertions for each given triple",
		"Original Query: In which country is Kagoshima Prefecture located?\nGiven Triple List: [\n(\"Kagoshima Prefecture\", \"location.location.containedby\", \"[ENT1]\"),\n]\nOutput: [\"Kagoshima Prefecture is contained by [ENT1].\"]",
		"Original Query: " + zwickQ + "\nGiven Triple List: [\n(\"[ENT1]\", \"directed_by\", \"Joel Zwick\"),\n(\"[ENT1]\", \"in_language\", \"[ENT2]\"),\n]",
	} {
		if !strings.Contains(want, s) {
			t.Errorf("P4 lacks %q:\n%s", s, want)
		}
	}
	if !strings.HasSuffix(want, "(\"[ENT1]\", \"in_language\", \"[ENT2]\"),\n]") {
		t.Errorf("P4 does not end with the triple list:\n%s", want)
	}
}

func TestLLMZeroShotAndGreedy(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply(zwickReply))
	a := newLLM(t, testClient(t, srv, "", 5*time.Second), LLMConfig{Temperature: -1, Examples: []AssertExample{}})
	if _, err := a.Assert(context.Background(), zwickQ, zwickMasked); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if *r.Temperature != 0 || !strings.Contains(r.Messages[0].Content, "Example:\n(none)\nOriginal Query: "+zwickQ) {
		t.Errorf("temperature %v, prompt:\n%s", *r.Temperature, r.Messages[0].Content)
	}
}

// TestLLMUnusableReplies: replies that cannot give the item its
// assertions are *ReplyErrors with a countable reason, after the retries.
func TestLLMUnusableReplies(t *testing.T) {
	three := append(slices.Clone(zwickMasked), [3]string{"[ENT2]", "spoken_in", "[ENT3]"})
	tests := []struct {
		name     string
		masked   [][3]string
		replies  []llmtest.ScriptedReply
		retries  int
		reason   string
		requests int
	}{
		{"unreadable", zwickMasked, []llmtest.ScriptedReply{llmtest.Reply("I am not able to help with that.")}, -1, "llm: unreadable reply", 1},
		{"fewer assertions than triples", three, []llmtest.ScriptedReply{llmtest.Reply(zwickReply)}, -1, "llm: 2 assertions for 3 triples", 1},
		{"fewer again after a retry", three, []llmtest.ScriptedReply{llmtest.Reply(zwickReply), llmtest.Reply(zwickReply)}, 1, "llm: 2 assertions for 3 triples", 2},
		{"placeholder lost", zwickMasked, []llmtest.ScriptedReply{llmtest.Reply(`["[ENT1] is directed by Joel Zwick.", "[ENT1] is in German."]`)}, -1, "llm: an assertion lacks a placeholder of its triple", 1},
		{"cut off", zwickMasked, []llmtest.ScriptedReply{{Content: []string{`["[ENT1] is directed`}, FinishReason: "length"}}, -1, "llm: reply cut off at the token limit", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.replies...)
			a := newLLM(t, testClient(t, srv, "", 5*time.Second), LLMConfig{Retries: tc.retries})
			got, err := a.Assert(context.Background(), zwickQ, tc.masked)
			var re *ReplyError
			if !errors.As(err, &re) || re.Reason != tc.reason {
				t.Fatalf("got %q, %v; want a *ReplyError %q", got, err, tc.reason)
			}
			if re.Attempts != tc.requests || re.Reply == "" {
				t.Errorf("attempts %d reply %q", re.Attempts, re.Reply)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

// TestLLMRetryAfterBadReply: the retry shows the model its reply and what
// was wrong, with a shifted seed so a cache keys it apart.
func TestLLMRetryAfterBadReply(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply(`["[ENT1] is a film directed by Joel Zwick."]`), llmtest.Reply(zwickReply))
	a := newLLM(t, testClient(t, srv, "", 5*time.Second), LLMConfig{Seed: 5})
	got, err := a.Assert(context.Background(), zwickQ, zwickMasked)
	if err != nil || !slices.Equal(got, zwickWant) {
		t.Fatalf("got %q, %v", got, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	m := reqs[1].Messages
	if len(m) != 3 || m[1].Role != "assistant" || m[1].Content != `["[ENT1] is a film directed by Joel Zwick."]` ||
		!strings.Contains(m[2].Content, "(1 assertions for 2 triples)") || !strings.Contains(m[2].Content, "exactly 2 assertions") {
		t.Errorf("retry messages %+v", m)
	}
	if *reqs[1].Seed != 6 {
		t.Errorf("retry seed %d, want 6", *reqs[1].Seed)
	}
}

// TestLLMRequestFailures: a server error or timeout is retried by the
// client, then reported as a failure to ask, not as a refusal.
func TestLLMRequestFailures(t *testing.T) {
	tests := []struct {
		name    string
		replies []llmtest.ScriptedReply
		timeout time.Duration
		want    string
	}{
		{"5xx", []llmtest.ScriptedReply{
			llmtest.Error(http.StatusServiceUnavailable, `{"error":{"message":"overloaded"}}`),
			llmtest.Error(http.StatusInternalServerError, `{"error":{"message":"boom"}}`),
			llmtest.Error(http.StatusBadGateway, `{"error":{"message":"bad gateway"}}`),
		}, 5 * time.Second, "502 Bad Gateway"},
		{"timeout", []llmtest.ScriptedReply{
			{Content: []string{zwickReply}, Delay: time.Second},
			{Content: []string{zwickReply}, Delay: time.Second},
			{Content: []string{zwickReply}, Delay: time.Second},
		}, 30 * time.Millisecond, "no answer within 30ms"},
		{"malformed body", []llmtest.ScriptedReply{llmtest.Malformed("{not json")}, 5 * time.Second, "malformed response"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.replies...)
			a := newLLM(t, testClient(t, srv, "", tc.timeout), LLMConfig{})
			_, err := a.Assert(context.Background(), zwickQ, zwickMasked)
			var re *ReplyError
			if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v; want a request error with %q", err, tc.want)
			}
			if n := len(srv.Requests()); n != len(tc.replies) {
				t.Errorf("%d requests, want %d", n, len(tc.replies))
			}
		})
	}
}

// TestLLMCache: a second asserter on the same cache sends nothing and gets
// the same (sampled) assertions back.
func TestLLMCache(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.NewServer(t, llmtest.Reply(zwickReply))
	first, err := newLLM(t, testClient(t, srv, dir, 5*time.Second), LLMConfig{}).Assert(context.Background(), zwickQ, zwickMasked)
	if err != nil {
		t.Fatal(err)
	}
	second, err := newLLM(t, testClient(t, srv, dir, 5*time.Second), LLMConfig{}).Assert(context.Background(), zwickQ, zwickMasked)
	if err != nil || !slices.Equal(first, second) {
		t.Fatalf("second run: %q, %v; first %q", second, err, first)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests over two runs, want 1", n)
	}
}

func TestLLMTooManyTriples(t *testing.T) {
	srv := llmtest.NewServer(t)
	masked := make([][3]string, 17)
	for i := range masked {
		masked[i] = [3]string{"[ENT1]", "r", "x"}
	}
	_, err := newLLM(t, testClient(t, srv, "", time.Second), LLMConfig{}).Assert(context.Background(), "q", masked)
	var re *ReplyError
	if !errors.As(err, &re) || re.Reason != "llm: more than 16 triples" || len(srv.Requests()) != 0 {
		t.Fatalf("got %v after %d requests", err, len(srv.Requests()))
	}
}

func TestNewLLMConfig(t *testing.T) {
	if _, err := NewLLM(LLMConfig{}); err == nil {
		t.Error("no chat accepted")
	}
	srv := llmtest.NewServer(t)
	c := testClient(t, srv, "", time.Second)
	if _, err := NewLLM(LLMConfig{Chat: c, Temperature: 2.5}); err == nil {
		t.Error("temperature 2.5 accepted")
	}
	if _, err := NewLLM(LLMConfig{Chat: c, Examples: []AssertExample{{Question: "q", Triples: [][3]string{{"a", "r", "[ENT1]"}}}}}); err == nil {
		t.Error("example without assertions accepted")
	}
	a, err := NewLLM(LLMConfig{Chat: c, Model: "m"})
	if err != nil || a.Source() != "llm:m" {
		t.Errorf("source %v %v", a, err)
	}
}
