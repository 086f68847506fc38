package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/report"
)

// seriesNames returns the data-name of every <g class="series"> of an SVG
// document, failing the test when it is not well-formed XML.
func seriesNames(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	var names []string
	rects := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not XML: %v", path, err)
		}
		if el, ok := tok.(xml.StartElement); ok {
			var class, name string
			for _, a := range el.Attr {
				switch a.Name.Local {
				case "class":
					class = a.Value
				case "data-name":
					name = a.Value
				}
			}
			if el.Name.Local == "g" && class == "series" {
				names = append(names, name)
			}
			if el.Name.Local == "rect" {
				rects++
			}
		}
	}
	if rects == 0 {
		t.Errorf("%s draws no bars", path)
	}
	return names
}

func TestCompareDemo(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	dir := filepath.Join(t.TempDir(), "report")
	out, _, err := run(t, "compare", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--preset", "table11", "--config", "name=breadth,strategy=breadth", "--workers", "2", "--report", dir)
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"adaptive", "only-greedy", "only-threshold", "breadth"}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3+len(wantNames) || lines[len(wantNames)+1]+"\n" != report.SetMetricsNote || !strings.Contains(lines[0], "hits@1") || !strings.Contains(lines[0], "qps") {
		t.Fatalf("table:\n%s", out)
	}
	// compare plans with the gold paths by default, as eval does, and
	// says so under the table.
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "planner oracle: ") || !strings.Contains(last, "upper bound") {
		t.Errorf("line under the table = %q, want the oracle named as an upper bound", last)
	}
	for i, name := range wantNames {
		if f := strings.Fields(lines[i+1]); f[0] != name || f[1] != "planner" || f[2] != "37" {
			t.Errorf("row %d = %q, want %s over 37 questions", i, lines[i+1], name)
		}
	}

	cmp := readComparison(t, dir)
	if len(cmp.Entries) != len(wantNames) {
		t.Fatalf("report.json holds %d configurations", len(cmp.Entries))
	}
	for i, e := range cmp.Entries {
		if e.Name != wantNames[i] || e.Report.N != demoQuestionCount || e.Report.Workers != 2 || e.Report.ThroughputQPS <= 0 {
			t.Errorf("entry %d: %s n %d workers %d qps %v", i, e.Name, e.Report.N, e.Report.Workers, e.Report.ThroughputQPS)
		}
	}
	// The oracle plans reach every demo answer whatever the selection rule.
	if cmp.Entries[0].Report.Hit != 100 || cmp.Entries[3].Spec != "name=breadth,strategy=breadth" {
		t.Errorf("adaptive hit %v, breadth spec %q", cmp.Entries[0].Report.Hit, cmp.Entries[3].Spec)
	}

	md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"stem compare --format pq --questions " + qs + " --kg " + kb,
		"--config name=breadth,strategy=breadth",
		"--preset table11",
		"| adaptive | planner | 37 | ",
		"## only-threshold",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{report.F1AnswersFile, report.F1HopsFile, report.LatencyFile} {
		if got := seriesNames(t, filepath.Join(dir, f)); !slices.Equal(got, wantNames) {
			t.Errorf("%s: bar groups %q, want one per configuration %q", f, got, wantNames)
		}
	}
}

