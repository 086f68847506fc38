package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainTheta sweeps two thresholds on the demo questions and writes
// the best as a --config file that stem eval then reads.
func TestTrainTheta(t *testing.T) {
	kb, qs := llmEvalFiles(t)
	out := filepath.Join(t.TempDir(), "theta.json")
	args := []string{"train", "theta", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--thetas", "0.3,0.9", "--out", out}
	stdout, _, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "<- best") || !strings.Contains(stdout, "wrote "+out) {
		t.Errorf("train theta printed:\n%s", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", out, err, b)
	}
	if cfg["encoder"] != "wordvec" || cfg["vectors"] != tinyVectors || (cfg["theta"] != 0.3 && cfg["theta"] != 0.9) {
		t.Errorf("config %v: want the encoder, its vectors and one of the thresholds", cfg)
	}
	if _, _, err := run(t, "eval", "--config", out, "--format", "pq", "--questions", qs, "--kg", kb); err != nil {
		t.Errorf("eval --config %s: %v", out, err)
	}
	for _, tc := range []struct{ args, want string }{
		{"--thetas 0.3,x", "not a threshold"},
		{"--thetas 3", "not a threshold"},
	} {
		bad := append(append([]string{}, args[:len(args)-2]...), append(strings.Fields(tc.args), "--out", filepath.Join(t.TempDir(), "x.json"))...)
		if _, _, err := run(t, bad...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.args, err, tc.want)
		}
	}
	if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("second run without --force: %v", err)
	}
}
