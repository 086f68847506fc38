package simgrag

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
)

// metaQARequests loads the first n of MetaQA's 2-hop test questions that
// the KB can answer, with their topic entities, as `stem eval
// --answerable-only` asks a peer standing alone.
func metaQARequests(b *testing.B, n int) (*kg.Graph, []plan.Request) {
	b.Helper()
	ctx := context.Background()
	kbPath := shareddata.Path(b, "metaqa/kb.txt")
	qa, qt := shareddata.Path(b, "metaqa/qa_test_2hop.txt"), shareddata.Path(b, "metaqa/qtype_test_2hop.txt")
	g, err := kg.Load(ctx, kbPath, kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := benchmark.LoadMetaQA(ctx, qa, qt)
	if err != nil {
		b.Fatal(err)
	}
	if qs, _, err = benchmark.Answerable(ctx, g, qs); err != nil {
		b.Fatal(err)
	}
	var reqs []plan.Request
	for _, q := range qs[:min(n, len(qs))] {
		req := plan.Request{Question: q.Text, Graph: g}
		for _, e := range q.Entities {
			if id, ok := g.Entity(e); ok {
				req.Anchors, req.Mentions = append(req.Anchors, id), append(req.Mentions, e)
			}
		}
		reqs = append(reqs, req)
	}
	return g, reqs
}

// BenchmarkRetrieveMetaQA2Hop retrieves MetaQA 2-hop questions standing
// alone (the stand-in's pattern) and reports the median and 95th
// percentile retrieval time per question, and how many expansions the
// pruning of section 5.2 saves against Algorithm 1 unpruned on the same
// questions.
func BenchmarkRetrieveMetaQA2Hop(b *testing.B) {
	g, reqs := metaQARequests(b, 2000)
	ctx := context.Background()
	env := plan.Env{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})}
	r, err := New(ctx, env, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.NoPrune = true
	brute, err := New(ctx, env, cfg)
	if err != nil {
		b.Fatal(err)
	}
	var pruned, unpruned Stats
	for _, req := range reqs {
		_, s, err := r.Match(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		pruned.Add(s)
		if _, s, err = brute.Match(ctx, req); err != nil {
			b.Fatal(err)
		}
		unpruned.Add(s)
	}
	times := make([]time.Duration, 0, len(reqs))
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, err := r.Retrieve(ctx, reqs[i%len(reqs)]); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		i++
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
	nq := float64(len(reqs))
	b.ReportMetric(float64(pruned.Expansions)/nq, "expansions/q")
	b.ReportMetric(float64(unpruned.Expansions)/nq, "unpruned-expansions/q")
	b.ReportMetric(100*float64(unpruned.Expansions-pruned.Expansions)/float64(max(unpruned.Expansions, 1)), "saved-%")
}
