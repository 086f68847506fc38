package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/train/dataset"
	"github.com/stem-kgqa/stem/train/synth"
)

// synthKG is a small family KG in the PathQuestion format.
const synthKG = "alice\tspouse\tbob\n" +
	"bob\tnationality\tfrance\n" +
	"alice\tnationality\tfrance\n" +
	"carol\tspouse\tdan\n" +
	"dan\tnationality\tspain\n" +
	"carol\tchildren\terin\n" +
	"erin\tgender\tfemale\n" +
	"alice\tgender\tfemale\n" +
	"carol\tgender\tfemale\n" +
	"m.0abc12\tspouse\tcarol\n"

func synthRun(t *testing.T, args ...string) (synth.Summary, error) {
	t.Helper()
	out, _, err := run(t, append([]string{"data", "synth", "--json"}, args...)...)
	var sum synth.Summary
	if err == nil {
		if jerr := json.Unmarshal([]byte(out), &sum); jerr != nil {
			t.Fatalf("summary is not JSON: %v\n%s", jerr, out)
		}
	}
	return sum, err
}

func synthItems(t *testing.T, path string) (dataset.Header, []dataset.Item) {
	t.Helper()
	h, items, err := dataset.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return h, items
}

func TestDataSynthVerbalizer(t *testing.T) {
	kb := writeFile(t, "kb.txt", synthKG)
	out := filepath.Join(t.TempDir(), "synth.jsonl")
	sum, err := synthRun(t, "--kg", kb, "--out", out, "--hops", "1-2", "--per-seed", "2", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	h, items := synthItems(t, out)
	if h.Kind != "synth" || h.Config["hops"] != "1-2" || h.Config["questions"] != "verbalizer" || h.Config["mention"] != "raw" {
		t.Errorf("header %+v", h)
	}
	if sum.Kept == 0 || sum.Kept != len(items) || sum.Written != len(items) || sum.Usable != len(items) {
		t.Fatalf("summary %+v for %d items", sum, len(items))
	}
	// The CVT-like id is skipped: 8 named entities seed walks.
	if sum.Seeds != 8 || sum.Attempts < sum.Kept {
		t.Errorf("seeds %d attempts %d, want 8 seeds", sum.Seeds, sum.Attempts)
	}
	for _, it := range items {
		if it.Source != "synth" || it.QuestionSource != "verbalizer" || len(it.Assertions) != 0 || !it.Usable() {
			t.Errorf("item %+v", it)
		}
		if !strings.Contains(it.Question, it.Entities[0]) || !strings.HasSuffix(it.Question, " ?") {
			t.Errorf("question %q does not name %s", it.Question, it.Entities[0])
		}
		if slices.ContainsFunc(it.Triples, func(tr [3]string) bool { return tr[0] == "m.0abc12" || tr[2] == "m.0abc12" }) {
			t.Errorf("item %s walks into the CVT-like id", it.ID)
		}
		if it.Hops < 1 || it.Hops > 2 || it.Strategy != dataset.StrategyFor(len(it.Answers)) {
			t.Errorf("item %s: hops %d, strategy %s for %d answers", it.ID, it.Hops, it.Strategy, len(it.Answers))
		}
	}
	card, err := os.ReadFile(out + ".card.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Reverse-generated questions: synth.jsonl", "| questions by verbalizer |", "| option hops | `1-2` |", "| seeds walked | 8 |"} {
		if !strings.Contains(string(card), want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}

	// The same seed writes the same file.
	again := filepath.Join(t.TempDir(), "again.jsonl")
	if _, err := synthRun(t, "--kg", kb, "--out", again, "--hops", "1-2", "--per-seed", "2", "--seed", "3"); err != nil {
		t.Fatal(err)
	}
	if _, items2 := synthItems(t, again); !reflect.DeepEqual(items, items2) {
		t.Error("a rerun with the same seed wrote other items")
	}
}

func TestDataSynthResume(t *testing.T) {
	kb := writeFile(t, "kb.txt", synthKG)
	dir := t.TempDir()
	full := filepath.Join(dir, "full.jsonl")
	if _, err := synthRun(t, "--kg", kb, "--out", full, "--hops", "1", "--max", "6"); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, "part.jsonl")
	if sum, err := synthRun(t, "--kg", kb, "--out", part, "--hops", "1", "--max", "3"); err != nil || sum.Written != 3 {
		t.Fatalf("first part: %+v, %v", sum, err)
	}
	if _, err := synthRun(t, "--kg", kb, "--out", part, "--hops", "1", "--max", "6"); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("rerun without --resume: %v", err)
	}
	if _, err := synthRun(t, "--kg", kb, "--out", part, "--hops", "2", "--max", "6", "--resume"); err == nil || !strings.Contains(err.Error(), "other options") {
		t.Errorf("resume with other options: %v", err)
	}
	sum, err := synthRun(t, "--kg", kb, "--out", part, "--hops", "1", "--max", "6", "--resume")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed != 3 || sum.Written != 3 {
		t.Errorf("resumed %d written %d, want 3 and 3", sum.Resumed, sum.Written)
	}
	_, want := synthItems(t, full)
	if _, got := synthItems(t, part); !reflect.DeepEqual(got, want) {
		t.Errorf("resumed file differs from one run:\n%+v\n%+v", got, want)
	}
}

