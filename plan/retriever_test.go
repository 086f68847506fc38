package plan

import (
	"bytes"
	"context"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/tracing"
)

func TestRetrieverOnDemo(t *testing.T) {
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := benchmark.ReadPathQuestion(ctx, bytes.NewReader(demo.Questions()), demo.QuestionsName)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	r, err := NewRetriever(ctx, g, nil, enc, tracing.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eval.Run(ctx, qs, eval.Oracle{}, r, eval.Options{Graph: g})
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != len(qs) || rep.Hit != 100 || rep.Hits1 != 100 || rep.Coverage != 100 || rep.Unbacked != 0 {
		t.Errorf("oracle on the demo questions: n %d hit %.2f hits@1 %.2f coverage %.2f unbacked %d; want %d, 100, 100, 100, 0",
			rep.N, rep.Hit, rep.Hits1, rep.Coverage, rep.Unbacked, len(qs))
	}
}

func TestRetrieverPerQuestionGraph(t *testing.T) {
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	r, err := NewRetriever(ctx, nil, nil, enc, tracing.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	q, err := benchmark.ParsePathQuestion("who directed inception ?\tChristopher_Nolan(Christopher_Nolan/)\tInception#directed_by#Christopher_Nolan")
	if err != nil {
		t.Fatal(err)
	}
	p, err := eval.Oracle{}.Plan(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Answer(ctx, q, p); err == nil {
		t.Error("a question without a KG should be an error when the retriever has no shared KG")
	}
	q.Graph = g
	pred, err := r.Answer(ctx, q, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(pred.Answers) != 1 || pred.Answers[0] != "Christopher_Nolan" || len(pred.EvidenceTriples) == 0 {
		t.Errorf("prediction = %+v", pred)
	}
}
