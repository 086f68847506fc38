package llmplan

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// bagEncoder is a deterministic test encoder: words hashed into buckets,
// so texts sharing words are near.
type bagEncoder struct{}

func (bagEncoder) Name() string { return "test:bag" }
func (bagEncoder) Dim() int     { return 64 }
func (e bagEncoder) Encode(_ context.Context, texts []string, dst []float32) error {
	if err := models.CheckDst(e.Name(), len(texts), e.Dim(), dst); err != nil {
		return err
	}
	clear(dst)
	for i, t := range texts {
		v := dst[i*64 : (i+1)*64]
		for w := range wordSet(t) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%64]++
		}
		models.Normalize(v)
	}
	return nil
}

// Request classifiers: the first message holds the rendered prompt.
func isSGDA(r llmtest.Request) bool {
	return strings.Contains(r.Messages[0].Content, "question decomposition expert")
}
func isP5(r llmtest.Request) bool {
	return strings.Contains(r.Messages[0].Content, "appropriate retrieval strategy")
}

// sagbFor matches the SAGB request for a decomposition whose input list
// contains text (examples in the prompt come before the input line).
func sagbFor(text string) func(llmtest.Request) bool {
	return func(r llmtest.Request) bool {
		p := r.Messages[0].Content
		if !strings.Contains(p, "entity-relationship construction expert") {
			return false
		}
		i := strings.LastIndex(p, "Input single-hop assertions: ")
		return i >= 0 && strings.Contains(p[i:], text)
	}
}

