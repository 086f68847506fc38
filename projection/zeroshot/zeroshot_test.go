package zeroshot

import (
	"context"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

func TestPlanDemo(t *testing.T) {
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ctx, g, wordvec.New(nil, wordvec.Options{}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	// The spelling-only test encoder favours long paths; one hop isolates
	// the direction and strategy logic.
	p1, err := New(ctx, g, wordvec.New(nil, wordvec.Options{}), Config{MaxHops: 1})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p      *Planner
		q, ent string
		want   string
		strat  schema.Strategy
	}{
		{p, "who directed inception ?", "Inception", "directed_by >", schema.Precision},
		{p1, "who starred in inception ?", "Inception", "starred_actors >", schema.Breadth},
		{p1, "which films did christopher nolan direct ?", "Christopher_Nolan", "directed_by <", schema.Breadth},
	}
	for _, tt := range tests {
		pr, err := tt.p.Predict(ctx, tt.q, []string{tt.ent}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range pr.Paths {
			s := ""
			for _, st := range c.Steps {
				s += st.Rel + " " + map[bool]string{true: "<", false: ">"}[st.Dir == 1]
			}
			got = append(got, s)
		}
		if len(got) == 0 || got[0] != tt.want || pr.Strategy != tt.strat {
			t.Errorf("%q: paths %v strategy %v; want first %q, %v", tt.q, got, pr.Strategy, tt.want, tt.strat)
		}
	}
	// The hub is capped, not slow, and still planned.
	pr, err := p.Predict(ctx, "which films were made in the united states ?", []string{demo.Hub}, nil)
	if err != nil || len(pr.Paths) == 0 {
		t.Errorf("hub: %v, %d paths", err, len(pr.Paths))
	}
	for _, in := range []projection.Input{
		{Question: "", Entities: []string{"Inception"}},
		{Question: "who directed it"},
		{Question: "who directed Nowhere", Entities: []string{"Nowhere_Film"}},
	} {
		if _, err := p.Plan(ctx, in); err == nil {
			t.Errorf("Plan(%+v): no error", in)
		}
	}
}
