package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
)

// llmEvalFiles writes the demo KG and two questions; the second one's gold
// answers include Hans_Zimmer, whom its evidence never reaches.
func llmEvalFiles(t *testing.T) (kb, qs string) {
	t.Helper()
	kbText, err := io.ReadAll(demo.KG())
	if err != nil {
		t.Fatal(err)
	}
	kb = writeFile(t, "kb.tsv", string(kbText))
	qs = writeFile(t, "q.txt", "who directed inception ?\tChristopher_Nolan(Christopher_Nolan/)\tInception#directed_by#Christopher_Nolan#<end>#Christopher_Nolan\n"+
		"who wrote inception ?\tChristopher_Nolan(Christopher_Nolan/Hans_Zimmer/)\tInception#written_by#Christopher_Nolan#<end>#Christopher_Nolan\n")
	return kb, qs
}

// llmFlags point an LLM stage at srv.
func llmFlags(srv *llmtest.Server) []string {
	return []string{"--llm-base-url", srv.BaseURL(), "--llm-model", "test-llm", "--llm-api-key-env", "STEM_TEST_NO_KEY", "--llm-no-cache"}
}

func asks(q string) func(llmtest.Request) bool {
	return func(r llmtest.Request) bool { return strings.Contains(r.LastUser(), q) }
}

func TestEvalLLMGenerator(t *testing.T) {
	kb, qs := llmEvalFiles(t)
	nolan := llmtest.ScriptedReply{Match: asks("who directed inception"), Content: []string{`["Christopher_Nolan"]`}}
	wrote := asks("who wrote inception")
	tests := []struct {
		name        string
		replies     []llmtest.ScriptedReply
		args        []string
		hits1       float64
		unsupported [2]int
		errors      int
		calls       int64
		prompt      int64
		completion  int64
		wantErr     string
	}{
		{name: "an unsupported gold answer is not a hit",
			replies: []llmtest.ScriptedReply{nolan, {Match: wrote, Content: []string{`["Hans_Zimmer"]`}}},
			hits1:   50, unsupported: [2]int{0, 1}, calls: 2, prompt: 84, completion: 2},
		{name: "malformed reply kept going",
			replies: []llmtest.ScriptedReply{nolan, llmtest.Malformed("<html>bad gateway</html>")},
			args:    []string{"--keep-going"},
			hits1:   50, errors: 1, calls: 1, prompt: 42, completion: 1},
		{name: "malformed reply stops the run without --keep-going",
			replies: []llmtest.ScriptedReply{nolan, llmtest.Malformed("<html>bad gateway</html>")},
			wantErr: "answer question"},
		{name: "stalled server within --llm-timeout",
			replies: []llmtest.ScriptedReply{nolan, {Match: wrote, Repeat: true, Delay: 10 * time.Second, Content: []string{"[]"}}},
			// One attempt and 4 retries of 50 ms each, with 0.5 s doubling
			// backoff: about 8 s, not 50.
			args:  []string{"--keep-going", "--llm-timeout", "50ms"},
			hits1: 50, errors: 1, calls: 1, prompt: 42, completion: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tt.replies...)
			args := append([]string{"eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
				"--planner", "oracle", "--generator", "llm", "--json", "--per-question"}, llmFlags(srv)...)
			start := time.Now()
			out, _, err := run(t, append(args, tt.args...)...)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("eval took %v", d)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var rep eval.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if rep.N != 2 || rep.Hits1 != tt.hits1 || rep.Errors != tt.errors || rep.Unsupported != tt.unsupported[0]+tt.unsupported[1] {
				t.Errorf("n %d hits@1 %.2f errors %d unsupported %d; want 2, %.2f, %d, %d\n%s", rep.N, rep.Hits1, rep.Errors, rep.Unsupported,
					tt.hits1, tt.errors, tt.unsupported[0]+tt.unsupported[1], out)
			}
			for i, q := range rep.Questions {
				if q.Unsupported != tt.unsupported[i] {
					t.Errorf("question %d: unsupported %d, want %d", i, q.Unsupported, tt.unsupported[i])
				}
			}
			if u := rep.LLM; u == nil || u.Requests != tt.calls || u.PromptTokens != tt.prompt || u.CompletionTokens != tt.completion {
				t.Errorf("llm use %+v, want %d calls, %d prompt and %d completion tokens", rep.LLM, tt.calls, tt.prompt, tt.completion)
			}
			if _, ok := rep.StageMS["generate"]; !ok {
				t.Errorf("no generate stage latency: %v", rep.StageMS)
			}
		})
	}
}

func TestEvalLLMTable(t *testing.T) {
	kb, qs := llmEvalFiles(t)
	srv := llmtest.NewServer(t, llmtest.ScriptedReply{Match: asks("knowledge structure graph"), Repeat: true, Content: []string{`["Christopher_Nolan", "Hans_Zimmer"]`}})
	out, _, err := run(t, append([]string{"eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--planner", "oracle", "--generator", "llm"}, llmFlags(srv)...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"unbacked 2  unsupported 2  errors 0", "llm 2 calls  84 prompt + 4 completion tokens  per question: 1.00 calls  42.0 prompt + 2.0 completion tokens", "generate stage ms p50 "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestCompareLLMGenerator(t *testing.T) {
	kb, qs := llmEvalFiles(t)
	srv := llmtest.NewServer(t, llmtest.ScriptedReply{Match: asks("knowledge structure graph"), Repeat: true, Content: []string{`["Christopher_Nolan", "Hans_Zimmer"]`}})
	rep := filepath.Join(t.TempDir(), "report")
	out, _, err := run(t, append([]string{"compare", "--format", "pq", "--questions", qs, "--kg", kb, "--vectors", tinyVectors, "--planner", "oracle",
		"--strategies", "stem", "--config", "name=llm,generator=llm", "--report", rep}, llmFlags(srv)...)...)
	if err != nil {
		t.Fatal(err)
	}
	c := readComparison(t, rep)
	if len(c.Entries) != 2 {
		t.Fatalf("%d rows, want a structural and an llm row:\n%s", len(c.Entries), out)
	}
	for _, e := range c.Entries {
		r := e.Report
		llmRow := e.Name == "llm"
		if r.N != 2 || r.Hits1 != 100 || (r.LLM != nil) != llmRow {
			t.Errorf("%s: n %d hits@1 %.2f llm %+v\n%s", e.Name, r.N, r.Hits1, r.LLM, out)
		}
		if want := map[bool]int{true: 2, false: 0}[llmRow]; r.Unsupported != want {
			t.Errorf("%s: unsupported %d, want %d", e.Name, r.Unsupported, want)
		}
		if llmRow && (r.LLM.RequestsPerQ != 1 || r.LLM.TokensPerQ != 44) {
			t.Errorf("llm row: %+v, want 1 call and 44 tokens per question", *r.LLM)
		}
	}
	checked := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || (f[0] != "llm" && f[0] != "stem") {
			continue
		}
		checked++
		tail := strings.Join(f[len(f)-2:], " ")
		if f[0] == "llm" && tail != "1.00 44" || f[0] != "llm" && tail != "- -" {
			t.Errorf("row %q ends %q", f[0], tail)
		}
	}
	if checked != 2 {
		t.Errorf("checked %d table rows, want 2:\n%s", checked, out)
	}
}
