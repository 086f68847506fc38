package plan

import (
	"context"
	"errors"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
	"github.com/stem-kgqa/stem/tripgnn"
)

func TestGNNGuider(t *testing.T) {
	ctx := context.Background()
	g, enc, m := demoGNN(t)
	gd, err := NewGNNGuider(m, enc, tripgnn.SubgraphOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sg := schema.Path("Inception", "directed_by", "place_of_birth")
	pl := projection.Projection{Candidates: []projection.Candidate{{Graph: sg}}}
	gu, err := gd.Guide(ctx, g, projection.Input{Question: "where was the director of inception born ?", Entities: []string{"Inception"}}, pl)
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
	if gu, err := gd.Guide(ctx, g, projection.Input{Entities: []string{"Inception"}}, projection.Projection{}); gu != nil || err != nil {
		t.Errorf("empty plan: %v, %v; want no guidance", gu, err)
	}
	if _, err := gd.Guide(ctx, g, projection.Input{Entities: []string{"Atlantis"}}, pl); !errors.Is(err, tripgnn.ErrNoQuestionEntity) {
		t.Errorf("unknown entity: %v, want ErrNoQuestionEntity", err)
	}
	other, _ := tripgnn.New(tripgnn.Config{EncoderName: "x", EncoderDim: enc.Dim() + 1, Layers: 1, Width: 8})
	if _, err := NewGNNGuider(other, enc, tripgnn.SubgraphOptions{}); err == nil {
		t.Error("a model of another encoder dimension was accepted")
	}
}

// TestGuidanceOnOwnGraph guides questions that bring their own graph: the
// pipeline has no shared KG, the model is loaded once, and each guidance
// graph is chosen in the question's graph.
func TestGuidanceOnOwnGraph(t *testing.T) {
	ctx := context.Background()
	g, enc, m := demoGNN(t)
	p, closeP, err := Open(ctx, Settings{Planner: "oracle", Beam: 1, Strategy: "auto", Retriever: DefaultStrategy, Generator: "structural",
		MaxQuestion: DefaultMaxQuestion, MaxHops: DefaultMaxHops, GNN: "model", Tracing: tracing.DefaultConfig()},
		Assets{Encoder: enc, OpenGuider: func(string) (Guider, error) { return NewGNNGuider(m, enc, tripgnn.SubgraphOptions{}) }})
	defer closeP()
	if err != nil {
		t.Fatalf("Open with --gnn and no shared KG: %v", err)
	}
	gold := &projection.Gold{Paths: []schema.GoldPath{{Steps: []schema.Step{{Rel: "directed_by"}, {Rel: "place_of_birth"}}}}, Answers: 1}
	tests := []struct {
		name     string
		entities []string
		want     int // guidance entities: K = 4 x 2 schema triples
		answer   string
	}{
		{"inception", []string{"Inception"}, 8, "London"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := p.Answer(ctx, Query{Question: "where was the director of inception born ?", Entities: tc.entities, Graph: g, Gold: gold})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Guidance) != tc.want {
				t.Errorf("%d guidance entities %q, want %d", len(res.Guidance), res.Guidance, tc.want)
			}
			if _, ok := res.Timings[StageGuide]; !ok {
				t.Errorf("no %s timing: guidance did not run", StageGuide)
			}
			if len(res.Answers) == 0 || res.Answers[0].Name != tc.answer {
				t.Errorf("answers %+v, want %s first", res.Answers, tc.answer)
			}
		})
	}
}

// demoGNN returns the demo KG, the test encoder and a small untrained
// Triple-GNN for it.
func demoGNN(t *testing.T) (*kg.Graph, *wordvec.Encoder, *tripgnn.Model) {
	t.Helper()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	m, err := tripgnn.New(tripgnn.Config{EncoderName: enc.Name(), EncoderDim: enc.Dim(), Layers: 2, Width: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return g, enc, m
}