func TestDataSynthLLM(t *testing.T) {
	p6For := func(seed string) func(llmtest.Request) bool {
		return func(r llmtest.Request) bool {
			p := r.Messages[0].Content
			i := strings.LastIndex(p, "Given Triple List: ")
			return strings.Contains(p, "construct appropriate declarative sentences") && i >= 0 && strings.Contains(p[i:], `"`+seed+`"`)
		}
	}
	alice := llmtest.Reply(`[("alice is linked to [ENT1].",), "What is alice linked to?"]`)
	alice.Match = p6For("alice")
	carol := llmtest.Reply("No Solution")
	carol.Match = p6For("carol")
	p5 := llmtest.Reply("Precision")
	p5.Match = func(r llmtest.Request) bool {
		return strings.Contains(r.Messages[0].Content, "appropriate retrieval strategy")
	}
	srv := llmtest.NewServer(t, alice, carol, p5)

	kb := writeFile(t, "kb.txt", synthKG)
	seeds := writeFile(t, "seeds.txt", "# seeds\nalice\nnobody\ncarol\n")
	out := filepath.Join(t.TempDir(), "synth.jsonl")
	sum, err := synthRun(t, "--kg", kb, "--out", out, "--hops", "1", "--seed-entities", seeds,
		"--llm-model", "test-model", "--llm-base-url", srv.BaseURL(), "--llm-no-cache", "--llm-api-key-env", "SYNTH_NO_SUCH_KEY")
	if err != nil {
		t.Fatal(err)
	}
	if sum.UnknownSeeds != 1 || sum.Written != 2 || sum.Usable != 1 || sum.LLMDropped["no solution"] != 1 {
		t.Errorf("summary %+v", sum)
	}
	if sum.P5Asked != 1 || sum.P5Agree != 1 || sum.P5Agreement != 100 || sum.Questions != "llm:test-model" {
		t.Errorf("P5 counts %d/%d (%.0f%%), questions %s", sum.P5Agree, sum.P5Asked, sum.P5Agreement, sum.Questions)
	}
	_, items := synthItems(t, out)
	if len(items) != 2 {
		t.Fatalf("%d items", len(items))
	}
	a, c := items[0], items[1]
	if a.Entities[0] != "alice" || a.Question != "What is alice linked to?" || !reflect.DeepEqual(a.Assertions, []string{"alice is linked to [ENT1]."}) ||
		a.AssertionSource != "llm:test-model" || a.Dropped != "" {
		t.Errorf("alice's item: %+v", a)
	}
	if c.Entities[0] != "carol" || c.Dropped != "no solution" {
		t.Errorf("carol's item: %+v", c)
	}
	card, _ := os.ReadFile(out + ".card.md")
	for _, want := range []string{"| dropped: no solution | 1 |", "| P5 strategy = answer-count rule | 1 of 1 (100.0%) |", "| seed names not in the KG | 1 |"} {
		if !strings.Contains(string(card), want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
}

func TestDataSynthLLMUnreachable(t *testing.T) {
	// A 400 is not retried, which keeps the test fast (package synth tests
	// retries of 5xx and timeouts with a tiny backoff).
	down := llmtest.Error(400, `{"error":{"message":"model not loaded"}}`)
	down.Repeat = true
	srv := llmtest.NewServer(t, down)
	kb := writeFile(t, "kb.txt", synthKG)
	out := filepath.Join(t.TempDir(), "synth.jsonl")
	_, err := synthRun(t, "--kg", kb, "--out", out, "--hops", "1", "--max", "2",
		"--llm-model", "m", "--llm-base-url", srv.BaseURL(), "--llm-no-cache", "--llm-timeout", "1s", "--llm-api-key-env", "SYNTH_NO_SUCH_KEY")
	if err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("run against a failing server: %v", err)
	}
	// Nothing half-done was written: a resumed run asks again.
	if _, items := synthItems(t, out); len(items) != 0 {
		t.Errorf("%d items written", len(items))
	}
}

func TestDataSynthTrainPlanner(t *testing.T) {
	kb := writeFile(t, "kb.txt", synthKG)
	items := filepath.Join(t.TempDir(), "synth.jsonl")
	if _, err := synthRun(t, "--kg", kb, "--out", items, "--hops", "1-2", "--per-seed", "3"); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "x.stempat")
	_, stderr, err := run(t, "train", "planner", "--format", "items", "--questions", items, "--out", model, "--vectors", tinyVectors)
	if err != nil {
		t.Fatal(err)
	}
	_, all := synthItems(t, items)
	if want := "trained on " + strconv.Itoa(len(all)) + " questions"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if st, err := os.Stat(model); err != nil || st.Size() == 0 {
		t.Errorf("model file: %v", err)
	}
}

