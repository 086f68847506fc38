// Package report renders several evaluation runs over one dataset side by
// side: an aligned text table, a Markdown report with each configuration's
// breakdowns, the reports as JSON and hand-drawn SVG bar charts (F1 by
// answer count, F1 by hops, latency), written together into one folder.
// It is what `stem compare --report DIR` writes; it draws without a
// plotting dependency so the folder can be produced anywhere stem runs.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/eval"
)

// Entry is one configuration's run.
type Entry struct {
	// Name labels the configuration in tables and legends.
	Name string `json:"name"`
	// Spec is the configuration as the user wrote it.
	Spec   string       `json:"spec"`
	Report *eval.Report `json:"report"`
}

// Comparison is several configurations run over one dataset.
type Comparison struct {
	// Command is the command line that produced it, for reproducing it.
	Command string `json:"command"`
	// Dataset describes the questions, e.g. "pq: PQ-3H.test.txt".
	Dataset string  `json:"dataset"`
	Entries []Entry `json:"configs"`
	// Agreement is which questions each configuration alone answers
	// right, when the runs kept per-question results (Agree).
	Agreement *Agreement `json:"agreement,omitempty"`
	// Notes are lines printed under the table, such as the figures the
	// peers' papers report on this benchmark (their own runs, not ours).
	Notes []string `json:"notes,omitempty"`
}

// Files WriteDir writes, by name.
const (
	MarkdownFile  = "report.md"
	JSONFile      = "report.json"
	F1AnswersFile = "f1_by_answers.svg"
	F1HopsFile    = "f1_by_hops.svg"
	LatencyFile   = "latency.svg"
	// RiskCoverageFile is written only when a configuration's run carries
	// confidences (eval.Report.Calibration).
	RiskCoverageFile = "risk_coverage.svg"
	tableColumnHead  = "config\tmode\tn\thits@1\tmrr\thit@5\thit\tanswers/q\tf1\tprecision\trecall\tcoverage\tunbacked\tp50 ms\tp95 ms\tqps\tllm calls/q\ttokens/q\t"
)

// SetMetricsNote is the line under compare's table on hit and f1: they
// score each row's answer list as a set, so a row that returns a ranked
// list (GCR's hypotheses, GraphRAFT's nodes, SimGRAG's subgraphs) gains
// hit with its length, and rows are compared on the rank metrics.
const SetMetricsNote = "hit and f1 grow with answers/q (each row's answer list is scored as a set, ranked or not): compare rows on hits@1, mrr and hit@5\n"

// row formats an entry's headline figures, tab-separated, in the order of
// tableColumnHead after the name.
func row(e Entry) []string {
	r := e.Report
	cov := "-"
	if r.CoverageN > 0 {
		cov = fmt.Sprintf("%.2f", r.Coverage)
	}
	name := e.Name
	if r.Partial {
		name += " (partial)"
	}
	calls, tokens := "-", "-"
	if r.LLM != nil {
		calls, tokens = f2(r.LLM.RequestsPerQ), fmt.Sprintf("%.0f", r.LLM.TokensPerQ)
	}
	mode := r.Mode
	if mode == "" {
		mode = "-"
	}
	return []string{name, mode, fmt.Sprint(r.N), f2(r.Hits1), f2(r.MRR), f2(r.HitK), f2(r.Hit), f2(r.Answers), f2(r.F1), f2(r.Precision), f2(r.Recall), cov,
		fmt.Sprint(r.Unbacked), f2(r.Latency.P50), f2(r.Latency.P95), f2(r.ThroughputQPS), calls, tokens}
}

func f2(v float64) string { return fmt.Sprintf("%.2f", v) }