func client(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{
		BaseURL: srv.BaseURL(), Model: "test-model", APIKeyEnv: "LLMPLAN_TEST_NO_SUCH_KEY",
		Timeout: 5 * time.Second, MaxRetries: 2, BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func planner(t *testing.T, srv *llmtest.Server, cfg Config) *Planner {
	t.Helper()
	cfg.Chat = client(t, srv)
	p, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func count(reqs []llmtest.Request, f func(llmtest.Request) bool) int {
	n := 0
	for _, r := range reqs {
		if f(r) {
			n++
		}
	}
	return n
}

func hasNote(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

var inception = projection.Input{Question: "who directed inception", Entities: []string{"Inception"}, Mentions: []string{"inception"}}

func TestPlanFourCandidatesVote(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: isSGDA, Content: []string{
			`(("inception is directed by [ENT1]",), Precision)`,
			"Sure:\n```\n(('inception is directed by [ENT1]',), Breadth)\n```",
			`(("[ENT1] is the director of inception",), Precision)`,
			"1. [ENT1] directed inception\n2. [ENT1] is a person\nStrategy: Precision",
		}},
		llmtest.ScriptedReply{Match: sagbFor("inception is directed by"), Content: []string{`[("inception", "film.film.directed_by", "[ent1]"),]`}},
		// Same triples as the first: merged, votes added.
		llmtest.ScriptedReply{Match: sagbFor("the director of inception"), Content: []string{`[("Inception", "film.film.directed_by", "[ENT1]")]`}},
		llmtest.ScriptedReply{Match: sagbFor("directed inception"), Content: []string{`[("[ENT1]", "film.director.film", "inception"), ("[ENT1]", "people.person.profession", "[ENT2]")]`}},
	)
	p := planner(t, srv, Config{})
	plan, err := p.Plan(context.Background(), inception)
	if err != nil {
		t.Fatal(err)
	}
	want := []projection.Candidate{
		{Graph: schema.Graph{Triples: []schema.Triple{{Head: "Inception", Rel: "film.film.directed_by", Tail: "[ENT1]"}}, Answer: "[ENT1]"},
			Assertions: []string{"inception is directed by [ENT1]"}, Score: 0.75},
		{Graph: schema.Graph{Triples: []schema.Triple{{Head: "[ENT1]", Rel: "film.director.film", Tail: "Inception"}, {Head: "[ENT1]", Rel: "people.person.profession", Tail: "[ENT2]"}}, Answer: "[ENT2]"},
			Assertions: []string{"[ENT1] directed inception", "[ENT1] is a person"}, Score: 0.25},
	}
	if !reflect.DeepEqual(plan.Candidates, want) {
		t.Errorf("candidates:\n got %+v\nwant %+v", plan.Candidates, want)
	}
	if plan.Strategy != schema.Precision {
		t.Errorf("strategy %v, want precision (3 votes to 1)", plan.Strategy)
	}
	if !hasNote(plan.Notes, "3 precision, 1 breadth") {
		t.Errorf("notes %q lack the split vote", plan.Notes)
	}
	for _, c := range plan.Candidates {
		if err := c.Graph.Validate(); err != nil {
			t.Errorf("candidate %v: %v", c.Graph, err)
		}
	}
	reqs := srv.Requests()
	if n := count(reqs, isSGDA); n != 1 {
		t.Errorf("%d SGDA requests, want 1", n)
	}
	if n := len(reqs); n != 4 {
		t.Errorf("%d requests, want 4 (1 SGDA + 3 distinct decompositions)", n)
	}
	for _, r := range reqs {
		if isSGDA(r) {
			if r.N == nil || *r.N != 4 || r.Temperature == nil || *r.Temperature != DefaultTemperature {
				t.Errorf("SGDA request n=%v temperature=%v, want 4 and %v", r.N, r.Temperature, DefaultTemperature)
			}
			if !strings.Contains(r.Messages[0].Content, "Input multi-hop question: who directed inception") {
				t.Errorf("SGDA prompt lacks the question:\n%s", r.Messages[0].Content)
			}
		} else if r.Temperature == nil || *r.Temperature != 0 {
			t.Errorf("SAGB temperature %v, want 0", r.Temperature)
		}
	}
}

func TestPlanBreadthMajorityAndTie(t *testing.T) {
	for _, tc := range []struct {
		strategies []string
		want       schema.Strategy
	}{
		{[]string{"Breadth", "Breadth", "Precision", "Breadth"}, schema.Breadth},
		{[]string{"Breadth", "Precision", "Breadth", "Precision"}, schema.Precision},
	} {
		var content []string
		for _, s := range tc.strategies {
			content = append(content, `(("[ENT1] is an airport near rome",), `+s+`)`)
		}
		srv := llmtest.NewServer(t,
			llmtest.ScriptedReply{Match: isSGDA, Content: content},
			llmtest.ScriptedReply{Match: sagbFor("airport"), Content: []string{`[("rome", "location.location.nearby_airports", "[ENT1]")]`}},
		)
		plan, err := planner(t, srv, Config{}).Plan(context.Background(), projection.Input{Question: "which airport to fly into rome", Entities: []string{"Rome"}})
		if err != nil {
			t.Fatal(err)
		}
		if plan.Strategy != tc.want {
			t.Errorf("votes %v: strategy %v, want %v", tc.strategies, plan.Strategy, tc.want)
		}
		if len(plan.Candidates) != 1 || plan.Candidates[0].Score != 1 || plan.Candidates[0].Graph.Triples[0].Head != "Rome" {
			t.Errorf("votes %v: candidates %+v, want one Rome graph with score 1", tc.strategies, plan.Candidates)
		}
	}
}

func TestPlanRetriesUnreadableReply(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: isSGDA, Content: []string{"I think the director is Christopher Nolan."}},
		llmtest.ScriptedReply{Match: isSGDA, Content: []string{`(("inception is directed by [ENT1]",), Precision)`}},
		llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{"The triple is (Inception, directed by)."}},
		llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{`[("Inception", "directed_by", "[ENT1]")]`}},
	)
	plan, err := planner(t, srv, Config{Samples: 1}).Plan(context.Background(), inception)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Candidates) != 1 || plan.Candidates[0].Graph.Triples[0].Rel != "directed_by" {
		t.Fatalf("candidates %+v", plan.Candidates)
	}
	if !hasNote(plan.Notes, "SGDA reply unreadable (attempt 1)") || !hasNote(plan.Notes, "SAGB reply for candidate 1 unreadable (attempt 1)") {
		t.Errorf("notes %q lack the retries", plan.Notes)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	retry := reqs[1]
	if len(retry.Messages) != 3 || retry.Messages[1].Role != "assistant" || retry.Messages[1].Content != "I think the director is Christopher Nolan." ||
		!strings.Contains(retry.Messages[2].Content, "could not be read") {
		t.Errorf("retry messages %+v: want the prompt, the bad reply and a correction", retry.Messages)
	}
	if retry.Temperature == nil || *retry.Temperature != DefaultRetryTemperature {
		t.Errorf("greedy retry temperature %v, want %v", retry.Temperature, DefaultRetryTemperature)
	}
}

