package tripgnn

import (
	"math"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/kg"
)

func TestTopK(t *testing.T) {
	nan := float32(math.NaN())
	probs := []float32{0.1, 0.9, nan, 0.5, 0.9, 0.2}
	for _, c := range []struct {
		k    int
		want []int32
	}{
		{0, []int32{}},
		{1, []int32{1}},
		{3, []int32{1, 4, 3}}, // tie 0.9: lower id first
		{6, []int32{1, 4, 3, 5, 0, 2}},
		{10, []int32{1, 4, 3, 5, 0, 2}}, // clipped; NaN last
		{-1, []int32{}},
	} {
		if got := TopK(probs, c.k); !slices.Equal(got, c.want) {
			t.Errorf("TopK(k=%d) = %v, want %v", c.k, got, c.want)
		}
	}
}

func TestGuidance(t *testing.T) {
	b := kg.NewBuilder()
	// Entity ids follow first appearance: a=0 b=1 c=2 d=3.
	b.Add("a", "r", "b") // triple 0
	b.Add("b", "s", "c") // 1
	b.Add("c", "r", "d") // 2
	b.Add("a", "s", "c") // 3
	b.Add("d", "r", "a") // 4
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ents, triples := Guidance(g, []int32{2, 0, 1, 2, 99})
	if !slices.Equal(ents, []int32{0, 1, 2}) || !slices.Equal(triples, []int32{0, 1, 3}) {
		t.Errorf("Guidance = %v, %v; want [0 1 2], [0 1 3]", ents, triples)
	}
	heads, _, tails := g.Columns()
	ents2, triples2 := GuidanceEdges(g.NumEntities(), heads, tails, []int32{2, 0, 1, 2, 99})
	if !slices.Equal(ents2, ents) || !slices.Equal(triples2, triples) {
		t.Errorf("GuidanceEdges = %v, %v; want %v, %v", ents2, triples2, ents, triples)
	}
	m := newTest(t, Config{})
	if got := m.K(3); got != 12 {
		t.Errorf("K(3) = %d, want 12", got)
	}
}
