package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
	"github.com/stem-kgqa/stem/train"
	"github.com/stem-kgqa/stem/tripgnn"
)

func TestGNNGuider(t *testing.T) {
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	m, err := tripgnn.New(tripgnn.Config{EncoderName: enc.Name(), EncoderDim: enc.Dim(), Layers: 2, Width: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	gd, err := NewGNNGuider(g, m, enc, train.SubgraphOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sg := schema.Path("Inception", "directed_by", "place_of_birth")
	pl := projection.Plan{Candidates: []projection.Candidate{{Graph: sg}}}
	gu, err := gd.Guide(ctx, projection.Input{Question: "where was the director of inception born ?", Entities: []string{"Inception"}}, pl)
	if err != nil {
		t.Fatal(err)
	}
	// K = 4 x 2 schema triples, and the 2-hop neighbourhood of Inception
	// is larger than that.
	if len(gu.Entities) != 8 {
		t.Errorf("%d guidance entities, want K = 8", len(gu.Entities))
	}
	want := 0
	for i := range int32(g.NumTriples()) {
		if tr := g.Triple(i); gu.Entities[tr.Head] && gu.Entities[tr.Tail] {
			want++
			if !gu.Triples[i] {
				t.Errorf("triple %d joins two guidance entities but is not in the guidance graph", i)
			}
		}
	}
	if len(gu.Triples) != want {
		t.Errorf("%d guidance triples, want the %d among the entities", len(gu.Triples), want)
	}
	if gu, err := gd.Guide(ctx, projection.Input{Entities: []string{"Inception"}}, projection.Plan{}); gu != nil || err != nil {
		t.Errorf("empty plan: %v, %v; want no guidance", gu, err)
	}
	if _, err := gd.Guide(ctx, projection.Input{Entities: []string{"Atlantis"}}, pl); !errors.Is(err, train.ErrNoQuestionEntity) {
		t.Errorf("unknown entity: %v, want ErrNoQuestionEntity", err)
	}
	other, _ := tripgnn.New(tripgnn.Config{EncoderName: "x", EncoderDim: enc.Dim() + 1, Layers: 1, Width: 8})
	if _, err := NewGNNGuider(g, other, enc, train.SubgraphOptions{}); err == nil {
		t.Error("a model of another encoder dimension was accepted")
	}
}

// TestGuidanceEffectRealData runs the oracle planner on PathQuestion test
// splits with and without Triple-GNN guidance and with the bias ablations.
// It needs models trained by `stem train gnn` with the default wordvec
// encoder: STEM_GNN_MODELS=DIR holding pq2h.gnn and pq3h.gnn.
func TestGuidanceEffectRealData(t *testing.T) {
	dir := os.Getenv("STEM_GNN_MODELS")
	if dir == "" {
		t.Skip("set STEM_GNN_MODELS to a folder with pq2h.gnn and pq3h.gnn (stem train gnn) to measure guidance")
	}
	ctx := context.Background()
	path, err := wordvec.DefaultPath()
	if err != nil {
		t.Skip(err)
	}
	vecs, err := wordvec.Open(path)
	if err != nil {
		t.Skip(err)
	}
	enc := wordvec.New(vecs, wordvec.Options{})
	for _, ds := range []struct{ name, kb, model string }{
		{"PQ-2H", "2H-kb.txt", "pq2h.gnn"},
		{"PQ-3H", "3H-kb.txt", "pq3h.gnn"},
	} {
		kbPath := shareddata.Path(t, "pathquestion/"+ds.kb)
		g, err := kg.Load(ctx, kbPath, kg.FormatAuto)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := benchmark.LoadPathQuestion(ctx, shareddata.Path(t, "pathquestion/splits/"+ds.name+".test.txt"))
		if err != nil {
			t.Fatal(err)
		}
		ents, err := kgvec.Build(ctx, g, enc, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tripgnn.Load(filepath.Join(dir, ds.model), enc.Name(), enc.Dim())
		if err != nil {
			t.Fatal(err)
		}
		gd, err := NewGNNGuider(g, m, enc, train.SubgraphOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range []struct {
			name          string
			gnn           bool
			noEnt, noTrip bool
		}{
			{"no gnn", false, false, false},
			{"gnn", true, false, false},
			{"gnn --no-entity-bias", true, true, false},
			{"gnn --no-triple-bias", true, false, true},
		} {
			cfg := tracing.DefaultConfig()
			cfg.NoEntityBias, cfg.NoTripleBias = run.noEnt, run.noTrip
			ret, err := NewRetriever(ctx, g, ents, enc, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if run.gnn {
				ret.Guider = gd
			}
			rep, err := eval.Run(ctx, qs, eval.Oracle{}, ret, eval.Options{Graph: g})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			fmt.Fprintf(&buf, "%s %-22s n=%d hits1=%.2f hit=%.2f f1=%.2f coverage=%.2f", ds.name, run.name, rep.N, rep.Hits1, rep.Hit, rep.F1, rep.Coverage)
			t.Log(buf.String())
		}
	}
}
