package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/eval"
)

func sampleComparison() *Comparison {
	full := &eval.Report{
		Scores:        eval.Scores{N: 10, Hits1: 80, MRR: 84.5, HitK: 88, Answers: 3.5, Hit: 90, F1: 75.5, Precision: 70, Recall: 85, Coverage: 66.6667, CoverageN: 10},
		Mode:          "planner",
		Unbacked:      1,
		Failures:      map[string]int{eval.FailPlanning: 1},
		Latency:       eval.Latency{P50: 2.5, P95: 9},
		ThroughputQPS: 123.456,
		LLM:           &eval.LLMUse{Requests: 20, PromptTokens: 8000, CompletionTokens: 504, RequestsPerQ: 2, TokensPerQ: 850.4},
		ByAnswers:     []eval.Bucket{{Label: "1", Scores: eval.Scores{N: 6, F1: 90}}, {Label: "2-4", Scores: eval.Scores{N: 4, F1: 50}}, {Label: ">=10"}},
		ByHops:        []eval.Bucket{{Label: "2", Scores: eval.Scores{N: 7, F1: 80}}, {Label: "3", Scores: eval.Scores{N: 3, F1: 60}}},
	}
	ablated := &eval.Report{
		Scores:    eval.Scores{N: 4, F1: 40},
		Latency:   eval.Latency{P50: 1, P95: 3},
		Partial:   true,
		Pending:   6,
		Failures:  map[string]int{eval.FailTracing: 3, eval.FailUnknown: 1},
		ByAnswers: []eval.Bucket{{Label: "1", Scores: eval.Scores{N: 4, F1: 40}}},
		ByHops:    []eval.Bucket{{Label: "2", Scores: eval.Scores{N: 4, F1: 40}}},
	}
	return &Comparison{
		Command: "stem compare --format pq --preset table7",
		Dataset: "pq: demo <questions>",
		Entries: []Entry{{Name: "full", Spec: "name=full", Report: full}, {Name: "no|bias & <more>", Spec: "no-entity-bias,no-triple-bias", Report: ablated}},
	}
}

