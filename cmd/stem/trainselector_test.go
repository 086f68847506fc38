package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
)

// TestTrainSelector learns a plan selector on the demo questions with
// the demo planner, then asks with it: the reply carries a calibrated
// confidence, and --min-confidence 1 withholds the answer with the
// reason, in JSON and in text.
func TestTrainSelector(t *testing.T) {
	kb, _ := llmEvalFiles(t)
	qs := filepath.Join(t.TempDir(), "questions.tsv")
	if err := os.WriteFile(qs, demo.Questions(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sel.json")
	args := []string{"train", "selector", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--out", out, "--unanswerable-fraction", "0.2", "--confidence-on-chosen", "--calibrate-answerable"}
	stdout, _, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "some reading right") || !strings.Contains(stdout, "wrote "+out) || !strings.Contains(stdout, "traced without their answer edges (--unanswerable-fraction 0.20)") {
		t.Errorf("train selector printed:\n%s", stdout)
	}
	if _, _, err := run(t, append(args[:2:2], "--selfsup", "--format", "pq", "--questions", qs, "--kg", kb, "--out", out+"3")...); err == nil || !strings.Contains(err.Error(), "--selfsup") {
		t.Errorf("train selector --selfsup --questions: %v, want it refused", err)
	}
	if _, _, err := run(t, append(args[:2:2], "--planner", "oracle", "--format", "pq", "--questions", qs, "--kg", kb, "--out", out+"2")...); err == nil || !strings.Contains(err.Error(), "oracle") {
		t.Errorf("train selector --planner oracle: %v, want it refused", err)
	}
	ask := []string{"ask", "--vectors", tinyVectors, "--kg", kb, "--selector", out, "--json"}
	stdout, _, err = run(t, append(ask, "who directed inception ?")...)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Answers    []any    `json:"answers"`
		Confidence *float64 `json:"confidence"`
		Calibrated bool     `json:"calibrated"`
		Abstained  bool     `json:"abstained"`
		Abstain    string   `json:"abstain"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("ask --json: %v\n%s", err, stdout)
	}
	if v.Confidence == nil || *v.Confidence <= 0 || *v.Confidence > 1 || !v.Calibrated || len(v.Answers) == 0 {
		t.Errorf("ask --selector: %s, want answers with a calibrated confidence", stdout)
	}
	stdout, _, err = run(t, append(ask, "--min-confidence", "1", "who directed inception ?")...)
	if err != nil {
		t.Fatal(err)
	}
	v.Answers = nil
	if err := json.Unmarshal([]byte(stdout), &v); err != nil || !v.Abstained || len(v.Answers) != 0 || !strings.HasPrefix(v.Abstain, "best candidate ") {
		t.Errorf("ask --min-confidence 1: %v %s, want no answer and the reason", err, stdout)
	}
	text, _, err := run(t, "ask", "--vectors", tinyVectors, "--kg", kb, "--selector", out, "--min-confidence", "1", "who directed inception ?")
	if err != nil || !strings.Contains(text, "no answer: best candidate ") || !strings.Contains(text, " < 1 (withheld: ") {
		t.Errorf("ask --min-confidence 1 in text: %v\n%s", err, text)
	}
}
