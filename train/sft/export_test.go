package sft

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/dataset"
)

// exportItems covers what Build meets: good items of both strategies, a
// paraphrase sharing its triples, and items it must skip or ignore.
func exportItems() []dataset.Item {
	long := make([][3]string, 17)
	longAs := make([]string, 17)
	for i := range long {
		long[i] = [3]string{"x", "r", "[ENT1]"}
		longAs[i] = "[ENT1] is r of x number " + string(rune('a'+i))
	}
	return []dataset.Item{
		{ID: "pq:1", Question: "what is the nationality of frederica_of_mecklenburg-strelitz 's couple ?", Entities: []string{"frederica_of_mecklenburg-strelitz"}, Answers: []string{"united_kingdom"},
			Triples:    [][3]string{{"frederica_of_mecklenburg-strelitz", "spouse", "ernest_augustus_i_of_hanover"}, {"ernest_augustus_i_of_hanover", "nationality", "united_kingdom"}},
			Masked:     [][3]string{{"frederica_of_mecklenburg-strelitz", "spouse", "[ENT1]"}, {"[ENT1]", "nationality", "[ENT2]"}},
			AnswerSlot: "[ENT2]", Hops: 2, Strategy: "Precision",
			Assertions: []string{"The spouse of frederica of mecklenburg strelitz is [ENT1].", "The nationality of [ENT1] is [ENT2]."}, AssertionSource: "verbalizer"},
		{ID: "pq:2", Question: "the nation of frederica_of_mecklenburg-strelitz 's couple ?", Entities: []string{"frederica_of_mecklenburg-strelitz"}, Answers: []string{"united_kingdom"},
			Masked:     [][3]string{{"frederica_of_mecklenburg-strelitz", "spouse", "[ENT1]"}, {"[ENT1]", "nationality", "[ENT2]"}},
			AnswerSlot: "[ENT2]", Hops: 2, Strategy: "Precision",
			Assertions: []string{"The spouse of frederica of mecklenburg strelitz is [ENT1].", "The nationality of [ENT1] is [ENT2]."}, AssertionSource: "verbalizer"},
		{ID: "mq:1", Question: `which films did "Joel Zwick" direct & <write>?`, Entities: []string{"Joel Zwick"}, Answers: []string{"Kismet", "Fat Albert"},
			Masked:     [][3]string{{"[ENT1]", "directed_by", "Joel Zwick"}, {"[ENT2]", "directed_by", "Joel Zwick"}},
			AnswerSlot: "[ENT2]", Hops: 1, Strategy: "Breadth",
			Assertions: []string{`[ENT1] is directed by "joel zwick".`, `[ENT2] is directed by "joel zwick".`}, AssertionSource: "llm:m"},
		{ID: "none", Question: "q", Masked: [][3]string{{"a", "r", "[ENT1]"}}, Strategy: "Precision"},
		{ID: "dropped", Question: "q", Strategy: "Precision", Dropped: "llm: 2 assertions for 3 triples"},
		{ID: "long", Question: "q", Masked: long, Strategy: "Breadth", Assertions: longAs},
		{ID: "repeat", Question: "q", Masked: [][3]string{{"a", "r", "[ENT1]"}, {"b", "r", "[ENT1]"}}, Strategy: "Precision", Assertions: []string{"[ENT1] is r.", "[ENT1] is r."}},
	}
}

