package benchmark

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/schema"
)

func TestReadSynth(t *testing.T) {
	in := `{"id":"c-1","kind":"conjunction-cvt","question":"what is the jurisdiction of the positions of Cal Poe with title Mayor ?","entities":["Cal Poe","Mayor"],"answers":["Lyon"],"graph":{"Triples":[{"Head":"Cal Poe","Rel":"held","Tail":"[ENT1]"},{"Head":"[ENT1]","Rel":"jurisdiction","Tail":"[ENT2]"},{"Head":"[ENT1]","Rel":"title","Tail":"Mayor"}],"Answer":"[ENT2]"}}
{"id":"c-2","kind":"superlative","question":"what is the earliest team of the teams of Ann ?","entities":["Ann"],"answers":["FC"],"graph":{"Triples":[{"Head":"Ann","Rel":"teams","Tail":"[ENT1]"},{"Head":"[ENT1]","Rel":"team","Tail":"[ENT2]"}],"Answer":"[ENT2]","Constraints":[{"Kind":"order","Value":"first","Text":"earliest"}]}}
`
	qs, err := ReadSynth(context.Background(), strings.NewReader(in), "c.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 {
		t.Fatalf("%d questions", len(qs))
	}
	q := qs[0]
	wantGold := []schema.GoldPath{
		{Start: "Cal Poe", Steps: []schema.Step{{Rel: "held"}, {Rel: "jurisdiction"}}},
		{Start: "Mayor", Steps: []schema.Step{{Rel: "title", Dir: schema.Inverse}, {Rel: "jurisdiction"}}},
	}
	if q.Type != "conjunction-cvt" || q.Hops != 2 || !reflect.DeepEqual(q.Gold, wantGold) || len(q.GoldGraphs) != 1 || len(q.GoldGraphs[0].Triples) != 3 {
		t.Errorf("question %+v", q)
	}
	if c := qs[1].GoldGraphs[0].Constraints; len(c) != 1 || c[0].Kind != "order" || c[0].Value != "first" {
		t.Errorf("constraints %v", c)
	}
	for _, bad := range []string{
		`{"id":"x","question":"q","entities":["A"],"answers":["B"],"graph":{"Triples":[]}}`,
		`{"id":"x","question":"q","entities":["C"],"answers":["B"],"graph":{"Triples":[{"Head":"A","Rel":"r","Tail":"[ENT1]"}]}}`,
		`not json`,
	} {
		if _, err := ReadSynth(context.Background(), strings.NewReader(bad), "bad.jsonl"); !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: err %v, want ErrSyntax", bad, err)
		}
	}
}
