package eval

import (
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/schema"
)

func TestAttribute(t *testing.T) {
	// Who directed the film Tom Hanks starred in? Gold path
	// Tom Hanks -starred_actors^-> film -directed_by-> Zemeckis.
	q := benchmark.Question{
		Answers:  []string{"Robert Zemeckis"},
		Entities: []string{"Tom Hanks"},
		Gold: []schema.GoldPath{{Start: "Tom Hanks", Steps: []schema.Step{
			{Rel: "starred_actors", Dir: schema.Inverse}, {Rel: "directed_by", Dir: schema.Forward}}}},
	}
	goodPlan := [][]string{{"starred_actors", "directed_by"}}
	right := StageOutput{Linked: []string{"Tom Hanks"}, Plans: goodPlan, Anchors: []string{"Tom Hanks"},
		Candidates: []string{"Ron Howard"}}
	goldEv := [][3]string{{"Forrest Gump", "starred_actors", "Tom Hanks"}, {"Forrest Gump", "directed_by", "Robert Zemeckis"}}
	noPath := q
	noPath.Gold = nil
	with := func(f func(*StageOutput)) *StageOutput {
		o := right
		f(&o)
		return &o
	}
	cases := []struct {
		name     string
		q        benchmark.Question
		out      *StageOutput
		evidence [][3]string
		want     string
	}{
		{"no stage outputs", q, nil, goldEv, FailUnknown},
		{"linking: nothing linked", q, &StageOutput{}, nil, FailLinking},
		{"linking: wrong entity, though everything after is wrong too", q,
			&StageOutput{Linked: []string{"Tom Cruise"}}, nil, FailLinking},
		{"linking checked without a gold path", noPath, &StageOutput{Linked: []string{"Tom Cruise"}}, nil, FailLinking},
		{"planning unchecked without a gold path", noPath, &right, nil, FailUnknown},
		{"planning: no plan", q, with(func(o *StageOutput) { o.Plans = nil }), goldEv, FailPlanning},
		{"planning: no planner ran (a peer standing alone), never blamed", q,
			with(func(o *StageOutput) { o.Plans, o.Unplanned = nil, true }), nil, FailTracing},
		{"planning: path out of order", q, with(func(o *StageOutput) { o.Plans = [][]string{{"directed_by", "starred_actors"}} }), goldEv, FailPlanning},
		{"planning: a constraint around the path is fine", q,
			with(func(o *StageOutput) { o.Plans = [][]string{{"x"}, {"starred_actors", "release_year", "directed_by"}} }), nil, FailTracing},
		{"anchoring: wrong anchor beats missing evidence", q,
			with(func(o *StageOutput) { o.Anchors = []string{"Tom Cruise"} }), nil, FailAnchoring},
		{"tracing: no gold answer in evidence or candidates", q, &right,
			[][3]string{{"Apollo 13", "starred_actors", "Tom Hanks"}, {"Apollo 13", "directed_by", "Ron Howard"}}, FailTracing},
		{"answer selection: gold in evidence", q, &right, goldEv, FailAnswerSelection},
		{"answer selection: gold among candidates", q,
			with(func(o *StageOutput) { o.Candidates = []string{"Ron Howard", "robert zemeckis"} }), nil, FailAnswerSelection},
		{"start-less gold path uses the topic entities", func() benchmark.Question {
			q2 := q
			q2.Gold = []schema.GoldPath{{Steps: q.Gold[0].Steps}}
			return q2
		}(), with(func(o *StageOutput) { o.Anchors = nil }), goldEv, FailAnchoring},
	}
	for _, c := range cases {
		if got := Attribute(c.q, c.out, c.evidence); got != c.want {
			t.Errorf("%s: Attribute = %q, want %q", c.name, got, c.want)
		}
	}
}
