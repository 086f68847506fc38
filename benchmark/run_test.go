package benchmark

import (
	"context"
	"reflect"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

func TestAnswerable(t *testing.T) {
	b := kg.NewBuilder()
	for _, tr := range [][3]string{{"A", "r", "B"}, {"B", "r", "C"}, {"C", "r", "D"}, {"X", "r", "Y"}} {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, _ := b.Build()
	qs := []Question{
		{ID: "1", Entities: []string{"B"}, Answers: []string{"A"}, Hops: 1},      // in-edge counts
		{ID: "2", Entities: []string{"A"}, Answers: []string{"C"}, Hops: 1},      // too far
		{ID: "3", Entities: []string{"A"}, Answers: []string{"B", "C"}, Hops: 2}, // all within 2
		{ID: "4", Entities: []string{"A"}, Answers: []string{"C", "Y"}, Hops: 2}, // Y unreachable
		{ID: "5", Entities: []string{"A"}, Answers: []string{"Zed"}, Hops: 2},    // not in KG
		{ID: "6", Entities: []string{"D"}, Answers: []string{"A"}, Hops: 3},
	}
	kept, dropped, err := Answerable(context.Background(), g, qs)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, q := range kept {
		ids = append(ids, q.ID)
	}
	if dropped != 3 || !reflect.DeepEqual(ids, []string{"1", "3", "6"}) {
		t.Errorf("kept %v, dropped %d", ids, dropped)
	}
}

func TestReadRoGFixture(t *testing.T) {
	gp := map[string][][]string{"T-1": {{"film.film.directed_by", "people.person.spouse"}}}
	qs, err := LoadRoG(context.Background(), "testdata/rog_mini.jsonl", gp)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 3 || qs[1].Answers[0] != "Emma Thomas" || qs[1].Hops != 2 || qs[1].Graph.NumTriples() != 3 || qs[2].Graph.NumTriples() != 0 {
		t.Fatalf("LoadRoG = %+v", qs)
	}
}

func TestGoldEnds(t *testing.T) {
	b := kg.NewBuilder()
	for _, tr := range [][3]string{{"A", "r", "B"}, {"A", "r", "C"}, {"B", "s", "D"}, {"E", "s", "C"}, {"A", "t", "F"}} {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, _ := b.Build()
	name := func(ids []int32) []string {
		var out []string
		for _, e := range ids {
			out = append(out, g.EntityName(e))
		}
		return out
	}
	path := func(start string, steps ...schema.Step) schema.GoldPath {
		return schema.GoldPath{Start: start, Steps: steps}
	}
	tests := []struct {
		name string
		q    Question
		want []string
	}{
		{"one hop reaches the answer and its sibling", Question{Entities: []string{"A"}, Gold: []schema.GoldPath{path("", schema.Step{Rel: "r"})}}, []string{"B", "C"}},
		{"two hops, the second inverse", Question{Entities: []string{"A"}, Gold: []schema.GoldPath{path("", schema.Step{Rel: "r"}, schema.Step{Rel: "s", Dir: schema.Inverse})}}, []string{"E"}},
		{"a relation the KG lacks", Question{Entities: []string{"A"}, Gold: []schema.GoldPath{path("", schema.Step{Rel: "zz"})}}, nil},
		{"no gold path", Question{Entities: []string{"A"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := name(GoldEnds(g, tc.q)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("GoldEnds = %v, want %v", got, tc.want)
			}
		})
	}
}
