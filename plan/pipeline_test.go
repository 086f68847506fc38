package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/generation"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// fixedPlanner plans every question as the path it was given.
type fixedPlanner struct{ rels []string }

func (f fixedPlanner) Plan(_ context.Context, in projection.Input) (projection.Projection, error) {
	return projection.Projection{Candidates: []projection.Candidate{{Graph: schema.Path(in.Entities[0], f.rels...), Score: 1}}, Strategy: schema.Breadth}, nil
}

// scriptedChat replies with a fixed text.
type scriptedChat struct{ reply string }

func (s scriptedChat) Chat(context.Context, llm.Request) (llm.Reply, error) {
	return llm.Reply{Choices: []string{s.reply}}, nil
}

func demoPipeline(t testing.TB, rels ...string) *Pipeline {
	t.Helper()
	return readPipeline(t, demo.KG(), demo.KGName, fixedPlanner{rels})
}

// readPipeline is a pipeline over the TSV KG r with planner pl, tracing
// with the default configuration.
func readPipeline(t testing.TB, r io.Reader, name string, pl projection.Planner) *Pipeline {
	t.Helper()
	ctx := context.Background()
	g, err := kg.ReadTSV(r, name)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	ents, err := kgvec.Build(ctx, g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	ret, err := NewTracing(ctx, Env{Graph: g, Entities: ents, Encoder: enc, Tracing: tracing.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	return &Pipeline{Graph: g, Linker: linking.New(g, ents), Planner: pl, Retriever: ret}
}

func TestAsk(t *testing.T) {
	p := demoPipeline(t, "directed_by", "place_of_birth", "located_in")
	tr, err := p.Answer(context.Background(), Query{Question: "in which country was the director of inception born ?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Answers) != 1 || tr.Answers[0].Name != "United_Kingdom" || !tr.Answers[0].Supported {
		t.Fatalf("answers = %+v", tr.Answers)
	}
	want := "Inception -> directed_by -> Christopher_Nolan -> place_of_birth -> London -> located_in -> United_Kingdom"
	found := false
	for _, c := range tr.Answers[0].Chains {
		found = found || c == want
		if !strings.HasSuffix(c, "United_Kingdom") {
			t.Errorf("supporting chain %q does not end at the answer", c)
		}
	}
	if !found {
		t.Errorf("chains %q lack %q", tr.Answers[0].Chains, want)
	}
	for _, s := range []string{StageLink, StagePlan, StageTrace, StageGenerate} {
		if _, ok := tr.Timings[s]; !ok {
			t.Errorf("no timing for stage %s", s)
		}
	}
	if tr.Evidence.Unbacked != 0 {
		t.Errorf("unbacked = %d", tr.Evidence.Unbacked)
	}
}

func TestAskEntitiesAndErrors(t *testing.T) {
	p := demoPipeline(t, "directed_by")
	ctx := context.Background()
	name, err := Resolve(p.Graph, "inception")
	if err != nil || name != "Inception" {
		t.Fatalf("Resolve(inception) = %q, %v", name, err)
	}
	tr, err := p.Answer(ctx, Query{Question: "who made it ?", Entities: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Answers) != 1 || tr.Answers[0].Name != "Christopher_Nolan" {
		t.Errorf("answers = %+v", tr.Answers)
	}
	if _, err := Resolve(p.Graph, "No Such Film"); err == nil || !strings.Contains(err.Error(), "No Such Film") {
		t.Errorf("unknown entity: err = %v", err)
	}
	if _, err := p.Answer(ctx, Query{Question: "zzqx wvvy ?"}); !errors.Is(err, ErrNoEntity) {
		t.Errorf("unlinkable question: err = %v, want ErrNoEntity", err)
	}
}

func TestLLMGeneratorFlagsUnsupported(t *testing.T) {
	p := demoPipeline(t, "directed_by")
	p.Generator = generation.LLM{Chat: scriptedChat{"Answer: [\"christopher nolan\", \"Steven Spielberg\"]"}}
	tr, err := p.Answer(context.Background(), Query{Question: "who directed inception ?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Answers) != 2 {
		t.Fatalf("answers = %+v", tr.Answers)
	}
	a, b := tr.Answers[0], tr.Answers[1]
	if !a.Supported || a.Entity != "Christopher_Nolan" || len(a.Chains) == 0 {
		t.Errorf("supported answer = %+v", a)
	}
	if b.Supported || b.Entity != "" || len(b.Chains) != 0 {
		t.Errorf("an answer no evidence names must be flagged: %+v", b)
	}
	if n := tr.Unsupported(); n != 1 {
		t.Errorf("Unsupported() = %d, want 1", n)
	}
}

func TestLongQuestions(t *testing.T) {
	p := demoPipeline(t, "directed_by")
	ctx := context.Background()
	long := strings.Repeat("who directed inception ? ", 200) // 5,000 characters
	if _, err := p.Answer(ctx, Query{Question: long}); !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "5000 characters, the limit is 4000") {
		t.Errorf("err = %v, want ErrTooLong naming both lengths", err)
	}
	p.MaxQuestion = 10000
	r, err := p.Answer(ctx, Query{Question: long})
	if err != nil {
		t.Fatal(err)
	}
	// Inception is named 200 times: one entity, one link.
	if len(r.Links) != 1 || len(r.Answers) != 1 || r.Answers[0].Name != "Christopher_Nolan" {
		t.Errorf("links %d, answers %+v", len(r.Links), r.Answers)
	}
}

// BenchmarkAnswerLongQuestion answers questions of growing length that name
// many entities many times, and reports the cost per character: with
// linking bounded it stays flat as the question grows (it grew with the
// length before, 18 s at 320 KB).
func BenchmarkAnswerLongQuestion(b *testing.B) {
	p := demoPipeline(b, "directed_by")
	p.MaxQuestion = 1 << 20
	// The demo's pattern planner, which masks every mention it is given.
	qs, err := benchmark.ReadPathQuestion(context.Background(), bytes.NewReader(demo.Questions()), demo.QuestionsName)
	if err != nil {
		b.Fatal(err)
	}
	if p.Planner, err = pattern.FromExamples(context.Background(), p.Graph, wordvec.New(nil, wordvec.Options{}), examplesOf(qs), 4); err != nil {
		b.Fatal(err)
	}
	words := strings.Fields("who directed inception the dark knight tenet memento interstellar dunkirk of the film by nolan")
	for _, n := range []int{10000, 40000, 160000} {
		var sb strings.Builder
		for i := 0; sb.Len() < n; i++ {
			sb.WriteString(words[(i*7)%len(words)])
			sb.WriteByte(' ')
		}
		q := sb.String()
		b.Run(fmt.Sprintf("chars=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := p.Answer(context.Background(), Query{Question: q}); err != nil && !errors.Is(err, ErrNoEntity) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(q)), "ns/char")
		})
	}
}

// twoPlans plans "who directed X" as directed_by first, written_by second.
type twoPlans struct{}

func (twoPlans) Plan(_ context.Context, in projection.Input) (projection.Projection, error) {
	return projection.Projection{Candidates: []projection.Candidate{
		{Graph: schema.Path(in.Entities[0], "directed_by"), Score: 0.9},
		{Graph: schema.Path(in.Entities[0], "written_by"), Score: 0.1},
	}}, nil
}

// TestSupportFromOwnPlan: Nolan directed and wrote Inception; the answer
// comes from the directed_by plan, so its evidence is that plan's chain,
// not the written_by candidate's.
func TestSupportFromOwnPlan(t *testing.T) {
	p := demoPipeline(t)
	p.Planner = twoPlans{}
	r, err := p.Answer(context.Background(), Query{Question: "who directed inception ?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Answers) == 0 || r.Answers[0].Name != "Christopher_Nolan" {
		t.Fatalf("answers %+v", r.Answers)
	}
	if got := r.Answers[0].Chains; len(got) != 1 || got[0] != "Inception -> directed_by -> Christopher_Nolan" {
		t.Errorf("supporting chains %q, want the directed_by chain alone", got)
	}
	if !slices.Contains(r.Chains, "Inception -> written_by -> Christopher_Nolan") {
		t.Errorf("the written_by evidence should still be in the result's chains: %q", r.Chains)
	}
}

// perCandidatePlanner plans two candidates, each with its own strategy.
type perCandidatePlanner struct{}

func (perCandidatePlanner) Plan(_ context.Context, in projection.Input) (projection.Projection, error) {
	return projection.Projection{PerCandidate: true, Strategy: schema.Breadth, Candidates: []projection.Candidate{
		{Graph: schema.Path(in.Entities[0], "starred_actors"), Score: 0.75, Strategy: schema.Breadth},
		{Graph: schema.Path(in.Entities[0], "directed_by"), Score: 0.25, Strategy: schema.Precision},
	}}, nil
}

// recordingRetriever keeps the requests it is given.
type recordingRetriever struct {
	Retriever
	reqs []Request
}

func (r *recordingRetriever) Retrieve(ctx context.Context, req Request) (*Evidence, error) {
	r.reqs = append(r.reqs, req)
	return r.Retriever.Retrieve(ctx, req)
}

func TestPerCandidateStrategies(t *testing.T) {
	breadth, precision := schema.Breadth, schema.Precision
	for _, tc := range []struct {
		name       string
		override   *schema.Strategy
		strategy   schema.Strategy
		strategies []schema.Strategy
	}{
		{"the planner's, per candidate", nil, schema.Breadth, []schema.Strategy{schema.Breadth, schema.Precision}},
		{"--strategy precision overrides all", &precision, schema.Precision, nil},
		{"--strategy breadth overrides all", &breadth, schema.Breadth, nil},
	} {
		p := demoPipeline(t)
		rec := &recordingRetriever{Retriever: p.Retriever}
		p.Retriever, p.Planner, p.Strategy = rec, perCandidatePlanner{}, tc.override
		if _, err := p.Answer(context.Background(), Query{Question: "who starred in inception ?"}); err != nil {
			t.Fatal(err)
		}
		if len(rec.reqs) != 1 || rec.reqs[0].Strategy != tc.strategy || !slices.Equal(rec.reqs[0].Strategies, tc.strategies) {
			t.Errorf("%s: retriever got %+v", tc.name, rec.reqs)
		}
	}
}

// failingPlanner fails every question: a strategy that plans for itself
// must never reach it.
type failingPlanner struct{}

func (failingPlanner) Plan(context.Context, projection.Input) (projection.Projection, error) {
	return projection.Projection{}, errors.New("the planner ran")
}

// selfPlanning records its request and says it reads no plan.
type selfPlanning struct{ got *Request }

func (s selfPlanning) UsesPlan() bool { return false }
func (s selfPlanning) Mode() string   { return "standalone" }
func (s selfPlanning) Retrieve(_ context.Context, req Request) (*Evidence, error) {
	*s.got = req
	return &Evidence{Trace: &tracing.Result{}}, nil
}

// A strategy that plans for itself gets no planner run, no projection and
// no strategy of the planner's; its mode label is the pipeline's.
func TestSelfPlanningStrategySkipsThePlanner(t *testing.T) {
	p := demoPipeline(t)
	var got Request
	p.Planner, p.Retriever = failingPlanner{}, selfPlanning{got: &got}
	res, err := p.Answer(context.Background(), Query{Question: "who directed inception ?", Entities: []string{"Inception"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Projection.Candidates) != 0 || got.Strategy != schema.Precision || len(got.Anchors) != 1 {
		t.Errorf("request %+v: want no candidates, Precision, one anchor", got)
	}
	if _, ok := res.Timings[StagePlan]; ok {
		t.Error("a plan stage was timed")
	}
	if ModeOf(p.Retriever) != "standalone" || ModeOf(demoPipeline(t).Retriever) != "planner" {
		t.Error("mode labels")
	}
}

// examplesOf turns questions with gold paths into the pattern planner's
// training examples (planeval.Examples, which imports this package).
func examplesOf(qs []benchmark.Question) []pattern.Example {
	exs := make([]pattern.Example, len(qs))
	for i, q := range qs {
		exs[i] = pattern.Example{Question: q.Text, Answers: len(q.Answers), Mentions: linking.Mentions(q.Text, q.Entities), Paths: q.GoldSteps()}
	}
	return exs
}

// TestMentionsBesideGivenEntities: a question asked with its entity given
// still lists the other thing it names, for planners (Input.Linked) and
// --explain.
func TestMentionsBesideGivenEntities(t *testing.T) {
	p := demoPipeline(t, "directed_by")
	tr, err := p.Answer(context.Background(), Query{Question: "who directed inception , born in london ?", Entities: []string{"Inception"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range tr.Mentions {
		got = append(got, fmt.Sprintf("%s->%s topic=%v", m.Text, m.Entity, m.Topic))
	}
	if want := []string{"inception->Inception topic=true", "london->London topic=false"}; !slices.Equal(got, want) {
		t.Errorf("mentions = %q, want %q", got, want)
	}
	var b strings.Builder
	tr.WriteText(&b, true, 0, 0)
	if !strings.Contains(b.String(), "mentions:\n  \"inception\" -> Inception (entity; given)\n  \"london\" -> London (beside the entities; the only entity so named)\n") {
		t.Errorf("explain lacks the mentions:\n%s", b.String())
	}
}