// Print writes c to w: its table, or one JSON object with asJSON.
func (c *Comparison) Print(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	if err := WriteTable(w, c.Entries); err != nil {
		return err
	}
	for _, n := range c.Notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable writes the entries as an aligned table, one row per
// configuration.
func WriteTable(w io.Writer, entries []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, tableColumnHead)
	for _, e := range entries {
		fmt.Fprintln(tw, strings.Join(row(e), "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, SetMetricsNote+plannerNote(entries))
	return err
}

// plannerNote says under the table which planner the entries ran
// (eval.Report.PlannerLine): one line when every entry ran the same, else
// one per entry that ran one; "" when none is recorded.
func plannerNote(entries []Entry) string {
	lines := map[string]bool{}
	for _, e := range entries {
		lines[e.Report.PlannerLine()] = true
	}
	if len(lines) == 1 {
		for l := range lines {
			if l != "" {
				return l + "\n"
			}
		}
		return ""
	}
	var b strings.Builder
	for _, e := range entries {
		if l := e.Report.PlannerLine(); l != "" {
			fmt.Fprintf(&b, "%s: %s\n", e.Name, l)
		}
	}
	return b.String()
}

// WriteMarkdown writes the comparison as a Markdown document: the command,
// the side-by-side table, the charts WriteDir draws, then each
// configuration's full breakdown.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# stem compare\n\n")
	if c.Dataset != "" {
		fmt.Fprintf(&b, "Dataset: %s\n\n", c.Dataset)
	}
	fmt.Fprintf(&b, "Command:\n\n```\n%s\n```\n\n", c.Command)
	fmt.Fprintf(&b, "| %s |\n", strings.ReplaceAll(strings.TrimSuffix(tableColumnHead, "\t"), "\t", " | "))
	fmt.Fprintf(&b, "|---%s|\n", strings.Repeat("|---:", strings.Count(tableColumnHead, "\t")-1))
	for _, e := range c.Entries {
		cells := row(e)
		cells[0] = mdCell(cells[0])
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	fmt.Fprintf(&b, "\n%s", SetMetricsNote)
	fmt.Fprintf(&b, "\nScores in percent; mrr is the mean reciprocal rank of the first right answer and hit@5 a right answer among the first five, rank metrics that do not grow with the answer list as hit and f1 do (answers/q is its mean length); mode is how the retrieval strategy ran (STEM's follows its planner; a peer stands alone, with the encoder standing in for its paper's LLM unless it says llm, or is planner-assisted; trained where it learnt from the training questions); coverage is the paper's Eq. 17; p50 and p95 are the retriever's time per question; qps is questions answered per second of wall time; llm calls/q and tokens/q are the language model's requests and prompt plus completion tokens per question, where one was used.\n\n")
	fmt.Fprintf(&b, "![F1 by answer count](%s)\n\n![F1 by hops](%s)\n\n![Latency](%s)\n\n", F1AnswersFile, F1HopsFile, LatencyFile)
	if a := c.Agreement; a != nil {
		fmt.Fprintf(&b, "## Agreement\n\nOf %d questions, every configuration answers %d right and none answers %d right. Questions only one configuration answers right (a hit):\n\n", a.N, a.All, a.None)
		fmt.Fprintf(&b, "| config | alone right | examples |\n|---|---:|---|\n")
		for _, al := range a.Alone {
			ex := al.IDs
			if len(ex) > 5 {
				ex = ex[:5]
			}
			fmt.Fprintf(&b, "| %s | %d | %s |\n", mdCell(al.Name), al.Count, mdCell(strings.Join(ex, ", ")))
		}
		b.WriteString("\n")
	}
	writeFailures(&b, c.Entries)
	calibrationRows(&b, c.Entries)
	for _, e := range c.Entries {
		fmt.Fprintf(&b, "## %s\n\n", mdCell(e.Name))
		if e.Spec != "" {
			fmt.Fprintf(&b, "Configuration: `%s`\n\n", e.Spec)
		}
		b.WriteString("```\n")
		if err := e.Report.WriteTable(&b); err != nil {
			return err
		}
		b.WriteString("```\n\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeFailures writes the failed questions of each configuration by the
// stage they are attributed to (eval.Attribute), when any failed, so that
// configurations are compared on where they lose questions, not only how
// many.
func writeFailures(b *bytes.Buffer, entries []Entry) {
	failed := false
	for _, e := range entries {
		failed = failed || len(e.Report.Failures) > 0
	}
	if !failed {
		return
	}
	b.WriteString("## Failures by stage\n\nEach question with no hit, attributed to the first stage whose output misses the gold path or answers (linking, planning, anchoring, tracing, answer selection); unknown where the data has no gold path to check against.\n\n| config | ")
	b.WriteString(strings.Join(eval.FailureStages, " | "))
	b.WriteString(" |\n|---")
	b.WriteString(strings.Repeat("|---:", len(eval.FailureStages)))
	b.WriteString("|\n")
	for _, e := range entries {
		fmt.Fprintf(b, "| %s |", mdCell(e.Name))
		for _, st := range eval.FailureStages {
			fmt.Fprintf(b, " %d |", e.Report.Failures[st])
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// mdCell keeps a value from breaking a Markdown table row.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Charts returns the comparison's three charts: F1 by gold answer count,
// F1 by hops, and latency (p50 per stage when the retrievers timed their
// stages, else p50 and p95 per question).
func (c *Comparison) Charts() (f1Answers, f1Hops, latency BarChart) {
	f1Answers = BarChart{Title: "F1 by number of gold answers", YLabel: "F1 (%)", YMax: 100}
	f1Hops = BarChart{Title: "F1 by hops", YLabel: "F1 (%)", YMax: 100}
	f1Answers.Groups = bucketLabels(c.Entries, func(r *eval.Report) []eval.Bucket { return r.ByAnswers })
	f1Hops.Groups = bucketLabels(c.Entries, func(r *eval.Report) []eval.Bucket { return r.ByHops })
	stageSet := map[string]bool{}
	for _, e := range c.Entries {
		for k := range e.Report.StageMS {
			stageSet[k] = true
		}
	}
	stages := slices.Sorted(maps.Keys(stageSet))
	if len(stages) > 0 {
		latency = BarChart{Title: "Median latency per stage", YLabel: "ms per question (p50)", Groups: stages}
	} else {
		latency = BarChart{Title: "Latency per question", YLabel: "ms", Groups: []string{"p50", "p95"}}
	}
	for _, e := range c.Entries {
		r := e.Report
		f1Answers.Series = append(f1Answers.Series, Series{Name: e.Name, Values: bucketF1(f1Answers.Groups, r.ByAnswers)})
		f1Hops.Series = append(f1Hops.Series, Series{Name: e.Name, Values: bucketF1(f1Hops.Groups, r.ByHops)})
		var lat []float64
		if len(stages) > 0 {
			for _, s := range stages {
				if l, ok := r.StageMS[s]; ok {
					lat = append(lat, l.P50)
				} else {
					lat = append(lat, math.NaN())
				}
			}
		} else {
			lat = []float64{r.Latency.P50, r.Latency.P95}
		}
		latency.Series = append(latency.Series, Series{Name: e.Name, Values: lat})
	}
	return f1Answers, f1Hops, latency
}

// bucketLabels lists the labels of buckets holding questions in any
// entry, in the order the reports give them.
func bucketLabels(entries []Entry, buckets func(*eval.Report) []eval.Bucket) []string {
	var labels []string
	for _, e := range entries {
		for _, b := range buckets(e.Report) {
			if b.N > 0 && !slices.Contains(labels, b.Label) {
				labels = append(labels, b.Label)
			}
		}
	}
	return labels
}

// bucketF1 is the F1 of each labelled bucket, NaN where it holds nothing.
func bucketF1(labels []string, buckets []eval.Bucket) []float64 {
	out := make([]float64, len(labels))
	for i, l := range labels {
		out[i] = math.NaN()
		for _, b := range buckets {
			if b.Label == l && b.N > 0 {
				out[i] = b.F1
			}
		}
	}
	return out
}

// CheckDir makes sure the --report folder dir can be written before any
// configuration runs ("" is none).
func CheckDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--report %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".stem-write-check-*")
	if err != nil {
		return fmt.Errorf("--report %s: the folder cannot be written: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// reportFile is one file of a report folder and what writes it.
type reportFile struct {
	name string
	fill func(io.Writer) error
}

// WriteDir writes the comparison into dir (created if needed): report.md,
// report.json and the three SVG charts, and the risk-coverage curve when a
// run carries confidences, each file atomically.
func WriteDir(dir string, c *Comparison) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report folder: %w", err)
	}
	f1a, f1h, lat := c.Charts()
	files := []reportFile{
		{MarkdownFile, c.WriteMarkdown},
		{JSONFile, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(c)
		}},
		{F1AnswersFile, f1a.WriteSVG},
		{F1HopsFile, f1h.WriteSVG},
		{LatencyFile, lat.WriteSVG},
	}
	if rc, ok := c.RiskCoverage(); ok {
		files = append(files, reportFile{RiskCoverageFile, rc.WriteSVG})
	}
	for _, f := range files {
		if err := atomicfile.Write(filepath.Join(dir, f.name), 0o644, f.fill); err != nil {
			return err
		}
	}
	return nil
}
