package signals

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/peers/signals/signalstest"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

func TestAnchors(t *testing.T) {
	g := movies(t)
	heat := ent(t, g, "Heat")
	for _, c := range []struct {
		name     string
		req      plan.Request
		want     []string
		problems string
	}{
		{"the linked anchors, in order, once", plan.Request{Anchors: []int32{heat, ent(t, g, "Crime"), heat}, Mentions: []string{"heat", "crime", "heat"}}, []string{"heat:Heat", "crime:Crime"}, ""},
		{"by name when none is linked", plan.Request{Mentions: []string{"michael mann"}}, []string{"michael mann:Michael Mann"}, ""},
		{"the planner input's mentions", plan.Request{Input: projection.Input{Mentions: []string{"Tom_Cruise"}}}, []string{"Tom_Cruise:Tom Cruise"}, ""},
		{"none", plan.Request{Mentions: []string{"nobody"}}, nil, "no question entity"},
		{"an unknown id is dropped", plan.Request{Anchors: []int32{-1, 1 << 20}}, nil, "no question entity"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := &tracing.Result{}
			ids := Anchors(g, c.req, res)
			var got []string
			for i, a := range res.Anchors {
				got = append(got, a.Mention+":"+a.Name)
				if ids[i] != a.Entity {
					t.Errorf("id %d = %d, anchor %d", i, ids[i], a.Entity)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("anchors %q, want %q", got, c.want)
			}
			if p := strings.Join(res.Problems, "; "); (c.problems == "") != (p == "") || !strings.Contains(p, c.problems) {
				t.Errorf("problems %q, want %q", p, c.problems)
			}
		})
	}
}

func TestPlanPathsAndScore(t *testing.T) {
	g := movies(t)
	dir, _ := g.Relation("directed_by")
	star, _ := g.Relation("starred_actors")
	proj := projection.Projection{Candidates: []projection.Candidate{
		{Graph: schema.PathGraph("Tom Cruise", []schema.Step{{Rel: "starred_actors", Dir: schema.Inverse}, {Rel: "directed_by"}})},
		{Graph: schema.Path("Heat", "nope")}, // a relation the KG lacks: skipped
		{Graph: schema.Path("Heat", "directed_by")},
	}}
	plans := PlanPaths(g, proj)
	want := []PlanPath{{Steps: []Step{{Rel: star, Inverse: true}, {Rel: dir}}, Weight: 1}, {Steps: []Step{{Rel: dir}}, Weight: float32(1) / 3}}
	if len(plans) != 2 || !slices.Equal(plans[0].Steps, want[0].Steps) || plans[0].Weight != 1 || !slices.Equal(plans[1].Steps, want[1].Steps) || plans[1].Weight != want[1].Weight {
		t.Fatalf("plans %+v, want %+v", plans, want)
	}
	for _, c := range []struct {
		path []Step
		want float32
	}{
		{[]Step{{Rel: star, Inverse: true}, {Rel: dir}}, 1},
		{[]Step{{Rel: star, Inverse: true}}, 0.5},
		{[]Step{{Rel: dir}}, float32(1) / 3},
		{[]Step{{Rel: star}}, 0}, // the wrong direction
		{nil, 0},
	} {
		if got := PlanScore(plans, c.path); got != c.want {
			t.Errorf("PlanScore(%v) = %v, want %v", c.path, got, c.want)
		}
	}
	proj.Unranked = true
	if p := PlanPaths(g, proj); p[1].Weight != 1 {
		t.Errorf("unranked weights %+v", p)
	}
}

func TestSchemaSteps(t *testing.T) {
	cases := []struct {
		g    schema.Graph
		want []schema.Step
	}{
		{schema.PathGraph("X", []schema.Step{{Rel: "a", Dir: schema.Inverse}, {Rel: "b"}}),
			[]schema.Step{{Rel: "a", Dir: schema.Inverse}, {Rel: "b"}}},
		// A constraint edge off the path is not a step.
		{schema.Graph{Triples: []schema.Triple{{Head: "[ENT1]", Rel: "directed_by", Tail: "X"}, {Head: "[ENT1]", Rel: "has_genre", Tail: "Drama"}}, Answer: "[ENT1]"},
			[]schema.Step{{Rel: "directed_by", Dir: schema.Inverse}}},
		{schema.Graph{Triples: []schema.Triple{{Head: "X", Rel: "r", Tail: "Y"}}}, nil},
	}
	for i, c := range cases {
		if got := SchemaSteps(c.g); !slices.Equal(got, c.want) {
			t.Errorf("%d %s: steps %v, want %v", i, c.g, got, c.want)
		}
	}
}

// The stand-in masks the question's entities and compares what is asked
// with each text, encoding a text once however often it is scored.
func TestSimilarity(t *testing.T) {
	enc := &countingEncoder{Encoder: signalstest.New(3, map[string][]float32{
		"who directed":   {1, 0, 0},
		"directed by":    {1, 0.1, 0},
		"starred actors": {0, 1, 0},
	})}
	s, err := NewSimilarity(context.Background(), enc, "who directed Heat", []string{"Heat"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Scores(context.Background(), []string{"directed by", "starred actors", "directed by"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] < 0.99 || got[1] != 0 || got[2] != got[0] {
		t.Errorf("scores %v", got)
	}
	if _, err := s.Score(context.Background(), "starred actors"); err != nil || enc.texts != 3 {
		t.Errorf("encoded %d texts, want 3 (question, two relations), %v", enc.texts, err)
	}
	if _, err := NewSimilarity(context.Background(), nil, "q", nil); err == nil {
		t.Error("no encoder, no error")
	}
}

type countingEncoder struct {
	*signalstest.Encoder
	texts int
}

func (c *countingEncoder) Encode(ctx context.Context, texts []string, dst []float32) error {
	c.texts += len(texts)
	return c.Encoder.Encode(ctx, texts, dst)
}

func TestWordsAndMode(t *testing.T) {
	g := movies(t)
	dir, _ := g.Relation("directed_by")
	star, _ := g.Relation("starred_actors")
	if got := Words(g, []Step{{Rel: star, Inverse: true}, {Rel: dir}}); got != "starred actors directed by" {
		t.Errorf("Words = %q", got)
	}
	for _, c := range []struct {
		w    float32
		llm  bool
		want string
	}{{0, false, "standalone, encoder"}, {0, true, "standalone, llm"}, {1.5, false, "planner-assisted w=1.5, encoder"}} {
		if got := Mode(c.w, c.llm); got != c.want {
			t.Errorf("Mode(%v, %v) = %q, want %q", c.w, c.llm, got, c.want)
		}
	}
}

func TestNamed(t *testing.T) {
	names := []string{"Playwright", "Poet", "Bahamas", "The Bahamas", "Ice Hockey", "Actor"}
	for _, c := range []struct {
		reply string
		want  []int
	}{
		// DoG's table 6 conclusions.
		{"William Shakespeare was a playwright, and poet. Therefore, the answer is * playwright, and * poet.", []int{0, 1}},
		{"Therefore, the answer is * Ice Hockey.", []int{4}},
		// A name inside a longer one named there is the longer one's.
		{"It lies in The Bahamas.", []int{3}},
		{"Bahamas", []int{2}},
		// GCR's list, one per line, in the reply's order.
		{"Poet\nActor", []int{1, 5}},
		// Not at a word boundary: "Poetry" names no poet.
		{"Poetry and hockey", nil},
		{"", nil},
	} {
		if got := Named(c.reply, names); !slices.Equal(got, c.want) {
			t.Errorf("Named(%q) = %v, want %v", c.reply, got, c.want)
		}
	}
}
