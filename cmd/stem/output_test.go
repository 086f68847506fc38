package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
)

// TestNoCommandOverwritesItsInput gives every command that writes a file
// one of its own inputs as the output: each must refuse before doing
// anything, and leave the input as it was.
func TestNoCommandOverwritesItsInput(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	sftDir := t.TempDir()
	items := filepath.Join(sftDir, "items.jsonl")
	if _, _, err := run(t, "data", "chains", "--format", "pq", "--questions", qs, "--kg", kb, "--out", items); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		input string
		args  []string
	}{
		{"kg build", kb, []string{"kg", "build", "--force", "--out", kb, kb}},
		{"train planner", qs, []string{"train", "planner", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--out", qs, "--force"}},
		{"train gnn", kb, []string{"train", "gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--out", kb, "--force"}},
		{"data chains", qs, []string{"data", "chains", "--format", "pq", "--questions", qs, "--kg", kb, "--out", qs, "--resume"}},
		{"data synth", kb, []string{"data", "synth", "--kg", kb, "--out", kb, "--resume"}},
		{"data sft", items, []string{"data", "sft", "--items", items, "--out", sftDir, "--resume"}},
		{"eval", qs, []string{"eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--out", qs, "--resume"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := os.ReadFile(tc.input)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = run(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), "is also an input") {
				t.Errorf("err = %v, want a refusal naming the input", err)
			}
			if after, _ := os.ReadFile(tc.input); string(after) != string(before) {
				t.Errorf("%s changed", tc.input)
			}
		})
	}
}

// TestExistingOutput holds the one rule for an existing output: refused
// unless --force (or --resume, where a command can continue a file).
func TestExistingOutput(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	snap := filepath.Join(t.TempDir(), "kg.snap")
	if _, _, err := run(t, "kg", "build", "--out", snap, kb); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "kg", "build", "--out", snap, kb); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second build: err = %v, want a refusal that names --force", err)
	}
	if _, _, err := run(t, "kg", "build", "--force", "--out", snap, kb); err != nil {
		t.Errorf("--force: %v", err)
	}
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	model := filepath.Join(t.TempDir(), "m.stempat")
	args := []string{"train", "planner", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--out", model}
	if _, _, err := run(t, args...); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second train planner: err = %v", err)
	}
}

// TestCompareReportFolderCheckedFirst: a --report folder that cannot be
// made is an error before any configuration runs.
func TestCompareReportFolderCheckedFirst(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	blocker := writeFile(t, "file", "x")
	_, stderr, err := run(t, "compare", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--preset", "table11", "--report", filepath.Join(blocker, "report"))
	if err == nil || !strings.Contains(err.Error(), "--report") {
		t.Errorf("err = %v, want one naming --report", err)
	}
	if strings.Contains(stderr, "config 1/") {
		t.Errorf("a configuration ran before the report folder was checked:\n%s", stderr)
	}
}
