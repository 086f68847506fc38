package tracing

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

// TestPerGraphStrategies traces two candidate graphs with strategies of
// their own: each is searched as if traced alone with its strategy, and
// Request.Strategy applies to all only when Strategies is nil.
func TestPerGraphStrategies(t *testing.T) {
	g, err := kg.ReadTSV(strings.NewReader("Rome\tairport\tFiumicino\nRome\tairports\tCiampino\nParis\tairport\tCDG\nParis\tairports\tOrly\n"), "airports.tsv")
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	ents, err := kgvec.Build(context.Background(), g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(g, enc, ents, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	graphs := []schema.Graph{schema.Path("Rome", "airport"), schema.Path("Paris", "airport")}
	// evidence lists each graph's matched tails.
	evidence := func(res *Result) [2][]string {
		var out [2][]string
		for _, m := range res.Evidence {
			out[m.Graph] = append(out[m.Graph], g.EntityName(g.Triple(m.Triple).Tail))
		}
		slices.Sort(out[0])
		slices.Sort(out[1])
		return out
	}
	P, B := schema.Precision, schema.Breadth
	for _, tc := range []struct {
		name       string
		strategy   schema.Strategy
		strategies []schema.Strategy
		want       [2][]string
	}{
		{"one strategy for all: precision", P, nil, [2][]string{{"Fiumicino"}, {"CDG"}}},
		{"one strategy for all: breadth", B, nil, [2][]string{{"Ciampino", "Fiumicino"}, {"CDG", "Orly"}}},
		{"breadth then precision", P, []schema.Strategy{B, P}, [2][]string{{"Ciampino", "Fiumicino"}, {"CDG"}}},
		{"precision then breadth", B, []schema.Strategy{P, B}, [2][]string{{"Fiumicino"}, {"CDG", "Orly"}}},
	} {
		res := mustTrace(t, tr, Request{Graphs: graphs, Strategy: tc.strategy, Strategies: tc.strategies})
		if got := evidence(res); !slices.Equal(got[0], tc.want[0]) || !slices.Equal(got[1], tc.want[1]) {
			t.Errorf("%s: evidence per graph %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, err := tr.Trace(context.Background(), Request{Graphs: graphs, Strategies: []schema.Strategy{B}}); err == nil {
		t.Error("one strategy for two graphs: no error")
	}
}
