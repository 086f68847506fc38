package synth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/train/dataset"
)

func runOptions(t *testing.T) RunOptions {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kg.tsv")
	if err := os.WriteFile(kb, demo.KGBytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return RunOptions{KG: kb, Out: filepath.Join(dir, "items.jsonl"), Hops: "2", Mention: "raw", PerSeed: 1, Max: 20,
		MaxAnswers: DefaultMaxAnswers, MaxFanout: DefaultMaxFanout, Seed: 3, Workers: 1}
}

func TestRunWritesAndResumes(t *testing.T) {
	ctx := context.Background()
	o := runOptions(t)
	var log strings.Builder
	o.Log = &log
	sum, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(log.String()), "\n"); !strings.Contains(lines[len(lines)-1], "100.0% 20/20") {
		t.Errorf("progress ends %q, want 100%% of the 20 items", lines[len(lines)-1])
	}
	if sum.Written != 20 || sum.Resumed != 0 || sum.Kept != 20 || sum.Questions != QuestionSourceVerbalizer {
		t.Errorf("first run: %+v", sum)
	}
	_, items, err := dataset.ReadFile(o.Out)
	if err != nil || len(items) != 20 {
		t.Fatalf("%d items in %s (%v), want 20", len(items), o.Out, err)
	}
	for _, it := range items {
		if it.Usable() && (it.Question == "" || len(it.Answers) == 0) {
			t.Errorf("usable item %s has no question or answer", it.ID)
		}
	}
	if card, err := os.ReadFile(sum.Card); err != nil || !strings.Contains(string(card), "| option hops | `2` |") {
		t.Errorf("card %s: %v", sum.Card, err)
	}
	o.Resume, o.Max = true, 25
	again, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if again.Resumed != 20 || again.Written != 5 {
		t.Errorf("resumed run: %d resumed, %d written; want 20 and 5", again.Resumed, again.Written)
	}
	o.Hops = "3"
	if _, err := Run(ctx, o); err == nil {
		t.Error("resuming with other options was accepted")
	}
}

func TestRunOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		edit func(*RunOptions)
		want string
	}{
		{func(o *RunOptions) { o.Hops = "3-1" }, "--hops"},
		{func(o *RunOptions) { o.Mention = "quoted" }, "--mention"},
		{func(o *RunOptions) { o.SkipEntity = "(" }, "--skip-entity"},
		{func(o *RunOptions) { o.Seeds, o.SeedEntities = 3, "seeds.txt" }, "not both"},
		{func(o *RunOptions) { o.PerSeed = 0 }, "--per-seed"},
		{func(o *RunOptions) { o.Max = -1 }, "not negative"},
		{func(o *RunOptions) { o.Workers = -2 }, "not negative"},
		{func(o *RunOptions) { o.Branch = 1.5 }, "--branch 1.5"},
		{func(o *RunOptions) { o.Generator, o.LLMWorkers = &Generator{}, 0 }, "--llm-workers 0"},
	} {
		o := runOptions(t)
		tc.edit(&o)
		if err := o.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check: err = %v, want %q", err, tc.want)
		}
	}
}
