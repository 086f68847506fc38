package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/train/dataset"
)

// TestDataChains extracts the demo questions' chains, checks the summary,
// the item file and the card, then resumes: a finished file, a torn one,
// and one written with other options.
func TestDataChains(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	out := filepath.Join(t.TempDir(), "demo.chains.jsonl")
	args := []string{"data", "chains", "--format", "pq", "--questions", qs, "--kg", kb, "--out", out}
	stdout, stderr, err := run(t, append(args, "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("summary is not JSON: %v\n%s", err, stdout)
	}
	for k, v := range map[string]any{"n": float64(demoQuestionCount), "with_chain": float64(demoQuestionCount), "gold_path_share": 100.0, "written": float64(demoQuestionCount), "resumed": 0.0, "no_entity": 0.0, "max_hops": 3.0} {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if !strings.Contains(stderr, "chains") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	h, items, err := dataset.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if h.Kind != "chains" || h.Config["question-hops"] != "true" || len(items) != demoQuestionCount {
		t.Fatalf("header %+v, %d items", h, len(items))
	}
	first := items[0]
	if first.Question != "who directed inception ?" || first.AnswerSlot != "[ENT1]" || first.Placeholders["[ENT1]"] != "Christopher_Nolan" ||
		len(first.Masked) == 0 || first.Masked[0] != [3]string{"Inception", "directed_by", "[ENT1]"} || first.Source != "chains:questions.tsv:1" {
		t.Errorf("first item %+v", first)
	}
	card, err := os.ReadFile(out + ".card.md")
	if err != nil || !strings.Contains(string(card), "| items | 37 |") {
		t.Errorf("card: %v\n%s", err, card)
	}

	// The plain shortest chains miss some gold paths of the demo.
	plain := filepath.Join(t.TempDir(), "plain.jsonl")
	stdout, _, err = run(t, "data", "chains", "--format", "pq", "--questions", qs, "--kg", kb, "--out", plain, "--question-hops=false", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var pm map[string]any
	if err := json.Unmarshal([]byte(stdout), &pm); err != nil || pm["gold_path_share"].(float64) >= 100 {
		t.Errorf("shortest chains: %v %v", err, pm["gold_path_share"])
	}

	if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("rerun without --resume: %v", err)
	}
	stdout, _, err = run(t, append(args, "--resume")...)
	if err != nil || !strings.Contains(stdout, "37 (0 written now, 37 already in the file)") {
		t.Errorf("resume of a finished file: %v\n%s", err, stdout)
	}
	// Tear the last line, as a crash mid-write would.
	data, _ := os.ReadFile(out)
	if err := os.WriteFile(out, data[:len(data)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err = run(t, append(args, "--resume", "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(stdout), &m)
	if m["written"] != 1.0 || m["resumed"] != 36.0 || m["n"] != 37.0 {
		t.Errorf("resume of a torn file: written %v resumed %v n %v", m["written"], m["resumed"], m["n"])
	}
	if _, items2, err := dataset.ReadFile(out); err != nil || len(items2) != 37 || items2[36].ID != items[36].ID {
		t.Errorf("resumed file: %d items, %v", len(items2), err)
	}
	_, _, err = run(t, append(args, "--resume", "--max-hops", "2")...)
	if !errors.Is(err, dataset.ErrConfig) {
		t.Errorf("resume with other options: %v", err)
	}
}

func TestDataChainsBadInput(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	metaqa := writeFile(t, "qa.txt", "who directed [Inception]\tChristopher_Nolan\nwho directed [Nobody Film]\tX\n")
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing question file", []string{"--format", "pq", "--questions", out("none.txt"), "--kg", kb, "--out", out("a")}, "none.txt"},
		{"missing KG", []string{"--format", "pq", "--questions", qs, "--kg", out("none.kb"), "--out", out("b")}, "none.kb"},
		{"unknown format", []string{"--format", "webqsp", "--questions", qs, "--kg", kb, "--out", out("c")}, `--format "webqsp": want pq or metaqa`},
		{"metaqa file read as pq", []string{"--format", "pq", "--questions", metaqa, "--kg", kb, "--out", out("d")}, "qa.txt:1"},
		{"pq file read as metaqa", []string{"--format", "metaqa", "--questions", qs, "--kg", kb, "--out", out("e")}, "questions.tsv:1"},
		{"qtype count", []string{"--format", "metaqa", "--questions", metaqa, "--qtype", metaqa + "," + metaqa, "--kg", kb, "--out", out("f")}, "one file per --questions file"},
		{"qtype with pq", []string{"--format", "pq", "--questions", qs, "--qtype", metaqa, "--kg", kb, "--out", out("g")}, "--qtype is for --format metaqa"},
		{"zero hops", []string{"--format", "pq", "--questions", qs, "--kg", kb, "--out", out("h"), "--max-hops", "0"}, "at least 1"},
		{"min above max", []string{"--format", "pq", "--questions", qs, "--kg", kb, "--out", out("i"), "--min-hops", "4"}, "--min-hops 4"},
		{"same file twice", []string{"--format", "pq", "--questions", qs + "," + qs, "--kg", kb, "--out", out("j")}, "appears twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, append([]string{"data", "chains"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}

	// Unknown entities are counted, not fatal.
	stdout, _, err := run(t, "data", "chains", "--format", "metaqa", "--questions", metaqa, "--kg", kb, "--out", out("k"), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil || m["n"] != 2.0 || m["no_entity"] != 1.0 || m["with_chain"] != 1.0 || m["gold_path_share"] != 0.0 {
		t.Errorf("summary %v %v", err, stdout)
	}
	_, items, err := dataset.ReadFile(out("k"))
	if err != nil || len(items) != 2 || items[1].Dropped != "no question entity in the KG" {
		t.Errorf("items %+v %v", items, err)
	}
}

// TestTrainGNNItems trains the Triple-GNN from an item file, with the dev
// split from another.
func TestTrainGNNItems(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	lines := strings.SplitAfter(string(demo.Questions()), "\n")
	trainQs := writeFile(t, "train.tsv", strings.Join(lines[:25], ""))
	devQs := writeFile(t, "dev.tsv", strings.Join(lines[25:], ""))
	dir := t.TempDir()
	trainItems, devItems := filepath.Join(dir, "train.jsonl"), filepath.Join(dir, "dev.jsonl")
	for _, p := range [][2]string{{trainQs, trainItems}, {devQs, devItems}} {
		if _, _, err := run(t, "data", "chains", "--format", "pq", "--questions", p[0], "--kg", kb, "--out", p[1]); err != nil {
			t.Fatal(err)
		}
	}
	model := filepath.Join(dir, "items.gnn")
	stdout, stderr, err := run(t, "train", "gnn", "--vectors", tinyVectors, "--format", "items", "--questions", trainItems, "--dev", devItems,
		"--kg", kb, "--out", model, "--epochs", "1", "--width", "8", "--layers", "1")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(model); err != nil || st.Size() == 0 {
		t.Fatalf("no model written: %v", err)
	}
	if !strings.Contains(stderr, "train gnn: 25 training and 12 dev questions (0 skipped") {
		t.Errorf("stderr:\n%s", stderr)
	}
	var h map[string]any
	if err := json.Unmarshal([]byte(stdout), &h); err != nil || h["best_epoch"] != 1.0 {
		t.Errorf("history %v %s", err, stdout)
	}
	// eval-gnn reads the same item files.
	out, _, err := run(t, "eval-gnn", "--vectors", tinyVectors, "--format", "items", "--questions", devItems, "--kg", kb, "--gnn", model, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var met map[string]any
	if err := json.Unmarshal([]byte(out), &met); err != nil || met["n"] != 12.0 {
		t.Errorf("eval-gnn --format items: %v %s", err, out)
	}
	if _, _, err := run(t, "eval-gnn", "--vectors", tinyVectors, "--format", "items", "--questions", devItems, "--gnn", model); err == nil || !strings.Contains(err.Error(), "--kg") {
		t.Errorf("eval-gnn items without --kg: %v", err)
	}
	if _, _, err := run(t, "train", "gnn", "--vectors", tinyVectors, "--format", "items", "--questions", trainItems, "--out", model); err == nil || !strings.Contains(err.Error(), "--kg") {
		t.Errorf("items without --kg: %v", err)
	}
	if _, _, err := run(t, "train", "gnn", "--vectors", tinyVectors, "--format", "items", "--questions", kb, "--kg", kb, "--out", model); err == nil || !strings.Contains(err.Error(), "kg.tsv:1") {
		t.Errorf("a KG read as items: %v", err)
	}
}
