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
	// Similarity decides between airport and airports (SoftSymbols), so
	// that Breadth has more than Precision to keep.
	cfg := DefaultConfig()
	cfg.SoftSymbols = true
	g, tr := tsvTracer(t, "Rome\tairport\tFiumicino\nRome\tairports\tCiampino\nParis\tairport\tCDG\nParis\tairports\tOrly\n", cfg)
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

// TestOnPlan: a schema edge that names a KG relation matches only that
// relation's edges where the entity has some; a resembling relation
// (currency_used beside languages_spoken, both "location country ...")
// binds answers only when similarity decides (SoftSymbols), or where the
// entity has no edge of the named relation.
func TestOnPlan(t *testing.T) {
	kb := "Jamaica\tlocation.country.languages_spoken\tJamaican English\n" +
		"Jamaica\tlocation.country.languages_spoken\tJamaican Creole\n" +
		"Jamaica\tlocation.country.currency_used\tJamaican dollar\n" +
		"Haiti\tlocation.country.official_language\tFrench\n" +
		"Haiti\tlocation.country.currency_used\tGourde\n"
	for _, tc := range []struct {
		name  string
		soft  bool
		theta float32
		from  string
		want  string
	}{
		{"on the plan", false, 0.6, "Jamaica", "Jamaican Creole,Jamaican English"},
		{"soft symbols admit the resembling relation", true, 0.3, "Jamaica", "Jamaican Creole,Jamaican English,Jamaican dollar"},
		{"no edge of the relation: similarity decides", false, 0.6, "Haiti", "French"},
	} {
		cfg := DefaultConfig()
		cfg.SoftSymbols, cfg.Theta = tc.soft, tc.theta
		_, tr := tsvTracer(t, kb, cfg)
		res := mustTrace(t, tr, Request{Graphs: []schema.Graph{schema.Path(tc.from, "location.country.languages_spoken")}, Strategy: schema.Breadth})
		names := answerNames(res)
		slices.Sort(names)
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("%s: answers %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestVariantGroups: under Ranked, answers come from the first group of
// graphs that binds any; a planner's variant of the first graph (one fact
// recorded under two relations) binds answers beside it.
func TestVariantGroups(t *testing.T) {
	_, tr := tsvTracer(t, "Iran\tlocation.country.languages_spoken\tPersian\n"+
		"Arabic\tlanguage.human_language.countries_spoken_in\tIran\n"+
		"Iran\tlocation.country.capital\tTehran\n", DefaultConfig())
	graphs := []schema.Graph{schema.Path("Iran", "location.country.languages_spoken"),
		schema.Path("Iran", "language.human_language.countries_spoken_in"), schema.Path("Iran", "location.country.capital")}
	for _, tc := range []struct {
		name   string
		groups []int
		want   string
	}{
		{"each graph its own group", nil, "Persian"},
		{"the second graph a variant of the first", []int{0, 0, 2}, "Persian,Arabic"},
	} {
		res := mustTrace(t, tr, Request{Graphs: graphs, Strategy: schema.Breadth, Ranked: true, Groups: tc.groups})
		if got := rankedNames(res); got != tc.want {
			t.Errorf("%s: answers %s, want %s", tc.name, got, tc.want)
		}
	}
	if _, err := tr.Trace(context.Background(), Request{Graphs: graphs, Groups: []int{0}}); err == nil {
		t.Error("one group for three graphs: no error")
	}
}
