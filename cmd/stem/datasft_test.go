package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/train/dataset"
	"github.com/stem-kgqa/stem/train/sft"
)

// sftItems are chains-like items: two usable (one Breadth) and one dropped.
func sftItems() []dataset.Item {
	return []dataset.Item{
		{ID: "pq:1", Source: "chains:t:1", Question: "what is the nationality of frederica_of_mecklenburg-strelitz 's couple ?",
			Entities: []string{"frederica_of_mecklenburg-strelitz"}, Answers: []string{"united_kingdom"},
			Triples:    [][3]string{{"frederica_of_mecklenburg-strelitz", "spouse", "ernest_augustus_i_of_hanover"}, {"ernest_augustus_i_of_hanover", "nationality", "united_kingdom"}},
			Masked:     [][3]string{{"frederica_of_mecklenburg-strelitz", "spouse", "[ENT1]"}, {"[ENT1]", "nationality", "[ENT2]"}},
			AnswerSlot: "[ENT2]", Hops: 2, Strategy: dataset.Precision},
		{ID: "mq:7", Source: "chains:t:7", Question: "what films did Joel Zwick direct",
			Entities: []string{"Joel Zwick"}, Answers: []string{"Kismet", "Fat Albert"},
			Triples:    [][3]string{{"Kismet", "directed_by", "Joel Zwick"}, {"Fat Albert", "directed_by", "Joel Zwick"}},
			Masked:     [][3]string{{"[ENT1]", "directed_by", "Joel Zwick"}, {"[ENT2]", "directed_by", "Joel Zwick"}},
			AnswerSlot: "[ENT2]", Hops: 1, Strategy: dataset.Breadth},
		{ID: "pq:9", Source: "chains:t:9", Question: "who is nobody's child ?", Strategy: dataset.Precision, Dropped: "answers unreachable"},
	}
}

