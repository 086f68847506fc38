package graphraft

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
)

func TestParseChoice(t *testing.T) {
	cyphers := []string{"MATCH (a)-[:`r`]->(x) RETURN DISTINCT x", "MATCH (a)-[:`s`]->(x) RETURN DISTINCT x", "MATCH (a)<-[:`r`]-(x) RETURN DISTINCT x"}
	for _, tc := range []struct {
		reply string
		want  int
		got   []int
		err   string
	}{
		{"2", 1, []int{1}, ""},
		{" Query 3.\n", 1, []int{2}, ""},
		{"3, 1", 2, []int{2, 0}, ""},
		{"3, 3, 1, 2", 2, []int{2, 0}, ""},
		{"1 2 3", 1, []int{0}, ""},
		{"The best is " + cyphers[1] + " because 7 answers", 1, []int{1}, ""},
		{"4", 1, nil, `"4" is not the number of a listed query (1-3)`},
		{"0", 1, nil, `"0" is not the number`},
		{"99999999999999999999", 1, nil, "is not the number"},
		{"the second one", 1, nil, "no query number (1-3)"},
		{"  ", 1, nil, "empty reply"},
	} {
		got, err := ParseChoice(tc.reply, cyphers, tc.want)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.reply, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.got) {
			t.Errorf("%q: %v, %v; want %v", tc.reply, got, err, tc.got)
		}
	}
}