func TestPlanAlwaysUnreadable(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.ScriptedReply{Match: isSGDA, Repeat: true, Content: []string{"Sorry, I cannot help with that request."}})
	_, err := planner(t, srv, Config{Samples: 1, MaxParseRetries: 2}).Plan(context.Background(), inception)
	if err == nil {
		t.Fatal("no error")
	}
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), `"who directed inception"`) || !strings.Contains(err.Error(), "Sorry, I cannot help") {
		t.Errorf("error %v: want a *ParseError naming the question and quoting the last reply", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3 (1 + 2 retries)", n)
	}
}

func TestPlanDropsUnbuildableCandidate(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: isSGDA, Content: []string{`(("inception is directed by [ENT1]",), Precision)`, `(("[ENT1] made inception",), Precision)`}},
		// No placeholder: schema.Validate rejects it.
		llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{`[("Inception", "directed_by", "Christopher Nolan")]`}},
		llmtest.ScriptedReply{Match: sagbFor("made"), Repeat: true, Content: []string{"no idea"}},
	)
	plan, err := planner(t, srv, Config{Samples: 2, MaxParseRetries: 1}).Plan(context.Background(), inception)
	if err == nil {
		t.Fatalf("plan %+v: want an error, no candidate survives", plan)
	}
	if !strings.Contains(err.Error(), "no candidate schema graph survived") || !strings.Contains(err.Error(), "no placeholder") ||
		!strings.Contains(err.Error(), "candidate 2 dropped: no readable triples in 2 attempts") {
		t.Errorf("error %v: want the reasons of both drops", err)
	}
}

func TestPlanStrategyFallback(t *testing.T) {
	sgda := llmtest.ScriptedReply{Match: isSGDA, Repeat: true, Content: []string{`("inception is directed by [ENT1]",)`}}
	sagb := llmtest.ScriptedReply{Match: sagbFor("directed by"), Repeat: true, Content: []string{`[("Inception", "directed_by", "[ENT1]")]`}}

	t.Run("unreadable 5 times", func(t *testing.T) {
		srv := llmtest.NewServer(t, sgda, sagb, llmtest.ScriptedReply{Match: isP5, Repeat: true, Content: []string{"It depends on the question."}})
		plan, err := planner(t, srv, Config{Samples: 1}).Plan(context.Background(), inception)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Strategy != schema.Precision || !hasNote(plan.Notes, "5 P5 tries") || !hasNote(plan.Notes, "defaulting to precision") {
			t.Errorf("strategy %v notes %q: want precision by default, noted", plan.Strategy, plan.Notes)
		}
		if n := count(srv.Requests(), isP5); n != 5 {
			t.Errorf("%d P5 requests, want 5", n)
		}
	})
	t.Run("readable on try 2", func(t *testing.T) {
		srv := llmtest.NewServer(t, sgda, sagb,
			llmtest.ScriptedReply{Match: isP5, Content: []string{"Hmm."}},
			llmtest.ScriptedReply{Match: isP5, Content: []string{"Breadth"}})
		plan, err := planner(t, srv, Config{Samples: 1}).Plan(context.Background(), inception)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Strategy != schema.Breadth || !hasNote(plan.Notes, "P5 chose breadth (try 2)") {
			t.Errorf("strategy %v notes %q: want breadth from P5", plan.Strategy, plan.Notes)
		}
		for _, r := range srv.Requests() {
			if isP5(r) && !strings.Contains(r.Messages[0].Content, `Assertions: ["inception is directed by [ENT1]"]`) {
				t.Errorf("P5 prompt lacks the assertions:\n%s", r.Messages[0].Content)
			}
		}
	})
}

func TestPlanTimeout(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.ScriptedReply{Match: isSGDA, Delay: 10 * time.Second, Content: []string{"late"}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := planner(t, srv, Config{Samples: 1}).Plan(ctx, inception)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v: want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v: the context's deadline was not honoured", d)
	}
}

