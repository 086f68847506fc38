package planeval

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/schema"
)

func TestScore(t *testing.T) {
	f := func(r string) schema.Step { return schema.Step{Rel: r, Dir: schema.Forward} }
	inv := func(r string) schema.Step { return schema.Step{Rel: r, Dir: schema.Inverse} }
	any := func(r string) schema.Step { return schema.Step{Rel: r, Dir: schema.Either} }
	items := []Item{
		// top-1 hit, one of two gold paths: recall 1/2, breadth right.
		{Gold: [][]schema.Step{{f("a")}, {f("b")}}, Answers: 3, Paths: [][]schema.Step{{f("a")}, {f("c")}}, Strategy: schema.Breadth, Latency: time.Millisecond},
		// hit at rank 2 only; direction must agree; precision wrong.
		{Gold: [][]schema.Step{{inv("a"), f("b")}}, Answers: 2, Paths: [][]schema.Step{{f("a"), f("b")}, {inv("a"), f("b")}}, Strategy: schema.Precision, Latency: 3 * time.Millisecond},
		// either-direction gold matches any direction; answers unknown.
		{Gold: [][]schema.Step{{any("x")}}, Answers: -1, Paths: [][]schema.Step{{inv("x")}}, Latency: 2 * time.Millisecond},
		// no gold: left out.
		{Answers: 1},
		// empty gold path: a miss.
		{Gold: [][]schema.Step{{}}, Answers: 1, Paths: [][]schema.Step{{f("a")}}},
	}
	r := Score(items, 4)
	if r.N != 4 || r.NoGold != 1 {
		t.Fatalf("N=%d NoGold=%d, want 4 and 1", r.N, r.NoGold)
	}
	if r.AnyHit != 75 || r.Top1 != 50 || r.PathRecall != 62.5 {
		t.Errorf("any_hit=%v top1=%v recall=%v, want 75 50 62.5", r.AnyHit, r.Top1, r.PathRecall)
	}
	if r.StrategyAcc == nil || *r.StrategyAcc != 66.67 || r.StrategyN != 3 {
		t.Errorf("strategy %v over %d, want 66.67 over 3", r.StrategyAcc, r.StrategyN)
	}
	if r.LatencyP50MS != 1 {
		t.Errorf("p50 %v, want 1 (of 0,0,1,2,3 ms)", r.LatencyP50MS)
	}
	if r := Score([]Item{{Gold: [][]schema.Step{{f("a")}}, Answers: -1}}, 4); r.StrategyAcc != nil || r.AnyHit != 0 {
		t.Errorf("no answers: %+v", r)
	}
}

func TestStepsOf(t *testing.T) {
	for _, steps := range [][]schema.Step{
		{{Rel: "directed_by", Dir: schema.Forward}},
		{{Rel: "starred_actors", Dir: schema.Inverse}, {Rel: "directed_by", Dir: schema.Forward}},
		{{Rel: "a", Dir: schema.Forward}, {Rel: "b", Dir: schema.Inverse}, {Rel: "a", Dir: schema.Inverse}},
	} {
		g := schema.PathGraph("Tom_Hanks", steps)
		got, ok := StepsOf(g)
		if !ok || Format(got) != Format(steps) {
			t.Errorf("StepsOf(%s) = %s, %v; want %s", g, Format(got), ok, Format(steps))
		}
	}
	if _, ok := StepsOf(schema.Graph{Triples: []schema.Triple{{Head: "A", Rel: "r", Tail: "B"}, {Head: "[ENT1]", Rel: "r", Tail: "[ENT2]"}}}); ok {
		t.Error("two mentions read as a path")
	}
}

func TestReadRoGPaths(t *testing.T) {
	in := `{"id": "q1", "question": "what does jamaican people speak", "prediction": [["a.b"], []], "ground_paths": [["a.b"], ["c.d", "e.f"]]}
{"id": "q2", "question": "x", "prediction": [], "ground_paths": [[]]}
`
	rows, err := ReadRoGPaths(context.Background(), strings.NewReader(in), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(rows[0].Gold) != 2 || len(rows[0].Prediction) != 1 || rows[0].Gold[1][1].Rel != "e.f" || rows[0].Gold[1][1].Dir != schema.Either {
		t.Fatalf("rows = %+v", rows)
	}
	if len(rows[1].Gold) != 1 || len(rows[1].Gold[0]) != 0 {
		t.Errorf("empty gold path not kept: %+v", rows[1].Gold)
	}
	if _, err := ReadRoGPaths(context.Background(), strings.NewReader("{bad\n"), "bad.jsonl"); err == nil || !strings.Contains(err.Error(), "bad.jsonl:1") {
		t.Errorf("bad line: err = %v", err)
	}
}
