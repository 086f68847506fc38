package tracing

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

// A hub step's cuts (the budget's by name, capWeak's of the weak edges)
// give the same results from the tracer's keepCache as computed, traced
// again with the same tracer, and as a tracer without the cache.
func TestKeepCacheSameResults(t *testing.T) {
	ts := [][3]string{{"sven", "people.person.nationality", "norway"}}
	for i := 0; i < 5000; i++ {
		ts = append(ts, [3]string{"norway", "location.country.official_language", fmt.Sprintf("language %d", i)})
		ts = append(ts, [3]string{"norway", "location.country.capital", fmt.Sprintf("city %d", i)})
	}
	g, err := kg.GraphOf(ts)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	for _, strat := range []schema.Strategy{schema.Breadth, schema.Precision} {
		for _, keep := range []int{0, 7, 100, 6000} {
			req := Request{Graphs: []schema.Graph{schema.Path("sven", "people.person.nationality", "film.film.directed_by")}, Strategy: strat, Mentions: []string{"sven"}}
			cfg := DefaultConfig()
			cfg.MaxKeep, cfg.MaxScan, cfg.MaxWeak, cfg.MaxFallback = keep, 0, 50, 0
			var res []*Result
			for i := 0; i < 3; i++ {
				tr, err := New(g, enc, nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					tr.kept = nil
				}
				res = append(res, mustTrace(t, tr, req))
				if i == 2 {
					if keep > 0 && len(tr.kept.m) == 0 {
						t.Errorf("%v keep %d: no cut kept", strat, keep)
					}
					res = append(res, mustTrace(t, tr, req))
				}
			}
			for i, r := range res[1:] {
				if !reflect.DeepEqual(r.Answers, res[0].Answers) || !reflect.DeepEqual(r.Evidence, res[0].Evidence) || !reflect.DeepEqual(r.Problems, res[0].Problems) {
					t.Errorf("%v keep %d: run %d: %d answers, %d evidence; without the cache %d, %d", strat, keep, i+1,
						len(r.Answers), len(r.Evidence), len(res[0].Answers), len(res[0].Evidence))
				}
			}
			t.Logf("%v keep %d: %d answers", strat, keep, len(res[0].Answers))
		}
	}
}
