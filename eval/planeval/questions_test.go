package planeval

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/dataset"
)

func TestItemQuestion(t *testing.T) {
	it := dataset.Item{ID: "x#0", Source: "synth", Question: "what is the nationality of x 's spouse ?", Entities: []string{"x"}, Answers: []string{"f", "g"},
		Masked: [][3]string{{"x", "spouse", "[ENT1]"}, {"[ENT1]", "nationality", "[ENT2]"}, {"[ENT3]", "spouse", "x"}}, AnswerSlot: "[ENT2]", Strategy: dataset.Breadth}
	pq, ok := ItemQuestion(&it)
	if !ok {
		t.Fatal("item refused")
	}
	if got := formatGold(pq.Gold); got != "spouse>nationality>" || pq.Answers != 2 || !reflect.DeepEqual(pq.Mentions, []string{"x"}) {
		t.Errorf("plan question %+v (gold %s)", pq, got)
	}
	// A chains item: paths to every answer's placeholder.
	ch := dataset.Item{ID: "q1", Source: "chains:q.txt:1", Question: "who are x 's children and spouse ?", Entities: []string{"x"}, Answers: []string{"c", "s"},
		Masked:       [][3]string{{"x", "children", "[ENT1]"}, {"[ENT2]", "spouse", "x"}},
		Placeholders: map[string]string{"[ENT1]": "c", "[ENT2]": "s"}, AnswerSlot: "[ENT1]", Strategy: dataset.Breadth}
	pq, ok = ItemQuestion(&ch)
	if got := formatGold(pq.Gold); !ok || got != "children>spouse^-1>" {
		t.Errorf("chains item: gold %s, ok %v", got, ok)
	}
	it.Dropped = "no solution"
	if _, ok := ItemQuestion(&it); ok {
		t.Error("dropped item accepted")
	}
}

func formatGold(gold [][]schema.Step) string {
	var b strings.Builder
	for _, p := range gold {
		for _, s := range p {
			b.WriteString(s.Rel)
			if s.Dir == schema.Inverse {
				b.WriteString("^-1")
			}
			b.WriteString(">")
		}
	}
	return b.String()
}
