package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rogMini is a per-question-graph fixture: each row brings its own graph.
const rogMini = "../../benchmark/testdata/rog_mini.jsonl"

// rogMiniPaths are gold relation paths for rogMini (T-2 has none).
const rogMiniPaths = `{"id":"T-0","ground_paths":[["film.film.directed_by"]]}
{"id":"T-1","ground_paths":[["film.film.directed_by","people.person.spouse"]]}
{"id":"T-2","ground_paths":[]}
`

// TestDataSplitAndGNNOnOwnGraphs splits the fixture by question id, trains
// a Triple-GNN on per-question graphs, and guides stem eval with it on the
// questions an id file lists.
func TestDataSplitAndGNNOnOwnGraphs(t *testing.T) {
	dir := t.TempDir()
	gp := writeFile(t, "gp.jsonl", rogMiniPaths)
	split := filepath.Join(dir, "split")
	if _, _, err := run(t, "data", "split", "--format", "rog", "--questions", rogMini, "--gold-paths", gp, "--out", split); err != nil {
		t.Fatal(err)
	}
	// FNV-1a 64: T-0 and T-2 hash even, T-1 odd.
	for name, want := range map[string][]string{"train.ids": {"T-0", "T-2"}, "test.ids": {"T-1"}} {
		b, err := os.ReadFile(filepath.Join(split, name))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Fields(string(b))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if _, _, err := run(t, "data", "split", "--format", "rog", "--questions", rogMini, "--gold-paths", gp, "--out", split); err == nil {
		t.Error("data split replaced its id files without --force")
	}

	model := filepath.Join(dir, "rog.gnn")
	if _, _, err := run(t, "train", "gnn", "--vectors", tinyVectors, "--format", "rog", "--questions", rogMini, "--gold-paths", gp,
		"--out", model, "--epochs", "2", "--width", "8", "--layers", "2"); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "eval", "--vectors", tinyVectors, "--format", "rog", "--questions", rogMini, "--gold-paths", gp,
		"--ids", filepath.Join(split, "test.ids"), "--gnn", model, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		N       int                        `json:"n"`
		Hits1   float64                    `json:"hits1"`
		StageMS map[string]json.RawMessage `json:"stage_ms"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval output is not JSON: %v\n%s", err, out)
	}
	if rep.N != 1 || rep.Hits1 != 100 {
		t.Errorf("eval --gnn on own graphs: n %d, Hits@1 %.2f; want T-1 answered right", rep.N, rep.Hits1)
	}
	if _, ok := rep.StageMS["guide"]; !ok {
		t.Errorf("eval --gnn on own graphs: no guide stage timed: %s", out)
	}

	nothing := writeFile(t, "nothing.ids", "X-9\n")
	empty := writeFile(t, "empty.ids", "\n")
	for _, tc := range []struct{ name, ids, want string }{
		{"missing file", filepath.Join(dir, "missing.ids"), "no such file"},
		{"empty file", empty, "no question ids"},
		{"ids matching nothing", nothing, "none of its 1 ids"},
	} {
		for _, cmd := range [][]string{{"eval"}, {"eval-gnn", "--gnn", model}, {"train", "gnn", "--out", filepath.Join(dir, "x.gnn")}} {
			args := append(slices.Clone(cmd), "--vectors", tinyVectors, "--format", "rog", "--questions", rogMini, "--gold-paths", gp, "--ids", tc.ids)
			if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--ids") {
				t.Errorf("%s with %s: err = %v, want one naming --ids and %q", cmd[0], tc.name, err, tc.want)
			}
		}
	}
}

func TestKGMask(t *testing.T) {
	kb := writeFile(t, "kb.tsv", "a\tchildren\tb\nb\tspouse\tc\n")
	out := filepath.Join(t.TempDir(), "masked.tsv")
	if _, _, err := run(t, "kg", "mask", "--out", out, kb); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// FNV-1a 64 of "children" ends in 8c3cf2b2.
	if got := string(b); !strings.HasPrefix(got, "a\tr8c3cf2b2\tb\nb\tr") || strings.Contains(got, "spouse") || strings.Count(got, "\n") != 2 {
		t.Errorf("masked KG:\n%s", got)
	}
	if _, _, err := run(t, "kg", "mask", "--out", out, kb); err == nil {
		t.Error("kg mask replaced its output without --force")
	}
	if _, _, err := run(t, "kg", "mask", "--force", "--out", kb, kb); err == nil {
		t.Error("kg mask overwrote its input")
	}
}
