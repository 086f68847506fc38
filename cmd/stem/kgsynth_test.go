package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/synth"
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

// --out follows its extension: a .nt file is N-Triples (it was TSV that
// `kg build` then failed to read on line 1) holding the TSV's triples,
// and a name that says another format is refused before anything is
// written. The other KG writers refuse a name that says another format.
func TestKGOutputNames(t *testing.T) {
	dir := t.TempDir()
	tsv, nt := filepath.Join(dir, "s.tsv"), filepath.Join(dir, "s.nt")
	for _, f := range []string{tsv, nt} {
		if _, _, err := run(t, "kg", "synth", "--triples", "2000", "--seed", "3", "--out", f); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{tsv, nt} {
		if _, _, err := run(t, "kg", "build", "--out", f+".kg", f); err != nil {
			t.Fatalf("kg build %s: %v", f, err)
		}
	}
	// The same KG: the N-Triples name their entities as stem kg export
	// does, and read back with the TSV's names.
	a, err := kg.Load(context.Background(), tsv, kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	b, err := kg.Load(context.Background(), nt, kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	namedTriples := func(g *kg.Graph) map[[3]string]bool {
		out := map[[3]string]bool{}
		for i := range g.NumTriples() {
			tr := g.Triple(int32(i))
			out[[3]string{g.EntityName(tr.Head), g.RelationName(tr.Rel), g.EntityName(tr.Tail)}] = true
		}
		return out
	}
	want, got := namedTriples(a), namedTriples(b)
	for x := range got {
		if !want[x] {
			t.Fatalf("the N-Triples hold %v, which the TSV does not", x)
		}
	}
	if len(got) != len(want) || a.NumEntities() != b.NumEntities() {
		t.Errorf("%d triples and %d entities in the N-Triples, %d and %d in the TSV", len(got), b.NumEntities(), len(want), a.NumEntities())
	}
	for _, c := range [][]string{
		{"kg", "synth", "--triples", "10", "--out", filepath.Join(dir, "x.kg")},
		{"kg", "synth", "--triples", "10", "--out", filepath.Join(dir, "x.jsonl")},
		{"kg", "export", "--out", filepath.Join(dir, "x.tsv"), tsv},
		{"kg", "build", "--out", filepath.Join(dir, "x.nt"), tsv},
		{"kg", "mask", "--out", filepath.Join(dir, "x.nt"), tsv},
	} {
		_, _, err := run(t, c...)
		if err == nil || !strings.Contains(err.Error(), "the name says") {
			t.Errorf("%v: %v, want the name refused", c, err)
		}
		if _, err := os.Stat(c[len(c)-1]); c[1] == "synth" && err == nil {
			t.Errorf("%v: wrote a file", c)
		}
	}
}

// --format words mean one thing on every command: a dataset word names
// its KG file's format where a KG format is asked for (`stem serve
// --format metaqa` was "unknown KG format"), and a KG format word given
// where the questions' format is asked for is explained.
func TestFormatWords(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.txt")
	if err := os.WriteFile(kb, []byte("Inception|directed_by|Nolan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, "kg", "stats", "--format", "metaqa", kb); err != nil || !regexp.MustCompile(`triples +1\n`).MatchString(out) {
		t.Errorf("kg stats --format metaqa: %v\n%s", err, out)
	}
	for _, c := range [][]string{
		{"eval", "--format", "nt", "--questions", kb, "--kg", kb},
		{"train", "planner", "--format", "tsv", "--questions", kb, "--out", filepath.Join(dir, "m.stempat")},
	} {
		if _, _, err := run(t, c...); err == nil || !strings.Contains(err.Error(), "names a KG file's format") {
			t.Errorf("%v: %v, want the word explained", c, err)
		}
	}
	if _, _, err := run(t, "kg", "stats", "--format", "webqsp-mini", kb); err == nil || !strings.Contains(err.Error(), "that is a dataset format") {
		t.Errorf("kg stats --format webqsp-mini: %v, want the word explained", err)
	}
}

// TestKGSynthComplex runs the complex questions' workflow: kg synth
// --complex, stem eval --format synth with the oracle (gold schema
// graphs) and with the pattern planner trained on the complex training
// split, each kind in its own row.
func TestKGSynthComplex(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains a planner")
	}
	dir := t.TempDir()
	kgf, cq, ct, model := filepath.Join(dir, "s.tsv"), filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "ct.jsonl"), filepath.Join(dir, "c.stempat")
	out, _, err := run(t, "kg", "synth", "--triples", "60000", "--seed", "2", "--out", kgf, "--complex", "20", "--complex-questions", cq, "--complex-train", ct)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "160 complex questions (conjunction 20, conjunction-cvt 20, superlative 20, comparative 20, typed 20, superlative-number 20, count 20, relative 20)") {
		t.Errorf("output:\n%s", out)
	}
	for _, bad := range [][]string{{"--complex", "5"}, {"--complex-questions", filepath.Join(dir, "x.jsonl")}, {"--complex", "-1", "--complex-questions", filepath.Join(dir, "x.jsonl")}} {
		args := append([]string{"kg", "synth", "--triples", "100", "--out", filepath.Join(dir, "bad.tsv")}, bad...)
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, _, err := run(t, "train", "planner", "--format", "synth", "--questions", ct, "--out", model); err != nil {
		t.Fatal(err)
	}
	for _, pl := range [][]string{{"--planner", "oracle"}, {"--planner", "pattern", "--planner-model", model}} {
		args := append([]string{"eval", "--format", "synth", "--questions", cq, "--kg", kgf, "--json"}, pl...)
		out, _, err := run(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			ByType []struct {
				Label string  `json:"label"`
				N     int     `json:"n"`
				Hits1 float64 `json:"hits1"`
			} `json:"by_type"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(rep.ByType) != len(synth.ComplexKinds) {
			t.Fatalf("%v: by type %+v", pl, rep.ByType)
		}
		for _, b := range rep.ByType {
			t.Logf("%v %s: n %d Hits@1 %.1f", pl[1], b.Label, b.N, b.Hits1)
			if b.N != 20 || b.Hits1 < 85 {
				t.Errorf("%v %s: n %d Hits@1 %.1f, want 20 and >= 85", pl[1], b.Label, b.N, b.Hits1)
			}
		}
	}
}
