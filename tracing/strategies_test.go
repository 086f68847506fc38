package tracing

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

// TestPerGraphStrategies traces two candidate graphs with strategies of
// their own: each is searched as if traced alone with its strategy, and
// Request.Strategy applies to all only when Strategies is nil.
func TestPerGraphStrategies(t *testing.T) {
	g, tr := tsvTracer(t, "Rome\tairport\tFiumicino\nRome\tairports\tCiampino\nParis\tairport\tCDG\nParis\tairports\tOrly\n", DefaultConfig())
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

// TestAgreementBreaksTies checks that among answers of equal score the one
// more candidate graphs bind comes first, and that the question's own
// entity, which back-and-forth readings all reach, gains nothing from it.
func TestAgreementBreaksTies(t *testing.T) {
	_, tr := tsvTracer(t, "Film\tstarring\tAnn\nFilm\tstarring\tBen\nFilm\tstarring\tCid\nFilm\tlead\tBen\n"+
		"Adam\tdirected\tMovie\nAdam\tproduced\tMovie\nAdam\twrote\tMovie\nZoe\twrote\tMovie\n", DefaultConfig())
	for _, tc := range []struct {
		name   string
		graphs []schema.Graph
		want   string
	}{
		{"one graph: name order", []schema.Graph{schema.Path("Film", "starring")}, "Ann,Ben,Cid"},
		{"a second graph agrees on Ben", []schema.Graph{schema.Path("Film", "starring"), schema.Path("Film", "lead")}, "Ben,Ann,Cid"},
		{"the question's entity gains nothing", []schema.Graph{schema.Path("Adam", "directed", "wrote"), schema.Path("Adam", "produced", "wrote")}, "Zoe,Adam"},
	} {
		res := mustTrace(t, tr, Request{Graphs: tc.graphs, Strategy: schema.Breadth, Ranked: true})
		if got := rankedNames(res); got != tc.want {
			t.Errorf("%s: answers %s, want %s", tc.name, got, tc.want)
		}
	}
}

// tsvTracer returns a KG read from tab-separated triples and a tracer over
// it with the test encoder.
func tsvTracer(t *testing.T, triples string, cfg Config) (*kg.Graph, *Tracer) {
	t.Helper()
	g, err := kg.ReadTSV(strings.NewReader(triples), "test.tsv")
	if err != nil {
		t.Fatal(err)
	}
	return g, tracerOver(t, g, wordvec.New(nil, wordvec.Options{}), cfg)
}
