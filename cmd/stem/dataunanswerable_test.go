package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/kg"
)

// TestDataUnanswerable writes the demo benchmark's unanswerable variant and
// scores it with the oracle planner: the questions that lost their answer
// are counted apart, and the others score as they do over the original KG
// (the run the variant's answerable.ids selects).
func TestDataUnanswerable(t *testing.T) {
	dir := t.TempDir()
	kb, qf := filepath.Join(dir, "kg.tsv"), filepath.Join(dir, "questions.tsv")
	kbData, err := io.ReadAll(demo.KG())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kb, kbData, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(qf, demo.Questions(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "variant")
	args := []string{"data", "unanswerable", "--format", "pq", "--questions", qf, "--kg", kb, "--out", out}
	stdout, _, err := run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "of 37 questions (fraction 0.20 by id hash)") {
		t.Errorf("summary: %s", stdout)
	}
	u, err := benchmark.ReadUnanswerable(filepath.Join(out, "unanswerable.json"))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := kg.Load(t.Context(), kb, kg.FormatTSV)
	if err != nil {
		t.Fatal(err)
	}
	variant, err := kg.Load(t.Context(), filepath.Join(out, "kg.tsv"), kg.FormatTSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Removed) == 0 || len(u.Triples) == 0 || variant.NumTriples() != orig.NumTriples()-len(u.Triples) {
		t.Errorf("removed %d questions, %d triples: the KG went from %d to %d triples", len(u.Removed), len(u.Triples), orig.NumTriples(), variant.NumTriples())
	}
	if _, err := os.Stat(filepath.Join(out, "questions.tsv")); err != nil {
		t.Errorf("questions not copied: %v", err)
	}
	if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second run without --force: %v", err)
	}
	if _, _, err := run(t, append(args, "--force", "--fraction", "1")...); err == nil {
		t.Error("--fraction 1 accepted")
	}

	evalJSON := func(args ...string) *eval.Report {
		t.Helper()
		stdout, _, err := run(t, append([]string{"eval", "--format", "pq", "--planner", "oracle", "--json", "--vectors", tinyVectors}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var rep eval.Report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		return &rep
	}
	rep := evalJSON("--questions", filepath.Join(out, "questions.tsv"), "--kg", filepath.Join(out, "kg.tsv"), "--unanswerable", filepath.Join(out, "unanswerable.json"))
	lost := len(u.Removed) + len(u.Unreachable)
	if rep.Unanswerable == nil || rep.Unanswerable.N != lost || rep.Answerable == nil || rep.Answerable.N != u.Questions-lost ||
		rep.Unanswerable.Abstained != 0 || rep.Unanswerable.AnsweredWrong+rep.Unanswerable.AnsweredRight != lost {
		t.Fatalf("unanswerable %+v, answerable %+v, want %d lost of %d", rep.Unanswerable, rep.Answerable, lost, u.Questions)
	}
	base := evalJSON("--questions", qf, "--kg", kb, "--ids", filepath.Join(out, "answerable.ids"))
	if base.N != rep.Answerable.N || base.Hits1 != rep.Answerable.Hits1 {
		t.Errorf("answerable questions: %d at hits@1 %.2f over the variant, %d at %.2f over the original", rep.Answerable.N, rep.Answerable.Hits1, base.N, base.Hits1)
	}
	t.Logf("demo variant: %d removed, %d unreachable; answerable hits@1 %.2f (original %.2f), unanswerable answered right %d", len(u.Removed), len(u.Unreachable), rep.Answerable.Hits1, base.Hits1, rep.Unanswerable.AnsweredRight)
}