func TestPlanHTTPErrors(t *testing.T) {
	t.Run("500 retried by the client", func(t *testing.T) {
		srv := llmtest.NewServer(t,
			llmtest.Error(http.StatusInternalServerError, `{"error":{"message":"overloaded"}}`),
			llmtest.ScriptedReply{Match: isSGDA, Content: []string{`(("inception is directed by [ENT1]",), Precision)`}},
			llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{`[("Inception", "directed_by", "[ENT1]")]`}},
		)
		plan, err := planner(t, srv, Config{Samples: 1}).Plan(context.Background(), inception)
		if err != nil || len(plan.Candidates) != 1 {
			t.Fatalf("plan %+v, %v", plan, err)
		}
		if n := len(srv.Requests()); n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})
	t.Run("401 is fatal", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.Error(http.StatusUnauthorized, `{"error":{"message":"invalid api key"}}`))
		_, err := planner(t, srv, Config{Samples: 1}).Plan(context.Background(), inception)
		if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "LLMPLAN_TEST_NO_SUCH_KEY") ||
			!strings.Contains(err.Error(), "SGDA") {
			t.Errorf("error %v: want the 401, the key variable and the stage", err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1 (no retry)", n)
		}
	})
	t.Run("malformed body", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.Malformed("<html>gateway</html>"))
		_, err := planner(t, srv, Config{Samples: 1}).Plan(context.Background(), inception)
		if err == nil || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("error %v: want a malformed-response error", err)
		}
	})
}

func TestPlanBadInput(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: isSGDA, Content: []string{`(("Inception is directed by [ENT1]",), Precision)`}},
		llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{`[("Inception", "directed_by", "[ENT1]")]`}},
	)
	p := planner(t, srv, Config{Samples: 1})
	if _, err := p.Plan(context.Background(), projection.Input{Question: "  "}); err == nil || !strings.Contains(err.Error(), "empty question") {
		t.Errorf("empty question: error %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("empty question sent %d requests", n)
	}
	plan, err := p.Plan(context.Background(), projection.Input{Question: "who directed inception"})
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(plan.Notes, "no question entities given") || len(plan.Candidates) != 1 || plan.Candidates[0].Graph.Triples[0].Head != "Inception" {
		t.Errorf("plan %+v: want the model's entity name and a note", plan)
	}
	if _, err := New(context.Background(), Config{}); err == nil {
		t.Error("New without a chat model: no error")
	}
	if _, err := New(context.Background(), Config{Chat: client(t, srv), RelationHints: 3}); err == nil {
		t.Error("New with hints but no encoder: no error")
	}
}

