package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
)

// SGDA, SAGB and P5 requests of the llm planner, told apart by their
// prompts (the first message holds the rendered prompt).
func sgdaFor(q string) func(llmtest.Request) bool {
	return func(r llmtest.Request) bool {
		p := r.Messages[0].Content
		return strings.Contains(p, "question decomposition expert") && strings.Contains(p, "Input multi-hop question: "+q)
	}
}

func sagbFor(assertion string) func(llmtest.Request) bool {
	return func(r llmtest.Request) bool {
		p := r.Messages[0].Content
		i := strings.LastIndex(p, "Input single-hop assertions: ")
		return strings.Contains(p, "entity-relationship construction expert") && i >= 0 && strings.Contains(p[i:], assertion)
	}
}

func p5For(q string) func(llmtest.Request) bool {
	return func(r llmtest.Request) bool {
		p := r.Messages[0].Content
		return strings.Contains(p, "appropriate retrieval strategy") && strings.Contains(p, q)
	}
}

// directedPlan is question 1's script: two SGDA samples with strategies of
// their own, built into a gold graph (precision) and a wrong one (breadth).
var directedPlan = []llmtest.ScriptedReply{
	{Match: sgdaFor("who directed inception"), Content: []string{
		`(("inception is directed by [ENT1]",), Precision)`,
		`(("[ENT1] is the director of inception",), Breadth)`}},
	{Match: sagbFor("inception is directed by"), Content: []string{`[("inception", "directed_by", "[ENT1]")]`}},
	{Match: sagbFor("the director of inception"), Content: []string{`[("Inception", "starred_actors", "[ENT1]")]`}},
}

