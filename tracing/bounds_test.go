package tracing

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

// hubGraph has "sven", whose nationality is a hub country with 10 official
// languages and 300 places in it (location.location.country, a relation
// whose text resembles the official language's), and "olle", whose country
// has only 100 residents by a relation nothing in a schema resembles.
func hubGraph(t *testing.T) *kg.Graph {
	t.Helper()
	ts := [][3]string{{"sven", "people.person.nationality", "norway"}}
	for i := range 10 {
		ts = append(ts, [3]string{"norway", "location.country.official_language", fmt.Sprintf("language %d", i)})
	}
	for i := range 300 {
		ts = append(ts, [3]string{fmt.Sprintf("place %03d", i), "location.location.country", "norway"})
	}
	ts = append(ts, [3]string{"olle", "people.person.nationality", "sweden"})
	for i := range 100 {
		ts = append(ts, [3]string{fmt.Sprintf("resident %03d", i), "zz.qq.xx", "sweden"})
	}
	g, err := kg.GraphOf(ts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// renumbered is g built from its triples in reverse order: the same KG,
// its entities and edges numbered otherwise (as a SPARQL endpoint's
// neighbourhood numbers them otherwise than the KG's file).
func renumbered(t *testing.T, g *kg.Graph) *kg.Graph {
	t.Helper()
	b := kg.NewBuilder()
	for i := g.NumTriples() - 1; i >= 0; i-- {
		tr := g.Triple(int32(i))
		b.Add(g.EntityName(tr.Head), g.RelationName(tr.Rel), g.EntityName(tr.Tail))
	}
	rev, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// Breadth keeps every edge tied at the best score and at most MaxWeak of
// the others that pass Theta; its fallback keeps the best tied edges only
// while at most MaxFallback tie. The weak edges compete only where
// similarity decides (SoftSymbols, or a relation the KG does not name): by
// default the named relation's edges alone match where the entity has
// some, so the resembling location.location.country binds no place.
func TestBreadthBounds(t *testing.T) {
	g := hubGraph(t)
	enc := wordvec.New(nil, wordvec.Options{})
	lang := Request{Graphs: []schema.Graph{schema.Path("sven", "people.person.nationality", "location.country.official_language")},
		Strategy: schema.Breadth, Mentions: []string{"sven"}}
	unmatched := Request{Graphs: []schema.Graph{schema.Path("olle", "people.person.nationality", "film.film.directed_by")},
		Strategy: schema.Breadth, Mentions: []string{"olle"}}
	count := func(res *Result, prefix string) int {
		n := 0
		for _, a := range res.Answers {
			if len(a.Name) >= len(prefix) && a.Name[:len(prefix)] == prefix {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		name                 string
		soft                 bool
		maxWeak, maxFallback int
		req                  Request
		languages, places    int
		residents            int
	}{
		{"on the plan", false, 256, 64, lang, 10, 0, 0},
		{"weak edges bounded", true, 256, 64, lang, 10, 256, 0},
		{"few weak edges", true, 5, 64, lang, 10, 5, 0},
		{"no bound", true, 0, 64, lang, 10, 300, 0},
		{"fallback flood ends the branch", false, 256, 64, unmatched, 0, 0, 0},
		{"fallback unbounded", false, 256, 0, unmatched, 0, 0, 100},
		{"fallback within the bound", false, 256, 100, unmatched, 0, 0, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxWeak, cfg.MaxFallback, cfg.SoftSymbols = tc.maxWeak, tc.maxFallback, tc.soft
			tr, err := New(g, enc, nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			res := mustTrace(t, tr, tc.req)
			if l, p, r := count(res, "language"), count(res, "place"), count(res, "resident"); l != tc.languages || p != tc.places || r != tc.residents {
				t.Errorf("answers: %d languages, %d places, %d residents; want %d, %d, %d", l, p, r, tc.languages, tc.places, tc.residents)
			}
			if tc.places > 0 && tc.places < 300 {
				// The bound keeps the best weak edges; here they tie, so the
				// first triples.
				for _, a := range res.Answers {
					if a.Name == fmt.Sprintf("place %03d", 299) {
						t.Errorf("kept place 299, a later triple than the %d first", tc.places)
					}
				}
			}
		})
	}
}

// The edges the bounds keep are chosen by the triples' names, not their
// ids: the same KG numbered in reverse (as a SPARQL endpoint's
// neighbourhood numbers it otherwise than the KG's file) keeps the same
// ones (it kept the last 256 places instead of the first).
func TestBoundsIndependentOfNumbering(t *testing.T) {
	g := hubGraph(t)
	rev := renumbered(t, g)
	enc := wordvec.New(nil, wordvec.Options{})
	req := Request{Graphs: []schema.Graph{schema.Path("sven", "people.person.nationality", "location.country.official_language")},
		Strategy: schema.Breadth, Mentions: []string{"sven"}}
	for _, tc := range []struct {
		name string
		set  func(*Config)
	}{
		{"MaxWeak", func(c *Config) { c.MaxWeak = 20 }},
		{"MaxBranch", func(c *Config) { c.MaxWeak, c.MaxBranch = 0, 15 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.set(&cfg)
			var names [2]string
			for i, g := range []*kg.Graph{g, rev} {
				tr, err := New(g, enc, nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				res := mustTrace(t, tr, req)
				for _, a := range res.Answers {
					names[i] += a.Name + ", "
				}
			}
			if names[0] != names[1] {
				t.Errorf("answers\n%s\nwith the triples numbered in reverse\n%s", names[0], names[1])
			}
		})
	}
}

// The search budget applies at every step alike: a step whose edges would
// pass MaxScan is not taken, and the edges kept past MaxKeep are dropped,
// worst first; either way the result says so.
func TestSearchBudget(t *testing.T) {
	g := hubGraph(t)
	enc := wordvec.New(nil, wordvec.Options{})
	req := Request{Graphs: []schema.Graph{schema.Path("sven", "people.person.nationality", "location.country.official_language")},
		Strategy: schema.Breadth, Mentions: []string{"sven"}}
	for _, tc := range []struct {
		name             string
		maxScan, maxKeep int
		answers          int
		hit              bool
	}{
		{"no bound", 0, 0, 266, false},
		{"within the budget", 1000, 1000, 266, false},
		// sven's one edge, then norway's 311: 312 edges scored.
		{"the hub step is not taken", 311, 0, 0, true},
		{"exactly enough", 312, 0, 266, false},
		// nationality, then the 10 languages (tied at the best) before
		// any place.
		{"keep the best", 0, 11, 10, true},
		{"keep fewer than the ties", 0, 6, 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The hub's 300 places match the planned relation only by
			// similarity: the flood the budget exists for.
			cfg := DefaultConfig()
			cfg.MaxScan, cfg.MaxKeep, cfg.SoftSymbols = tc.maxScan, tc.maxKeep, true
			tr, err := New(g, enc, nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			res := mustTrace(t, tr, req)
			if len(res.Answers) != tc.answers {
				t.Errorf("%d answers, want %d", len(res.Answers), tc.answers)
			}
			for _, a := range res.Answers {
				if tc.maxKeep > 0 && tc.maxKeep <= 11 && a.Name[:8] != "language" {
					t.Errorf("kept %q before a language", a.Name)
				}
			}
			hit := false
			for _, p := range res.Problems {
				hit = hit || strings.Contains(p, "search budget reached in 1 of 1 searches")
			}
			if hit != tc.hit {
				t.Errorf("budget problem reported: %v, want %v (problems %q)", hit, tc.hit, res.Problems)
			}
			if res.Unbacked != 0 {
				t.Errorf("%d unbacked", res.Unbacked)
			}
		})
	}
	if _, err := New(g, enc, nil, Config{MaxScan: -1}); err == nil {
		t.Error("a negative budget was accepted")
	}
}

// At an entity with thousands of edges a step scores the relations first
// and looks only at the edges of those it can select: the results are
// those of looking at every edge, for both strategies, and the same again
// when the hub's runs and far ends come from the tracer's farCache (each
// relation's run here is longer than farCacheMin).
func TestPrunedHubSteps(t *testing.T) {
	var ts [][3]string
	ts = append(ts, [3]string{"sven", "people.person.nationality", "norway"})
	for i := range 4*farCacheMin + 400 {
		rel := []string{"location.location.country", "people.person.nationality", "zz.qq.xx", "location.country.official_language"}[i%4]
		ts = append(ts, [3]string{fmt.Sprintf("thing %04d", i), rel, "norway"})
	}
	for i := range 20 {
		ts = append(ts, [3]string{"norway", "location.country.official_language", fmt.Sprintf("language %d", i)})
		ts = append(ts, [3]string{"norway", "location.country.capital", fmt.Sprintf("city %d", i)})
	}
	g, err := kg.GraphOf(ts)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	for _, strat := range []schema.Strategy{schema.Breadth, schema.Precision} {
		for _, rels := range [][]string{
			{"people.person.nationality", "location.country.official_language"},
			{"people.person.nationality", "location.country.capital"},
			{"people.person.nationality", "film.film.directed_by"},
		} {
			req := Request{Graphs: []schema.Graph{schema.Path("sven", rels...)}, Strategy: strat, Mentions: []string{"sven"}}
			var res [2]*Result
			for i, noPrune := range []bool{true, false} {
				cfg := DefaultConfig()
				cfg.MaxKeep, cfg.MaxScan = 0, 0
				tr, err := New(g, enc, nil, cfg)
				if err != nil {
					t.Fatal(err)
				}
				tr.noPrune = noPrune
				res[i] = mustTrace(t, tr, req)
				if !noPrune {
					if len(tr.fars.runs) == 0 {
						t.Errorf("%v %v: no hub runs kept", strat, rels)
					}
					t.Logf("%v %v: %d runs, %d far ends kept", strat, rels, len(tr.fars.runs), tr.fars.n)
					again := mustTrace(t, tr, req)
					if !reflect.DeepEqual(again.Answers, res[i].Answers) || !reflect.DeepEqual(again.Evidence, res[i].Evidence) {
						t.Errorf("%v %v: traced again from the kept runs and far ends: %d answers, %d evidence; first %d, %d", strat, rels,
							len(again.Answers), len(again.Evidence), len(res[i].Answers), len(res[i].Evidence))
					}
				}
			}
			if !reflect.DeepEqual(res[0].Answers, res[1].Answers) || !reflect.DeepEqual(res[0].Evidence, res[1].Evidence) {
				t.Errorf("%v %v: pruned steps give %d answers, %d evidence; every edge %d, %d", strat, rels,
					len(res[1].Answers), len(res[1].Evidence), len(res[0].Answers), len(res[0].Evidence))
			}
			if len(res[0].Evidence) == 0 {
				t.Errorf("%v %v: no evidence at all: the test proves nothing", strat, rels)
			}
		}
	}
}

// capWeak picks the same edges as sorting every weak edge would.
func TestCapWeakMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		n, max := 1+r.IntN(400), 1+r.IntN(50)
		sel := make([]cand, n)
		for i := range sel {
			sel[i] = cand{tid: int32(r.IntN(1000)), score: float32(r.IntN(6)) / 5}
		}
		best := float32(1)
		var weak []cand
		for _, c := range sel {
			if c.score < best-tieEps {
				weak = append(weak, c)
			}
		}
		want := slices.Clone(sel)
		if len(weak) > max {
			slices.SortFunc(weak, func(a, b cand) int {
				if a.score != b.score {
					return cmp.Compare(b.score, a.score)
				}
				return cmp.Compare(a.tid, b.tid)
			})
			cut := weak[max-1]
			want = want[:0]
			for _, c := range sel {
				if c.score >= best-tieEps || c.score > cut.score || c.score == cut.score && c.tid <= cut.tid {
					want = append(want, c)
				}
			}
		}
		byID := func(c cand) tripleName { return tripleName{tid: c.tid} }
		if got := capWeak(slices.Clone(sel), best, max, byID); !slices.Equal(got, want) {
			t.Fatalf("trial %d: capWeak kept %d edges, sorting keeps %d", trial, len(got), len(want))
		}
	}
}

// A cut through edges tied at one score keeps the same ones whatever the
// backend's numbering of them: the KG built from its triples in reverse
// order (as a SPARQL KG numbers edges as it meets them) keeps the same
// five of the ten tied languages, the first five by name.
func TestBudgetCutIsByName(t *testing.T) {
	fwd := hubGraph(t)
	rev := renumbered(t, fwd)
	enc := wordvec.New(nil, wordvec.Options{})
	req := Request{Graphs: []schema.Graph{schema.Path("sven", "people.person.nationality", "location.country.official_language")},
		Strategy: schema.Breadth, Mentions: []string{"sven"}}
	// Keeping 5 of 10 sorts the tie; keeping 1 selects it with a heap.
	for maxKeep, want := range map[int][]string{
		6: {"language 0", "language 1", "language 2", "language 3", "language 4"},
		2: {"language 0"},
	} {
		cfg := DefaultConfig()
		cfg.MaxKeep = maxKeep
		for name, g := range map[string]*kg.Graph{"forward": fwd, "reversed": rev} {
			tr, err := New(g, enc, nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range mustTrace(t, tr, req).Answers {
				got = append(got, a.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("--max-keep %d, %s: kept %q, want %q", maxKeep, name, got, want)
			}
		}
	}
}

// cutTies keeps what sorting the whole tie by name would, in that order,
// whatever the tie's size, the cut's place and the edges' order.
func TestCutTiesMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	// Names that tie for many ids, so the id breaks ties too.
	name := func(c cand) tripleName { return tripleName{head: "h", tail: fmt.Sprint(c.tid % 7), tid: c.tid} }
	byName := func(x, y cand) int {
		if c := cmp.Compare(fmt.Sprint(x.tid%7), fmt.Sprint(y.tid%7)); c != 0 {
			return c
		}
		return cmp.Compare(x.tid, y.tid)
	}
	for range 500 {
		m := 1 + rng.IntN(60)
		sel := make([]cand, m)
		for i := range sel {
			// Three scores, so ties sit before, across and after the cut.
			sel[i] = cand{tid: int32(rng.IntN(1000)), score: float32(rng.IntN(3))}
		}
		slices.SortStableFunc(sel, bestFirst)
		n := 1 + rng.IntN(m)
		want := slices.Clone(sel)
		score := sel[n-1].score
		lo := slices.IndexFunc(want, func(c cand) bool { return c.score == score })
		hi := lo
		for hi < m && want[hi].score == score {
			hi++
		}
		slices.SortFunc(want[lo:hi], byName)
		cutTies(sel, n, name)
		if !slices.Equal(sel[:n], want[:n]) {
			t.Fatalf("cut at %d of %d: kept %v, want %v", n, m, sel[:n], want[:n])
		}
	}
}

// Where the keep budget binds, what a branch may keep depends on what the
// branches searched before it left, so branches are searched in name
// order: the same KG numbered the other way round keeps the same edges.
func TestBudgetSharesByName(t *testing.T) {
	var ts [][3]string
	for i, n := range []int{1, 5, 1, 5, 2, 4} {
		x := fmt.Sprintf("film %d", i)
		ts = append(ts, [3]string{"director", "film.director.film", x})
		for j := range n {
			ts = append(ts, [3]string{x, "film.film.genre", fmt.Sprintf("genre %d-%d", i, j)})
		}
	}
	enc := wordvec.New(nil, wordvec.Options{})
	req := Request{Graphs: []schema.Graph{schema.Path("director", "film.director.film", "film.film.genre")},
		Strategy: schema.Breadth, Mentions: []string{"director"}}
	cfg := DefaultConfig()
	cfg.MaxKeep = 14
	var first []string
	for _, order := range []string{"forward", "reversed"} {
		b := kg.NewBuilder()
		for i := range ts {
			if order == "reversed" {
				i = len(ts) - 1 - i
			}
			b.Add(ts[i][0], ts[i][1], ts[i][2])
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		tr, err := New(g, enc, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		res := mustTrace(t, tr, req)
		var got []string
		for _, a := range res.Answers {
			got = append(got, a.Name)
		}
		slices.Sort(got)
		if len(got) == 0 || len(got) >= 18 {
			t.Fatalf("%s: %d answers: the budget did not bind (%q)", order, len(got), got)
		}
		if first == nil {
			first = got
		} else if !slices.Equal(got, first) {
			t.Errorf("reversed numbering kept %q, forward %q", got, first)
		}
	}
}

// A ranked request's readings after the first that binds answers trace on
// Config.FallbackScan: the result's answers are the first binding
// reading's either way; a later reading through the hub no longer binds
// its 300 places (its alternative is empty), and that cut is not reported
// as a budget that left answers incomplete. A reading that binds first
// keeps the full budget, whatever its place.
func TestFallbackScan(t *testing.T) {
	g := hubGraph(t)
	enc := wordvec.New(nil, wordvec.Options{})
	nation := schema.Path("sven", "people.person.nationality")
	hub := schema.Path("sven", "people.person.nationality", "location.location.country")
	for _, tc := range []struct {
		name         string
		graphs       []schema.Graph
		fallbackScan int
		answers      int   // of the result
		alts         []int // answers of each reading
	}{
		{"fallback budget", []schema.Graph{nation, hub}, 100, 1, []int{1, 0}},
		{"full budget (0)", []schema.Graph{nation, hub}, 0, 1, []int{1, 300}},
		{"full budget (above max-scan)", []schema.Graph{nation, hub}, DefaultMaxScan, 1, []int{1, 300}},
		{"the hub reading first", []schema.Graph{hub, nation}, 100, 300, []int{300, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.FallbackScan = tc.fallbackScan
			tr, err := New(g, enc, nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			res := mustTrace(t, tr, Request{Graphs: tc.graphs, Strategy: schema.Breadth, Mentions: []string{"sven"}, Ranked: true, Alternatives: true})
			if len(res.Answers) != tc.answers {
				t.Errorf("%d answers, want %d", len(res.Answers), tc.answers)
			}
			var alts []int
			for _, a := range res.Alternatives {
				alts = append(alts, len(a.Answers))
			}
			if !reflect.DeepEqual(alts, tc.alts) {
				t.Errorf("readings' answers %v, want %v", alts, tc.alts)
			}
			for _, p := range res.Problems {
				if strings.Contains(p, "search budget") {
					t.Errorf("budget problem reported: %q", p)
				}
			}
			if res.Unbacked != 0 {
				t.Errorf("%d unbacked", res.Unbacked)
			}
		})
	}
	if _, err := New(g, enc, nil, Config{FallbackScan: -1}); err == nil {
		t.Error("a negative fallback budget was accepted")
	}
}
