package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/report"
)

// stem compare runs the peers beside STEM by name, standing alone by
// default, each also in its LLM mode against a scripted server, and
// reports each row's mode and the LLM's use per question for the LLM rows
// only.
func TestComparePeers(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.tsv")
	kbText, err := io.ReadAll(demo.KG())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kb, kbText, 0o644); err != nil {
		t.Fatal(err)
	}
	qs := writeFile(t, "q.txt", "who directed inception ?\tChristopher_Nolan(Christopher_Nolan/)\tInception#directed_by#Christopher_Nolan#<end>#Christopher_Nolan\n"+
		"who wrote inception ?\tChristopher_Nolan(Christopher_Nolan/)\tInception#written_by#Christopher_Nolan#<end>#Christopher_Nolan\n")
	pattern := func(rel string) string {
		return `{"divided": ["x"], "triples": [("Inception", "` + rel + `", "UNKNOWN person 1")]}`
	}
	// The pretend model likes directed_by and written_by and dislikes
	// everything else, so the LLM-scored GCR and DoG decode the gold
	// paths.
	logprob := func(before, token string) float64 {
		if strings.Contains(token, "directed_by") || strings.Contains(token, "written_by") || strings.Contains(token, "</PATH>") {
			return -0.1
		}
		return -5
	}
	srv := llmtest.NewServer(t,
		// DoG's own text after a triple concludes at once.
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool { return r.Completion() && r.Echo == nil }, Repeat: true,
			Content: []string{" This tells us the answer. Therefore, the answer is * Christopher_Nolan."}},
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool { return r.Completion() }, Repeat: true, TokenLogprob: logprob},
		// SimGRAG's answer step (table 18) over its subgraphs.
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool { return strings.HasPrefix(r.LastUser(), "Please answer the question") }, Repeat: true,
			Content: []string{"According to graph [1], the answer is Christopher_Nolan."}},
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool { return strings.HasPrefix(r.LastUser(), "Reasoning Paths:") }, Repeat: true, Content: []string{`["Christopher_Nolan"]`}},
		// GraphRAFT's choice, by the query's own text (its number depends
		// on the scored order).
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool {
			return strings.Contains(r.LastUser(), "Cypher queries") && strings.Contains(r.LastUser(), "who directed inception")
		}, Content: []string{"MATCH ({name: \"Inception\"})-[:`directed_by`]->(x) RETURN DISTINCT x"}},
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool {
			return strings.Contains(r.LastUser(), "Cypher queries") && strings.Contains(r.LastUser(), "who wrote inception")
		}, Content: []string{"MATCH ({name: \"Inception\"})-[:`written_by`]->(x) RETURN DISTINCT x"}},
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool { return strings.Contains(r.LastUser(), "who directed inception") }, Content: []string{pattern("directed by")}},
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool { return strings.Contains(r.LastUser(), "who wrote inception") }, Content: []string{pattern("written by")}},
	)
	rep := filepath.Join(dir, "report")
	out, _, err := run(t, "compare", "--format", "pq", "--questions", qs, "--kg", kb, "--vectors", tinyVectors, "--planner", "oracle",
		"--strategies", "stem,simgrag,gcr,dog,graphraft", "--config", "name=simgrag-llm,retriever=simgrag,simgrag-llm", "--config", "name=gcr-llm,retriever=gcr,gcr-llm",
		"--config", "name=dog-llm,retriever=dog,dog-llm", "--config", "name=graphraft-llm,retriever=graphraft,graphraft-llm,graphraft-choices=200",
		"--llm-base-url", srv.BaseURL(), "--llm-model", "test-llm", "--llm-api-key-env", "STEM_TEST_NO_KEY", "--llm-no-cache", "--report", rep)
	if err != nil {
		t.Fatal(err)
	}
	c := readComparison(t, rep)
	if a := c.Agreement; a == nil || a.N != 2 || len(a.Alone) != 9 {
		t.Errorf("agreement %+v, want 9 configurations over 2 questions", c.Agreement)
	}
	if md, err := os.ReadFile(filepath.Join(rep, report.MarkdownFile)); err != nil || !strings.Contains(string(md), "## Agreement") {
		t.Errorf("report.md has no agreement: %v", err)
	}
	if len(c.Entries) != 9 {
		t.Fatalf("%d rows:\n%s", len(c.Entries), out)
	}
	wantNames := []string{"stem (oracle plans: upper bound)", "simgrag (stand-in)", "gcr (stand-in)", "dog (stand-in)", "graphraft (stand-in)",
		"simgrag-llm", "gcr-llm", "dog-llm", "graphraft-llm"}
	for i, e := range c.Entries {
		if e.Name != wantNames[i] {
			t.Errorf("row %d named %q, want %q", i, e.Name, wantNames[i])
		}
	}
	for _, e := range c.Entries {
		r := e.Report
		isStem := strings.HasPrefix(e.Name, "stem")
		// The scripted model finds both answers; the encoder stand-in over
		// the test's tiny vectors need not.
		if r.N != 2 || r.Unbacked != 0 || (isStem || strings.HasSuffix(e.Name, "-llm")) && r.Hit != 100 {
			t.Errorf("%s: n %d hit %.2f unbacked %d\n%s", e.Name, r.N, r.Hit, r.Unbacked, out)
		}
		if want := map[bool]string{true: "standalone, llm", false: "standalone, encoder"}[strings.HasSuffix(e.Name, "-llm")]; !isStem && r.Mode != want {
			t.Errorf("%s: mode %q, want %q", e.Name, r.Mode, want)
		}
		if llmRow := strings.HasSuffix(e.Name, "-llm"); (r.LLM != nil) != llmRow || e.Name == "graphraft-llm" && r.LLM.RequestsPerQ != 1 || e.Name == "simgrag-llm" && r.LLM.RequestsPerQ != 2 || (e.Name == "gcr-llm" || e.Name == "dog-llm") && r.LLM.RequestsPerQ < 2 {
			t.Errorf("%s: LLM use %+v", e.Name, r.LLM)
		}
	}
}
