package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
)

// demoQuestionCount is the number of questions in demo/questions.tsv.
const demoQuestionCount = 37

func TestEvalDemo(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	out, _, err := run(t, "eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"n", "hits1", "hit", "f1", "precision", "recall", "coverage", "unbacked", "latency_ms", "by_answers", "by_hops"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if rep["n"] != float64(demoQuestionCount) || rep["hit"] != 100.0 || rep["unbacked"] != 0.0 {
		t.Errorf("n %v hit %v unbacked %v, want %d, 100, 0", rep["n"], rep["hit"], rep["unbacked"], demoQuestionCount)
	}

	out, _, err = run(t, "eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--limit", "5", "--strategy", "breadth")
	if err != nil {
		t.Fatal(err)
	}
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "all 5 ") || !strings.Contains(flat, "unbacked 0") {
		t.Errorf("table output:\n%s", out)
	}
}

// TestEvalSaysPlanner checks that eval's report names the planner that
// ran, in the table and in the JSON, and labels the default (the oracle,
// planning from the gold paths) as the upper bound it is.
func TestEvalSaysPlanner(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	for _, tc := range []struct {
		flags      []string
		planner    string
		upperBound bool
	}{
		{nil, "oracle", true},
		{[]string{"--planner", "oracle"}, "oracle", true},
		{[]string{"--planner", "schema"}, "schema", false},
		{[]string{"--retriever", "gcr"}, "", false},
	} {
		t.Run(strings.Join(append([]string{"planner"}, tc.flags...), " "), func(t *testing.T) {
			args := append([]string{"eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--limit", "3"}, tc.flags...)
			out, _, err := run(t, append(args, "--json")...)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Planner    string `json:"planner"`
				UpperBound bool   `json:"upper_bound"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("output is not one JSON object: %v\n%s", err, out)
			}
			if rep.Planner != tc.planner || rep.UpperBound != tc.upperBound {
				t.Errorf("JSON planner %q upper_bound %v, want %q %v", rep.Planner, rep.UpperBound, tc.planner, tc.upperBound)
			}
			out, _, err = run(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(out, "\n")
			switch {
			case tc.planner == "":
				if strings.HasPrefix(first, "planner") {
					t.Errorf("a peer standing alone plans nothing, yet the table begins %q", first)
				}
			case first != "planner "+tc.planner+", beam 4" && !tc.upperBound:
				t.Errorf("table begins %q, want %q", first, "planner "+tc.planner+", beam 4")
			case tc.upperBound && (!strings.HasPrefix(first, "planner oracle: ") || !strings.Contains(first, "upper bound")):
				t.Errorf("table begins %q, want the oracle named as an upper bound", first)
			}
		})
	}
}

// TestEvalUnusedPlannerModel checks that a planner model given to eval's
// default planner, the oracle, which reads none, is called out.
func TestEvalUnusedPlannerModel(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	model := writeFile(t, "m.stempat", "not read")
	_, stderr, err := run(t, "eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--limit", "1", "--planner-model", model)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "--planner-model "+model+" is not used") {
		t.Errorf("stderr does not call out the unused model:\n%s", stderr)
	}
}

func TestEvalBadInput(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown format", []string{"--format", "csv", "--questions", qs, "--kg", kb}, `--format "csv"`},
		{"pq without kg", []string{"--format", "pq", "--questions", qs}, "needs --kg"},
		{"metaqa without qtype", []string{"--format", "metaqa", "--questions", qs, "--kg", kb}, "--qtype"},
		{"bad strategy", []string{"--format", "pq", "--questions", qs, "--kg", kb, "--strategy", "wide"}, `--strategy "wide"`},
		{"bad planner", []string{"--format", "pq", "--questions", qs, "--kg", kb, "--planner", "gpt"}, `--planner "gpt"`},
		{"both ablations of selection", []string{"--format", "pq", "--questions", qs, "--kg", kb, "--only-greedy", "--only-threshold"}, "exclude each other"},
		{"malformed question line", []string{"--format", "pq", "--questions", writeFile(t, "bad.txt", "no tabs here\n"), "--kg", kb}, "bad.txt:1"},
		{"missing question file", []string{"--format", "pq", "--questions", "/nonexistent/q.txt", "--kg", kb}, "/nonexistent/q.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, append([]string{"eval", "--vectors", tinyVectors}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestEvalFailureAttribution runs eval over a tiny PathQuestion file whose
// misses are made at known stages (with the oracle planner, so planning
// is right): a gold answer the path does not reach (tracing), a gold
// answer the evidence names but the slot does not bind (answer
// selection), and a topic entity the KG lacks (anchoring).
func TestEvalFailureAttribution(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "q.txt", strings.Join([]string{
		"who directed inception ?\tChristopher_Nolan(Christopher_Nolan/)\tInception#directed_by#Christopher_Nolan#<end>#Christopher_Nolan",
		"who directed inception ?\tTom_Hardy(Tom_Hardy/)\tInception#directed_by#Tom_Hardy#<end>#Tom_Hardy",
		"who starred in inception ?\tInception(Inception/)\tInception#starred_actors#Inception#<end>#Inception",
		"who directed nosuchfilm ?\tTom_Hardy(Tom_Hardy/)\tNosuch_Film#directed_by#Tom_Hardy#<end>#Tom_Hardy",
	}, "\n")+"\n")
	out, _, err := run(t, "eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--json", "--per-question")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Failures  map[string]int `json:"failures"`
		Questions []struct {
			Failure string     `json:"failure"`
			Plans   [][]string `json:"plans"`
		} `json:"questions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []string{"", "tracing", "answer-selection", "anchoring"}
	wantPlan := []string{"directed_by", "directed_by", "starred_actors", "directed_by"}
	if len(rep.Questions) != len(want) {
		t.Fatalf("%d questions, want %d:\n%s", len(rep.Questions), len(want), out)
	}
	for i, w := range want {
		if rep.Questions[i].Failure != w {
			t.Errorf("question %d failure %q, want %q", i+1, rep.Questions[i].Failure, w)
		}
		// Each question's plans are in its result, so a log shows what it
		// was answered with.
		if p := rep.Questions[i].Plans; len(p) != 1 || strings.Join(p[0], ",") != wantPlan[i] {
			t.Errorf("question %d plans %v, want [[%s]]", i+1, p, wantPlan[i])
		}
	}
	if f := rep.Failures; len(f) != 3 || f["tracing"] != 1 || f["answer-selection"] != 1 || f["anchoring"] != 1 {
		t.Errorf("failures %v, want one each of tracing, answer-selection, anchoring", f)
	}
	out, _, err = run(t, "eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb)
	if err != nil {
		t.Fatal(err)
	}
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "failures by stage: linking 0 planning 0 anchoring 1 tracing 1 answer-selection 1 unknown 0") {
		t.Errorf("table output lacks the failure line:\n%s", out)
	}
}

// TestEvalSchemaPlannerOwnGraphs runs the zero-shot schema planner where
// each question brings its graph (it used to stop with "needs a KG"): the
// question's graph is the KG it enumerates.
func TestEvalSchemaPlannerOwnGraphs(t *testing.T) {
	out, _, err := run(t, "eval", "--vectors", tinyVectors, "--format", "rog", "--questions", "../../benchmark/testdata/rog_mini.jsonl",
		"--planner", "schema", "--per-question", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		N         int `json:"n"`
		Unbacked  int `json:"unbacked"`
		Questions []struct {
			ID      string   `json:"id"`
			Answers []string `json:"answers"`
		} `json:"questions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	if rep.N == 0 || rep.Unbacked != 0 || len(rep.Questions) != rep.N {
		t.Fatalf("n %d, unbacked %d, %d per-question rows", rep.N, rep.Unbacked, len(rep.Questions))
	}
	// The tiny vectors know "directed" only, so the 2-hop path through
	// directed_by scores first: the answer is the one it reaches in T-0's
	// own graph.
	if q := rep.Questions[0]; q.ID != "T-0" || len(q.Answers) != 1 || q.Answers[0] != "Emma Thomas" {
		t.Errorf("first question: %+v, want T-0 answered from its graph (Emma Thomas)", q)
	}
}