func TestDataSynthBadInput(t *testing.T) {
	kb := writeFile(t, "kb.txt", synthKG)
	out := filepath.Join(t.TempDir(), "synth.jsonl")
	seeds := writeFile(t, "seeds.txt", "nobody\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--hops", "0"}, "--hops"},
		{[]string{"--hops", "3-1"}, "--hops"},
		{[]string{"--mention", "quoted"}, "--mention"},
		{[]string{"--skip-entity", "("}, "--skip-entity"},
		{[]string{"--branch", "2"}, "branch"},
		{[]string{"--seeds", "2", "--seed-entities", seeds}, "not both"},
		{[]string{"--seed-entities", seeds}, "no seed entity is in the KG"},
		{[]string{"--per-seed", "0"}, "at least 1"},
	} {
		_, err := synthRun(t, append([]string{"--kg", kb, "--out", out}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}

// TestTrainPlannerFromKG trains a planner from a hand-written KG alone and
// answers with it, as the README's quick start does.
func TestTrainPlannerFromKG(t *testing.T) {
	kb := "../../projection/compose/testdata/company.tsv"
	model := filepath.Join(t.TempDir(), "company.stempat")
	_, stderr, err := run(t, "train", "planner", "--from-kg", kb, "--out", model, "--vectors", tinyVectors, "--lexicon", "none")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"synthesized ", " relation paths (", "drawn over 8 relations", "plans beside compose with weight 0.1; wrote " + model} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	out, _, err := run(t, "ask", "--kg", kb, "--planner-model", model, "--vectors", tinyVectors, "--lexicon", "none", "who is the manager of bob martin's manager ?")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\n1. frank_lee\n") || !strings.Contains(out, "bob_martin -> manager -> alice_wong -> manager -> frank_lee") {
		t.Errorf("ask with the KG-trained model:\n%s", out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--from-kg", kb, "--format", "pq", "--out", model + "2"}, "--from-kg trains from the KG alone: drop --format, --questions and --kg"},
		{[]string{"--out", model + "3"}, "want --format and --questions (training questions with gold paths), or --from-kg KG (no questions)"},
		{[]string{"--from-kg", kb, "--out", model}, "exists"},
		{[]string{"--from-kg", "no-such-kb.tsv", "--out", model + "4"}, "no-such-kb.tsv"},
	} {
		_, _, err := run(t, append([]string{"train", "planner", "--vectors", tinyVectors, "--lexicon", "none"}, tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.want)
		}
	}
}