func TestBuildRoundTrip(t *testing.T) {
	items := exportItems()
	s := Build(items)
	if len(s.SGDA) != 3 || len(s.SAGB) != 2 {
		t.Fatalf("%d SGDA and %d SAGB examples, want 3 and 2", len(s.SGDA), len(s.SAGB))
	}
	wantSkipped := map[string]int{
		"no assertions": 1,
		"more than 16 triples (the planner reads no longer plan)":                         1,
		"SGDA target does not read back (repeated assertion, or none with a placeholder)": 1,
	}
	if !mapsEqual(s.Skipped, wantSkipped) || !mapsEqual(s.Duplicates, map[string]int{TaskSAGB: 1}) {
		t.Errorf("skipped %v duplicates %v", s.Skipped, s.Duplicates)
	}
	byID := map[string]*dataset.Item{}
	for i := range items {
		byID[items[i].ID] = &items[i]
	}
	for _, e := range s.SGDA {
		it := byID[e.ID]
		d, err := llmplan.ParseDecomposition(e.Completion)
		st, _ := schema.ParseStrategy(it.Strategy)
		if err != nil || !slices.Equal(d.Assertions, it.Assertions) || d.Strategy != st || !d.HasStrategy {
			t.Errorf("%s: SGDA target %q reads back as %+v, %v", e.ID, e.Completion, d, err)
		}
		if e.Task != TaskSGDA || e.Prompt != SGDAPrompt(it.Question) || !strings.Contains(e.Prompt, "Input multi-hop question: "+it.Question+"\n") {
			t.Errorf("%s: SGDA prompt %q", e.ID, e.Prompt)
		}
	}
	for _, e := range s.SAGB {
		it := byID[e.ID]
		ts, err := llmplan.ParseTriples(e.Completion)
		if err != nil || !slices.Equal(ts, schemaTriples(it.Masked)) {
			t.Errorf("%s: SAGB target %q reads back as %v, %v", e.ID, e.Completion, ts, err)
		}
		if e.Task != TaskSAGB || e.Prompt != SAGBPrompt(it.Assertions) || !strings.HasSuffix(e.Prompt, "Input single-hop assertions: "+FormatAssertions(it.Assertions)) {
			t.Errorf("%s: SAGB prompt %q", e.ID, e.Prompt)
		}
	}
	if got := s.SGDA[2].Completion; got != `(("[ENT1] is directed by \"joel zwick\".", "[ENT2] is directed by \"joel zwick\"."), Breadth)` {
		t.Errorf("Breadth target %s", got)
	}
	if got := s.SAGB[0].Completion; got != "[\n(\"frederica_of_mecklenburg-strelitz\", \"spouse\", \"[ENT1]\"),\n(\"[ENT1]\", \"nationality\", \"[ENT2]\"),\n]" {
		t.Errorf("SAGB target %s", got)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// recorder is a fake chat model that keeps the prompts it is sent and
// answers P1 and P2 with the given targets.
type recorder struct {
	sgda, sagb string
	mu         sync.Mutex
	prompts    []string
}

func (r *recorder) Chat(_ context.Context, req llm.Request) (llm.Reply, error) {
	p := req.Messages[len(req.Messages)-1].Content
	r.mu.Lock()
	r.prompts = append(r.prompts, p)
	r.mu.Unlock()
	reply := r.sagb
	if strings.Contains(p, "question decomposition expert") {
		reply = r.sgda
	}
	return llm.Reply{Choices: []string{reply}, FinishReasons: []string{"stop"}}, nil
}

// TestPromptsMatchPlanner: the exported prompts are the very ones the llm
// planner sends at inference, and the planner reads the exported targets
// into the item's schema graph.
func TestPromptsMatchPlanner(t *testing.T) {
	for _, e := range Build(exportItems()[:3]).SGDA {
		it := exportItems()[slices.IndexFunc(exportItems(), func(it dataset.Item) bool { return it.ID == e.ID })]
		rec := &recorder{sgda: e.Completion, sagb: FormatTriples(it.Masked)}
		p, err := llmplan.New(context.Background(), llmplan.Config{Chat: rec, Samples: 1})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := p.Plan(context.Background(), projection.Input{Question: it.Question, Entities: it.Entities})
		if err != nil {
			t.Fatalf("%s: %v", it.ID, err)
		}
		if len(rec.prompts) != 2 {
			t.Fatalf("%s: planner sent %d prompts, want 2", it.ID, len(rec.prompts))
		}
		if rec.prompts[0] != SGDAPrompt(it.Question) {
			t.Errorf("%s: P1 differs:\nplanner: %q\nexport:  %q", it.ID, rec.prompts[0], SGDAPrompt(it.Question))
		}
		if rec.prompts[1] != SAGBPrompt(it.Assertions) {
			t.Errorf("%s: P2 differs:\nplanner: %q\nexport:  %q", it.ID, rec.prompts[1], SAGBPrompt(it.Assertions))
		}
		g := plan.Candidates[0].Graph
		if !slices.Equal(g.Triples, schemaTriples(it.Masked)) || g.Answer != it.AnswerSlot {
			t.Errorf("%s: planner built %v (answer %s), want %v (%s)", it.ID, g.Triples, g.Answer, it.Masked, it.AnswerSlot)
		}
		wantSt, _ := schema.ParseStrategy(it.Strategy)
		if plan.Strategy != wantSt {
			t.Errorf("%s: strategy %v", it.ID, plan.Strategy)
		}
	}
}

func TestWriteFormats(t *testing.T) {
	exs := []Example{{ID: "a", Task: TaskSGDA, Prompt: "P1 <q> & \"x\"\nline", Completion: `(("[ENT1] is x",), Precision)`}}
	var m, a bytes.Buffer
	if err := WriteMessages(&m, exs); err != nil {
		t.Fatal(err)
	}
	if err := WriteAlpaca(&a, exs); err != nil {
		t.Fatal(err)
	}
	wantM := `{"messages":[{"role":"user","content":"P1 <q> & \"x\"\nline"},{"role":"assistant","content":"((\"[ENT1] is x\",), Precision)"}]}` + "\n"
	wantA := `{"instruction":"P1 <q> & \"x\"\nline","input":"","output":"((\"[ENT1] is x\",), Precision)"}` + "\n"
	if m.String() != wantM {
		t.Errorf("messages line:\n%s\nwant\n%s", m.String(), wantM)
	}
	if a.String() != wantA {
		t.Errorf("alpaca line:\n%s\nwant\n%s", a.String(), wantA)
	}
	var ml MessagesLine
	if err := json.Unmarshal(m.Bytes(), &ml); err != nil || ml.Messages[0].Content != exs[0].Prompt || ml.Messages[1].Content != exs[0].Completion {
		t.Errorf("messages line reads back as %+v, %v", ml, err)
	}
}

func TestCard(t *testing.T) {
	items := exportItems()
	c := NewCard(items, Build(items), "verbalizer")
	c.NotWritten = 2
	c.Export.Files = []string{"sgda.messages.jsonl", "sgda.alpaca.jsonl"}
	if c.Items != 7 || c.Usable != 6 || c.Export.SGDA != 3 || c.Export.SAGB != 2 || c.Dropped["llm: 2 assertions for 3 triples"] != 1 ||
		c.AssertionSources["verbalizer"] != 2 || c.AssertionSources["llm:m"] != 1 || c.AssertionSources["none"] != 1 || c.Strategies["Breadth"] != 2 {
		t.Errorf("card %+v", c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"items":7`, `"usable":6`, `"asserted_by":"verbalizer"`, `"not_written":2`, `"export":{"sgda":3,"sagb":2,`, `"duplicates":{"sagb":1}`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("card.json lacks %s: %s", s, b)
		}
	}
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md, "SFT data"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"# SFT data", "| items | 7 |", "| hops = 2 | 2 |", "| SGDA (P1 + question -> assertions, strategy) | 3 |",
		"| sagb duplicates left out | 1 |", "| items skipped: no assertions | 1 |", "Assertions of this run written by: verbalizer.",
		"Items not written (their LLM requests failed; rerun with --resume to retry): 2.", "Files: `sgda.messages.jsonl`, `sgda.alpaca.jsonl`"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("card.md lacks %q:\n%s", s, md.String())
		}
	}
}
