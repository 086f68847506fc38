package peers

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Figure is one figure a peer's paper reports for its own system, run
// with its LLMs, on a benchmark stem also runs: printed beside our run of
// the stand-in so the two are never confused.
type Figure struct {
	// Peer is the strategy's name (simgrag, gcr, dog); Benchmark is a
	// BenchmarkOf name.
	Peer, Benchmark string
	// Metric is the paper's: Hits@1, Hit or F1.
	Metric string
	// Value is in percent.
	Value float64
	// Source is where the paper prints it and with which setting.
	Source string
}

// String is the figure as stem compare prints it under the table.
func (f Figure) String() string {
	return fmt.Sprintf("paper: %s reports %s %.2f on %s (%s; the paper's own run with its LLMs, not ours)",
		f.Peer, f.Metric, f.Value, f.Benchmark, f.Source)
}

// reported are the figures the four papers report on the benchmarks stem
// runs, read off the papers in shared/papers. GraphRAFT reports STaRK
// (prime, mag) only, which stem does not run, so it has none. The
// WebQSP figures are over the whole WebQSP test set (DoG's filtered to
// questions whose graph holds an answer); stem's WebQSP-mini is a
// subset of it.
var reported = []Figure{
	{"simgrag", "MetaQA 1-hop", "Hits@1", 98.0, "SimGRAG table 1: Llama 3 70B, 12 shots, k=3"},
	{"simgrag", "MetaQA 2-hop", "Hits@1", 98.4, "SimGRAG table 1: Llama 3 70B, 12 shots, k=3"},
	{"simgrag", "MetaQA 3-hop", "Hits@1", 97.8, "SimGRAG table 1: Llama 3 70B, 12 shots, k=3"},
	{"simgrag", "PQ-2H", "Hits@1", 88.7, "SimGRAG table 1: Llama 3 70B, 12 shots, k=3"},
	{"simgrag", "PQ-3H", "Hits@1", 78.6, "SimGRAG table 1: Llama 3 70B, 12 shots, k=3"},
	{"gcr", "WebQSP", "Hit", 92.6, "GCR table 1: fine-tuned Llama-3.1-8B + ChatGPT, L=2, K=10"},
	{"gcr", "WebQSP", "F1", 73.2, "GCR table 1: fine-tuned Llama-3.1-8B + ChatGPT, L=2, K=10"},
	{"gcr", "WebQSP", "F1", 57.0, "GCR table 3, w/o general LLM: the hypotheses as answers, as the stand-in takes them"},
	{"dog", "WebQSP", "Hits@1", 90.99, "DoG table 2: Llama-3.1-8B, beam 2, its processed WebQSP"},
}

// Reported returns the figures peer's paper reports on benchmark (a
// BenchmarkOf name), none when it reports none there.
func Reported(peer, benchmark string) []Figure {
	var out []Figure
	for _, f := range reported {
		if f.Peer == peer && f.Benchmark == benchmark {
			out = append(out, f)
		}
	}
	return out
}

// BenchmarkOf names the benchmark a dataset's question files belong to,
// as the papers name it ("PQ-2H", "MetaQA 1-hop", "WebQSP"), from stem's
// format name and the files' names; "" when it is none of those.
func BenchmarkOf(format string, files []string) string {
	base := ""
	if len(files) > 0 {
		base = strings.ToUpper(filepath.Base(files[0]))
	}
	switch format {
	case "pq":
		switch {
		case strings.Contains(base, "PQL"):
			return ""
		case strings.Contains(base, "2H"):
			return "PQ-2H"
		case strings.Contains(base, "3H"):
			return "PQ-3H"
		}
	case "metaqa":
		for _, h := range []string{"1", "2", "3"} {
			if strings.Contains(base, h+"HOP") {
				return "MetaQA " + h + "-hop"
			}
		}
	case "webqsp", "webqsp-mini", "webqsp-paths":
		return "WebQSP"
	}
	return ""
}
