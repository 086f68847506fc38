package train

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/train/dataset"
	"github.com/stem-kgqa/stem/tripgnn"
)

// TestLabeledDataMatchesLabeled checks that an item file's item gives the
// same example as the benchmark question it was made from: same subgraph,
// same relation and schema encodings, same labels.
func TestLabeledDataMatchesLabeled(t *testing.T) {
	g, qs := demoData(t)
	var q benchmark.Question
	for _, x := range qs {
		if x.Text == "who directed inception ?" {
			q = x
		}
	}
	if q.ID == "" {
		t.Fatal("demo has no question \"who directed inception ?\"")
	}
	it := dataset.Item{
		ID: q.ID, Question: q.Text, Entities: q.Entities, Answers: q.Answers,
		Triples:      [][3]string{{"Inception", "directed_by", "Christopher_Nolan"}},
		Masked:       [][3]string{{"Inception", "directed_by", "[ENT1]"}},
		Placeholders: map[string]string{"[ENT1]": "Christopher_Nolan"},
		AnswerSlot:   "[ENT1]", Hops: 1, Strategy: dataset.Precision,
	}
	ctx := context.Background()
	b := testBuilder()
	want, err := Labeled(ctx, b, g, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := LabeledData(ctx, b, g, &it)
	if err != nil {
		t.Fatal(err)
	}
	we, ge := want.Example, got.Example
	if got.ID != want.ID || got.NumSchema != want.NumSchema || !slices.Equal(got.Entities, want.Entities) || !slices.Equal(got.Triples, want.Triples) {
		t.Errorf("item %s %d %v %v, want %s %d %v %v", got.ID, got.NumSchema, got.Entities, got.Triples, want.ID, want.NumSchema, want.Entities, want.Triples)
	}
	if !slices.Equal(ge.SchemaVecs, we.SchemaVecs) || !slices.Equal(ge.RelVecs, we.RelVecs) || !slices.Equal(ge.Labels, we.Labels) ||
		!slices.Equal(ge.Heads, we.Heads) || !slices.Equal(ge.Question, we.Question) {
		t.Error("the item's example differs from the question's")
	}
	if gold := names(g, got.Gold); !slices.Equal(gold, []string{"Christopher_Nolan", "Inception"}) {
		t.Errorf("gold %v", gold)
	}
}

func TestLabeledData(t *testing.T) {
	g, _ := demoData(t)
	ctx := context.Background()
	b := testBuilder()
	// Two chains of two hops: four masked triples, but the subgraph is
	// two hops deep.
	two := dataset.Item{
		ID: "two", Question: "where were the directors of inception born ?", Entities: []string{"Inception"},
		Triples: [][3]string{{"Inception", "directed_by", "Christopher_Nolan"}, {"Christopher_Nolan", "place_of_birth", "London"},
			{"Inception", "written_by", "Christopher_Nolan"}},
		Masked: [][3]string{{"Inception", "directed_by", "[ENT1]"}, {"[ENT1]", "place_of_birth", "[ENT2]"},
			{"Inception", "written_by", "[ENT1]"}},
		AnswerSlot: "[ENT2]", Hops: 2, Strategy: dataset.Precision,
	}
	it, err := LabeledData(ctx, b, g, &two)
	if err != nil {
		t.Fatal(err)
	}
	inc, _ := g.Entity("Inception")
	ents, _, err := tripgnn.Subgraph(g, []int32{inc}, 2, b.Opt)
	if err != nil {
		t.Fatal(err)
	}
	if ents3, _, _ := tripgnn.Subgraph(g, []int32{inc}, 3, b.Opt); len(ents3) == len(ents) {
		t.Fatalf("the demo's 2- and 3-hop subgraphs of Inception have the same size (%d): the test cannot tell them apart", len(ents))
	}
	if !slices.Equal(it.Entities, ents) || it.NumSchema != 3 {
		t.Errorf("subgraph of %d entities and %d schema triples, want the 2-hop one (%d) and 3", len(it.Entities), it.NumSchema, len(ents))
	}
	if gold := names(g, it.Gold); !slices.Equal(gold, []string{"Christopher_Nolan", "Inception", "London"}) {
		t.Errorf("gold %v", gold)
	}

	// SubgraphEntities, when set, are the labels.
	sub := two
	sub.SubgraphEntities = []string{"London", "not_in_the_kg"}
	it, err = LabeledData(ctx, b, g, &sub)
	if err != nil {
		t.Fatal(err)
	}
	var pos []int32
	for i, y := range it.Example.Labels {
		if y == 1 {
			pos = append(pos, it.Entities[i])
		}
	}
	if got := names(g, pos); !slices.Equal(got, []string{"London"}) {
		t.Errorf("labelled %v, want [London]", got)
	}

	dropped := dataset.Item{ID: "d", Entities: []string{"Inception"}, Strategy: dataset.Precision, Dropped: "no answer within 3 hops"}
	noEntity := two
	noEntity.ID, noEntity.Entities = "e", []string{"nobody"}
	noLabel := two
	noLabel.ID, noLabel.SubgraphEntities = "l", []string{"nobody"}
	for _, tc := range []struct {
		it   dataset.Item
		want error
	}{
		{dropped, ErrDropped},
		{noEntity, tripgnn.ErrNoQuestionEntity},
		{noLabel, errNoGold},
	} {
		if _, err := LabeledData(ctx, b, g, &tc.it); !errors.Is(err, tc.want) {
			t.Errorf("item %s: error %v, want %v", tc.it.ID, err, tc.want)
		}
	}
	items, skipped, err := LabeledDataAll(ctx, b, g, []dataset.Item{two, dropped, noEntity, sub, noLabel}, nil)
	if err != nil || len(items) != 2 || skipped != 3 || items[0].ID != "two" || items[1].ID != "two" {
		t.Errorf("LabeledDataAll: %d items, %d skipped, %v", len(items), skipped, err)
	}
}