func TestFewShotSelection(t *testing.T) {
	pool := []Example{
		{Question: "what is the capital of france", Assertions: []string{"[ENT1] is the capital of france"}, Triples: []schema.Triple{{Head: "france", Rel: "capital", Tail: "[ENT1]"}}},
		{Question: "who directed the film titanic", Assertions: []string{"[ENT1] is the director of titanic"}, Triples: []schema.Triple{{Head: "titanic", Rel: "directed_by", Tail: "[ENT1]"}}},
		{Question: "which river flows through paris", Assertions: []string{"[ENT1] flows through paris"}, Triples: []schema.Triple{{Head: "[ENT1]", Rel: "flows_through", Tail: "paris"}}},
		{Question: "who directed the film avatar", Assertions: []string{"[ENT1] is the director of avatar"}, Strategy: schema.Breadth},
		{Question: "who wrote the film alien", Assertions: []string{"[ENT1] is the writer of alien"}, Triples: []schema.Triple{{Head: "alien", Rel: "written_by", Tail: "[ENT1]"}}},
		{Question: "how tall is mount everest", Assertions: []string{"[ENT1] is the height of mount everest"}, Triples: []schema.Triple{{Head: "mount everest", Rel: "height", Tail: "[ENT1]"}}},
	}
	for _, enc := range []models.Encoder{bagEncoder{}, nil} {
		srv := llmtest.NewServer(t,
			llmtest.ScriptedReply{Match: isSGDA, Content: []string{`(("the film inception is directed by [ENT1]",), Precision)`}},
			llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{`[("Inception", "directed_by", "[ENT1]")]`}},
		)
		p := planner(t, srv, Config{Samples: 1, Examples: pool, Encoder: enc})
		if _, err := p.Plan(context.Background(), projection.Input{Question: "who directed the film inception", Entities: []string{"Inception"}}); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		p1, p2 := reqs[0].Messages[0].Content, reqs[1].Messages[0].Content
		for _, q := range []string{"who directed the film titanic", "who directed the film avatar", "who wrote the film alien"} {
			if !strings.Contains(p1, "Input multi-hop question: "+q+"\n") {
				t.Errorf("encoder %v: P1 lacks near example %q:\n%s", enc, q, p1)
			}
		}
		for _, q := range []string{"capital of france", "mount everest", "paris"} {
			if strings.Contains(p1, q) {
				t.Errorf("encoder %v: P1 shows far example %q", enc, q)
			}
		}
		// The nearest example sits next to the question.
		if a, b, c := strings.Index(p1, "film alien"), strings.Index(p1, "film avatar"), strings.Index(p1, "film titanic"); !(a < b && b < c) {
			t.Errorf("encoder %v: examples at %d, %d, %d: want the nearest (titanic) last", enc, a, b, c)
		}
		if !strings.Contains(p1, `Output: (("[ENT1] is the director of avatar",), Breadth)`) {
			t.Errorf("encoder %v: P1 example not in the output format:\n%s", enc, p1)
		}
		// P2 shows the two nearest examples that have triples (avatar has none).
		if !strings.Contains(p2, `("titanic", "directed_by", "[ENT1]")`) || !strings.Contains(p2, `("alien", "written_by", "[ENT1]")`) ||
			strings.Contains(p2, "avatar") || strings.Contains(p2, "france") {
			t.Errorf("encoder %v: P2 examples wrong:\n%s", enc, p2)
		}
	}
}

func TestRelationVocabulary(t *testing.T) {
	rels := []string{"film.film.directed_by", "film.film.written_by", "location.location.containedby", "people.person.spouse_s"}
	sgda := llmtest.ScriptedReply{Match: isSGDA, Repeat: true, Content: []string{`(("the film inception was directed by [ENT1]",), Precision)`}}
	t.Run("hints and kept unknown", func(t *testing.T) {
		srv := llmtest.NewServer(t, sgda,
			llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{`[("Inception", "film.directed", "[ENT1]")]`}})
		p := planner(t, srv, Config{Samples: 1, Encoder: bagEncoder{}, Relations: rels, RelationHints: 1})
		plan, err := p.Plan(context.Background(), inception)
		if err != nil {
			t.Fatal(err)
		}
		p2 := srv.Requests()[1].Messages[0].Content
		if !strings.Contains(p2, "may match (use one of these symbols as the relation when it fits the meaning): film.film.directed_by\n") {
			t.Errorf("P2 lacks the nearest relation hint:\n%s", p2)
		}
		if got := plan.Candidates[0].Graph.Triples[0].Rel; got != "film.directed" || !hasNote(plan.Notes, `"film.directed" is not in the KG; kept`) {
			t.Errorf("relation %q notes %q: want it kept and noted", got, plan.Notes)
		}
	})
	t.Run("mapped and case fixed", func(t *testing.T) {
		srv := llmtest.NewServer(t, sgda,
			llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{`[("Inception", "film directed by", "[ENT1]"), ("[ENT1]", "People.Person.Spouse_s", "[ENT2]")]`}})
		p := planner(t, srv, Config{Samples: 1, Encoder: bagEncoder{}, Relations: rels, MapRelations: true})
		plan, err := p.Plan(context.Background(), inception)
		if err != nil {
			t.Fatal(err)
		}
		g := plan.Candidates[0].Graph
		if g.Triples[0].Rel != "film.film.directed_by" || g.Triples[1].Rel != "people.person.spouse_s" || !hasNote(plan.Notes, `mapped to "film.film.directed_by"`) {
			t.Errorf("graph %v notes %q", g, plan.Notes)
		}
		if strings.Contains(srv.Requests()[1].Messages[0].Content, "Relations of the knowledge graph") {
			t.Error("P2 offers relations with RelationHints 0")
		}
	})
}

