package simgrag

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// actors is the paper's example 1 in miniature: Flashpoint's actor also
// appears in Convoy and Blade; Heat and Flashpoint's director are there
// so that a wrong pattern would find something else.
func actors(t *testing.T) *kg.Graph {
	t.Helper()
	g, err := kg.GraphOf([][3]string{
		{"flashpoint", "starred_actors", "kris_kristofferson"},
		{"convoy", "starred_actors", "kris_kristofferson"},
		{"blade", "starred_actors", "kris_kristofferson"},
		{"heat", "starred_actors", "al_pacino"},
		{"flashpoint", "directed_by", "william_tannen"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

const flashQ = "the actor in Flashpoint also appears in which films"

// goodReply is the paper's own output for its table 16 example, as a
// model would send it: fenced, with the trailing commas of the paper's
// format.
const goodReply = "```json\n" + `{
"divided": [
"the actor in Flashpoint",
"this actor also appears in another films",
],
"triples": [
("UNKNOWN actor 1", "actor of", "Flashpoint"),
("UNKNOWN actor 1", "actor of", "UNKNOWN film 1"),
]
}` + "\n```"

func llmClient(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{
		BaseURL: srv.BaseURL(), Model: "test-model", APIKeyEnv: "SIMGRAG_TEST_NO_SUCH_KEY",
		Timeout: 5 * time.Second, MaxRetries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func words(s string) int64 { return int64(len(strings.Fields(s))) }

// answerReply is the model's answer over the subgraphs, as table 18's
// examples answer.
const answerReply = "According to graphs [1][2], the films are Blade or Convoy."

// TestRetrieveLLMPattern is the LLM mode's contract against the fake
// server: the query-to-pattern prompt sent, the reply read into a pattern
// and searched, bounded retries of unusable replies, the answer step over
// the subgraphs, a stalling server, and the tokens the client counts.
func TestRetrieveLLMPattern(t *testing.T) {
	g := actors(t)
	flash, _ := g.Entity("flashpoint")
	anchored := plan.Request{Question: flashQ, Anchors: []int32{flash}, Mentions: []string{"Flashpoint"}}
	// A planner graph that would answer otherwise: the LLM mode ignores it.
	anchored.Projection = projection.Projection{Candidates: []projection.Candidate{{Graph: schema.Path("flashpoint", "directed_by")}}}
	tests := []struct {
		name    string
		replies []string
		answer  string // the answer step's reply
		req     plan.Request
		retries int // Config.MaxParseRetries
		stall   bool
		// want are the exact answers; wantReqs the requests sent.
		want        []string
		wantReqs    int
		wantProblem string
		wantErr     bool
	}{{
		name:     "good reply",
		replies:  []string{goodReply},
		answer:   answerReply,
		req:      anchored,
		want:     []string{"blade", "convoy"},
		wantReqs: 2,
	}, {
		name:     "good reply, anchored by similarity",
		replies:  []string{goodReply},
		answer:   answerReply,
		req:      plan.Request{Question: flashQ},
		want:     []string{"blade", "convoy"},
		wantReqs: 2,
	}, {
		name:     "unknown relation",
		replies:  []string{`{"divided": ["who is related to Flashpoint"], "graph": [("Flashpoint", "UNKNOWN relation 1", "UNKNOWN person 1")]}`},
		answer:   "According to graphs [1][2], the person is William Tannen or Kris Kristofferson.",
		req:      plan.Request{Question: "who is related to Flashpoint", Anchors: []int32{flash}, Mentions: []string{"Flashpoint"}},
		want:     []string{"william_tannen", "kris_kristofferson"},
		wantReqs: 2,
	}, {
		name:        "an answer naming no subgraph entity leaves the answer nodes",
		replies:     []string{goodReply},
		answer:      "I do not know.",
		req:         anchored,
		want:        []string{"blade", "convoy"},
		wantReqs:    2,
		wantProblem: "names no entity of the subgraphs",
	}, {
		name:        "malformed, then good",
		replies:     []string{"Here is the extracted knowledge graph structure: the actor and the films.", goodReply},
		answer:      answerReply,
		req:         anchored,
		want:        []string{"blade", "convoy"},
		wantReqs:    3,
		wantProblem: "pattern reply unusable (attempt 1 of 3)",
	}, {
		name: "malformed only",
		replies: []string{
			`{"divided": [], "triples": []}`,
			`{"triples": [("Flashpoint", "actor of", "Kris Kristofferson")]}`,  // no unknown
			`{"triples": [("UNKNOWN actor 1", "actor of", "UNKNOWN film 1")]}`, // no known entity
		},
		req:         anchored,
		wantReqs:    3,
		wantProblem: "no usable pattern in 3 attempts",
	}, {
		name:        "retries bounded by the config",
		replies:     []string{"no idea"},
		req:         anchored,
		retries:     -1,
		wantReqs:    1,
		wantProblem: "no usable pattern in 1 attempts",
	}, {
		name:     "stalling server",
		replies:  []string{goodReply},
		req:      anchored,
		stall:    true,
		wantReqs: 1,
		wantErr:  true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var script []llmtest.ScriptedReply
			isPattern := func(r llmtest.Request) bool { return strings.HasPrefix(r.Messages[0].Content, "You need to segment") }
			for _, r := range tt.replies {
				s := llmtest.Reply(r)
				s.Match = isPattern
				if tt.stall {
					s.Delay = 10 * time.Second
				}
				script = append(script, s)
			}
			if tt.answer != "" {
				script = append(script, llmtest.ScriptedReply{Match: func(r llmtest.Request) bool { return !isPattern(r) }, Content: []string{tt.answer}})
			}
			srv := llmtest.NewServer(t, script...)
			c := llmClient(t, srv)
			cfg := DefaultConfig()
			cfg.Chat, cfg.MaxParseRetries, cfg.Seed = c, tt.retries, 7
			r, err := New(context.Background(), plan.Env{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tt.stall {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
			}
			req := tt.req
			req.Graph = g
			start := time.Now()
			ev, err := r.Retrieve(ctx, req)
			reqs := srv.Requests()
			if len(reqs) != tt.wantReqs {
				t.Errorf("%d requests, want %d", len(reqs), tt.wantReqs)
			}
			if tt.wantErr {
				if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "simgrag") || !strings.Contains(err.Error(), flashQ) {
					t.Errorf("error %v: want context.DeadlineExceeded, wrapped naming simgrag and the question", err)
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
			if got := names(res.Answers); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) && !(tt.answer == "I do not know." && slices.Equal(sorted(got), tt.want)) {
				t.Errorf("answers %v, want %v (problems %q)", got, tt.want, res.Problems)
			}
			if tt.wantProblem != "" && !slices.ContainsFunc(res.Problems, func(p string) bool { return strings.Contains(p, tt.wantProblem) }) {
				t.Errorf("problems %q lack %q", res.Problems, tt.wantProblem)
			}
			if res.Unbacked != 0 {
				t.Errorf("unbacked %d", res.Unbacked)
			}
			if _, ok := ev.Timings[StagePattern]; !ok {
				t.Errorf("timings %v lack %s", ev.Timings, StagePattern)
			}

			// The prompt: table 16's instructions and stem's examples,
			// then the question; retries add the bad reply and a
			// reminder, at the retry temperature and the next seed. The
			// answer step's prompt is table 18's over the subgraphs.
			var wantPrompt, wantCompletion int64
			pat := 0
			for i, q := range reqs {
				first := q.Messages[0].Content
				for _, m := range q.Messages {
					wantPrompt += words(m.Content)
				}
				if !strings.HasPrefix(first, "You need to segment") {
					if !strings.HasPrefix(first, "Please answer the question based on the given evidences from a knowledge graph.") ||
						!strings.Contains(first, "query: "+req.Question+"\nevidences: {\n\"graph [1]\": [\n(\"") {
						t.Errorf("request %d: answer prompt %q", i, first[max(0, len(first)-200):])
					}
					wantCompletion += words(tt.answer)
					continue
				}
				for _, part := range []string{
					"You need to segment the given query then extract the potential knowledge graph structures.",
					"NEVER use unspecific words like 'in', 'appear in', 'for', 'of' etc.",
					"you can use the keyword 'UNKNOWN' with a unique ID, e.g., 'UNKNOWN artist 1', 'UNKNOWN relation 1'.",
					`{ "divided": [ "segment 1", ... ], "triples": [ ("head", "relation", "tail"), ... ] }`,
					"\n8. query: \"the director of Amélie also made which movies\"\noutput: {\n",
					"(\"UNKNOWN director 1\", \"directed\", \"Amélie\"),\n(\"UNKNOWN director 1\", \"directed\", \"UNKNOWN movie 1\"),\n",
					"Your task)\nPlease read and follow the above instructions and examples step by step\n",
				} {
					if !strings.Contains(first, part) {
						t.Errorf("request %d: prompt lacks %q", i, part)
					}
				}
				if !strings.HasSuffix(first, "\nquery: "+req.Question+"\n") {
					t.Errorf("request %d: prompt does not end with the question: %q", i, first[max(0, len(first)-80):])
				}
				wantT, wantLen := 0.0, 1
				if pat > 0 {
					wantT, wantLen = DefaultRetryTemperature, 3
					if q.Messages[1].Role != "assistant" || q.Messages[1].Content != tt.replies[pat-1] || !strings.Contains(q.Messages[2].Content, `"triples"`) {
						t.Errorf("retry %d messages %+v: want the bad reply and the format", pat, q.Messages)
					}
				}
				if len(q.Messages) != wantLen || q.Temperature == nil || *q.Temperature != wantT || q.Seed == nil || *q.Seed != 7+int64(pat) {
					t.Errorf("request %d: %d messages, temperature %v, seed %v; want %d, %g, %d", i, len(q.Messages), q.Temperature, q.Seed, wantLen, wantT, 7+pat)
				}
				wantCompletion += words(tt.replies[pat])
				pat++
			}
			// llmtest reports words as tokens, so the client's count is
			// known exactly.
			want := llm.Usage{PromptTokens: wantPrompt, CompletionTokens: wantCompletion, Requests: int64(len(reqs))}
			if got := c.Usage(); got != want {
				t.Errorf("usage %+v, want %+v", got, want)
			}
		})
	}
}

func TestParsePattern(t *testing.T) {
	tests := []struct {
		name, reply, question string
		want                  schema.Graph
		wantErr               string
	}{{
		name:     "paper's example 1",
		reply:    goodReply,
		question: flashQ,
		want: schema.Graph{Triples: []schema.Triple{
			{Head: "[ENT1]", Rel: "actor of", Tail: "Flashpoint"},
			{Head: "[ENT1]", Rel: "actor of", Tail: "[ENT2]"},
		}, Answer: "[ENT2]"},
	}, {
		// Three segments look like a triple; only the "triples" list counts.
		name:     "three segments, think block",
		reply:    `<think>The format is "triples": [...]</think>{"divided": ["a", "b", "c"], 'triples': [("Her", "director", "UNKNOWN director 1")]}`,
		question: "Who is the director of the movie Her?",
		want:     schema.Graph{Triples: []schema.Triple{{Head: "Her", Rel: "director", Tail: "[ENT1]"}}, Answer: "[ENT1]"},
	}, {
		// The question asks for the film, though the model wrote it first.
		name:     "answer is what the question asks for",
		reply:    `{"triples": [("UNKNOWN film 1", "starred actors", "UNKNOWN actor 1"), ("UNKNOWN actor 1", "actor of", "Flashpoint")]}`,
		question: "which films star the actor of Flashpoint",
		want: schema.Graph{Triples: []schema.Triple{
			{Head: "[ENT1]", Rel: "starred actors", Tail: "[ENT2]"},
			{Head: "[ENT2]", Rel: "actor of", Tail: "Flashpoint"},
		}, Answer: "[ENT1]"},
	}, {
		name:     "model's own placeholders, no key",
		reply:    `("[ent2]", "directed", "Heat")` + "\n" + `("UNKNOWN person", "married to", "[ENT2]")`,
		question: "who is married to the director of Heat",
		want: schema.Graph{Triples: []schema.Triple{
			{Head: "[ENT2]", Rel: "directed", Tail: "Heat"},
			{Head: "[ENT1]", Rel: "married to", Tail: "[ENT2]"},
		}, Answer: "[ENT1]"},
	}, {
		name:    "no triples",
		reply:   "I do not know.",
		wantErr: "no (head, relation, tail) triple",
	}, {
		name:    "short tuple",
		reply:   `{"triples": [("UNKNOWN actor 1", "Flashpoint")]}`,
		wantErr: "want 3",
	}, {
		name:    "no unknown",
		reply:   `{"triples": [("Heat", "directed by", "Michael Mann")]}`,
		wantErr: "no UNKNOWN node",
	}, {
		name:    "no known entity",
		reply:   `{"triples": [("UNKNOWN actor 1", "actor of", "UNKNOWN film 1")]}`,
		wantErr: "names no question entity",
	}, {
		name:    "part without an entity",
		reply:   `{"triples": [("Heat", "director", "UNKNOWN person 1"), ("UNKNOWN film 1", "genre", "UNKNOWN genre 1")]}`,
		wantErr: "names no entity",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePattern(tt.reply, tt.question)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one containing %q (graph %s)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("graph %s answer %s, want %s answer %s", got, got.Answer, tt.want, tt.want.Answer)
			}
		})
	}
}

func TestNewLLMDefaults(t *testing.T) {
	srv := llmtest.NewServer(t)
	cfg := Config{K: 1, KNodes: 1, KRelations: 1, Chat: llmClient(t, srv)}
	r, err := New(context.Background(), plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.MaxParseRetries != DefaultMaxParseRetries || r.cfg.RetryTemperature != DefaultRetryTemperature {
		t.Errorf("config %+v: want the LLM defaults filled in", r.cfg)
	}
	cfg.Temperature = 3
	if _, err := New(context.Background(), plan.Env{Encoder: wordvec.New(nil, wordvec.Options{})}, cfg); err == nil {
		t.Error("temperature 3 accepted")
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