// sftWriteItems writes items to a new item file of kind "chains".
func sftWriteItems(t *testing.T, name string, items []dataset.Item) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	w, _, err := dataset.Create(path, "chains", map[string]string{"format": "pq"}, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range items {
		if err := w.Write(&items[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// sftRun runs `stem data sft --json` and decodes the summary.
func sftRun(t *testing.T, args ...string) (map[string]any, error) {
	t.Helper()
	out, stderr, err := run(t, append([]string{"data", "sft", "--json"}, args...)...)
	var sum map[string]any
	if strings.HasPrefix(out, "{") {
		if jerr := json.Unmarshal([]byte(out), &sum); jerr != nil {
			t.Fatalf("summary is not JSON: %v\n%s\nstderr: %s", jerr, out, stderr)
		}
	}
	return sum, err
}

func sftLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func sftCheckCounts(t *testing.T, sum map[string]any, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		if sum[k] != v {
			t.Errorf("summary %s = %v, want %v", k, sum[k], v)
		}
	}
}

func TestDataSFTVerbalizer(t *testing.T) {
	in := sftWriteItems(t, "chains.jsonl", sftItems())
	dir := filepath.Join(t.TempDir(), "sft")
	sum, err := sftRun(t, "--items", in, "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	sftCheckCounts(t, sum, map[string]float64{"input": 3, "asserted": 2, "kept": 1, "dropped": 0, "failed": 0, "resumed": 0, "sgda": 2, "sagb": 2})
	if sum["asserted_by"] != "verbalizer" {
		t.Errorf("asserted_by %v", sum["asserted_by"])
	}

	_, items, err := dataset.ReadFile(filepath.Join(dir, "items.jsonl"))
	if err != nil || len(items) != 3 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	wantAs := []string{"The spouse of frederica of mecklenburg strelitz is [ENT1].", "The nationality of [ENT1] is [ENT2]."}
	if strings.Join(items[0].Assertions, "|") != strings.Join(wantAs, "|") || items[0].AssertionSource != "verbalizer" || items[2].Dropped != "answers unreachable" {
		t.Errorf("items %+v", items)
	}

	sgda := sftLines(t, filepath.Join(dir, "sgda.messages.jsonl"))
	if len(sgda) != 2 {
		t.Fatalf("%d SGDA lines", len(sgda))
	}
	var m struct{ Messages []llm.Message }
	if err := json.Unmarshal([]byte(sgda[0]), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Messages) != 2 || m.Messages[0].Role != "user" || m.Messages[0].Content != sft.SGDAPrompt(items[0].Question) ||
		m.Messages[1].Role != "assistant" || m.Messages[1].Content != `(("The spouse of frederica of mecklenburg strelitz is [ENT1].", "The nationality of [ENT1] is [ENT2]."), Precision)` {
		t.Errorf("SGDA line %s", sgda[0])
	}
	var a sft.AlpacaLine
	sagb := sftLines(t, filepath.Join(dir, "sagb.alpaca.jsonl"))
	if len(sagb) != 2 || json.Unmarshal([]byte(sagb[1]), &a) != nil || a.Instruction != sft.SAGBPrompt(items[1].Assertions) || a.Input != "" ||
		a.Output != "[\n(\"[ENT1]\", \"directed_by\", \"Joel Zwick\"),\n(\"[ENT2]\", \"directed_by\", \"Joel Zwick\"),\n]" {
		t.Errorf("SAGB alpaca lines %q", sagb)
	}
	if n := len(sftLines(t, filepath.Join(dir, "sgda.alpaca.jsonl"))) + len(sftLines(t, filepath.Join(dir, "sagb.messages.jsonl"))); n != 4 {
		t.Errorf("%d lines in the other two files, want 4", n)
	}

	md, _ := os.ReadFile(filepath.Join(dir, "card.md"))
	for _, s := range []string{"# SFT data: sft", "| items | 3 |", "| usable | 2 |", "| assertions by verbalizer | 2 |", "| strategy Breadth | 1 |",
		"| dropped: answers unreachable | 1 |", "| SGDA (P1 + question -> assertions, strategy) | 2 |", "Assertions of this run written by: verbalizer."} {
		if !strings.Contains(string(md), s) {
			t.Errorf("card.md lacks %q:\n%s", s, md)
		}
	}
	var card sft.Card
	data, _ := os.ReadFile(filepath.Join(dir, "card.json"))
	if err := json.Unmarshal(data, &card); err != nil || card.Export.SGDA != 2 || card.AssertionSources["verbalizer"] != 2 || len(card.Export.Files) != 4 {
		t.Errorf("card.json %s: %v", data, err)
	}

	// Plain output says who wrote the assertions.
	out, _, err := run(t, "data", "sft", "--items", in, "--out", filepath.Join(t.TempDir(), "plain"))
	if err != nil || !strings.Contains(out, "assertions written by verbalizer") || !strings.Contains(out, "exported: 2 SGDA and 2 SAGB examples") {
		t.Errorf("plain summary %q, %v", out, err)
	}
}

func TestDataSFTResume(t *testing.T) {
	in := sftWriteItems(t, "chains.jsonl", sftItems())
	dir := t.TempDir()
	if _, err := sftRun(t, "--items", in, "--out", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := sftRun(t, "--items", in, "--out", dir); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("rerun without --resume: %v", err)
	}
	// A crash mid-line leaves a torn last line: the resumed run cuts it
	// and redoes that item.
	itemsPath := filepath.Join(dir, "items.jsonl")
	data, _ := os.ReadFile(itemsPath)
	lines := strings.SplitAfter(string(data), "\n")
	torn := strings.Join(lines[:3], "") + lines[3][:25]
	os.WriteFile(itemsPath, []byte(torn), 0o644)
	sum, err := sftRun(t, "--items", in, "--out", dir, "--resume")
	if err != nil {
		t.Fatal(err)
	}
	sftCheckCounts(t, sum, map[string]float64{"resumed": 2, "asserted": 0, "kept": 1, "sgda": 2})
	if after, _ := os.ReadFile(itemsPath); string(after) != string(data) {
		t.Errorf("after the resumed run items.jsonl is\n%s\nwant\n%s", after, data)
	}
	sum, err = sftRun(t, "--items", in, "--out", dir, "--resume")
	if err != nil {
		t.Fatal(err)
	}
	sftCheckCounts(t, sum, map[string]float64{"resumed": 3, "asserted": 0, "kept": 0, "sgda": 2})

	// Other assertion writers may not share the file.
	srv := llmtest.NewServer(t)
	t.Setenv(wordvec.CacheEnv, t.TempDir())
	_, err = sftRun(t, "--items", in, "--out", dir, "--resume", "--llm-base-url", srv.BaseURL(), "--llm-model", "m", "--llm-api-key-env", "STEM_TEST_NO_KEY")
	if err == nil || !strings.Contains(err.Error(), "other options") || !strings.Contains(err.Error(), "assertions=llm:m") {
		t.Errorf("resume with the LLM over verbalizer items: %v", err)
	}
}

// sftP4For matches the P4 request for one question.
func sftP4For(question string) func(llmtest.Request) bool {
	return func(r llmtest.Request) bool {
		return strings.Contains(r.LastUser(), "Original Query: "+question+"\n")
	}
}

func TestDataSFTLLM(t *testing.T) {
	items := sftItems()
	in := sftWriteItems(t, "chains.jsonl", items)
	t.Setenv(wordvec.CacheEnv, t.TempDir())
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: sftP4For(items[0].Question), Content: []string{`["Frederica of Mecklenburg-Strelitz was married to [ENT1].", "[ENT1] was a citizen of [ENT2]."]`}},
		// Two triples, one assertion: dropped and counted, not kept.
		llmtest.ScriptedReply{Match: sftP4For(items[1].Question), Content: []string{"1. [ENT1] and [ENT2] are films directed by Joel Zwick."}},
	)
	llmArgs := []string{"--llm-base-url", srv.BaseURL(), "--llm-model", "test-llm", "--llm-api-key-env", "STEM_TEST_NO_KEY", "--llm-retries", "0"}
	dir := t.TempDir()
	sum, err := sftRun(t, append([]string{"--items", in, "--out", dir}, llmArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	sftCheckCounts(t, sum, map[string]float64{"asserted": 1, "dropped": 1, "kept": 1, "failed": 0, "sgda": 1, "sagb": 1})
	if sum["asserted_by"] != "llm:test-llm" {
		t.Errorf("asserted_by %v", sum["asserted_by"])
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || *reqs[0].Temperature != 1.0 {
		t.Fatalf("%d requests (temperature %v), want 2 at 1.0", len(reqs), reqs[0].Temperature)
	}
	_, got, err := dataset.ReadFile(filepath.Join(dir, "items.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got[0].AssertionSource != "llm:test-llm" || got[0].Assertions[1] != "[ENT1] was a citizen of [ENT2]." {
		t.Errorf("asserted item %+v", got[0])
	}
	if got[1].Dropped != "llm: 1 assertions for 2 triples" || len(got[1].Assertions) != 0 {
		t.Errorf("count mismatch kept: %+v", got[1])
	}
	md, _ := os.ReadFile(filepath.Join(dir, "card.md"))
	for _, s := range []string{"| dropped: llm: 1 assertions for 2 triples | 1 |", "| assertions by llm:test-llm | 1 |", "written by: llm:test-llm."} {
		if !strings.Contains(string(md), s) {
			t.Errorf("card.md lacks %q:\n%s", s, md)
		}
	}

	// The response cache answers a second run: no request reaches the
	// server (whose script is used up, so one would fail the test).
	dir2 := t.TempDir()
	sum, err = sftRun(t, append([]string{"--items", in, "--out", dir2}, llmArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	sftCheckCounts(t, sum, map[string]float64{"asserted": 1, "dropped": 1})
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests after the cached rerun, want still 2", n)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "sgda.messages.jsonl"))
	b, _ := os.ReadFile(filepath.Join(dir2, "sgda.messages.jsonl"))
	if string(a) != string(b) || len(a) == 0 {
		t.Error("the cached rerun exported other SGDA examples")
	}
}

// TestDataSFTLLMFailure: an item whose request fails is not written, the
// run says so and fails, and --resume retries just that item.
func TestDataSFTLLMFailure(t *testing.T) {
	items := sftItems()
	in := sftWriteItems(t, "chains.jsonl", items)
	t.Setenv(wordvec.CacheEnv, t.TempDir())
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: sftP4For(items[0].Question), Content: []string{`["[ENT1] married frederica.", "[ENT1] is from [ENT2]."]`}},
		llmtest.ScriptedReply{Match: sftP4For(items[1].Question), Status: http.StatusNotFound, Body: `{"error":{"message":"no such model"}}`},
	)
	llmArgs := []string{"--llm-base-url", srv.BaseURL(), "--llm-model", "test-llm", "--llm-api-key-env", "STEM_TEST_NO_KEY"}
	dir := t.TempDir()
	sum, err := sftRun(t, append([]string{"--items", in, "--out", dir}, llmArgs...)...)
	if err == nil || !strings.Contains(err.Error(), "1 items were not written") || !strings.Contains(err.Error(), "--resume") || !strings.Contains(err.Error(), "404") {
		t.Fatalf("run with a failing request: %v", err)
	}
	sftCheckCounts(t, sum, map[string]float64{"asserted": 1, "failed": 1, "sgda": 1})
	if card := sum["card"].(map[string]any); card["not_written"] != 1.0 {
		t.Errorf("card not_written %v", card["not_written"])
	}
	srv.Push(llmtest.ScriptedReply{Match: sftP4For(items[1].Question), Content: []string{`["[ENT1] is directed by Joel Zwick.", "[ENT2] is directed by Joel Zwick."]`}})
	sum, err = sftRun(t, append([]string{"--items", in, "--out", dir, "--resume"}, llmArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	sftCheckCounts(t, sum, map[string]float64{"resumed": 2, "asserted": 1, "failed": 0, "sgda": 2, "sagb": 2})
}

func TestDataSFTBadInput(t *testing.T) {
	in := sftWriteItems(t, "chains.jsonl", sftItems())
	other := sftWriteItems(t, "other.jsonl", sftItems()[:1])
	notData := writeFile(t, "q.txt", "who directed inception ?\tChristopher_Nolan\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"--items", filepath.Join(t.TempDir(), "none.jsonl"), "--out", t.TempDir()}, "no such file"},
		{"not an item file", []string{"--items", notData, "--out", t.TempDir()}, "q.txt:1:"},
		{"duplicate ids", []string{"--items", in + "," + other, "--out", t.TempDir()}, `item "pq:1" is in both`},
		{"unknown writer", []string{"--items", in, "--out", t.TempDir(), "--assertions", "oracle"}, `--assertions "oracle"`},
		{"llm without a model", []string{"--items", in, "--out", t.TempDir(), "--assertions", "llm"}, "--llm-model"},
		{"no --out", []string{"--items", in}, "out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sftRun(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestDataSFTHelp(t *testing.T) {
	out, _, err := run(t, "data", "sft", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"stem data sft --items pq2h.chains.jsonl --out sft-pq2h", "--assertions", "--llm-model", "--llm-temperature", "--resume", "sgda.messages.jsonl"} {
		if !strings.Contains(out, s) {
			t.Errorf("help lacks %q:\n%s", s, out)
		}
	}
}
