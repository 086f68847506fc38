package planeval

import (
	"context"
	"math"
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

func TestSchemaPRF(t *testing.T) {
	f := func(r string) schema.Step { return schema.Step{Rel: r, Dir: schema.Forward} }
	inv := func(r string) schema.Step { return schema.Step{Rel: r, Dir: schema.Inverse} }
	any := func(r string) schema.Step { return schema.Step{Rel: r, Dir: schema.Either} }
	for _, tc := range []struct {
		name     string
		graph    []schema.Step
		gold     [][]schema.Step
		p, r, f1 float64
	}{
		{"exact match", []schema.Step{f("a"), f("b")}, [][]schema.Step{{f("a"), f("b")}}, 1, 1, 1},
		{"partial: one of two gold triples", []schema.Step{f("a")}, [][]schema.Step{{f("a"), f("b")}}, 1, 0.5, 2.0 / 3},
		{"extra triple", []schema.Step{f("a"), f("b"), f("c")}, [][]schema.Step{{f("a"), f("b")}}, 2.0 / 3, 1, 0.8},
		// second gold path: 1 of 2 (F1 .5); third: 2 of 3 (F1 .8) wins.
		{"several gold paths: the best F1", []schema.Step{f("x"), f("y")}, [][]schema.Step{{f("a")}, {f("x"), f("z")}, {f("x"), f("y"), f("w")}}, 1, 2.0 / 3, 0.8},
		{"empty plan", nil, [][]schema.Step{{f("a")}}, 0, 0, 0},
		{"empty gold path", []schema.Step{f("a")}, [][]schema.Step{{}}, 0, 0, 0},
		{"normalised names, either direction", []schema.Step{any("Directed_By")}, [][]schema.Step{{f("directed by")}}, 1, 1, 1},
		{"opposite directions differ", []schema.Step{inv("a")}, [][]schema.Step{{f("a")}}, 0, 0, 0},
		{"each triple matched once", []schema.Step{f("a"), f("a")}, [][]schema.Step{{f("a")}}, 0.5, 1, 2.0 / 3},
		// a greedy match would give Either to the forward gold step and
		// leave the forward graph step unmatched.
		{"maximum matching", []schema.Step{any("a"), f("a")}, [][]schema.Step{{f("a"), inv("a")}}, 1, 1, 1},
	} {
		p, r, f1 := SchemaPRF(tc.graph, tc.gold)
		if math.Abs(p-tc.p) > 1e-9 || math.Abs(r-tc.r) > 1e-9 || math.Abs(f1-tc.f1) > 1e-9 {
			t.Errorf("%s: P/R/F1 = %.4f %.4f %.4f, want %.4f %.4f %.4f", tc.name, p, r, f1, tc.p, tc.r, tc.f1)
		}
	}
}

func TestScoreSchemaAndStrategyByCount(t *testing.T) {
	f := func(r string) schema.Step { return schema.Step{Rel: r, Dir: schema.Forward} }
	P, B := schema.Precision, schema.Breadth
	items := []Item{
		// top graph exact (1,1,1); union {a,b,c}: P 2/3, R 1, F1 .8.
		{Gold: [][]schema.Step{{f("a"), f("b")}}, Answers: 1, Triples: [][]schema.Step{{f("a"), f("b")}, {f("c")}}, Strategy: P, Strategies: []schema.Strategy{P, B}},
		// no Triples: the paths are the graphs; top {a} vs {a,b}: 1, .5, 2/3.
		{Gold: [][]schema.Step{{f("a"), f("b")}}, Answers: 1, Paths: [][]schema.Step{{f("a")}}, Strategy: B, Strategies: []schema.Strategy{B}},
		// nothing planned: 0; breadth right.
		{Gold: [][]schema.Step{{f("a")}}, Answers: 3, Strategy: B},
		// two answers, precision wrong.
		{Gold: [][]schema.Step{{f("a")}}, Answers: 2, Paths: [][]schema.Step{{f("b")}}, Strategy: P},
		// no answers: overall only; unknown answers: neither.
		{Gold: [][]schema.Step{{f("a")}}, Answers: 0, Paths: [][]schema.Step{{f("a")}}, Strategy: P},
		{Gold: [][]schema.Step{{f("a")}}, Answers: -1, Paths: [][]schema.Step{{f("a")}}, Strategy: B},
	}
	r := Score(items, 4)
	// P: (1+1+0+0+1+1)/6, R: (1+.5+0+0+1+1)/6, F1: (1+2/3+0+0+1+1)/6.
	if r.N != 6 || r.SchemaP != 66.67 || r.SchemaR != 58.33 || r.SchemaF1 != 61.11 {
		t.Errorf("schema P/R/F1 %v %v %v over %d, want 66.67 58.33 61.11 over 6", r.SchemaP, r.SchemaR, r.SchemaF1, r.N)
	}
	// union: P (2/3+1+0+0+1+1)/6, R as top, F1 (.8+2/3+0+0+1+1)/6.
	if r.UnionP != 61.11 || r.UnionR != 58.33 || r.UnionF1 != 57.78 {
		t.Errorf("union P/R/F1 %v %v %v, want 61.11 58.33 57.78", r.UnionP, r.UnionR, r.UnionF1)
	}
	for _, c := range []struct {
		name string
		got  *float64
		n    int
		want float64
		wn   int
	}{
		{"overall", r.StrategyAcc, r.StrategyN, 60, 5},
		{"answers=1", r.StrategySingle, r.StrategySingleN, 50, 2},
		{"answers>=2", r.StrategyMulti, r.StrategyMultiN, 50, 2},
		// candidates P,B (want P) and B (want P): 1 of 3.
		{"per candidate", r.CandidateStrategyAcc, r.CandidateStrategyN, 33.33, 3},
	} {
		if c.got == nil || *c.got != c.want || c.n != c.wn {
			t.Errorf("%s: %v over %d, want %v over %d", c.name, c.got, c.n, c.want, c.wn)
		}
	}
	if tab := r.Table(); !strings.Contains(tab, "answers=1 precision 50.00 (n=2)  answers>=2 breadth 50.00 (n=2)") || !strings.Contains(tab, "P=66.67 R=58.33 F1=61.11") {
		t.Errorf("table:\n%s", tab)
	}
	r = Score([]Item{{Gold: [][]schema.Step{{f("a")}}, Answers: -1}}, 4)
	if r.StrategySingle != nil || r.StrategyMulti != nil || !strings.Contains(r.Table(), "omitted") {
		t.Errorf("no answers: single %v multi %v\n%s", r.StrategySingle, r.StrategyMulti, r.Table())
	}
}

func TestGraphSteps(t *testing.T) {
	path := schema.PathGraph("Inception", []schema.Step{{Rel: "directed_by", Dir: schema.Forward}})
	if got := Format(GraphSteps(path)); got != "directed_by >" {
		t.Errorf("path graph: %s", got)
	}
	tree := schema.Graph{Triples: []schema.Triple{{Head: "[ENT1]", Rel: "starred", Tail: "A"}, {Head: "[ENT1]", Rel: "directed_by", Tail: "B"}}, Answer: "[ENT1]"}
	if got := Format(GraphSteps(tree)); got != "starred ~ directed_by ~" {
		t.Errorf("tree graph: %s", got)
	}
}

func TestReadAnswerCounts(t *testing.T) {
	in := `{"id": "WebQTest-0", "question": "what does jamaican people speak", "ground_truth": ["Jamaican English", "Jamaican Creole English Language"]}
{"id": "WebQTest-1", "ground_truth": ["x"]}
{"id": "WebQTest-2", "ground_truth": []}
{"question": "no id", "ground_truth": ["y"]}
`
	got, err := ReadAnswerCounts(context.Background(), strings.NewReader(in), "a.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"WebQTest-0": 2, "WebQTest-1": 1, "WebQTest-2": 0}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d answers, want %d", k, got[k], v)
		}
	}
	if _, err := ReadAnswerCounts(context.Background(), strings.NewReader("{}\n{bad\n"), "bad.jsonl"); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Errorf("bad line: err = %v", err)
	}
}

func TestUnion(t *testing.T) {
	f := func(r string) schema.Step { return schema.Step{Rel: r, Dir: schema.Forward} }
	got := union([][]schema.Step{{f("children"), f("children"), f("parents")}, {f("Children"), f("spouse")}, {f("children"), {Rel: "spouse", Dir: schema.Inverse}}})
	if s := Format(got); s != "children > children > parents > spouse > spouse <" {
		t.Errorf("union = %s", s)
	}
}
