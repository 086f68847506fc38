package sft

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/train/dataset"
)

// fakeAsserter refuses the question "refuse", fails on "fail" while
// failing is set, and verbalizes the rest, slower for earlier items so
// that workers finish out of order.
type fakeAsserter struct {
	failing atomic.Bool
	calls   atomic.Int32
}

func (f *fakeAsserter) Source() string { return "fake" }

func (f *fakeAsserter) Assert(ctx context.Context, q string, masked [][3]string) ([]string, error) {
	f.calls.Add(1)
	switch {
	case q == "refuse":
		return nil, &ReplyError{Reason: "llm: 1 assertions for 2 triples"}
	case q == "fail" && f.failing.Load():
		return nil, errors.New("chat server unreachable")
	case strings.HasPrefix(q, "slow"):
		time.Sleep(20 * time.Millisecond)
	}
	return Verbalizer{}.Assert(ctx, q, masked)
}

func runItems() []dataset.Item {
	m := [][3]string{{"Joel Zwick", "directed_by", "[ENT1]"}}
	return []dataset.Item{
		{ID: "1", Question: "slow one", Masked: m, Strategy: "Precision"},
		{ID: "2", Question: "refuse", Masked: m, Strategy: "Precision"},
		{ID: "3", Question: "fail", Masked: m, Strategy: "Precision"},
		{ID: "4", Question: "has some", Masked: m, Strategy: "Precision", Assertions: []string{"kept [ENT1]"}, AssertionSource: "llm:synth"},
		{ID: "5", Question: "unreachable", Strategy: "Precision", Dropped: "answers unreachable"},
		{ID: "6", Question: "fast", Masked: m, Strategy: "Breadth"},
	}
}

func TestAssertItemsResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	cfg := map[string]string{"assertions": "fake"}
	f := &fakeAsserter{}
	f.failing.Store(true)

	w, prior, err := dataset.Create(path, "assertions", cfg, false)
	if err != nil || len(prior) != 0 {
		t.Fatal(prior, err)
	}
	st, err := AssertItems(context.Background(), w, runItems(), RunOptions{Asserter: f, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st.Asserted != 2 || st.Dropped != 1 || st.Kept != 2 || st.Failed != 1 || st.Resumed != 0 || st.FirstFailure == nil || !strings.Contains(st.FirstFailure.Error(), "item 3: chat server unreachable") {
		t.Fatalf("first run %+v", st)
	}
	_, items, err := dataset.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	if !slices.Equal(ids, []string{"1", "2", "4", "5", "6"}) {
		t.Fatalf("written in order %v, want input order without the failed item", ids)
	}
	if items[0].AssertionSource != "fake" || items[0].Assertions[0] != "joel zwick is directed by [ENT1]." {
		t.Errorf("item 1: %+v", items[0])
	}
	if items[1].Dropped != "llm: 1 assertions for 2 triples" || items[1].Usable() {
		t.Errorf("refused item: %+v", items[1])
	}
	if items[2].AssertionSource != "llm:synth" || items[2].Assertions[0] != "kept [ENT1]" {
		t.Errorf("item with assertions was rewritten: %+v", items[2])
	}

	// The rerun asks only for the failed item.
	f.failing.Store(false)
	calls := f.calls.Load()
	w, prior, err = dataset.Create(path, "assertions", cfg, true)
	if err != nil || len(prior) != 5 {
		t.Fatal(len(prior), err)
	}
	st, err = AssertItems(context.Background(), w, runItems(), RunOptions{Asserter: f, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if st.Resumed != 5 || st.Asserted != 1 || st.Failed != 0 || f.calls.Load() != calls+1 {
		t.Errorf("rerun %+v after %d calls", st, f.calls.Load()-calls)
	}
	if _, items, _ = dataset.ReadFile(path); len(items) != 6 || items[5].ID != "3" {
		t.Errorf("after the rerun: %d items", len(items))
	}
}

func TestAssertItemsErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	w, _, err := dataset.Create(path, "assertions", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := AssertItems(context.Background(), w, runItems(), RunOptions{}); err == nil {
		t.Error("no asserter accepted")
	}
	dup := append(runItems(), dataset.Item{ID: "1", Question: "again", Strategy: "Precision"})
	if _, err := AssertItems(context.Background(), w, dup, RunOptions{Asserter: Verbalizer{}}); err == nil || !strings.Contains(err.Error(), `"1" appears twice`) {
		t.Errorf("duplicate id: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := AssertItems(ctx, w, runItems(), RunOptions{Asserter: Verbalizer{}, Workers: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

// Failures in a row stop the run instead of waiting out every item's
// retries against a server that is down.
func TestAssertItemsStopsOnFailuresInRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	w, _, err := dataset.Create(path, "assertions", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f := &fakeAsserter{}
	f.failing.Store(true)
	m := [][3]string{{"Joel Zwick", "directed_by", "[ENT1]"}}
	var items []dataset.Item
	for i := range 10 {
		items = append(items, dataset.Item{ID: fmt.Sprint(i), Question: "fail", Masked: m, Strategy: "Precision"})
	}
	st, err := AssertItems(context.Background(), w, items, RunOptions{Asserter: f, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Stopped || st.Failed != MaxFailuresInRow || w.Len() != 0 {
		t.Fatalf("stats %+v, %d written; want a stop after %d failures", st, w.Len(), MaxFailuresInRow)
	}
}

func TestExport(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	w, _, err := dataset.Create(in, "synth", map[string]string{}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range runItems() {
		if err := w.Write(&it); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := &fakeAsserter{}
	f.failing.Store(true)
	out := filepath.Join(dir, "sft")
	sum, err := Export(context.Background(), ExportOptions{Items: []string{in}, Out: out, Asserter: f, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Input != 6 || sum.Asserted != 2 || sum.Failed != 1 || sum.Err() == nil || !strings.Contains(sum.Err().Error(), "--resume") {
		t.Errorf("summary %+v, err %v", sum, sum.Err())
	}
	if len(sum.Files) != 4 || sum.Card.NotWritten != 1 {
		t.Errorf("files %v, card not written %d", sum.Files, sum.Card.NotWritten)
	}
	for _, name := range append(sum.Files, ItemsFile, CardMD, CardJSON) {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
	}
	// The same item in two inputs is refused before any work.
	if _, err := Export(context.Background(), ExportOptions{Items: []string{in, in}, Out: out, Asserter: f}); err == nil || !strings.Contains(err.Error(), "in both") {
		t.Errorf("duplicate ids: err = %v", err)
	}
}
