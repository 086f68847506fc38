package oracle

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

func TestPlan(t *testing.T) {
	ctx := context.Background()
	in := projection.Input{
		Entities: []string{"Tom Hanks"},
		Gold: &projection.Gold{Answers: 2, Paths: []schema.GoldPath{{Start: "Tom Hanks",
			Steps: []schema.Step{{Rel: "starred_actors", Dir: schema.Inverse}, {Rel: "directed_by", Dir: schema.Forward}}}}},
	}
	p, err := Planner{}.Plan(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := schema.Graph{Triples: []schema.Triple{
		{Head: "[ENT1]", Rel: "starred_actors", Tail: "Tom Hanks"},
		{Head: "[ENT1]", Rel: "directed_by", Tail: "[ENT2]"},
	}, Answer: "[ENT2]"}
	if p.Strategy != schema.Breadth || !p.Unranked || len(p.Candidates) != 1 || !reflect.DeepEqual(p.Candidates[0].Graph, want) {
		t.Errorf("plan = %+v", p)
	}
	if err := p.Candidates[0].Graph.Validate(); err != nil {
		t.Error(err)
	}
	// A forward path equals schema.Path.
	if g := schema.PathGraph("Inception", []schema.Step{{Rel: "directed_by", Dir: schema.Forward}}); !reflect.DeepEqual(g.Triples, schema.Path("Inception", "directed_by").Triples) {
		t.Errorf("forward graph %v differs from schema.Path", g)
	}
	// WebQSP-style: paths without a start fan out over topic entities,
	// duplicates collapse, and the beam caps the plan.
	in = projection.Input{Entities: []string{"E1", "E2"}, Gold: &projection.Gold{Answers: 1, Paths: []schema.GoldPath{
		{Steps: []schema.Step{{Rel: "r1", Dir: schema.Either}}}, {Steps: []schema.Step{{Rel: "r1", Dir: schema.Either}}},
		{Steps: []schema.Step{{Rel: "r2", Dir: schema.Either}, {Rel: "r3", Dir: schema.Either}}},
	}}}
	p, _ = Planner{}.Plan(ctx, in)
	if p.Strategy != schema.Precision || len(p.Candidates) != 4 || p.Candidates[1].Graph.Triples[0].Head != "E2" || len(p.Candidates[2].Graph.Triples) != 2 {
		t.Errorf("webqsp plan = %+v", p)
	}
	if p, _ = (Planner{Beam: 1}).Plan(ctx, in); len(p.Candidates) != 1 {
		t.Errorf("beam 1 plan = %+v", p)
	}
	// Gold schema graphs (two anchors, constraints) are planned as they are.
	conj := schema.Graph{Triples: []schema.Triple{{Head: "[ENT1]", Rel: "r1", Tail: "A"}, {Head: "[ENT1]", Rel: "r2", Tail: "B"}}, Answer: "[ENT1]"}
	in = projection.Input{Entities: []string{"A", "B"}, Gold: &projection.Gold{Answers: 1, Graphs: []schema.Graph{conj},
		Paths: []schema.GoldPath{{Start: "A", Steps: []schema.Step{{Rel: "r1", Dir: schema.Inverse}}}}}}
	if p, _ = (Planner{}).Plan(ctx, in); len(p.Candidates) != 1 || !reflect.DeepEqual(p.Candidates[0].Graph, conj) {
		t.Errorf("gold graph plan = %+v", p)
	}
	// Outside evaluation there is no answer sheet.
	if _, err := (Planner{}).Plan(ctx, projection.Input{Question: "who?"}); !errors.Is(err, ErrNoGold) {
		t.Errorf("no gold: err = %v, want ErrNoGold", err)
	}
}
