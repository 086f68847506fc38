package synth

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/dataset"
)

// graph builds a KG from "head rel tail" lines.
func graph(t testing.TB, lines ...string) *kg.Graph {
	t.Helper()
	b := kg.NewBuilder()
	for _, l := range lines {
		f := strings.Fields(l)
		b.Add(f[0], f[1], f[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func entity(t testing.TB, g *kg.Graph, name string) int32 {
	t.Helper()
	e, ok := g.Entity(name)
	if !ok {
		t.Fatalf("no entity %q", name)
	}
	return e
}

func sampler(t testing.TB, g *kg.Graph, opt Options) *Sampler {
	t.Helper()
	s, err := NewSampler(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The only walks a line graph allows, both ways, give these exact items.
func TestSampleExact(t *testing.T) {
	g := graph(t, "a r1 b", "b r2 c", "c r3 d")
	tests := []struct {
		name string
		seed string
		hops []float64
		want dataset.Item
	}{
		{"forward", "a", []float64{0, 0, 1}, dataset.Item{
			ID: "a#0", Source: "synth", Entities: []string{"a"}, Answers: []string{"d"},
			Triples:      [][3]string{{"a", "r1", "b"}, {"b", "r2", "c"}, {"c", "r3", "d"}},
			Masked:       [][3]string{{"a", "r1", "[ENT1]"}, {"[ENT1]", "r2", "[ENT2]"}, {"[ENT2]", "r3", "[ENT3]"}},
			Placeholders: map[string]string{"[ENT1]": "b", "[ENT2]": "c", "[ENT3]": "d"},
			AnswerSlot:   "[ENT3]", Hops: 3, Strategy: dataset.Precision, SubgraphEntities: []string{"a", "b", "c", "d"},
		}},
		{"reversed edges keep their direction", "d", []float64{0, 0, 1}, dataset.Item{
			ID: "d#0", Source: "synth", Entities: []string{"d"}, Answers: []string{"a"},
			Triples:      [][3]string{{"c", "r3", "d"}, {"b", "r2", "c"}, {"a", "r1", "b"}},
			Masked:       [][3]string{{"[ENT1]", "r3", "d"}, {"[ENT2]", "r2", "[ENT1]"}, {"[ENT3]", "r1", "[ENT2]"}},
			Placeholders: map[string]string{"[ENT1]": "c", "[ENT2]": "b", "[ENT3]": "a"},
			AnswerSlot:   "[ENT3]", Hops: 3, Strategy: dataset.Precision, SubgraphEntities: []string{"a", "b", "c", "d"},
		}},
		{"one hop", "a", []float64{1}, dataset.Item{
			ID: "a#0", Source: "synth", Entities: []string{"a"}, Answers: []string{"b"},
			Triples: [][3]string{{"a", "r1", "b"}}, Masked: [][3]string{{"a", "r1", "[ENT1]"}},
			Placeholders: map[string]string{"[ENT1]": "b"},
			AnswerSlot:   "[ENT1]", Hops: 1, Strategy: dataset.Precision, SubgraphEntities: []string{"a", "b"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := sampler(t, g, Options{Hops: tc.hops, Seed: 7})
			got := s.Sample(entity(t, g, tc.seed))
			if len(got) != 1 {
				t.Fatalf("got %d items, want 1: %+v", len(got), got)
			}
			if !reflect.DeepEqual(got[0], tc.want) {
				t.Errorf("got  %+v\nwant %+v", got[0], tc.want)
			}
			if err := got[0].Check(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestSampleAnswersFollowThePattern(t *testing.T) {
	// x has two parents; each has a gender. The pattern parent.gender
	// from x reaches both genders, whichever parent the walk took.
	g := graph(t, "x parent p1", "x parent p2", "p1 gender m", "p2 gender f")
	s := sampler(t, g, Options{Hops: []float64{0, 1}, Seed: 1})
	items := s.Sample(entity(t, g, "x"))
	if len(items) != 1 {
		t.Fatalf("got %d items", len(items))
	}
	it := items[0]
	if want := []string{"f", "m"}; !slices.Equal(it.Answers, want) {
		t.Errorf("answers %v, want %v", it.Answers, want)
	}
	if it.Strategy != dataset.Breadth {
		t.Errorf("strategy %s, want Breadth", it.Strategy)
	}
	if !slices.Contains(it.Answers, it.Placeholders[it.AnswerSlot]) {
		t.Errorf("answer slot %s = %s is not an answer", it.AnswerSlot, it.Placeholders[it.AnswerSlot])
	}

	// From x, parent then parent backwards reaches x and y: the seed is
	// never its own answer.
	g = graph(t, "x parent p1", "y parent p1")
	s = sampler(t, g, Options{Hops: []float64{0, 1}, Seed: 3})
	items = s.Sample(entity(t, g, "x"))
	if len(items) != 1 || !slices.Equal(items[0].Answers, []string{"y"}) {
		t.Errorf("items %+v, want one with answers [y]", items)
	}
}

func TestSampleBranching(t *testing.T) {
	// With branching certain, a one-hop walk from x also takes x's other
	// parent edge (a sibling of the chain's step): a tree with two answers.
	g := graph(t, "x parent p1", "x parent p2")
	s := sampler(t, g, Options{Hops: []float64{1}, Branch: 1, Seed: 5})
	items := s.Sample(entity(t, g, "x"))
	if len(items) != 1 {
		t.Fatalf("got %d items", len(items))
	}
	it := items[0]
	if want := [][3]string{{"x", "parent", "[ENT1]"}, {"x", "parent", "[ENT2]"}}; !reflect.DeepEqual(it.Masked, want) {
		t.Errorf("masked %v, want %v", it.Masked, want)
	}
	if it.AnswerSlot != "[ENT1]" || it.Hops != 1 || it.Strategy != dataset.Breadth {
		t.Errorf("slot %s hops %d strategy %s, want [ENT1] 1 Breadth", it.AnswerSlot, it.Hops, it.Strategy)
	}
	if want := []string{"p1", "p2"}; !slices.Equal(it.Answers, want) || !slices.Equal(it.SubgraphEntities, []string{"p1", "p2", "x"}) {
		t.Errorf("answers %v subgraph %v", it.Answers, it.SubgraphEntities)
	}

	// Without a sibling, the branch takes another relation; the chain
	// alone decides the answers.
	g = graph(t, "x spouse s", "x born b", "s born c")
	s = sampler(t, g, Options{Hops: []float64{0, 1}, Branch: 1, Seed: 2, PerSeed: 8, Tries: 8})
	items = s.Sample(entity(t, g, "x"))
	if len(items) == 0 {
		t.Fatal("no items")
	}
	for _, it := range items {
		chain, err := Chain(&it)
		if err != nil {
			t.Fatal(err)
		}
		if len(chain) != 2 || len(it.Triples) <= 2 {
			t.Errorf("item %s: chain %v, %d triples; want a 2-hop chain plus branches", it.ID, chain, len(it.Triples))
		}
		seen := map[[3]string]bool{}
		for _, tr := range it.Triples {
			if seen[tr] {
				t.Errorf("item %s repeats triple %v", it.ID, tr)
			}
			seen[tr] = true
		}
	}
}

func TestSampleSkipRules(t *testing.T) {
	g := graph(t,
		"a r m.0abc12", "m.0abc12 r b", // a CVT-like node
		"a bad c", // a skipped relation
		"a ok d",
		"h1 g hub", "h2 g hub", "h3 g hub", "d g hub", // hub of degree 4
		"z self z", // only a self-loop
	)
	opt := Options{Hops: []float64{1, 1}, SkipEntity: regexp.MustCompile(DefaultSkipEntity), SkipRelation: regexp.MustCompile(`^bad$`), MaxDegree: 3, Seed: 1, PerSeed: 20, Tries: 10}
	s := sampler(t, g, opt)
	var items []dataset.Item
	st, err := s.Run(context.Background(), s.Seeds(0), func(it *dataset.Item) error {
		items = append(items, *it)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) == 0 {
		t.Fatal("no items")
	}
	for _, it := range items {
		if it.Entities[0] == "hub" || it.Entities[0] == "m.0abc12" {
			t.Errorf("item %s starts from a skipped entity", it.ID)
		}
		for _, tr := range it.Triples {
			if tr[0] == "m.0abc12" || tr[2] == "m.0abc12" {
				t.Errorf("item %s enters a skipped entity: %v", it.ID, tr)
			}
			if tr[1] == "bad" {
				t.Errorf("item %s takes a skipped relation: %v", it.ID, tr)
			}
			// The hub may end the chain, never sit inside it.
			if (tr[0] == "hub" || tr[2] == "hub") && it.Placeholders[it.AnswerSlot] != "hub" {
				t.Errorf("item %s walks through the hub: %v", it.ID, it.Triples)
			}
		}
	}
	if !slices.ContainsFunc(items, func(it dataset.Item) bool { return it.Placeholders[it.AnswerSlot] == "hub" }) {
		t.Error("no walk ends on the hub, which is allowed")
	}
	// b's only edge leads to the skipped entity, c's only edge has the
	// skipped relation, z has only a self-loop: no walk can leave them.
	if st.NoEdges != 3 {
		t.Errorf("no-edge seeds %d, want 3 (b, c, z)", st.NoEdges)
	}
	if seeds := s.Seeds(0); slices.Contains(seeds, entity(t, g, "hub")) || slices.Contains(seeds, entity(t, g, "m.0abc12")) {
		t.Errorf("seeds include a hub or a skipped entity")
	}
}

func TestSampleDrops(t *testing.T) {
	// Four people share a nationality: from p1, nationality then back
	// gives p2..p4 (3 answers); with MaxAnswers 2 the item is dropped.
	g := graph(t, "p1 nat n", "p2 nat n", "p3 nat n", "p4 nat n")
	s := sampler(t, g, Options{Hops: []float64{0, 1}, MaxAnswers: 2, Seed: 1})
	st, err := s.Run(context.Background(), []int32{entity(t, g, "p1")}, func(*dataset.Item) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Kept != 0 || st.Dropped[DropTooManyAnswers] != DefaultTries {
		t.Errorf("stats %+v, want every try dropped for too many answers", st)
	}
	// The same with MaxFanout 1 at the intermediate step of a 3-hop
	// pattern.
	g = graph(t, "p1 nat n", "p2 nat n", "p2 born x", "x in y")
	s = sampler(t, g, Options{Hops: []float64{0, 0, 1}, MaxFanout: 1, Seed: 1})
	st, _ = s.Run(context.Background(), []int32{entity(t, g, "p1")}, func(*dataset.Item) error { return nil })
	if st.Kept != 0 || st.Dropped[DropFanout] == 0 {
		t.Errorf("stats %+v, want fan-out drops", st)
	}
	// A line of two edges has one 2-hop walk: asking for three items
	// gives one and counts the duplicates; a 3-hop walk is a dead end.
	g = graph(t, "a r b", "b r c")
	s = sampler(t, g, Options{Hops: []float64{0, 1}, PerSeed: 3, Tries: 2, Seed: 1})
	st, _ = s.Run(context.Background(), []int32{entity(t, g, "a")}, func(*dataset.Item) error { return nil })
	if st.Kept != 1 || st.Dropped[DropDuplicate] != 5 || st.Attempts != 6 {
		t.Errorf("stats %+v, want 1 kept, 5 duplicates of 6 attempts", st)
	}
	s = sampler(t, g, Options{Hops: []float64{0, 0, 1}, Seed: 1})
	st, _ = s.Run(context.Background(), []int32{entity(t, g, "a")}, func(*dataset.Item) error { return nil })
	if st.Kept != 0 || st.Dropped[DropDeadEnd] != DefaultTries {
		t.Errorf("stats %+v, want dead ends", st)
	}
}

func TestValidate(t *testing.T) {
	g := graph(t, "a r b", "b r c")
	s := sampler(t, g, Options{Hops: []float64{0, 1}, Seed: 1})
	sc := s.newScratch()
	sc.pcg.Seed(1, 1)
	a := entity(t, g, "a")
	if d := s.walk(sc, a); d >= 0 || !s.validate(sc) {
		t.Fatalf("walk from a: drop %d, valid %v", d, s.validate(sc))
	}
	// An answer set that lacks the walk's end fails.
	sc.front = sc.front[:0]
	if s.validate(sc) {
		t.Error("validate accepted an answer set without the walk's end")
	}
	// So does one that holds other entities only.
	sc.front = append(sc.front, a)
	if s.validate(sc) {
		t.Error("validate accepted an answer set without the walk's end")
	}
}

func TestSampleDeterministic(t *testing.T) {
	// A random graph: the same seed gives the same items whatever the
	// number of workers; another seed gives others.
	rng := rand.New(rand.NewPCG(1, 2))
	var lines []string
	for range 600 {
		lines = append(lines, fmt.Sprintf("e%d r%d e%d", rng.IntN(200), rng.IntN(5), rng.IntN(200)))
	}
	g := graph(t, lines...)
	run := func(seed uint64, workers, max int) []dataset.Item {
		s := sampler(t, g, Options{Branch: 0.3, PerSeed: 2, Seed: seed, Workers: workers, Max: max})
		var out []dataset.Item
		if _, err := s.Run(context.Background(), s.Seeds(0), func(it *dataset.Item) error {
			out = append(out, *it)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	one, four := run(1, 1, 0), run(1, 4, 0)
	if len(one) < 100 || !reflect.DeepEqual(one, four) {
		t.Fatalf("1 worker gave %d items, 4 workers %d, or they differ", len(one), len(four))
	}
	if other := run(2, 2, 0); reflect.DeepEqual(one, other) {
		t.Error("seeds 1 and 2 gave the same items")
	}
	if capped := run(1, 3, 17); !reflect.DeepEqual(capped, one[:17]) {
		t.Errorf("Max 17 gave %d items, not the first 17", len(capped))
	}
	ids := map[string]bool{}
	for _, it := range one {
		if ids[it.ID] {
			t.Errorf("duplicate id %s", it.ID)
		}
		ids[it.ID] = true
		if err := it.Check(); err != nil {
			t.Error(err)
		}
		// Every triple is in the KG and the slot is an answer.
		for _, tr := range it.Triples {
			h, _ := g.Entity(tr[0])
			r, _ := g.Relation(tr[1])
			tl, _ := g.Entity(tr[2])
			if !g.HasTriple(h, r, tl) {
				t.Errorf("item %s: triple %v not in the KG", it.ID, tr)
			}
		}
		if !slices.Contains(it.Answers, it.Placeholders[it.AnswerSlot]) || len(it.Answers) > DefaultMaxAnswers {
			t.Errorf("item %s: slot %s, answers %v", it.ID, it.AnswerSlot, it.Answers)
		}
		if it.Strategy != dataset.StrategyFor(len(it.Answers)) {
			t.Errorf("item %s: strategy %s for %d answers", it.ID, it.Strategy, len(it.Answers))
		}
		if want := naiveAnswers(t, g, &it); !slices.Equal(it.Answers, want) {
			t.Errorf("item %s: answers %v, following the chain gives %v", it.ID, it.Answers, want)
		}
	}
}

func TestRunStops(t *testing.T) {
	g := graph(t, "a r b", "b r c", "c r d")
	s := sampler(t, g, Options{Hops: []float64{1}, Seed: 1})
	boom := errors.New("boom")
	n := 0
	st, err := s.Run(context.Background(), s.Seeds(0), func(*dataset.Item) error {
		n++
		return boom
	})
	if !errors.Is(err, boom) || n != 1 || st.Kept != 0 {
		t.Errorf("err %v after %d calls, kept %d; want boom after 1", err, n, st.Kept)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Run(ctx, s.Seeds(0), func(*dataset.Item) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

func TestChainAndGoldPaths(t *testing.T) {
	it := dataset.Item{ID: "1", Entities: []string{"x"}, AnswerSlot: "[ENT2]",
		Masked: [][3]string{{"x", "spouse", "[ENT1]"}, {"[ENT3]", "gender", "[ENT1]"}, {"[ENT2]", "born_in", "[ENT1]"}}}
	got, err := Chain(&it)
	want := []schema.Step{{Rel: "spouse", Dir: schema.Forward}, {Rel: "born_in", Dir: schema.Inverse}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Chain = %v, %v; want %v", got, err, want)
	}
	it.AnswerSlot = "[ENT9]"
	if _, err := Chain(&it); err == nil {
		t.Error("Chain found a path to a missing slot")
	}
	// Without a slot, every placeholder standing for an answer is a
	// target.
	it.AnswerSlot, it.Answers = "", []string{"b", "c"}
	it.Placeholders = map[string]string{"[ENT1]": "a", "[ENT2]": "b", "[ENT3]": "c"}
	paths := GoldPaths(&it)
	wantPaths := [][]schema.Step{want, {{Rel: "spouse", Dir: schema.Forward}, {Rel: "gender", Dir: schema.Inverse}}}
	if !reflect.DeepEqual(paths, wantPaths) {
		t.Errorf("GoldPaths = %v, want %v", paths, wantPaths)
	}
}

func TestParseHops(t *testing.T) {
	tests := []struct {
		in   string
		want []float64
	}{
		{"2", []float64{0, 1}},
		{"1-3", []float64{1, 1, 1}},
		{"2-3", []float64{0, 1, 1}},
		{"1:0.2,3:0.8", []float64{0.2, 0, 0.8}},
		{"1,2", []float64{1, 1}},
	}
	for _, tc := range tests {
		got, err := ParseHops(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseHops(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "3-1", "1-99", "x", "1:-1", "1:0", "1:NaN"} {
		if _, err := ParseHops(bad); err == nil {
			t.Errorf("ParseHops(%q) accepted", bad)
		}
	}
}

func TestNewSamplerErrors(t *testing.T) {
	g := graph(t, "a r b")
	for _, opt := range []Options{{Branch: 1.5}, {Hops: []float64{0, 0}}, {Hops: []float64{-1, 2}}, {PerSeed: -1}} {
		if _, err := NewSampler(g, opt); err == nil {
			t.Errorf("NewSampler accepted %+v", opt)
		}
	}
	if _, err := NewSampler(nil, Options{}); err == nil {
		t.Error("NewSampler accepted a nil graph")
	}
}

// naiveAnswers follows the item's chain from its seed with maps, the
// obvious way, to check the sampler's answer sets.
func naiveAnswers(t *testing.T, g *kg.Graph, it *dataset.Item) []string {
	t.Helper()
	steps, err := Chain(it)
	if err != nil {
		t.Fatal(err)
	}
	seed := entity(t, g, it.Entities[0])
	front := map[int32]bool{seed: true}
	heads, rels, tails := g.Columns()
	for _, st := range steps {
		r, ok := g.Relation(st.Rel)
		if !ok {
			t.Fatalf("no relation %s", st.Rel)
		}
		next := map[int32]bool{}
		for e := range front {
			if st.Dir == schema.Forward {
				for _, tr := range g.Out(e) {
					if rels[tr] == r {
						next[tails[tr]] = true
					}
				}
			} else {
				for _, tr := range g.In(e) {
					if rels[tr] == r {
						next[heads[tr]] = true
					}
				}
			}
		}
		front = next
	}
	delete(front, seed)
	var out []string
	for e := range front {
		out = append(out, g.EntityName(e))
	}
	slices.Sort(out)
	return out
}

func TestSampleRealPQ(t *testing.T) {
	g, err := kg.Load(context.Background(), shareddata.Path(t, "pathquestion/3H-kb.txt"), kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	s := sampler(t, g, Options{Branch: 0.3, PerSeed: 2, MaxDegree: 200, Seed: 9})
	n := 0
	st, err := s.Run(context.Background(), s.Seeds(0), func(it *dataset.Item) error {
		n++
		if want := naiveAnswers(t, g, it); !slices.Equal(it.Answers, want) {
			t.Errorf("item %s: answers %v, following the chain gives %v", it.ID, it.Answers, want)
		}
		for _, tr := range it.Triples {
			h, _ := g.Entity(tr[0])
			r, _ := g.Relation(tr[1])
			tl, _ := g.Entity(tr[2])
			if !g.HasTriple(h, r, tl) {
				t.Errorf("item %s: %v is not in the KG", it.ID, tr)
			}
		}
		return nil
	})
	if err != nil || n < 1000 || st.Dropped[DropInvalid] != 0 {
		t.Errorf("%d items, stats %+v, err %v", n, st, err)
	}
}