// TestWithRelations grounds SAGB's triples in a question's own graph's
// relations (per-question graphs) while the planner it came from, made
// with no KG, keeps the relation as written.
func TestWithRelations(t *testing.T) {
	sgda := llmtest.ScriptedReply{Match: isSGDA, Repeat: true, Content: []string{`(("[ENT1] is the spouse of the director of inception",), Precision)`}}
	sagb := llmtest.ScriptedReply{Match: sagbFor("spouse"), Repeat: true, Content: []string{`[("Inception", "Film.Film.Directed_By", "[ENT2]"), ("[ENT2]", "People.Person.Spouse_s", "[ENT1]")]`}}
	srv := llmtest.NewServer(t, sgda, sagb)
	base := planner(t, srv, Config{Samples: 1, Encoder: bagEncoder{}})
	own, err := base.WithRelations(context.Background(), []string{"film.film.directed_by", "people.person.spouse_s"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    *Planner
		want []string
	}{
		{"no KG", base, []string{"Film.Film.Directed_By", "People.Person.Spouse_s"}},
		{"question's graph", own, []string{"film.film.directed_by", "people.person.spouse_s"}},
	} {
		plan, err := tc.p.Plan(context.Background(), inception)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, tr := range plan.Candidates[0].Graph.Triples {
			got = append(got, tr.Rel)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: relations %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestOneCallPerSample(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: isSGDA, Repeat: true, Content: []string{`(("inception is directed by [ENT1]",), Precision)`}},
		llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{`[("Inception", "directed_by", "[ENT1]")]`}},
	)
	plan, err := planner(t, srv, Config{Samples: 3, OneCallPerSample: true, Seed: 10}).Plan(context.Background(), inception)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Candidates) != 1 || plan.Candidates[0].Score != 1 {
		t.Errorf("candidates %+v: want the three identical samples merged", plan.Candidates)
	}
	var seeds []int64
	for _, r := range srv.Requests() {
		if isSGDA(r) {
			if r.N != nil && *r.N != 1 {
				t.Errorf("n = %d, want 1", *r.N)
			}
			seeds = append(seeds, *r.Seed)
		}
	}
	if !reflect.DeepEqual(seeds, []int64{10, 11, 12}) {
		t.Errorf("seeds %v, want [10 11 12]", seeds)
	}
}

func TestExamplesFromPaths(t *testing.T) {
	exs, skipped := ExamplesFromPaths([]PathRecord{
		{Question: "what is the place of birth of obama", Entity: "Barack_Obama", Relations: []string{"people.person.place_of_birth"}, Answers: 1},
		{Question: "who directed the films of tom hanks", Entity: "Tom Hanks", Relations: []string{"starred_actors", "directed_by"}, Inverse: []bool{true, false}, Answers: 3},
		{Question: "", Entity: "x", Relations: []string{"r"}},
		{Question: "q", Entity: "x"},
	})
	want := []Example{
		{Question: "what is the place of birth of obama", Strategy: schema.Precision,
			Assertions: []string{"[ENT1] is the place of birth of Barack Obama"},
			Triples:    []schema.Triple{{Head: "Barack_Obama", Rel: "people.person.place_of_birth", Tail: "[ENT1]"}}},
		{Question: "who directed the films of tom hanks", Strategy: schema.Breadth,
			Assertions: []string{"Tom Hanks is the starred actors of [ENT1]", "[ENT2] is the directed by of [ENT1]"},
			Triples:    []schema.Triple{{Head: "[ENT1]", Rel: "starred_actors", Tail: "Tom Hanks"}, {Head: "[ENT1]", Rel: "directed_by", Tail: "[ENT2]"}}},
	}
	if skipped != 2 || !reflect.DeepEqual(exs, want) {
		t.Errorf("got %+v (skipped %d)\nwant %+v (skipped 2)", exs, skipped, want)
	}
	for _, e := range exs {
		g := schema.Graph{Triples: e.Triples}
		if err := g.Validate(); err != nil {
			t.Errorf("example %q: %v", e.Question, err)
		}
		d, err := ParseDecomposition(FormatDecomposition(Decomposition{Assertions: e.Assertions, Strategy: e.Strategy, HasStrategy: true}))
		if err != nil || !reflect.DeepEqual(d.Assertions, e.Assertions) {
			t.Errorf("example %q does not survive its own format: %+v, %v", e.Question, d, err)
		}
	}
}

