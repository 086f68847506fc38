package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/schema"
)

func item(id string) Item {
	return Item{
		ID: id, Source: "chains:PQ-2H.train.txt:" + id,
		Question: "what is the nationality of frederica_of_mecklenburg-strelitz 's couple ?",
		Entities: []string{"frederica_of_mecklenburg-strelitz"}, Answers: []string{"united_kingdom"},
		Triples:      [][3]string{{"frederica_of_mecklenburg-strelitz", "spouse", "ernest_augustus_i_of_hanover"}, {"ernest_augustus_i_of_hanover", "nationality", "united_kingdom"}},
		Masked:       [][3]string{{"frederica_of_mecklenburg-strelitz", "spouse", "[ENT1]"}, {"[ENT1]", "nationality", "[ENT2]"}},
		Placeholders: map[string]string{"[ENT1]": "ernest_augustus_i_of_hanover", "[ENT2]": "united_kingdom"},
		AnswerSlot:   "[ENT2]", Hops: 2, Strategy: Precision,
	}
}

var cfg = map[string]string{"format": "pq", "max-hops": "3"}

// create opens a new data file in a temporary directory.
func create(t *testing.T, path string, resume bool) (*Writer, []Item) {
	t.Helper()
	w, items, err := Create(path, "chains", cfg, resume)
	if err != nil {
		t.Fatal(err)
	}
	return w, items
}

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	w, prior := create(t, path, false)
	if len(prior) != 0 {
		t.Fatalf("new file has %d items", len(prior))
	}
	want := []Item{item("1"), item("2"), {ID: "3", Question: "q", Strategy: Precision, Dropped: "answers unreachable"}}
	want[1].Assertions = []string{"The spouse of x is [ENT1].", "The nationality of [ENT1] is [ENT2]."}
	want[1].AssertionSource = "verbalizer"
	want[1].Strategy = Breadth
	for i := range want {
		if err := w.Write(&want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if w.Len() != 3 || !w.Done("2") || w.Done("4") {
		t.Errorf("len %d, done(2) %v, done(4) %v", w.Len(), w.Done("2"), w.Done("4"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	h, got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != FormatVersion || h.Kind != "chains" || !reflect.DeepEqual(h.Config, cfg) {
		t.Errorf("header %+v", h)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	data, _ := os.ReadFile(path)
	if first := strings.SplitN(string(data), "\n", 2)[0]; first != `{"stem_data":1,"kind":"chains","config":{"format":"pq","max-hops":"3"}}` {
		t.Errorf("header line %s", first)
	}
}

// TestResumeTornLine: a file cut mid-line keeps the items before the cut,
// and the resumed writer appends after the last whole line.
func TestResumeTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	w, _ := create(t, path, false)
	for _, id := range []string{"1", "2", "3"} {
		it := item(id)
		if err := w.Write(&it); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	data, _ := os.ReadFile(path)
	lastStart := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	for _, cut := range []int{lastStart + 1, lastStart + 40, len(data) - 1} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			os.WriteFile(path, data[:cut], 0o644)
			_, items, good, err := Read(bytes.NewReader(data[:cut]), "items.jsonl")
			if err != nil || len(items) != 2 || good != int64(lastStart) {
				t.Fatalf("read %d items, good %d (want 2, %d): %v", len(items), good, lastStart, err)
			}
			w, prior := create(t, path, true)
			if len(prior) != 2 || prior[1].ID != "2" || w.Len() != 2 || w.Done("3") {
				t.Fatalf("resumed with %d items", len(prior))
			}
			it := item("3")
			if err := w.Write(&it); err != nil {
				t.Fatal(err)
			}
			w.Close()
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, data) {
				t.Errorf("after resume the file is\n%s\nwant\n%s", after, data)
			}
		})
	}
}

func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "items.jsonl")
	w, _ := create(t, path, false)
	it := item("1")
	if err := w.Write(&it); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&it); err == nil || !strings.Contains(err.Error(), "item 1 is already written") {
		t.Errorf("duplicate id in one run: %v", err)
	}
	w.Close()

	if _, _, err := Create(path, "chains", cfg, false); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("existing file without resume: %v", err)
	}
	other := map[string]string{"format": "pq", "max-hops": "4"}
	if _, _, err := Create(path, "chains", other, true); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "max-hops=3") || !strings.Contains(err.Error(), "max-hops=4") {
		t.Errorf("other config: %v", err)
	}
	if _, _, err := Create(path, "synth", cfg, true); !errors.Is(err, ErrConfig) {
		t.Errorf("other kind: %v", err)
	}
	w, prior := create(t, path, true)
	if err := w.Write(&prior[0]); err == nil {
		t.Error("resumed writer rewrote an item already in the file")
	}
	bad := Item{ID: "2", Masked: [][3]string{{"a", "r", "[ENT1]"}}, Strategy: "Maybe"}
	if err := w.Write(&bad); err == nil {
		t.Error("item with an unknown strategy written")
	}
	w.Close()
	if _, items, _ := ReadFile(path); len(items) != 1 {
		t.Errorf("%d items after refused writes, want 1", len(items))
	}
	// An empty file is as good as none.
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	if w, _, err := Create(empty, "chains", cfg, false); err != nil {
		t.Errorf("empty file: %v", err)
	} else {
		w.Close()
	}
	if _, _, err := Create(filepath.Join(dir, "no", "such", "dir.jsonl"), "chains", cfg, false); err == nil {
		t.Error("missing directory accepted")
	}
}

