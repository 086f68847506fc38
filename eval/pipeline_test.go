package eval

import (
	"bytes"
	"context"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
)

// oraclePipeline is the pipeline with the oracle planner over g (nil: every
// question brings its own graph).
func oraclePipeline(t *testing.T, g *kg.Graph) Pipeline {
	t.Helper()
	s := plan.DefaultSettings()
	s.Planner = "oracle"
	p, _, err := plan.Open(context.Background(), s, plan.Assets{Graph: kg.Of(g), Encoder: wordvec.New(nil, wordvec.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	return Pipeline{p}
}

func TestPipelineOnDemo(t *testing.T) {
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := benchmark.ReadPathQuestion(ctx, bytes.NewReader(demo.Questions()), demo.QuestionsName)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, qs, oraclePipeline(t, g), Options{Graph: g})
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != len(qs) || rep.Hit != 100 || rep.Hits1 != 100 || rep.Coverage != 100 || rep.Unbacked != 0 {
		t.Errorf("oracle on the demo questions: n %d hit %.2f hits@1 %.2f coverage %.2f unbacked %d; want %d, 100, 100, 100, 0",
			rep.N, rep.Hit, rep.Hits1, rep.Coverage, rep.Unbacked, len(qs))
	}
	for _, st := range []string{plan.StageLink, plan.StagePlan, plan.StageTrace, plan.StageGenerate} {
		if _, ok := rep.StageMS[st]; !ok {
			t.Errorf("no timing for stage %s in %v", st, rep.StageMS)
		}
	}
}

func TestPipelinePerQuestionGraph(t *testing.T) {
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	p := oraclePipeline(t, nil)
	q, err := benchmark.ParsePathQuestion("who directed inception ?\tChristopher_Nolan(Christopher_Nolan/)\tInception#directed_by#Christopher_Nolan")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Answer(ctx, q); err == nil {
		t.Error("a question without a KG should be an error when the pipeline has no shared KG")
	}
	q.Graph = g
	pred, err := p.Answer(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(pred.Answers) != 1 || pred.Answers[0] != "Christopher_Nolan" || len(pred.EvidenceTriples) == 0 {
		t.Errorf("prediction = %+v", pred)
	}
	// A question naming no entity of its graph is unanswered, not an error.
	q = benchmark.Question{ID: "x", Text: "zzqx wvvy ?", Answers: []string{"a"}, Graph: g}
	if pred, err := p.Answer(ctx, q); err != nil || len(pred.Answers) != 0 {
		t.Errorf("unlinkable question: %+v, %v; want no answer and no error", pred, err)
	}
}
