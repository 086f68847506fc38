package plan_test

import (
	"context"
	"fmt"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// directedBy plans every question as "who directed ENTITY".
type directedBy struct{}

func (directedBy) Plan(_ context.Context, in projection.Input) (projection.Projection, error) {
	return projection.Projection{Candidates: []projection.Candidate{{Graph: schema.Path(in.Entities[0], "directed_by"), Score: 1}}}, nil
}

// The pipeline answers a question with the evidence behind the answer.
func ExamplePipeline_Answer() {
	ctx := context.Background()
	g, _ := kg.ReadTSV(demo.KG(), demo.KGName)
	enc := wordvec.New(nil, wordvec.Options{}) // character n-grams only: no vector file needed
	p, _, err := plan.Open(ctx, plan.DefaultSettings(), plan.Assets{Graph: g, Encoder: enc, AutoPlanner: directedBy{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := p.Answer(ctx, plan.Query{Question: "who directed inception ?", Entities: []string{"Inception"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range r.Answers {
		fmt.Println(a.Name, "because", a.Chains[0])
	}
	// Output: Christopher_Nolan because Inception -> directed_by -> Christopher_Nolan
}

// firstEdge is a toy retrieval strategy: the first out-edge of the first
// anchor, whatever the question.
type firstEdge struct{}

func (firstEdge) Retrieve(_ context.Context, req plan.Request) (*plan.Evidence, error) {
	res := &tracing.Result{}
	if len(req.Anchors) > 0 {
		if out := req.Graph.Out(req.Anchors[0]); len(out) > 0 {
			t := req.Graph.Triple(out[0])
			res.Evidence = []tracing.Match{{Triple: out[0], TScore: 1}}
			res.Answers = []tracing.Answer{{Entity: t.Tail, Name: req.Graph.EntityName(t.Tail), Score: 1}}
		}
	}
	return &plan.Evidence{Trace: res}, nil
}

// A new retrieval strategy is one Register call; `stem ask --retriever
// NAME`, `stem eval` and `stem compare` configurations then find it by name.
func ExampleRegistry_Register() {
	reg := plan.DefaultRetrievers()
	err := reg.Register("first-edge", "the first out-edge of the anchor (a toy)", func(context.Context, plan.Env) (plan.Retriever, error) {
		return firstEdge{}, nil
	})
	fmt.Println(err, reg.Names())
	ctx := context.Background()
	g, _ := kg.ReadTSV(demo.KG(), demo.KGName)
	s := plan.DefaultSettings()
	s.Retriever = "first-edge"
	p, _, err := plan.Open(ctx, s, plan.Assets{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{}), AutoPlanner: directedBy{}, Retrievers: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ := p.Answer(ctx, plan.Query{Question: "who directed inception ?", Entities: []string{"Inception"}})
	fmt.Println(r.Answers[0].Name)
	// Output:
	// <nil> [stem first-edge]
	// Christopher_Nolan
}