func TestReadErrors(t *testing.T) {
	hdr := `{"stem_data":1,"kind":"chains"}` + "\n"
	good := `{"id":"1","question":"q","entities":null,"answers":null,"masked":[["a","r","[ENT1]"]],"hops":1,"strategy":"Precision"}` + "\n"
	tests := []struct {
		name, data, want string
	}{
		{"empty", "", "empty file"},
		{"newer version", `{"stem_data":2,"kind":"chains"}` + "\n" + good, "version 2 is newer"},
		{"no header", good, "no \"stem_data\" header"},
		{"header not json", "stem\n" + good, "x.jsonl:1:"},
		{"header cut", `{"stem_data":1,"ki`, "no whole header line"},
		{"bad line in the middle", hdr + good + "{oops\n" + good, "x.jsonl:3:"},
		{"invalid item in the middle", hdr + `{"id":"","strategy":"Precision"}` + "\n" + good, "x.jsonl:2: item has no id"},
		{"no header, only a blank line", "\n", "x.jsonl:1:"},
		{"blank line before the header", "\n" + hdr + good, "x.jsonl:1:"},
		{"bad line before a torn one", hdr + good + "{oops\n" + good[:10], "x.jsonl:3:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, items, _, err := Read(strings.NewReader(tc.data), "x.jsonl")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %d items, %v; want an error with %q", len(items), err, tc.want)
			}
		})
	}
	// A bad last line, whole or not, is taken for the trace of a crash.
	for _, tail := range []string{"{oops\n", `{"id":"2","strategy":"Precision"}` + "\n", good[:len(good)-1]} {
		_, items, g, err := Read(strings.NewReader(hdr+good+tail), "x.jsonl")
		if err != nil || len(items) != 1 || g != int64(len(hdr)+len(good)) {
			t.Errorf("last line %q: %d items, good %d, %v", tail, len(items), g, err)
		}
	}
	// Blank lines between items are allowed.
	_, items, g, err := Read(strings.NewReader(hdr+"\n"+good+"  \n"), "x.jsonl")
	if err != nil || len(items) != 1 || g != int64(len(hdr)+1+len(good)+3) {
		t.Errorf("blank lines: %d items, good %d, %v", len(items), g, err)
	}
}

func TestWriterConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	w, _ := create(t, path, false)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				it := item(fmt.Sprintf("%d-%d", g, i))
				if err := w.Write(&it); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	w.Close()
	_, items, err := ReadFile(path)
	if err != nil || len(items) != 200 {
		t.Fatalf("%d items, %v", len(items), err)
	}
}