func TestRenderGeneration(t *testing.T) {
	got := RenderGeneration(`("Rome", "nearby_airports", "Fiumicino")`, "which airport to fly into rome")
	if !strings.HasPrefix(got, "Based on the knowledge structure graph, please answer the given question.") ||
		!strings.Contains(got, "Knowledge Structure Graph: (\"Rome\", \"nearby_airports\", \"Fiumicino\")\nQuestion: which airport to fly into rome\nAnswer: ") {
		t.Errorf("P3 rendered as:\n%s", got)
	}
}

func TestPlanRetriesOnlyMissingSamples(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: isSGDA, Content: []string{`(("inception is directed by [ENT1]",), Breadth)`, "no plan here"}},
		llmtest.ScriptedReply{Match: isSGDA, Content: []string{`(("[ENT1] directed inception",), Breadth)`}},
		llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{`[("Inception", "film.film.directed_by", "[ENT1]")]`}},
		llmtest.ScriptedReply{Match: sagbFor("directed inception"), Content: []string{`[("[ENT1]", "film.director.film", "Inception")]`}},
	)
	plan, err := planner(t, srv, Config{Samples: 2}).Plan(context.Background(), inception)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Candidates) != 2 || plan.Candidates[0].Score != 0.5 || plan.Strategy != schema.Breadth {
		t.Errorf("plan %+v: want two candidates at 0.5, breadth", plan)
	}
	var ns []int64
	for _, r := range srv.Requests() {
		if isSGDA(r) {
			if r.N == nil {
				ns = append(ns, 1)
			} else {
				ns = append(ns, *r.N)
			}
		}
	}
	if !reflect.DeepEqual(ns, []int64{2, 1}) {
		t.Errorf("SGDA requests asked for n = %v, want [2 1]", ns)
	}
}

// TestPlanStrategyPerCandidate gives each candidate the strategy of its
// own SGDA samples, asking P5 only for the samples that named none.
func TestPlanStrategyPerCandidate(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: isSGDA, Content: []string{
			`(("[ENT1] starred in inception",), Breadth)`,
			`(("[ENT1] starred in inception",), Breadth)`,
			`(("inception is directed by [ENT1]",), Precision)`,
			`("[ENT1] is the composer of inception",)`,
		}},
		llmtest.ScriptedReply{Match: sagbFor("starred in"), Content: []string{`[("[ENT1]", "starred_in", "Inception")]`}},
		llmtest.ScriptedReply{Match: sagbFor("directed by"), Content: []string{`[("Inception", "directed_by", "[ENT1]")]`}},
		llmtest.ScriptedReply{Match: sagbFor("composer"), Content: []string{`[("[ENT1]", "composed", "Inception")]`}},
		llmtest.ScriptedReply{Match: isP5, Content: []string{"Breadth"}},
	)
	plan, err := planner(t, srv, Config{}).Plan(context.Background(), inception)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range plan.Candidates {
		got = append(got, fmt.Sprintf("%s %s %.2f", c.Graph.Triples[0].Rel, c.Strategy, c.Score))
	}
	want := []string{"starred_in breadth 0.50", "directed_by precision 0.25", "composed breadth 0.25"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("candidates %q, want %q", got, want)
	}
	if !plan.PerCandidate || plan.Strategy != schema.Breadth || !reflect.DeepEqual(plan.Strategies(), []schema.Strategy{schema.Breadth, schema.Precision, schema.Breadth}) {
		t.Errorf("per candidate %v, strategy %v, strategies %v: want the best candidate's breadth", plan.PerCandidate, plan.Strategy, plan.Strategies())
	}
	if n := count(srv.Requests(), isP5); n != 1 {
		t.Errorf("%d P5 requests, want 1 (for the composer sample)", n)
	}
	for _, r := range srv.Requests() {
		if isP5(r) && !strings.Contains(r.Messages[0].Content, `"[ENT1] is the composer of inception"`) {
			t.Errorf("P5 asked about other assertions:\n%s", r.Messages[0].Content)
		}
	}
	if !hasNote(plan.Notes, "candidate 3: no strategy in its SGDA reply; P5 chose breadth (try 1)") {
		t.Errorf("notes %q", plan.Notes)
	}
}
