package sft

import (
	"fmt"
	"testing"

	"github.com/stem-kgqa/stem/train/dataset"
)

func BenchmarkVerbalize(b *testing.B) {
	rels := []string{"nationality", "starred_actors", "location.location.containedby", "__people__person__place_of_birth", "people.person.sibling_s"}
	for i := 0; b.Loop(); i++ {
		Verbalize("[ENT1]", rels[i%len(rels)], "frederica_of_mecklenburg-strelitz")
	}
}

// BenchmarkBuild exports 1,000 two-hop items (both targets read back).
func BenchmarkBuild(b *testing.B) {
	items := make([]dataset.Item, 1000)
	for i := range items {
		it := exportItems()[0]
		it.ID = fmt.Sprint(i)
		it.Question = fmt.Sprintf("what is the nationality of person_%d 's couple ?", i)
		it.Masked[0][0] = fmt.Sprintf("person_%d", i)
		it.Assertions[0] = fmt.Sprintf("The spouse of person %d is [ENT1].", i)
		items[i] = it
	}
	for b.Loop() {
		if s := Build(items); len(s.SAGB) != 1000 {
			b.Fatal(len(s.SAGB))
		}
	}
}
