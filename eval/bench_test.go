package eval

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/tripgnn"
)

// benchEval answers qs over g with the oracle planner through the whole
// pipeline, one question at a time, and reports questions per second and
// Hits@1: what `stem eval` costs per question once the KG is loaded. The
// encoder is character n-grams only, so no vector file is needed.
func benchEval(b *testing.B, g *kg.Graph, qs []benchmark.Question) {
	s := plan.DefaultSettings()
	s.Planner = "oracle"
	rep := loop(b, s, plan.Assets{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})}, g, qs)
	b.ReportMetric(float64(len(qs)*b.N)/b.Elapsed().Seconds(), "q/s")
	b.ReportMetric(rep.Hits1, "hits@1")
}

// loop opens the pipeline of s and a and answers qs over g in the
// benchmark's loop, returning the last report.
func loop(b *testing.B, s plan.Settings, a plan.Assets, g *kg.Graph, qs []benchmark.Question) *Report {
	b.Helper()
	ctx := context.Background()
	p, _, err := plan.Open(ctx, s, a)
	if err != nil {
		b.Fatal(err)
	}
	var rep *Report
	for b.Loop() {
		if rep, err = Run(ctx, qs, Pipeline{p}, Options{Graph: g}); err != nil {
			b.Fatal(err)
		}
	}
	return rep
}

func BenchmarkEvalPQ3H(b *testing.B) {
	ctx := context.Background()
	g, err := kg.Load(ctx, shareddata.Path(b, "pathquestion/3H-kb.txt"), kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := benchmark.LoadPathQuestion(ctx, shareddata.Path(b, "pathquestion/splits/PQ-3H.test.txt"))
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, g, qs)
}

func BenchmarkEvalMetaQA2Hop(b *testing.B) {
	ctx := context.Background()
	g, err := kg.Load(ctx, shareddata.Path(b, "metaqa/kb.txt"), kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := benchmark.LoadMetaQA(ctx, shareddata.Path(b, "metaqa/qa_test_2hop.txt"), shareddata.Path(b, "metaqa/qtype_test_2hop.txt"))
	if err != nil {
		b.Fatal(err)
	}
	benchEval(b, g, qs[:2000])
}

// BenchmarkGuidanceEffect answers PathQuestion's test splits with the
// oracle planner, without the Triple-GNN and with it (with each bias
// ablated), and reports Hits@1, F1 and coverage: the figures behind the
// guidance table of docs/training.md. It needs models trained by `stem train gnn`
// with the default word vectors: STEM_GNN_MODELS=DIR holding pq2h.gnn and
// pq3h.gnn.
func BenchmarkGuidanceEffect(b *testing.B) {
	dir := os.Getenv("STEM_GNN_MODELS")
	if dir == "" {
		b.Skip("set STEM_GNN_MODELS to a folder with pq2h.gnn and pq3h.gnn (stem train gnn) to measure guidance")
	}
	ctx := context.Background()
	path, err := wordvec.DefaultPath()
	if err != nil {
		b.Skip(err)
	}
	vecs, err := wordvec.Open(path)
	if err != nil {
		b.Skip(err)
	}
	enc := wordvec.New(vecs, wordvec.Options{})
	for _, ds := range []struct{ name, kb, model string }{{"PQ-2H", "2H-kb.txt", "pq2h.gnn"}, {"PQ-3H", "3H-kb.txt", "pq3h.gnn"}} {
		g, err := kg.Load(ctx, shareddata.Path(b, "pathquestion/"+ds.kb), kg.FormatAuto)
		if err != nil {
			b.Fatal(err)
		}
		qs, err := benchmark.LoadPathQuestion(ctx, shareddata.Path(b, "pathquestion/splits/"+ds.name+".test.txt"))
		if err != nil {
			b.Fatal(err)
		}
		openGuider := func(path string) (plan.Guider, error) {
			m, err := tripgnn.Load(path, enc.Name(), enc.Dim())
			if err != nil {
				return nil, err
			}
			return plan.NewGNNGuider(m, enc, tripgnn.SubgraphOptions{})
		}
		for _, run := range []struct {
			name          string
			gnn           bool
			noEnt, noTrip bool
		}{{"no-gnn", false, false, false}, {"gnn", true, false, false}, {"gnn-no-entity-bias", true, true, false}, {"gnn-no-triple-bias", true, false, true}} {
			b.Run(ds.name+"/"+run.name, func(b *testing.B) {
				s := plan.DefaultSettings()
				s.Planner = "oracle"
				s.Tracing.NoEntityBias, s.Tracing.NoTripleBias = run.noEnt, run.noTrip
				if run.gnn {
					s.GNN = plan.OptionalFile(filepath.Join(dir, ds.model))
				}
				rep := loop(b, s, plan.Assets{Graph: g, Encoder: enc, OpenGuider: openGuider}, g, qs)
				b.ReportMetric(rep.Hits1, "hits@1")
				b.ReportMetric(rep.F1, "f1")
				b.ReportMetric(rep.Coverage, "coverage")
			})
		}
	}
}
