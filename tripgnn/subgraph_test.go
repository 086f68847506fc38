package tripgnn

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

func demoKG(t testing.TB) *kg.Graph {
	t.Helper()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestSubgraphCap(t *testing.T) {
	g := demoKG(t)
	us, ok := g.Entity("United_States")
	if !ok {
		t.Fatal("no United_States in the demo KG")
	}
	if g.Degree(us) < 60 {
		t.Fatalf("United_States has degree %d, the test needs a hub", g.Degree(us))
	}
	for _, tc := range []struct {
		hops, nb, nodes int
		wantEnts        int
	}{
		{1, 10, 0, 11},    // the hub plus 10 sampled neighbours
		{1, 1000, 0, 0},   // 0: the whole 1-hop neighbourhood, checked below
		{2, 1000, 30, 30}, // the node cap binds
	} {
		opt := SubgraphOptions{MaxNeighbors: tc.nb, MaxNodes: tc.nodes}
		ents, triples, err := Subgraph(g, []int32{us}, tc.hops, opt)
		if err != nil {
			t.Fatal(err)
		}
		ents2, triples2, _ := Subgraph(g, []int32{us}, tc.hops, opt)
		if !slices.Equal(ents, ents2) || !slices.Equal(triples, triples2) {
			t.Errorf("%+v: two runs differ", tc)
		}
		want := tc.wantEnts
		if want == 0 {
			nb := map[int32]bool{us: true}
			for _, tr := range append(slices.Clone(g.Out(us)), g.In(us)...) {
				nb[g.Triple(tr).Head], nb[g.Triple(tr).Tail] = true, true
			}
			want = len(nb)
		}
		if len(ents) != want || ents[0] != us {
			t.Errorf("%+v: %d entities (first %d), want %d starting with the seed", tc, len(ents), ents[0], want)
		}
		in := map[int32]bool{}
		for _, e := range ents {
			in[e] = true
		}
		for _, tr := range triples {
			if kt := g.Triple(tr); !in[kt.Head] || !in[kt.Tail] {
				t.Errorf("%+v: triple %d leaves the subgraph", tc, tr)
			}
		}
	}
	if _, _, err := Subgraph(g, nil, 2, SubgraphOptions{}); !errors.Is(err, ErrNoQuestionEntity) {
		t.Errorf("no seeds: %v, want ErrNoQuestionEntity", err)
	}
}

func TestBuildBadInput(t *testing.T) {
	g := demoKG(t)
	b := NewBuilder(wordvec.New(nil, wordvec.Options{}), SubgraphOptions{})
	ctx := context.Background()
	sg := schema.Path("Inception", "directed_by")
	if _, err := b.Build(ctx, g, []string{"Nowhere_Land"}, sg, "q"); !errors.Is(err, ErrNoQuestionEntity) {
		t.Errorf("unknown entity: %v, want ErrNoQuestionEntity", err)
	}
	gb := kg.NewBuilder()
	gb.Add("A", "r", "B")
	other, _ := gb.Build()
	if _, err := b.Build(ctx, other, []string{"Inception"}, sg, "q"); !errors.Is(err, ErrNoQuestionEntity) {
		t.Errorf("entity of another graph: %v, want ErrNoQuestionEntity", err)
	}
	if _, err := b.Build(ctx, nil, []string{"Inception"}, sg, "q"); err == nil {
		t.Error("nil graph: no error")
	}
	if _, err := b.Build(ctx, g, []string{"Inception"}, schema.Graph{}, "q"); err == nil {
		t.Error("empty schema graph: no error")
	}
}
