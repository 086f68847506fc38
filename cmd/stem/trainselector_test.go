package main

import (
	"encoding/json"
	"maps"
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

// TestSelectorBeam: train selector records its beam (8 unless --beam
// says), and eval, compare and ask trace that beam with the selector
// unless the user gives one, by flag, --config file or compare key; a
// selector file without the beam (written before it was recorded)
// leaves the default beam.
func TestSelectorBeam(t *testing.T) {
	kb, _ := llmEvalFiles(t)
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	dir := t.TempDir()
	sel := filepath.Join(dir, "sel.json")
	if _, _, err := run(t, "train", "selector", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--out", sel); err != nil {
		t.Fatal(err)
	}
	sel3 := filepath.Join(dir, "sel3.json")
	if _, _, err := run(t, "train", "selector", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--beam", "3", "--out", sel3); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	b, err := os.ReadFile(sel)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil || m["beam"] != 8.0 {
		t.Fatalf("train selector wrote beam %v (%v), want 8", m["beam"], err)
	}
	if b, err = os.ReadFile(sel3); err != nil || !strings.Contains(string(b), `"beam": 3`) {
		t.Fatalf("train selector --beam 3 wrote (%v):\n%s", err, b)
	}
	// A file written before selectors recorded their beam.
	delete(m, "beam")
	b, _ = json.Marshal(m)
	old := writeFile(t, "old.json", string(b))
	cfg := writeFile(t, "config.json", `{"beam": 2}`)
	eval := []string{"eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--limit", "2", "--json"}
	for _, tc := range []struct {
		name string
		args []string
		want float64
	}{
		{"recorded beam", []string{"--selector", sel}, 8},
		{"another recorded beam", []string{"--selector", sel3}, 3},
		{"--beam wins", []string{"--selector", sel, "--beam", "5"}, 5},
		{"--beam 4 wins", []string{"--selector", sel, "--beam", "4"}, 4},
		{"--config's beam wins", []string{"--selector", sel, "--config", cfg}, 2},
		{"--beam wins over --config's", []string{"--selector", sel, "--config", cfg, "--beam", "6"}, 6},
		{"--beam auto", []string{"--selector", sel, "--beam", "auto"}, 8},
		{"old selector file", []string{"--selector", old}, 4},
		{"no selector", nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, append(eval, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Beam float64 `json:"beam"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Beam != tc.want {
				t.Errorf("eval %v: beam %v (%v), want %v", tc.args, rep.Beam, err, tc.want)
			}
		})
	}
	out, _, err := run(t, "compare", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--limit", "2", "--json",
		"--config", "name=recorded,selector="+sel, "--config", "name=given,selector="+sel+",beam=3", "--config", "name=old,selector="+old)
	if err != nil {
		t.Fatal(err)
	}
	var cmp struct {
		Configs []struct {
			Name   string `json:"name"`
			Report struct {
				Beam float64 `json:"beam"`
			} `json:"report"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatalf("compare --json: %v\n%s", err, out)
	}
	got := map[string]float64{}
	for _, c := range cmp.Configs {
		got[c.Name] = c.Report.Beam
	}
	if want := map[string]float64{"recorded": 8, "given": 3, "old": 4}; !maps.Equal(got, want) {
		t.Errorf("compare beams %v, want %v", got, want)
	}
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{[]string{"--selector", sel}, 8},
		{[]string{"--selector", sel, "--beam", "2"}, 2},
		{[]string{"--selector", old}, 4},
	} {
		out, _, err := run(t, append(append([]string{"ask", "--vectors", tinyVectors, "--kg", kb, "--json", "--explain"}, tc.args...), "who directed inception ?")...)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Explain struct {
				Beam float64 `json:"beam"`
			} `json:"explain"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.Explain.Beam != tc.want {
			t.Errorf("ask %v: explain beam %v (%v), want %v", tc.args, v.Explain.Beam, err, tc.want)
		}
	}
}
