package gcr

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/peers/signals"
)

// metaQAAnchors reads the bracketed topic entity of the first n MetaQA
// 2-hop test questions ("which films share actors with [Heat]\t...").
func metaQAAnchors(b *testing.B, g kg.Reader, n int) [][]int32 {
	b.Helper()
	f, err := os.Open(shareddata.Path(b, "metaqa/qa_test_2hop.txt"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out [][]int32
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(out) < n {
		q, _, _ := strings.Cut(sc.Text(), "\t")
		lo, hi := strings.IndexByte(q, '['), strings.IndexByte(q, ']')
		if lo < 0 || hi < lo {
			continue
		}
		if id, ok := g.Entity(q[lo+1 : hi]); ok {
			out = append(out, []int32{id})
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkTrieMetaQA2Hop builds the 2-hop KG-Trie of the first 1,000
// MetaQA 2-hop test questions' entities, uncached, and reports the p50
// and p95 build time per question and the mean trie size.
func BenchmarkTrieMetaQA2Hop(b *testing.B) {
	g, err := kg.Load(context.Background(), shareddata.Path(b, "metaqa/kb.txt"), kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	qs := metaQAAnchors(b, g, 1000)
	d := DefaultConfig()
	lim := signals.Limits{MaxReach: d.MaxReach, MaxNodes: d.MaxNodes}
	times := make([]time.Duration, 0, len(qs))
	var nodes int
	for b.Loop() {
		times, nodes = times[:0], 0
		for _, a := range qs {
			t, err := signals.Build(context.Background(), g, a, d.Hops, lim)
			if err != nil {
				b.Fatal(err)
			}
			times = append(times, t.Took)
			nodes += len(t.Nodes)
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e6, "p50-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Nanoseconds())/1e6, "p95-ms")
	b.ReportMetric(float64(nodes)/float64(len(qs)), "nodes/trie")
	b.ReportMetric(float64(len(qs)), "questions")
}
