package plan

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/schema"
)

// neighbourhoods serves an in-memory KG the way a SPARQL endpoint is
// served: the pipeline fetches each question's neighbourhood
// (kg.Neighbourhood) and answers over it.
type neighbourhoods struct{ *kg.Graph }

func (n neighbourhoods) Neighbourhood(ctx context.Context, seeds []string, hops int) (*kg.Graph, error) {
	return kg.Neighbourhood(ctx, n.Graph, seeds, hops)
}

// TestFetchedPlansMatchWholeKG answers PathQuestion-shaped questions over a
// KG in memory and over the same KG fetched question by question, with the
// pattern planner: the plans, answers and evidence must be the same. The
// KG has PQL-2H's shape: a person's only edge is a nationality, and the
// second step (the country's song) is a self-loop the seed never has, so a
// plan checked in a one-hop neighbourhood looked like it named a relation
// the KG lacks (PQL-2H over SPARQL lost 73 of 106 plans so). The other
// relation (a country's capital_of, which no country the questions name
// has) must stay a dead plan after the walkable ones, as over the whole
// KG, not be dropped.
func TestFetchedPlansMatchWholeKG(t *testing.T) {
	ctx := context.Background()
	var ts [][3]string
	people := []string{"James_Ma", "Li_Wei", "Anan_Chai", "Somchai", "Zhou_Xun", "Niran"}
	for i, p := range people {
		country := []string{"China", "Thailand"}[i%2]
		ts = append(ts, [3]string{p, "nationality", country})
	}
	ts = append(ts,
		[3]string{"China", "song", "China"},          // a self-loop walked by the gold path
		[3]string{"Thailand", "song", "Thai_Anthem"}, // and a plain edge
		[3]string{"Paris", "capital_of", "France"},   // far from every question
	)
	g, err := kg.GraphOf(ts)
	if err != nil {
		t.Fatal(err)
	}
	var train []benchmark.Question
	for _, p := range people {
		train = append(train,
			benchmark.Question{Text: fmt.Sprintf("what is the song of %s 's nationality ?", p), Entities: []string{p}, Answers: []string{"x"},
				Gold: []schema.GoldPath{{Steps: []schema.Step{{Rel: "nationality", Dir: schema.Forward}, {Rel: "song", Dir: schema.Forward}}}}},
			benchmark.Question{Text: fmt.Sprintf("what is %s 's nationality ?", p), Entities: []string{p}, Answers: []string{"x"},
				Gold: []schema.GoldPath{{Steps: []schema.Step{{Rel: "nationality", Dir: schema.Forward}}}}},
			benchmark.Question{Text: fmt.Sprintf("what is the capital of %s 's nationality ?", p), Entities: []string{p}, Answers: []string{"x"},
				Gold: []schema.GoldPath{{Steps: []schema.Step{{Rel: "nationality", Dir: schema.Forward}, {Rel: "capital_of", Dir: schema.Inverse}}}}},
		)
	}
	open := func(g kg.Reader) *Pipeline { return patternPipeline(t, g, train) }
	whole, fetched := open(g), open(neighbourhoods{g})
	for _, q := range []Query{
		{Question: "what is the song of James_Ma 's nationality ?", Entities: []string{"James_Ma"}},
		{Question: "what is the James_Ma 's nationality 's song ?", Entities: []string{"James_Ma"}},
		{Question: "what is the song of Anan_Chai 's nationality ?", Entities: []string{"Anan_Chai"}},
		{Question: "what is Niran 's nationality ?", Entities: []string{"Niran"}},
		{Question: "what is the capital of Li_Wei 's nationality ?", Entities: []string{"Li_Wei"}},
	} {
		want, err := whole.Answer(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fetched.Answer(ctx, q)
		if err != nil {
			t.Fatalf("%q fetched: %v", q.Question, err)
		}
		if a, b := plansOf(got.Projection), plansOf(want.Projection); a != b {
			t.Errorf("%q: plans over the fetched graph\n%s\nover the whole KG\n%s", q.Question, a, b)
		}
		if a, b := answersOf(got), answersOf(want); a != b {
			t.Errorf("%q: answers over the fetched graph %s, over the whole KG %s", q.Question, a, b)
		}
		if a, b := evidenceOf(got), evidenceOf(want); a != b {
			t.Errorf("%q: evidence over the fetched graph %s, over the whole KG %s", q.Question, a, b)
		}
	}
}

// patternPipeline opens a pipeline over g whose planner is the pattern
// planner learnt from train, with word vectors of no words.
func patternPipeline(t *testing.T, g kg.Reader, train []benchmark.Question) *Pipeline {
	t.Helper()
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	pl, err := pattern.FromExamples(ctx, g, enc, examplesOf(train), projection.DefaultBeam)
	if err != nil {
		t.Fatal(err)
	}
	p, closeP, err := Open(ctx, DefaultSettings(), Assets{Graph: g, Encoder: enc, AutoPlanner: pl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeP() })
	return p
}

func plansOf(p projection.Projection) string {
	var b strings.Builder
	fmt.Fprintf(&b, "strategy %v\n", p.Strategy)
	for _, c := range p.Candidates {
		fmt.Fprintf(&b, "  %.4f %v\n", c.Score, c.Graph.Triples)
	}
	return b.String()
}

func answersOf(r *Result) string {
	var as []string
	for _, a := range r.Answers {
		as = append(as, fmt.Sprintf("%s %.4f", a.Name, a.Score))
	}
	return strings.Join(as, ", ")
}

func evidenceOf(r *Result) string {
	var ts []string
	for i, tr := range r.EvidenceTriples() {
		ts = append(ts, fmt.Sprintf("%v %.4f", tr, r.Evidence.Evidence[i].TScore))
	}
	return strings.Join(ts, "; ")
}

// TestDepth checks how deep a schema graph's fetch goes: a path as deep as
// it is long, a second entity joined at the path's CVT adding no depth
// (three triples, two from either entity), one joined at the answer
// adding one (the actor is three triples from the film), a graph whose
// triples do not connect as deep as its triple count.
func TestDepth(t *testing.T) {
	path := func(steps ...string) schema.Graph {
		var ss []schema.Step
		for _, s := range steps {
			ss = append(ss, schema.Step{Rel: s, Dir: schema.Forward})
		}
		return schema.PathGraph("A", ss)
	}
	joinedAt := func(g schema.Graph, node string) schema.Graph {
		g.Triples = append(g.Triples, schema.Triple{Head: "B", Rel: "link", Tail: node})
		return g
	}
	for _, c := range []struct {
		name string
		g    schema.Graph
		want int
	}{
		{"one triple", path("r"), 1},
		{"two triples", path("r", "s"), 2},
		{"three triples", path("r", "s", "u"), 3},
		{"joined at the CVT", joinedAt(path("r", "s"), "[ENT1]"), 2},
		{"joined at the answer", joinedAt(path("r", "s"), "[ENT2]"), 3},
		{"disconnected", schema.Graph{Triples: []schema.Triple{{Head: "A", Rel: "r", Tail: "[ENT1]"}, {Head: "B", Rel: "s", Tail: "[ENT2]"}}}, 2},
		{"no triples", schema.Graph{}, 0},
	} {
		if got := depth(c.g); got != c.want {
			t.Errorf("%s: depth(%v) = %d, want %d", c.name, c.g.Triples, got, c.want)
		}
	}
}

// TestFetchedJoinThroughEntity: a second entity that reaches the answer
// through an entity of its own ("which country borders the alps and has
// an airport that serves paris") is joined to the pattern planner's path
// over a fetched neighbourhood as over the whole KG: one step deep the
// airport's edges are not there, so the planner asks for two
// (projection.Projection.Deeper) and the pipeline fetches them.
func TestFetchedJoinThroughEntity(t *testing.T) {
	ctx := context.Background()
	g, err := kg.GraphOf([][3]string{
		{"fr", "borders", "alps"}, {"ch", "borders", "alps"}, {"it", "borders", "alps"},
		{"de", "borders", "rhine"}, {"nl", "borders", "rhine"},
		{"cdg", "containedby", "fr"}, {"cdg", "serves", "paris"},
		{"zrh", "containedby", "ch"}, {"zrh", "serves", "zurich"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var train []benchmark.Question
	for _, x := range []string{"alps", "rhine"} {
		train = append(train, benchmark.Question{Text: fmt.Sprintf("which country borders the %s ?", x), Entities: []string{x}, Answers: []string{"x"},
			Gold: []schema.GoldPath{{Steps: []schema.Step{{Rel: "borders", Dir: schema.Inverse}}}}})
	}
	open := func(g kg.Reader) *Pipeline { return patternPipeline(t, g, train) }
	q := Query{Question: "which country borders the alps and has an airport that serves paris ?", Entities: []string{"alps", "paris"}}
	want, err := open(g).Answer(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := open(neighbourhoods{g}).Answer(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if a := answersOf(want); !strings.HasPrefix(a, "fr ") || strings.Contains(a, ",") {
		t.Errorf("answers over the whole KG %s, want fr alone", a)
	}
	if !strings.Contains(plansOf(want.Projection), "([ENT2], serves, paris)") {
		t.Errorf("no join through the airport over the whole KG:\n%s", plansOf(want.Projection))
	}
	if a, b := plansOf(got.Projection), plansOf(want.Projection); a != b {
		t.Errorf("plans over the fetched graph\n%s\nover the whole KG\n%s", a, b)
	}
	if a, b := answersOf(got), answersOf(want); a != b {
		t.Errorf("answers over the fetched graph %s, over the whole KG %s", a, b)
	}
}
