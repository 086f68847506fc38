package synth

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/train/dataset"
)

func isP6(r llmtest.Request) bool {
	return strings.Contains(r.Messages[0].Content, "construct appropriate declarative sentences")
}
func isP5(r llmtest.Request) bool {
	return strings.Contains(r.Messages[0].Content, "appropriate retrieval strategy")
}

func p6(content string) llmtest.ScriptedReply {
	r := llmtest.Reply(content)
	r.Match = isP6
	return r
}
func p5(content string) llmtest.ScriptedReply {
	r := llmtest.Reply(content)
	r.Match = isP5
	return r
}

func chatClient(t *testing.T, srv *llmtest.Server, timeout time.Duration) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{
		BaseURL: srv.BaseURL(), Model: "test-model", APIKeyEnv: "SYNTH_TEST_NO_SUCH_KEY",
		Timeout: timeout, MaxRetries: 1, BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func marie() dataset.Item {
	return dataset.Item{
		ID: "Marie_Curie#0", Source: "synth", Entities: []string{"Marie_Curie"}, Answers: []string{"Paris"},
		Triples:      [][3]string{{"Marie_Curie", "spouse", "Pierre_Curie"}, {"Pierre_Curie", "place_of_birth", "Paris"}},
		Masked:       [][3]string{{"Marie_Curie", "spouse", "[ENT1]"}, {"[ENT1]", "place_of_birth", "[ENT2]"}},
		Placeholders: map[string]string{"[ENT1]": "Pierre_Curie", "[ENT2]": "Paris"},
		AnswerSlot:   "[ENT2]", Hops: 2, Strategy: dataset.Precision,
	}
}

const goodP6 = `[("Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."), "Where was Marie Curie's husband born?"]`

func TestGenerate(t *testing.T) {
	sentences := []string{"Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."}
	tests := []struct {
		name     string
		replies  []llmtest.ScriptedReply
		dropped  string
		question string
		strategy string
		requests int
	}{
		{"good reply, P5 agrees", []llmtest.ScriptedReply{p6(goodP6), p5("Precision")}, "", "Where was Marie Curie's husband born?", "Precision", 2},
		{"P5 disagrees", []llmtest.ScriptedReply{p6(goodP6), p5("Strategy: Breadth")}, "", "Where was Marie Curie's husband born?", "Breadth", 2},
		{"P5 unreadable", []llmtest.ScriptedReply{p6(goodP6), p5("both Precision and Breadth")}, "", "Where was Marie Curie's husband born?", "", 2},
		{"no solution", []llmtest.ScriptedReply{p6("No Solution")}, DropNoSolution, "", "", 1},
		{"count mismatch", []llmtest.ScriptedReply{p6(`[("Marie_Curie is married to [ENT1] who was born in [ENT2].",), "Where was Marie_Curie's husband born?"]`)},
			DropCountMismatch, "Where was Marie_Curie's husband born?", "", 1},
		{"malformed twice", []llmtest.ScriptedReply{p6("Sure! Marie married Pierre."), p6("I cannot.")}, DropUnreadable, "", "", 2},
		{"malformed then good", []llmtest.ScriptedReply{p6("Sure! Marie married Pierre."), p6(goodP6), p5("Precision")}, "", "Where was Marie Curie's husband born?", "Precision", 3},
		{"leaks an intermediate entity", []llmtest.ScriptedReply{p6(`[("a [ENT1].", "b [ENT2]."), "Where was Pierre Curie, husband of Marie_Curie, born?"]`)},
			DropLeak, "Where was Pierre Curie, husband of Marie_Curie, born?", "", 1},
		{"leaks the answer", []llmtest.ScriptedReply{p6(`[("a [ENT1].", "b [ENT2]."), "Was Marie_Curie's husband born in Paris?"]`)},
			DropLeak, "Was Marie_Curie's husband born in Paris?", "", 1},
		{"no seed mention", []llmtest.ScriptedReply{p6(`[("a [ENT1].", "b [ENT2]."), "Where was her husband born?"]`)},
			DropNoMention, "Where was her husband born?", "", 1},
		{"placeholder in question", []llmtest.ScriptedReply{p6(`[("a [ENT1].", "b [ENT2]."), "Where was [ENT1], Marie_Curie's husband, born?"]`)},
			DropPlaceholder, "Where was [ENT1], Marie_Curie's husband, born?", "", 1},
		{"5xx then good", []llmtest.ScriptedReply{llmtest.Error(503, `{"error":{"message":"busy"}}`), p6(goodP6), p5("Precision")}, "", "Where was Marie Curie's husband born?", "Precision", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.replies...)
			g := &Generator{Chat: chatClient(t, srv, 5*time.Second), Model: "m1"}
			it := marie()
			res, err := g.Generate(context.Background(), &it)
			if err != nil {
				t.Fatal(err)
			}
			if it.Dropped != tc.dropped || res.Dropped != tc.dropped {
				t.Errorf("dropped %q (result %q), want %q", it.Dropped, res.Dropped, tc.dropped)
			}
			if it.Question != tc.question {
				t.Errorf("question %q, want %q", it.Question, tc.question)
			}
			if res.Strategy != tc.strategy || res.StrategyAgrees != (tc.strategy == dataset.Precision) {
				t.Errorf("P5 strategy %q agrees %v, want %q", res.Strategy, res.StrategyAgrees, tc.strategy)
			}
			if res.Requests != tc.requests {
				t.Errorf("%d requests, want %d", res.Requests, tc.requests)
			}
			if it.Strategy != dataset.Precision {
				t.Errorf("item strategy changed to %s: the answer-count rule decides", it.Strategy)
			}
			if tc.dropped == "" {
				if !reflect.DeepEqual(it.Assertions, sentences) || it.AssertionSource != "llm:m1" || it.QuestionSource != "llm:m1" {
					t.Errorf("assertions %q from %q, question from %q", it.Assertions, it.AssertionSource, it.QuestionSource)
				}
				if err := it.Check(); err != nil {
					t.Error(err)
				}
			} else if len(it.Assertions) != 0 {
				t.Errorf("dropped item kept assertions %q", it.Assertions)
			}
			if srv.Remaining() != 0 {
				t.Errorf("%d scripted replies unused", srv.Remaining())
			}
		})
	}
}