func TestEvalPlansLLM(t *testing.T) {
	_, qs := llmEvalFiles(t)
	kb, _ := llmEvalFiles(t)
	wrote := "who wrote inception"
	writtenPlan := []llmtest.ScriptedReply{
		// One sample names breadth, the other no strategy: P5 is asked
		// for that one and says breadth too.
		{Match: sgdaFor(wrote), Content: []string{`(("inception is written by [ENT1]", "[ENT1] has the profession [ENT2]"), Breadth)`,
			`("inception is written by [ENT1]", "[ENT1] has the profession [ENT2]")`}},
		{Match: sagbFor("inception is written by"), Content: []string{`[("Inception", "written_by", "[ENT1]"), ("[ENT1]", "profession", "[ENT2]")]`}},
		{Match: p5For(wrote), Content: []string{"Breadth"}},
	}
	type figures struct {
		anyHit, top1          float64
		p, r, f1, up, ur, uf1 float64
		single, multi, cand   float64
		failed                int
	}
	tests := []struct {
		name    string
		replies []llmtest.ScriptedReply
		args    []string
		want    figures
		table   []string
	}{
		// Q1 (1 answer): top graph = gold (1, 1, 1); union adds
		// starred_actors (.5, 1, 2/3); precision right; candidates P, B.
		// Q2 (2 answers): written_by > profession > against written_by
		// (.5, 1, 2/3), no path hit; breadth right; candidate B.
		{name: "strategy per candidate", replies: append(append([]llmtest.ScriptedReply{}, directedPlan...), writtenPlan...),
			want: figures{anyHit: 50, top1: 50, p: 75, r: 100, f1: 83.33, up: 50, ur: 100, uf1: 66.67, single: 100, multi: 100, cand: 66.67},
			table: []string{"n=2 any_hit=50.00 top1=50.00 path_recall=50.00 strategy_acc=100.00 (n=2)",
				"schema graph (top candidate)   P=75.00 R=100.00 F1=83.33",
				"schema graph (union of B)      P=50.00 R=100.00 F1=66.67",
				"answers=1 precision 100.00 (n=1)  answers>=2 breadth 100.00 (n=1)",
				"per-candidate strategy         66.67 (n=3 candidates)"}},
		// Q2 fails: no plan (0) and the default precision, wrong for 2
		// answers.
		{name: "malformed response body", replies: append(append([]llmtest.ScriptedReply{}, directedPlan...),
			llmtest.ScriptedReply{Match: sgdaFor(wrote), Repeat: true, Body: "<html>bad gateway</html>"}),
			want: figures{anyHit: 50, top1: 50, p: 50, r: 50, f1: 50, up: 25, ur: 50, uf1: 33.33, single: 100, multi: 0, cand: 50, failed: 1}},
		{name: "unreadable plans", replies: append(append([]llmtest.ScriptedReply{}, directedPlan...),
			llmtest.ScriptedReply{Match: sgdaFor(wrote), Repeat: true, Content: []string{"I am not sure who wrote it.", "Christopher Nolan"}}),
			want: figures{anyHit: 50, top1: 50, p: 50, r: 50, f1: 50, up: 25, ur: 50, uf1: 33.33, single: 100, multi: 0, cand: 50, failed: 1}},
		// One attempt and 4 retries of 50 ms with 0.5 s doubling backoff:
		// about 8 s, not the 10 s stall times 5.
		{name: "stalled server within --llm-timeout", replies: append(append([]llmtest.ScriptedReply{}, directedPlan...),
			llmtest.ScriptedReply{Match: sgdaFor(wrote), Repeat: true, Delay: 10 * time.Second, Content: []string{"late"}}),
			args: []string{"--llm-timeout", "50ms"},
			want: figures{anyHit: 50, top1: 50, p: 50, r: 50, f1: 50, up: 25, ur: 50, uf1: 33.33, single: 100, multi: 0, cand: 50, failed: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tt.replies...)
			args := append([]string{"eval-plans", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
				"--planner", "llm", "--beam", "2"}, llmFlags(srv)...)
			args = append(args, tt.args...)
			start := time.Now()
			out, errOut, err := run(t, append(args, "--json")...)
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("eval-plans took %v", d)
			}
			var rep struct {
				planeval.Report
				Failed int `json:"failed"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			got := figures{anyHit: rep.AnyHit, top1: rep.Top1, p: rep.SchemaP, r: rep.SchemaR, f1: rep.SchemaF1, up: rep.UnionP, ur: rep.UnionR, uf1: rep.UnionF1, failed: rep.Failed}
			for dst, src := range map[*float64]*float64{&got.single: rep.StrategySingle, &got.multi: rep.StrategyMulti, &got.cand: rep.CandidateStrategyAcc} {
				if src == nil {
					*dst = -1
				} else {
					*dst = *src
				}
			}
			if rep.N != 2 || got != tt.want {
				t.Errorf("n=%d figures\n got %+v\nwant %+v\n%s", rep.N, got, tt.want, out)
			}
			if tt.want.failed > 0 && !strings.Contains(errOut, `plan "who wrote inception ?"`) {
				t.Errorf("the failure is not reported: %q", errOut)
			}
			if len(tt.table) == 0 {
				return
			}
			srv.Push(tt.replies...)
			out, _, err = run(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.table {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in\n%s", want, out)
				}
			}
		})
	}
}

// TestEvalPlansAnswers reads webqsp-paths answer counts from --answers for
// the strategy by answer count, and leaves the figures out without them.
func TestEvalPlansAnswers(t *testing.T) {
	qs := writeFile(t, "rog_paths_test.jsonl", `{"id": "q1", "question": "who directed inception", "prediction": [["film.film.directed_by"]], "ground_paths": [["film.film.directed_by"]]}
{"id": "q2", "question": "what languages are spoken in switzerland", "prediction": [["location.country.languages_spoken"], ["x.y"]], "ground_paths": [["location.country.languages_spoken"]]}
{"id": "q3", "question": "no answers known", "prediction": [["a.b"]], "ground_paths": [["a.b"]]}
`)
	answers := writeFile(t, "gnnrag.jsonl", `{"id": "q1", "ground_truth": ["Christopher Nolan"]}
{"id": "q2", "ground_truth": ["French", "German", "Italian", "Romansh"]}
`)
	out, _, err := run(t, "eval-plans", "--format", "webqsp-paths", "--questions", qs, "--planner", "rog-reference")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"n=3 any_hit=100.00 top1=100.00", "P=100.00 R=100.00 F1=100.00", "union of B)      P=83.33 R=100.00 F1=88.89", "omitted: no answer counts"} {
		if !strings.Contains(out, want) {
			t.Errorf("rog-reference: no %q in\n%s", want, out)
		}
	}
	// The llm planner with no KG plans without a relation list; it
	// answers breadth to everything: wrong for q1's one answer, right
	// for q2's four; q3 has no count.
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: sgdaFor(""), Repeat: true, Content: []string{`(("[ENT1] is the answer",), Breadth)`}},
		llmtest.ScriptedReply{Match: sagbFor("is the answer"), Repeat: true, Content: []string{`[("topic", "film.film.directed_by", "[ENT1]")]`}})
	out, errOut, err := run(t, append([]string{"eval-plans", "--vectors", tinyVectors, "--format", "webqsp-paths", "--questions", qs, "--answers", answers,
		"--planner", "llm", "--beam", "1"}, llmFlags(srv)...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"n=3 any_hit=33.33 top1=33.33", "strategy_acc=50.00 (n=2)", "answers=1 precision 0.00 (n=1)  answers>=2 breadth 100.00 (n=1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("llm: no %q in\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "no answers for 1 of 3 questions") {
		t.Errorf("missing answers not reported: %q", errOut)
	}
	if _, _, err := run(t, "eval-plans", "--format", "pq", "--questions", qs, "--answers", answers, "--planner", "rog-reference"); err == nil || !strings.Contains(err.Error(), "--answers is for --format webqsp-paths") {
		t.Errorf("--answers with pq: err = %v", err)
	}
}

// TestEvalPlansOwnGraphs plans questions that bring their own graphs
// (--format rog with --gold-paths): the schema planner enumerates each
// question's graph, and a question whose entity is not in its graph is
// counted as failed, not fatal.
func TestEvalPlansOwnGraphs(t *testing.T) {
	gold := writeFile(t, "rog_paths.jsonl", `{"id": "T-0", "question": "who directed inception", "ground_paths": [["film.film.directed_by"]]}
{"id": "T-1", "question": "who is married to the director of inception", "ground_paths": [["film.film.directed_by", "people.person.spouse"]]}
`)
	out, errOut, err := run(t, "eval-plans", "--vectors", tinyVectors, "--format", "rog", "--questions", "../../benchmark/testdata/rog_mini.jsonl",
		"--gold-paths", gold, "--planner", "schema", "--beam", "4")
	if err != nil {
		t.Fatal(err)
	}
	// T-0's graph has two 1-hop and one 2-hop path from Inception, T-1's
	// the same: with a beam of 4 both gold paths are planned.
	if !strings.Contains(out, "schema: n=2 any_hit=100.00") || !strings.Contains(out, "failed=1") {
		t.Errorf("output:\n%s", out)
	}
	if !strings.Contains(errOut, "Oregon Ducks football") {
		t.Errorf("the failed question is not reported: %q", errOut)
	}
	pq := writeFile(t, "pq.txt", "what is a\tb(b)\ta#r#b\n")
	if _, _, err := run(t, "eval-plans", "--vectors", tinyVectors, "--format", "pq", "--questions", pq, "--planner", "schema"); err == nil || !strings.Contains(err.Error(), "needs --kg FILE, or questions with their own graphs") {
		t.Errorf("schema with no KG and no own graphs: err = %v", err)
	}
}

// TestEvalPlansRoGReferenceOwnGraphs scores RoG's own predictions on the
// WebQSP-mini question set, so that they and stem's planners are compared
// over the same questions.
func TestEvalPlansRoGReferenceOwnGraphs(t *testing.T) {
	qs := writeFile(t, "gnnrag.jsonl", `{"id": "q1", "question": "who directed inception", "ground_truth": ["Christopher Nolan"], "input": "Reasoning Paths:\nInception -> film.film.directed_by -> Christopher Nolan\nInception -> film.film.starring -> Tom Hardy\n\nQuestion:\nwho directed inception"}
{"id": "q2", "question": "who starred in inception", "ground_truth": ["Tom Hardy"], "input": "Reasoning Paths:\nInception -> film.film.starring -> Tom Hardy\n\nQuestion:\nwho starred in inception"}
`)
	gold := writeFile(t, "rog_paths.jsonl", `{"id": "q1", "question": "who directed inception", "prediction": [["film.film.directed_by"]], "ground_paths": [["film.film.directed_by"]]}
{"id": "q2", "question": "who starred in inception", "prediction": [["film.film.directed_by"], ["film.film.starring"]], "ground_paths": [["film.film.starring"]]}
`)
	out, _, err := run(t, "eval-plans", "--format", "webqsp-mini", "--questions", qs, "--gold-paths", gold, "--planner", "rog-reference")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "rog-reference: n=2 any_hit=100.00 top1=50.00") {
		t.Errorf("output:\n%s", out)
	}
	if _, _, err := run(t, "eval-plans", "--format", "webqsp-mini", "--questions", qs, "--planner", "rog-reference"); err == nil {
		t.Error("webqsp-mini without --gold-paths was accepted")
	}
}

// TestEvalPlansPatternEmptyGraph checks that a WebQSP-mini question whose
// graph is empty (no entity to anchor on) is planned from its text, as a
// question with no graph, instead of failing: plans are relation paths.
func TestEvalPlansPatternEmptyGraph(t *testing.T) {
	var train strings.Builder
	for i, f := range []string{"inception", "titanic", "alien", "heat", "up", "jaws"} {
		fmt.Fprintf(&train, `{"id": "d%d", "question": "who directed %s", "ground_paths": [["film.film.directed_by"]]}`+"\n", i, f)
		fmt.Fprintf(&train, `{"id": "s%d", "question": "who starred in %s", "ground_paths": [["film.film.starring"]]}`+"\n", i, f)
	}
	model := filepath.Join(t.TempDir(), "w.stempat")
	if _, _, err := run(t, "train", "planner", "--vectors", tinyVectors, "--format", "webqsp-paths", "--questions", writeFile(t, "train.jsonl", train.String()), "--out", model); err != nil {
		t.Fatal(err)
	}
	qs := writeFile(t, "gnnrag.jsonl", `{"id": "q1", "question": "who directed inception", "ground_truth": ["Christopher Nolan"], "input": "Reasoning Paths:\nInception -> film.film.directed_by -> Christopher Nolan\nInception -> film.film.starring -> Tom Hardy\n\nQuestion:\nwho directed inception"}
{"id": "q2", "question": "who starred in titanic", "ground_truth": ["Kate Winslet"], "input": "Reasoning Paths:\n\nQuestion:\nwho starred in titanic"}
`)
	gold := writeFile(t, "rog_paths.jsonl", `{"id": "q1", "question": "who directed inception", "ground_paths": [["film.film.directed_by"]]}
{"id": "q2", "question": "who starred in titanic", "ground_paths": [["film.film.starring"]]}
`)
	log := filepath.Join(t.TempDir(), "plans.jsonl")
	out, errOut, err := run(t, "eval-plans", "--vectors", tinyVectors, "--format", "webqsp-mini", "--questions", qs, "--gold-paths", gold,
		"--planner", "pattern", "--planner-model", model, "--beam", "1", "--out", log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "pattern: n=2 any_hit=100.00 top1=100.00") || !strings.Contains(out, "failed=0") {
		t.Errorf("output:\n%s\nstderr:\n%s", out, errOut)
	}
	// --out lists each question's plans and where the gold path is.
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"q1","question":"who directed inception","gold":["film.film.directed_by ~"],"paths":["film.film.directed_by >"],"hit_rank":1,"strategy":"precision"}
{"id":"q2","question":"who starred in titanic","gold":["film.film.starring ~"],"paths":["film.film.starring ~"],"hit_rank":1,"strategy":"precision"}
`
	if string(data) != want {
		t.Errorf("--out file:\n%s\nwant:\n%s", data, want)
	}
}
