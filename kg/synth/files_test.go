package synth

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
)

func TestWriteFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Triples: 5000, Seed: 3, Questions: 20, TrainQuestions: 30}
	tsv := Files{KG: filepath.Join(dir, "s.tsv"), Questions: filepath.Join(dir, "q.txt"), Train: filepath.Join(dir, "t.txt")}
	st, err := WriteFiles(ctx, cfg, tsv, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := kg.Load(ctx, tsv.KG, kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if int64(g.NumTriples()) != st.Triples {
		t.Errorf("%s holds %d triples, Stats says %d", tsv.KG, g.NumTriples(), st.Triples)
	}
	for path, want := range map[string]int{tsv.Questions: st.Questions, tsv.Train: st.TrainQuestions} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n != want || want == 0 {
			t.Errorf("%s: %d lines, Stats says %d questions", path, n, want)
		}
	}
	// The same graph as N-Triples: every triple, plus one name per entity.
	nt := Files{KG: filepath.Join(dir, "s.nt")}
	st2, err := WriteFiles(ctx, cfg, nt, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(nt.KG)
	if err != nil {
		t.Fatal(err)
	}
	edges := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.Contains(line, "<"+kg.NamePredicate+">") {
			edges++
		}
	}
	if st2.Triples != st.Triples || int64(edges) != st.Triples {
		t.Errorf("N-Triples: %d edge lines, Stats says %d; TSV: %d triples", edges, st2.Triples, st.Triples)
	}
	var text bytes.Buffer
	st.WriteText(&text, tsv)
	for _, want := range []string{"wrote " + tsv.KG + ": 5000 triples", "degree: max", "wrote " + tsv.Questions + ": 20 questions", "wrote " + tsv.Train + ": 30 training questions"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("WriteText lacks %q:\n%s", want, text.String())
		}
	}
	// A cancelled run leaves none of its files.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	gone := Files{KG: filepath.Join(dir, "c.tsv"), Questions: filepath.Join(dir, "cq.txt")}
	if _, err := WriteFiles(cctx, Config{Triples: 200000, Seed: 1}, gone, nil); err == nil {
		t.Fatal("cancelled WriteFiles: no error")
	}
	for _, p := range []string{gone.KG, gone.Questions} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s after a cancelled run: %v, want no file", p, err)
		}
	}
	if err := CheckKGName("--out", "x.stemkg"); err == nil {
		t.Error("CheckKGName(x.stemkg): want the snapshot name refused")
	}
	for _, ok := range []string{"x.nt", "x.tsv", "x.txt", "x"} {
		if err := CheckKGName("--out", ok); err != nil {
			t.Errorf("CheckKGName(%s): %v", ok, err)
		}
	}
}