func TestGeneratePrompts(t *testing.T) {
	srv := llmtest.NewServer(t, p6("nonsense"), p6(goodP6), p5("Precision"))
	g := &Generator{Chat: chatClient(t, srv, 5*time.Second), Model: "m1"}
	it := marie()
	if _, err := g.Generate(context.Background(), &it); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := reqs[0].Messages[0].Content
	for _, want := range []string{
		`Given Triple List: [("Marie_Curie", "spouse", "[ENT1]"), ("[ENT1]", "place_of_birth", "[ENT2]")]` + "\nAnswer Entity: [ENT2]",
		"Output: No Solution", // the fixed examples
		"4. If you determine that the declarative sentences cannot yield",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("P6 prompt lacks %q:\n%s", want, first)
		}
	}
	if !strings.HasSuffix(first, "Answer Entity: [ENT2]") {
		t.Errorf("P6 prompt does not end with the answer entity")
	}
	// The retry shows the bad reply and samples.
	retry := reqs[1]
	if len(retry.Messages) != 3 || retry.Messages[1].Content != "nonsense" || retry.Temperature == nil || *retry.Temperature != DefaultRetryTemperature {
		t.Errorf("retry request: %+v", retry)
	}
	p5 := reqs[2].Messages[0].Content
	if !strings.Contains(p5, `Question: Where was Marie Curie's husband born?`+"\n"+`Assertions: ["Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."]`) {
		t.Errorf("P5 prompt:\n%s", p5)
	}
}

func TestGenerateTransportErrors(t *testing.T) {
	slow := p6(goodP6)
	slow.Delay = 2 * time.Second
	slow.Repeat = true
	tests := []struct {
		name  string
		reply llmtest.ScriptedReply
	}{
		{"timeout", slow},
		{"5xx every time", func() llmtest.ScriptedReply {
			r := llmtest.Error(500, `{"error":{"message":"down"}}`)
			r.Repeat = true
			return r
		}()},
		{"malformed body", func() llmtest.ScriptedReply { r := llmtest.Malformed("{not json"); r.Repeat = true; return r }()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.reply)
			g := &Generator{Chat: chatClient(t, srv, 50*time.Millisecond), Model: "m1"}
			it := marie()
			_, err := g.Generate(context.Background(), &it)
			if err == nil {
				t.Fatal("no error")
			}
			if !reflect.DeepEqual(it, marie()) {
				t.Errorf("item changed on error: %+v", it)
			}
		})
	}
}

func TestPoolKeepsOrder(t *testing.T) {
	// Replies arrive in reverse order; the pool hands items back in the
	// order they were submitted.
	var replies []llmtest.ScriptedReply
	names := []string{"Ada", "Bob", "Cy", "Di"}
	for i, n := range names {
		r := llmtest.Reply(`[("` + n + ` knows [ENT1].",), "Whom does ` + n + ` know?"]`)
		r.Match = func(req llmtest.Request) bool {
			return isP6(req) && strings.Contains(req.LastUser(), `[("`+n+`", "knows", "[ENT1]")]`)
		}
		r.Delay = time.Duration(len(names)-i) * 30 * time.Millisecond
		replies = append(replies, r)
	}
	p5r := p5("Precision")
	p5r.Repeat = true
	srv := llmtest.NewServer(t, append(replies, p5r)...)
	g := &Generator{Chat: chatClient(t, srv, 5*time.Second), Model: "m1"}
	var got []string
	pool := g.NewPool(context.Background(), 4, func(it *dataset.Item, res Result) error {
		if res.Dropped != "" {
			t.Errorf("item %s dropped: %s", it.ID, res.Dropped)
		}
		got = append(got, it.ID)
		return nil
	})
	for _, n := range names {
		it := dataset.Item{ID: n, Entities: []string{n}, Answers: []string{"z"}, AnswerSlot: "[ENT1]",
			Masked: [][3]string{{n, "knows", "[ENT1]"}}, Triples: [][3]string{{n, "knows", "z"}}, Placeholders: map[string]string{"[ENT1]": "z"}, Strategy: dataset.Precision}
		if err := pool.Submit(&it); err != nil {
			t.Fatal(err)
		}
	}
	if err := pool.Wait(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, names) {
		t.Errorf("order %v, want %v", got, names)
	}
	if srv.MaxInFlight() < 2 {
		t.Errorf("at most %d requests in flight: the pool did not run items at once", srv.MaxInFlight())
	}
}

func TestPoolStopsOnError(t *testing.T) {
	srv := llmtest.NewServer(t, p6(goodP6), p5("Precision"))
	g := &Generator{Chat: chatClient(t, srv, 5*time.Second), Model: "m1"}
	boom := errors.New("disk full")
	pool := g.NewPool(context.Background(), 1, func(*dataset.Item, Result) error { return boom })
	it := marie()
	if err := pool.Submit(&it); err != nil {
		t.Fatal(err)
	}
	if err := pool.Wait(); !errors.Is(err, boom) {
		t.Errorf("Wait = %v, want %v", err, boom)
	}
	if err := pool.Submit(&it); !errors.Is(err, boom) {
		t.Errorf("Submit after failure = %v", err)
	}
}
