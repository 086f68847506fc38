package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKGSynth runs the workflow the help text teaches: kg synth, kg build,
// then eval with the oracle planner on the synthetic questions.
func TestKGSynth(t *testing.T) {
	dir := t.TempDir()
	kgf, qf, snap := filepath.Join(dir, "s.tsv"), filepath.Join(dir, "q.txt"), filepath.Join(dir, "s.kg")
	out, _, err := run(t, "kg", "synth", "--triples", "30000", "--seed", "2", "--out", kgf, "--questions", qf, "--n-questions", "200")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"30000 triples", "CVTs", "namesakes", "degree: max", "200 questions", "peak memory"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// No overwrite without --force; bad sizes are errors.
	if _, _, err := run(t, "kg", "synth", "--triples", "10", "--out", kgf); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing --out: %v", err)
	}
	for _, bad := range [][]string{{"--triples", "0"}, {"--triples", "-5"}, {"--triples", "10", "--n-questions", "0"}} {
		args := append([]string{"kg", "synth", "--out", filepath.Join(dir, "bad.tsv")}, bad...)
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", bad)
		}
		if _, err := os.Stat(filepath.Join(dir, "bad.tsv")); err == nil {
			t.Errorf("%v: wrote a file", bad)
		}
	}
	if _, _, err := run(t, "kg", "build", "--out", snap, kgf); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "eval", "--format", "pq", "--questions", qf, "--kg", snap, "--planner", "oracle", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("oracle on synth: n %v hits1 %v f1 %v", rep["n"], rep["hits1"], rep["f1"])
	if rep["n"] != 200.0 {
		t.Errorf("n = %v", rep["n"])
	}
	if h, _ := rep["hits1"].(float64); h < 95 { // a percentage
		t.Errorf("oracle Hits@1 = %v on synthetic questions, want ~100%%", rep["hits1"])
	}
}
