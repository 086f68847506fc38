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

// TestNumbersCheckedBeforeWork: numeric settings out of range, and floats
// that are not numbers, are refused before anything is read or computed.
func TestNumbersCheckedBeforeWork(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	ev := []string{"eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(ev, "--workers", "-3"), `workers "-3": want a number from 1 to 256`},
		{append(ev, "--workers", "0"), `workers "0"`},
		{append(ev, "--limit", "-5"), `limit "-5": want a number of at least 0`},
		{append(ev, "--beam", "0"), `beam "0"`},
		{append(ev, "--lambda", "NaN"), `lambda "NaN": want a finite number`},
		{append(ev, "--theta", "7"), `theta "7": want a number from -1 to 2`},
		{[]string{"kg", "stats", "--top", "-1", kb}, "--top -1: want a whole number of at least 0"},
		{[]string{"kg", "neighbours", "--limit", "-2", kb, "Inception"}, "--limit -2"},
		{[]string{"search", "--vectors", tinyVectors, "--kg", kb, "--k", "0", "nolan"}, "--k 0"},
		{[]string{"train", "gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--out", filepath.Join(t.TempDir(), "m"), "--lr", "NaN"}, "--lr NaN: want a finite number"},
		{[]string{"train", "gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--out", filepath.Join(t.TempDir(), "m"), "--width", "0"}, "--width 0"},
		{[]string{"eval-plans", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--planner", "schema", "--kg", kb, "--beam", "0"}, "--beam 0"},
	} {
		if _, _, err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
	cfg := writeFile(t, "big.json", `{"limit": 1000000, "workers": 2}`)
	if _, _, err := run(t, append(ev, "--config", cfg, "--json")...); err != nil {
		t.Errorf("--config with limit 1000000: %v", err)
	}
	bad := writeFile(t, "bad.json", `{"limit": "many"}`)
	if _, _, err := run(t, append(ev, "--config", bad)...); err == nil || !strings.Contains(err.Error(), `limit "many": want a whole number`) {
		t.Errorf("--config with a string limit: err = %v", err)
	}
}

// TestMistakesGetOneLine: an unknown flag or command is one error line that
// says where the help is, with no help text dumped on stdout.
func TestMistakesGetOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ask", "--bogus", "x"}, "ask: flag provided but not defined: -bogus (see stem ask --help)"},
		{[]string{"kg", "stats", "--nope", "x"}, "(see stem kg stats --help)"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"; the commands are ask, demo,`},
	} {
		out, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
		if out != "" {
			t.Errorf("%v: printed %d bytes on stdout, want none", tc.args, len(out))
		}
	}
}

// TestHelpPlaceholders: help names a flag's value by what it is (--gnn
// MODEL), never by a phrase quoted in its usage.
func TestHelpPlaceholders(t *testing.T) {
	out, _, err := run(t, "ask", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--gnn MODEL", "--kg FILE", "--planner-model FILE", "--entity NAME", "--vectors FILE"} {
		if !strings.Contains(out, want) {
			t.Errorf("ask --help lacks %q", want)
		}
	}
	if strings.Contains(out, "--gnn stem") || strings.Contains(out, "--planner-model stem") {
		t.Errorf("a usage phrase became a placeholder:\n%s", out)
	}
	out, _, _ = run(t, "search", "--help")
	if !strings.Contains(out, "--kg FILE") {
		t.Errorf("search --help lacks --kg FILE:\n%s", out)
	}
}
