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
