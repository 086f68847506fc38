package chains

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/train/dataset"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	kb, qs := filepath.Join(dir, "kg.tsv"), filepath.Join(dir, "q.txt")
	if err := os.WriteFile(kb, demo.KGBytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(qs, demo.Questions(), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := kg.Load(context.Background(), kb, kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	o := RunOptions{Format: "pq", Questions: []string{qs}, KG: kb, Graph: g, Out: filepath.Join(dir, "items.jsonl"),
		Options: Options{MaxHops: DefaultMaxHops, MaxPaths: DefaultMaxPaths, QuestionHops: true}}
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.N != 37 || sum.Written != 37 || sum.WithChain != 37 || sum.GoldPathShare != 100 {
		t.Errorf("summary: n %d written %d with chain %d gold share %.2f; want 37, 37, 37, 100", sum.N, sum.Written, sum.WithChain, sum.GoldPathShare)
	}
	if _, items, err := dataset.ReadFile(o.Out); err != nil || len(items) != 37 {
		t.Errorf("%d items (%v), want 37", len(items), err)
	}
	var b strings.Builder
	if err := sum.WriteText(&b); err != nil || !strings.Contains(b.String(), "contain gold path   37 = 100.00%") {
		t.Errorf("text summary:\n%s", b.String())
	}
	o.Resume = true
	again, err := Run(context.Background(), o)
	if err != nil || again.Resumed != 37 || again.Written != 0 {
		t.Errorf("resume: %+v, %v", again, err)
	}
	for _, bad := range []func(*RunOptions){
		func(o *RunOptions) { o.MaxHops = 0 },
		func(o *RunOptions) { o.MinHops = 9 },
		func(o *RunOptions) { o.Format = "webqsp" },
		func(o *RunOptions) { o.QTypes = []string{qs} },
	} {
		b := o
		bad(&b)
		if _, err := Run(context.Background(), b); err == nil {
			t.Errorf("options %+v accepted", b)
		}
	}
}
