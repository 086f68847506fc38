package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/eval/rogfile"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
)

// rogFiles writes the demo KG and its questions plus two whose gold
// answers the evidence misses, wholly or in part, so that a run's figures
// are not all 100.
func rogFiles(t *testing.T) (kb, qs string) {
	t.Helper()
	kb = writeFile(t, "kb.tsv", string(demo.KGBytes()))
	qs = writeFile(t, "q.txt", string(demo.Questions())+
		"who directed inception ?\tTom_Hardy(Tom_Hardy/)\tInception#directed_by#Tom_Hardy#<end>#Tom_Hardy\n"+
		"who wrote inception ?\tChristopher_Nolan(Christopher_Nolan/Hans_Zimmer/)\tInception#written_by#Christopher_Nolan#<end>#Christopher_Nolan\n")
	return kb, qs
}

// TestEvalOutRoG: stem's own metrics over the predictions.jsonl that
// stem eval --out-format rog wrote equal the report it printed.
func TestEvalOutRoG(t *testing.T) {
	kb, qs := rogFiles(t)
	pred := filepath.Join(t.TempDir(), "predictions.jsonl")
	out, _, err := run(t, "eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--strategy", "breadth", "--workers", "2", "--out", pred, "--out-format", "rog", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep eval.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Hit == 100 || rep.Precision == 100 || rep.N != demoQuestionCount+2 {
		t.Fatalf("want a run with misses and extra answers over %d questions: n %d hit %.2f precision %.2f", demoQuestionCount+2, rep.N, rep.Hit, rep.Precision)
	}
	got, err := rogfile.ScoreFile(context.Background(), pred)
	if err != nil {
		t.Fatal(err)
	}
	if got.N != rep.N {
		t.Errorf("%d rows scored, report over %d", got.N, rep.N)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"hit", got.Hit, rep.Hit}, {"hits@1", got.Hits1, rep.Hits1}, {"f1", got.F1, rep.F1}, {"precision", got.Precision, rep.Precision}, {"recall", got.Recall, rep.Recall}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s over %s: %.6f, report: %.6f", c.name, filepath.Base(pred), c.got, c.want)
		}
	}
}

func TestEvalOutFormatErrors(t *testing.T) {
	kb, qs := rogFiles(t)
	full := writeFile(t, "full.jsonl", "{\"id\": \"x\"}\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown format", []string{"--out", filepath.Join(t.TempDir(), "o"), "--out-format", "csv"}, `--out-format "csv": want one of stem, rog, paths`},
		{"resume of a RoG file", []string{"--out", full, "--out-format", "rog", "--resume"}, "--resume needs --out-format stem"},
		{"a file with rows", []string{"--out", full, "--out-format", "paths"}, "already holds rows"},
		{"unknown template", []string{"--out", filepath.Join(t.TempDir(), "o"), "--out-format", "rog", "--prompt-template", "chatml"}, `prompt template "chatml"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, append([]string{"eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// scriptedReasoner scripts the chat server as a reasoning model that
// answers each exported question with the ends of its reasoning paths,
// one per line, and returns the scores those answers must get.
func scriptedReasoner(t *testing.T, export string) ([]llmtest.ScriptedReply, eval.Scores) {
	t.Helper()
	rows, err := rogfile.LoadRows(context.Background(), export)
	if err != nil {
		t.Fatal(err)
	}
	var (
		replies []llmtest.ScriptedReply
		scores  []eval.Score
	)
	for _, r := range rows {
		paths, err := benchmark.ReasoningPaths(r.Input)
		if err != nil {
			t.Fatal(err)
		}
		var ends []string
		for _, p := range paths {
			ends = append(ends, p[len(p)-1][2])
		}
		answer := strings.Join(ends, "\n")
		prompt := rogfile.ChatPrompt(r.Input)
		replies = append(replies, llmtest.ScriptedReply{Match: func(q llmtest.Request) bool { return q.LastUser() == prompt }, Content: []string{answer}})
		scores = append(scores, eval.ScoreAnswers(eval.SplitLines(answer), r.GroundTruth))
	}
	return replies, eval.AverageScores(scores)
}

// TestReasonRoundTrip is the round trip docs/benchmarks.md shows: stem's
// retrieval exported with --out-format paths, each prompt answered by a
// model (here the scripted server stands in for it) through stem reason,
// the answers written as RoG's predictions.jsonl and scored. A run cut
// short by a failed request continues with --resume.
func TestReasonRoundTrip(t *testing.T) {
	kb, qs := rogFiles(t)
	dir := t.TempDir()
	export := filepath.Join(dir, "paths.jsonl")
	if _, _, err := run(t, "eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--strategy", "breadth", "--out", export, "--out-format", "paths", "--prompt-template", "plain"); err != nil {
		t.Fatal(err)
	}
	replies, want := scriptedReasoner(t, export)
	pred := filepath.Join(dir, "predictions.jsonl")
	reason := func(srv *llmtest.Server, args ...string) (string, error) {
		out, _, err := run(t, append(append(append([]string{"reason"}, llmFlags(srv)...), "--out", pred, "--workers", "1", "--json"), append(args, export)...)...)
		return out, err
	}

	// The fifth request fails for good (400 is not retried): four rows
	// are written, and the error says how to go on.
	failing := llmtest.NewServer(t, append(append(append([]llmtest.ScriptedReply{}, replies[:4]...), llmtest.Error(400, `{"error": {"message": "prompt too long"}}`)), replies[4:]...)...)
	_, err := reason(failing)
	if err == nil || !strings.Contains(err.Error(), "prompt too long") {
		t.Fatalf("reason over a failing server: %v", err)
	}
	// Four rows, or on a loaded machine (where a request timed out by the
	// client and retried may take the failure's place in the script) a
	// few more: the error says how many, and --resume asks the rest.
	m := regexp.MustCompile(`(\d+) answers written`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("reason over a failing server: %v, want how many answers were written", err)
	}
	written, _ := strconv.Atoi(m[1])
	if written < 4 || written >= len(replies) {
		t.Fatalf("reason over a failing server: %v, want at least the 4 answers before the failure", err)
	}
	if _, err := reason(failing); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("a second run over the rows written: %v, want a refusal naming --force", err)
	}
	srv := llmtest.NewServer(t, replies...)
	out, err := reason(srv, "--resume")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != len(replies)-written {
		t.Errorf("the resumed run asked %d questions, want the %d left", n, len(replies)-written)
	}
	var got rogfile.FileScores
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.N != len(replies) || math.Abs(got.F1-want.F1) > 1e-9 || math.Abs(got.Hits1-want.Hits1) > 1e-9 || math.Abs(got.Precision-want.Precision) > 1e-9 {
		t.Errorf("scores %+v, want %+v", got.Scores, want)
	}
	// Every row is RoG's, its input the exported prompt.
	rows, err := rogfile.LoadRows(context.Background(), pred)
	if err != nil {
		t.Fatal(err)
	}
	exported, _ := rogfile.LoadRows(context.Background(), export)
	byID := map[string]rogfile.Row{}
	for _, r := range exported {
		byID[r.ID] = r
	}
	for _, r := range rows {
		if e := byID[r.ID]; r.Input != e.Input || !r.HasPrediction || r.Question != e.Question {
			t.Errorf("row %s differs from its export row", r.ID)
		}
	}
	b, _ := os.ReadFile(pred)
	if !strings.HasPrefix(string(b), `{"id":`) || !strings.Contains(string(b), `"prediction":`) {
		t.Errorf("predictions file:\n%.300s", b)
	}
}
