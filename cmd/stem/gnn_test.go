package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/tripgnn"
)

// TestGNNEndToEnd trains a tiny Triple-GNN on the demo questions through the
// CLI, scores its guidance graphs, and uses it to guide stem eval and stem ask.
func TestGNNEndToEnd(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	model := filepath.Join(t.TempDir(), "demo.gnn")
	if _, _, err := run(t, "train", "gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--out", model, "--epochs", "2", "--width", "16", "--layers", "2"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{model, model + ".loss.svg"} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Fatalf("train gnn did not write %s: %v", f, err)
		}
	}

	out, _, err := run(t, "eval-gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--gnn", model, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("eval-gnn output is not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"n", "recall_gnn", "recall_similarity", "recall_hops"} {
		v, ok := m[k].(float64)
		if !ok || v < 0 || (k != "n" && v > 1) {
			t.Errorf("eval-gnn %s = %v", k, m[k])
		}
	}

	out, _, err = run(t, "eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--gnn", model, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || m["unbacked"] != 0.0 || m["n"] != float64(demoQuestionCount) {
		t.Errorf("eval --gnn: %v %v", err, out)
	}

	out, _, err = run(t, "ask", "--vectors", tinyVectors, "--gnn", model, "--explain", "who directed inception ?")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "guidance entities:") || !strings.Contains(out, "Christopher_Nolan") {
		t.Errorf("ask --gnn --explain:\n%s", out)
	}

	// --k-factor and --plain-mean are stored in the model.
	plain := filepath.Join(t.TempDir(), "plain.gnn")
	if _, _, err := run(t, "train", "gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--out", plain, "--epochs", "1", "--width", "8", "--layers", "1", "--k-factor", "2", "--plain-mean"); err != nil {
		t.Fatal(err)
	}
	vecs, err := wordvec.Open(tinyVectors)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(vecs, wordvec.Options{})
	pm, err := tripgnn.Load(plain, enc.Name(), enc.Dim())
	if err != nil {
		t.Fatal(err)
	}
	if cfg := pm.Config(); cfg.KFactor != 2 || !cfg.NoBoundary || pm.K(3) != 6 {
		t.Errorf("--k-factor 2 --plain-mean: config %+v, K(3) = %d; want KFactor 2, NoBoundary, K 6", cfg, pm.K(3))
	}
	if _, _, err := run(t, "train", "gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--out", plain, "--k-factor", "0"); err == nil || !strings.Contains(err.Error(), "--k-factor 0") {
		t.Errorf("--k-factor 0: err = %v", err)
	}

	// --labels answers trains on the gold answers alone; an unknown
	// value is refused before anything is trained.
	answers := filepath.Join(t.TempDir(), "answers.gnn")
	if _, _, err := run(t, "train", "gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--out", answers, "--epochs", "1", "--width", "8", "--layers", "1", "--labels", "answers"); err != nil {
		t.Fatal(err)
	}
	if _, err := tripgnn.Load(answers, enc.Name(), enc.Dim()); err != nil {
		t.Errorf("--labels answers: %v", err)
	}
	if _, _, err := run(t, "train", "gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--out", answers, "--force", "--labels", "ends"); err == nil || !strings.Contains(err.Error(), `--labels "ends"`) {
		t.Errorf("--labels ends: err = %v", err)
	}

	// A checkpoint trained with another encoder is refused with a clear error.
	other := writeFile(t, "other.glove", "directed 0.1 0.2\nfilm 0.3 0.1\n")
	if _, _, err := run(t, "ask", "--vectors", other, "--gnn", model, "who directed inception ?"); err == nil {
		t.Error("a GNN trained with another encoder was accepted")
	}
}