func TestCompareBadConfig(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no configurations", nil, "needs configurations"},
		{"unknown preset", []string{"--preset", "table9"}, `--preset "table9"`},
		{"unknown key", []string{"--config", "name=a,deep"}, `"deep" is not a setting`},
		{"duplicate names", []string{"--config", "name=a", "--config", "name=a,only-greedy"}, `two configurations are named "a"`},
		{"bad boolean", []string{"--config", "only-greedy=maybe"}, `only-greedy "maybe": want true or false`},
		{"bad beam", []string{"--config", "beam=-2"}, `beam "-2": want auto or a whole number from 1 to 64`},
		{"value missing", []string{"--config", "planner"}, "planner needs a value"},
		{"exclusive ablations", []string{"--config", "only-greedy,only-threshold"}, "exclude each other"},
		{"bad strategy", []string{"--config", "strategy=wide"}, `strategy "wide": want auto, precision or breadth`},
		{"missing gnn model", []string{"--config", "name=gnn,gnn=model.tgnn"}, "model.tgnn"},
		{"bad tau", []string{"--config", "tau=-1"}, `tau "-1": want a number of at least 0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"compare", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--limit", "2"}, tc.args...)
			_, _, err := run(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"plain/path.txt": "plain/path.txt", "name=a,b": "name=a,b", "a b": "'a b'", "it's": `'it'\''s'`, "": "''"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// The tests below cover the flags stem eval shares with stem compare's
// machinery (--workers, --out, --resume).

func TestEvalWorkersOutResume(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	base := []string{"eval", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb, "--json"}
	decode := func(out string) map[string]any {
		t.Helper()
		var rep map[string]any
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("output is not one JSON object: %v\n%s", err, out)
		}
		return rep
	}
	one, _, err := run(t, base...)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "run.jsonl")
	two, _, err := run(t, append(base, "--workers", "2", "--out", log)...)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := decode(one), decode(two)
	for _, k := range []string{"n", "hits1", "hit", "f1", "precision", "recall", "coverage", "unbacked", "by_answers", "by_hops"} {
		if a, b := r1[k], r2[k]; !reflect.DeepEqual(a, b) {
			t.Errorf("%s: %v with 1 worker, %v with 2", k, a, b)
		}
	}
	if r2["workers"] != 2.0 || r2["throughput_qps"].(float64) <= 0 {
		t.Errorf("workers %v, throughput_qps %v", r2["workers"], r2["throughput_qps"])
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) != 1+demoQuestionCount || !strings.Contains(lines[0], `"stem_eval_log":1`) || !strings.Contains(lines[0], `"planner":"oracle"`) {
		t.Fatalf("log has %d lines; header %s", len(lines), lines[0])
	}

	// The log is not overwritten without --resume.
	if _, _, err := run(t, append(base, "--out", log)...); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("rerun onto a full log: %v", err)
	}
	// A crash after ten results, the eleventh torn.
	torn := strings.Join(lines[:11], "\n") + "\n" + lines[11][:len(lines[11])/2]
	if err := os.WriteFile(log, []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, append(base, "--out", log, "--resume", "--strategy", "breadth")...); err == nil ||
		!strings.Contains(err.Error(), "another configuration") || !strings.Contains(err.Error(), `strategy: "auto" != "breadth"`) {
		t.Errorf("resume with another strategy: %v", err)
	}
	out, stderr, err := run(t, append(base, "--out", log, "--resume")...)
	if err != nil {
		t.Fatal(err)
	}
	r3 := decode(out)
	if r3["n"] != float64(demoQuestionCount) || r3["resumed"] != 10.0 || r3["f1"] != r1["f1"] || !strings.Contains(stderr, "resume: 10 results already in") {
		t.Errorf("resumed: n %v resumed %v f1 %v (want %v); stderr %s", r3["n"], r3["resumed"], r3["f1"], r1["f1"], stderr)
	}
	b, _ = os.ReadFile(log)
	if n := strings.Count(string(b), "\n"); n != 1+demoQuestionCount || !strings.HasSuffix(string(b), "\n") {
		t.Errorf("log after resume has %d lines", n)
	}
	if _, _, err := run(t, append(base, "--resume")...); err == nil || !strings.Contains(err.Error(), "--resume needs --out") {
		t.Errorf("--resume alone: %v", err)
	}
}

// readComparison reads the report.json stem compare wrote under dir.
func readComparison(t *testing.T, dir string) report.Comparison {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var c report.Comparison
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestComparePerQuestion checks that --json --per-question keeps every
// row's per-question results (scripts/webqsp-folds pools two held-out
// halves' rows from them), and that without it the JSON holds none.
func TestComparePerQuestion(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	for _, tc := range []struct {
		name  string
		extra []string
		want  int
	}{
		{"per-question", []string{"--per-question"}, demoQuestionCount},
		{"summary only", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"compare", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
				"--config", "name=beam 1,beam=1", "--config", "name=beam 3,beam=3", "--json"}, tc.extra...)
			out, _, err := run(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			var cmp report.Comparison
			if err := json.Unmarshal([]byte(out), &cmp); err != nil {
				t.Fatalf("compare --json: %v\n%s", err, out)
			}
			if len(cmp.Entries) != 2 {
				t.Fatalf("%d rows, want 2", len(cmp.Entries))
			}
			for _, e := range cmp.Entries {
				got := e.Report.Questions
				if len(got) != tc.want {
					t.Fatalf("row %s holds %d questions' results, want %d", e.Name, len(got), tc.want)
				}
				if tc.want == 0 {
					continue
				}
				// The row's Hits@1 is the mean of its questions'.
				sum := 0.0
				for _, q := range got {
					if q.ID == "" {
						t.Errorf("row %s: a question without its id", e.Name)
					}
					sum += q.Hits1
				}
				if mean := 100 * sum / float64(len(got)); mean-e.Report.Hits1 > 1e-9 || e.Report.Hits1-mean > 1e-9 {
					t.Errorf("row %s: hits@1 %v, its questions' mean %v", e.Name, e.Report.Hits1, mean)
				}
			}
		})
	}
}