func TestCardCounts(t *testing.T) {
	four := item("4")
	four.Hops = 5
	four.Strategy = Breadth
	four.Assertions = []string{"a [ENT1]", "b [ENT1] [ENT2]"}
	four.AssertionSource = "llm:gemini"
	four.QuestionSource = "llm:gemini"
	four.Question = "wér?" // 4 runes, 5 bytes
	items := []Item{
		item("1"), item("2"), four,
		{ID: "3", Question: "q", Strategy: Precision, Dropped: "answers unreachable"},
		{ID: "5", Question: "q", Strategy: Precision, Dropped: "answers unreachable"},
		{ID: "6", Question: "q", Strategy: Precision},
	}
	c := NewCard(items)
	want := Card{
		Items: 6, Usable: 3,
		AvgQuestionChars: float64(2*len(item("1").Question)+4) / 3,
		Hops:             map[string]int{"2": 2, "4+": 1},
		Strategies:       map[string]int{Precision: 2, Breadth: 1},
		AssertionSources: map[string]int{"none": 2, "llm:gemini": 1},
		QuestionSources:  map[string]int{"dataset": 2, "llm:gemini": 1},
		Dropped:          map[string]int{"answers unreachable": 2, "no evidence triples": 1},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("card\n%+v\nwant\n%+v", c, want)
	}
	var b strings.Builder
	if err := c.WriteMarkdown(&b, "PQ-2H chains"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"# PQ-2H chains\n", "| items | 6 |", "| usable | 3 |", "| hops = 4+ | 1 |", "| strategy Breadth | 1 |",
		"| assertions by none | 2 |", "| questions by dataset | 2 |", "| dropped: answers unreachable | 2 |", "| dropped: no evidence triples | 1 |"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, b.String())
		}
	}
	if empty := NewCard(nil); empty.Items != 0 || empty.AvgQuestionChars != 0 {
		t.Errorf("empty card %+v", empty)
	}
}

func TestItemHelpers(t *testing.T) {
	if StrategyFor(1) != Precision || StrategyFor(0) != Precision || StrategyFor(2) != Breadth {
		t.Error("StrategyFor")
	}
	if HopKey(1) != "1" || HopKey(3) != "3" || HopKey(4) != "4+" || HopKey(9) != "4+" {
		t.Error("HopKey")
	}
	it := item("1")
	if got := it.EvidenceEntities(); !reflect.DeepEqual(got, []string{"ernest_augustus_i_of_hanover", "frederica_of_mecklenburg-strelitz", "united_kingdom"}) {
		t.Errorf("EvidenceEntities %v", got)
	}
	g := it.Schema()
	if g.Answer != "[ENT2]" || len(g.Triples) != 2 || g.Triples[1] != (schema.Triple{Head: "[ENT1]", Rel: "nationality", Tail: "[ENT2]"}) || g.Validate() != nil {
		t.Errorf("Schema %+v", g)
	}
	checks := []struct {
		name string
		edit func(*Item)
		want string
	}{
		{"no id", func(it *Item) { it.ID = "" }, "no id"},
		{"no masked", func(it *Item) { it.Masked = nil }, "no masked triples"},
		{"triples not parallel", func(it *Item) { it.Triples = it.Triples[:1] }, "2 masked triples"},
		{"assertions not parallel", func(it *Item) { it.Assertions = []string{"x"} }, "1 assertions for 2 triples"},
		{"strategy", func(it *Item) { it.Strategy = "" }, "unknown strategy"},
		{"answer slot", func(it *Item) { it.AnswerSlot = "[ENT3]" }, "answer slot [ENT3] is in no masked triple"},
		{"dropped needs nothing", func(it *Item) { it.Masked, it.Strategy, it.Dropped = nil, "", "x" }, ""},
	}
	for _, tc := range checks {
		it := item("1")
		tc.edit(&it)
		err := it.Check()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if it.Usable() != true {
		t.Error("usable item not usable")
	}
}