// svgSeries parses an SVG document and returns, per <g class="series">,
// its data-name and the tooltips of its bars.
func svgSeries(t *testing.T, doc []byte) (names []string, bars [][]string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var inSeries, inTitle bool
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse as XML: %v\n%s", err, doc)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			if el.Name.Local == "g" {
				for _, a := range el.Attr {
					if a.Name.Local == "class" && a.Value == "series" {
						inSeries = true
						names = append(names, attr(el, "data-name"))
						bars = append(bars, nil)
					}
				}
			}
			inTitle = inSeries && el.Name.Local == "title"
		case xml.EndElement:
			depth--
			if el.Name.Local == "g" {
				inSeries = false
			}
			inTitle = false
		case xml.CharData:
			if inTitle {
				bars[len(bars)-1] = append(bars[len(bars)-1], string(el))
			}
		}
	}
	if depth != 0 {
		t.Fatalf("unbalanced SVG")
	}
	return names, bars
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestWriteDir(t *testing.T) {
	c := sampleComparison()
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteDir(dir, c); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	md := string(read(MarkdownFile))
	for _, want := range []string{
		"```\nstem compare --format pq --preset table7\n```",
		"| config | mode | n | hits@1 | mrr | hit@5 | hit | answers/q | f1 | precision | recall | coverage | unbacked | p50 ms | p95 ms | qps | llm calls/q | tokens/q |",
		"| full | planner | 10 | 80.00 | 84.50 | 88.00 | 90.00 | 3.50 | 75.50 | 70.00 | 85.00 | 66.67 | 1 | 2.50 | 9.00 | 123.46 | 2.00 | 850 |",
		`| no\|bias & <more> (partial) | - | 4 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 | 40.00 | 0.00 | 0.00 | - | 0 | 1.00 | 3.00 | 0.00 | - | - |`,
		"![F1 by answer count](f1_by_answers.svg)",
		"Configuration: `no-entity-bias,no-triple-bias`",
		"partial: stopped with 6 questions not answered",
		"| config | linking | planning | anchoring | tracing | answer-selection | unknown |",
		"| full | 0 | 1 | 0 | 0 | 0 | 0 |",
		`| no\|bias & <more> | 0 | 0 | 0 | 3 | 0 | 1 |`,
		"failures by stage: linking 0  planning 1  anchoring 0  tracing 0  answer-selection 0  unknown 0",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	var back Comparison
	if err := json.Unmarshal(read(JSONFile), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Entries) != 2 || back.Entries[0].Report.F1 != 75.5 || back.Command != c.Command || !back.Entries[1].Report.Partial ||
		back.Entries[1].Report.Failures[eval.FailTracing] != 3 {
		t.Errorf("report.json round trip: %+v", back)
	}

	names, bars := svgSeries(t, read(F1AnswersFile))
	if len(names) != 2 || names[0] != "full" || names[1] != "no|bias & <more>" {
		t.Fatalf("f1_by_answers series = %q", names)
	}
	// Buckets with questions: "1" and "2-4"; the ablated run has none in 2-4.
	if want := []string{"full, 1: 90.00", "full, 2-4: 50.00"}; strings.Join(bars[0], ";") != strings.Join(want, ";") {
		t.Errorf("full bars = %q, want %q", bars[0], want)
	}
	if len(bars[1]) != 1 || bars[1][0] != "no|bias & <more>, 1: 40.00" {
		t.Errorf("ablated bars = %q", bars[1])
	}
	names, bars = svgSeries(t, read(F1HopsFile))
	if len(names) != 2 || len(bars[0]) != 2 || bars[0][1] != "full, 3: 60.00" {
		t.Errorf("f1_by_hops: %q %q", names, bars)
	}
	names, bars = svgSeries(t, read(LatencyFile))
	if len(names) != 2 || strings.Join(bars[0], ";") != "full, p50: 2.50;full, p95: 9.00" {
		t.Errorf("latency without stages: %q %q", names, bars)
	}
}

func TestChartsStages(t *testing.T) {
	c := sampleComparison()
	c.Entries[0].Report.StageMS = map[string]eval.Latency{"trace": {P50: 4}, "anchor": {P50: 1}}
	c.Entries[1].Report.StageMS = map[string]eval.Latency{"trace": {P50: 2}}
	_, _, lat := c.Charts()
	if strings.Join(lat.Groups, ",") != "anchor,trace" || lat.Series[0].Values[1] != 4 || !math.IsNaN(lat.Series[1].Values[0]) {
		t.Errorf("stage chart: %+v", lat)
	}
	var buf bytes.Buffer
	if err := lat.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	if _, bars := svgSeries(t, buf.Bytes()); len(bars[1]) != 1 || bars[1][0] != "no|bias & <more>, trace: 2.00" {
		t.Errorf("stage bars: %q", bars)
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, sampleComparison().Entries); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	// Under the two rows: the set metrics' note (no planner recorded).
	if len(lines) != 4 || lines[3]+"\n" != SetMetricsNote || len(lines[1]) != len(lines[0]) || !strings.Contains(strings.Join(strings.Fields(lines[1]), " "), "full planner 10 80.00 84.50 88.00 90.00 3.50 75.50 70.00 85.00 66.67 1 2.50 9.00 123.46 2.00 850") {
		t.Errorf("table:\n%s", buf.String())
	}
}

func TestBarChartErrorsAndScale(t *testing.T) {
	bad := BarChart{Title: "t", Groups: []string{"a", "b"}, Series: []Series{{Name: "s", Values: []float64{1}}}}
	if err := bad.WriteSVG(io.Discard); err == nil || !strings.Contains(err.Error(), `series "s" has 1 values for 2 groups`) {
		t.Errorf("mismatched series: %v", err)
	}
	for _, c := range []struct{ in, want float64 }{{0, 1}, {0.3, 0.5}, {7, 10}, {12, 20}, {100, 100}, {101, 200}, {math.NaN(), 1}} {
		if got := niceCeil(c.in); got != c.want {
			t.Errorf("niceCeil(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestPlannerNote checks the line under compare's table: one line when
// every configuration ran the same planner, one per configuration
// otherwise, none when no planner is recorded.
func TestPlannerNote(t *testing.T) {
	entry := func(name, planner string) Entry {
		return Entry{Name: name, Report: &eval.Report{Planner: planner, UpperBound: planner == "oracle"}}
	}
	for _, tc := range []struct {
		entries []Entry
		want    []string
	}{
		{[]Entry{entry("a", "oracle"), entry("b", "oracle")}, []string{"planner oracle: "}},
		{[]Entry{entry("a", "pattern"), entry("b", "")}, []string{"a: planner pattern"}},
		{[]Entry{entry("a", "pattern"), entry("b", "oracle")}, []string{"a: planner pattern", "b: planner oracle: "}},
		{[]Entry{entry("a", ""), entry("b", "")}, nil},
	} {
		got := plannerNote(tc.entries)
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if got == "" {
			lines = nil
		}
		if len(lines) != len(tc.want) {
			t.Errorf("%d lines %q, want %d", len(lines), got, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("line %d = %q, want it to begin %q", i, lines[i], w)
			}
		}
	}
}