// FuzzParseChoice: whatever the reply, a choice is distinct listed
// indices, at most want of them, or an error.
func FuzzParseChoice(f *testing.F) {
	for _, s := range []string{"1", "2, 3", "x", "", "MATCH (a) RETURN DISTINCT x", "٣", "1e3"} {
		f.Add(s, 2)
	}
	cyphers := []string{"MATCH (a)-[:`r`]->(x) RETURN DISTINCT x", "MATCH (a) RETURN DISTINCT x", "MATCH (b) RETURN DISTINCT x"}
	f.Fuzz(func(t *testing.T, reply string, want int) {
		want = 1 + abs(want)%4
		got, err := ParseChoice(reply, cyphers, want)
		if err != nil {
			if got != nil {
				t.Errorf("%q: error %v with choice %v", reply, err, got)
			}
			return
		}
		if len(got) == 0 || len(got) > want {
			t.Errorf("%q: %d choices, want 1 to %d", reply, len(got), want)
		}
		for i, c := range got {
			if c < 0 || c >= len(cyphers) || slices.Contains(got[:i], c) {
				t.Errorf("%q: choice %v", reply, got)
			}
		}
	})
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func llmClient(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{
		BaseURL: srv.BaseURL(), Model: "test-model", APIKeyEnv: "GRAPHRAFT_TEST_NO_SUCH_KEY",
		Timeout: 5 * time.Second, MaxRetries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRetrieveLLMChoice is the LLM mode's contract against the fake
// server: the grounded queries shown, the reply's choice executed,
// bounded retries of unusable replies then the scored order, a stalling
// server, and the tokens the client counts.
func TestRetrieveLLMChoice(t *testing.T) {
	g := family(t)
	const question = "where was anna 's son born ?"
	base := plan.Request{Question: question, Graph: g, Anchors: ids(t, g, "anna"), Mentions: []string{"anna"}, Strategy: schema.Precision}
	// The shown order is the no-LLM ranking's: find the numbers of the
	// queries the replies name.
	scorer := newRetriever(t, Config{Queries: 1})
	qs, err := Enumerate(context.Background(), g, base.Anchors, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	ranked, err := scorer.Rank(context.Background(), g, base, qs)
	if err != nil {
		t.Fatal(err)
	}
	number := func(key string) string {
		for i, s := range ranked[:min(len(ranked), DefaultChoices)] {
			if s.Query.Key(g) == key && s.Query.Template != Between {
				return fmt.Sprint(i + 1)
			}
		}
		t.Fatalf("no query %s in %d ranked", key, len(ranked))
		return ""
	}
	born, spouse := number("children>place_of_birth>"), number("spouse>")
	var bornCypher string
	for _, s := range ranked {
		if s.Query.Key(g) == "children>place_of_birth>" {
			bornCypher = s.Query.Cypher(g)
		}
	}
	// What the scored order alone answers, the fallback.
	ev, err := scorer.Retrieve(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	fallback := answerNames(ev.Trace.Answers)
	if slices.Equal(fallback, []string{"aurich"}) {
		t.Fatalf("the scored order already answers aurich: the test cannot tell the LLM's choice from it")
	}
	n := min(len(ranked), DefaultChoices)

	for _, tc := range []struct {
		name        string
		replies     []string
		queries     int
		retries     int
		stall       bool
		want        []string
		wantReqs    int
		wantProblem string
		wantErr     bool
	}{
		{name: "a number", replies: []string{born}, want: []string{"aurich"}, wantReqs: 1},
		{name: "the query itself", replies: []string{"I would run " + bornCypher}, want: []string{"aurich"}, wantReqs: 1},
		{name: "two queries, best first", replies: []string{spouse + ", " + born}, queries: 2, want: []string{"aurich", "enno"}, wantReqs: 1},
		{name: "out of range, then good", replies: []string{fmt.Sprint(n + 5), born}, want: []string{"aurich"}, wantReqs: 2,
			wantProblem: "query choice unusable (attempt 1 of 3)"},
		{name: "unusable only", replies: []string{"the son's birthplace", "", fmt.Sprint(n + 1)}, want: fallback, wantReqs: 3,
			wantProblem: "no usable reply in 3 attempts; the best-scored query was executed"},
		{name: "retries bounded by the config", replies: []string{"no idea"}, retries: -1, want: fallback, wantReqs: 1,
			wantProblem: "no usable reply in 1 attempts"},
		{name: "stalling server", replies: []string{born}, stall: true, wantReqs: 1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var script []llmtest.ScriptedReply
			for _, r := range tc.replies {
				s := llmtest.Reply(r)
				if tc.stall {
					s.Delay = 10 * time.Second
				}
				script = append(script, s)
			}
			srv := llmtest.NewServer(t, script...)
			c := llmClient(t, srv)
			cfg := DefaultConfig()
			cfg.Chat, cfg.MaxParseRetries, cfg.Seed, cfg.Queries = c, tc.retries, 11, 1
			if tc.queries > 0 {
				cfg.Queries = tc.queries
			}
			r, err := New(context.Background(), plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.stall {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
			}
			start := time.Now()
			ev, err := r.Retrieve(ctx, base)
			reqs := srv.Requests()
			if len(reqs) != tc.wantReqs {
				t.Errorf("%d requests, want %d", len(reqs), tc.wantReqs)
			}
			if tc.wantErr {
				if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "graphraft") || !strings.Contains(err.Error(), question) {
					t.Errorf("error %v: want context.DeadlineExceeded, wrapped naming graphraft and the question", err)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("took %v: the deadline was not honoured", d)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res := ev.Trace
			got := answerNames(res.Answers)
			if !slices.Equal(got, tc.want) {
				t.Errorf("answers %v, want %v (problems %q)", got, tc.want, res.Problems)
			}
			if tc.wantProblem != "" && !slices.ContainsFunc(res.Problems, func(p string) bool { return strings.Contains(p, tc.wantProblem) }) {
				t.Errorf("problems %q lack %q", res.Problems, tc.wantProblem)
			}
			if tc.wantProblem == "" && len(res.Problems) > 0 {
				t.Errorf("problems %q, want none", res.Problems)
			}
			if res.Unbacked != 0 {
				t.Errorf("unbacked %d", res.Unbacked)
			}
			if _, ok := ev.Timings[StageChoose]; !ok {
				t.Errorf("timings %v lack %s", ev.Timings, StageChoose)
			}

			// The prompt: the task, the question, every shown query by
			// number with its Cypher text, the format; retries add the
			// bad reply and the format again, at the retry temperature
			// and the next seed.
			want := min(cfg.Queries, n)
			var wantPrompt, wantCompletion int64
			for i, q := range reqs {
				first := q.Messages[0].Content
				parts := []string{"Cypher queries that are valid over this graph", "Question: " + question, "Reply with only " + chooseFormat(want, n) + "."}
				for j, s := range ranked[:n] {
					parts = append(parts, fmt.Sprintf("\n%d. %s\n", j+1, s.Query.Cypher(g)))
				}
				for _, part := range parts {
					if !strings.Contains(first, part) {
						t.Errorf("request %d: prompt lacks %q:\n%s", i, part, first)
					}
				}
				if strings.Contains(first, fmt.Sprintf("\n%d. ", n+1)) {
					t.Errorf("request %d: more than %d queries shown", i, n)
				}
				wantT, wantLen := 0.0, 1
				if i > 0 {
					wantT, wantLen = DefaultRetryTemperature, 3
					if q.Messages[1].Role != "assistant" || q.Messages[1].Content != tc.replies[i-1] || !strings.Contains(q.Messages[2].Content, chooseFormat(want, n)) {
						t.Errorf("retry %d messages %+v: want the bad reply and the format", i, q.Messages)
					}
				}
				if len(q.Messages) != wantLen || q.Temperature == nil || *q.Temperature != wantT || q.Seed == nil || *q.Seed != 11+int64(i) {
					t.Errorf("request %d: %d messages, temperature %v, seed %v; want %d, %g, %d", i, len(q.Messages), q.Temperature, q.Seed, wantLen, wantT, 11+i)
				}
				for _, m := range q.Messages {
					wantPrompt += int64(len(strings.Fields(m.Content)))
				}
				wantCompletion += int64(len(strings.Fields(tc.replies[i])))
			}
			if got, want := c.Usage(), (llm.Usage{PromptTokens: wantPrompt, CompletionTokens: wantCompletion, Requests: int64(len(reqs))}); got != want {
				t.Errorf("usage %+v, want %+v", got, want)
			}
		})
	}
}
