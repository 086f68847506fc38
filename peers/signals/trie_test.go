package signals

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/peers/signals/signalstest"
)

// movies is a small KG: two films by one director, their actors and a
// hub genre.
func movies(t testing.TB) *kg.Graph {
	return signalstest.Graph(t, [][3]string{
		{"Heat", "directed_by", "Michael Mann"},
		{"Collateral", "directed_by", "Michael Mann"},
		{"Heat", "starred_actors", "Al Pacino"},
		{"Heat", "starred_actors", "Robert De Niro"},
		{"Collateral", "starred_actors", "Tom Cruise"},
		{"Heat", "has_genre", "Crime"},
		{"Collateral", "has_genre", "Crime"},
		{"Lonely", "has_genre", "Drama"},
	})
}

func ent(t testing.TB, g kg.Reader, name string) int32 { return signalstest.Entity(t, g, name) }

// pathString writes a relation path as "rel/^rel" steps joined by ".".
func pathString(g kg.Reader, path []Step) string {
	parts := make([]string, len(path))
	for i, s := range path {
		parts[i] = g.RelationName(s.Rel)
		if s.Inverse {
			parts[i] = "^" + parts[i]
		}
	}
	return strings.Join(parts, ".")
}

// contents lists every non-root node of t as "path: reached names".
func contents(g kg.Reader, t *Trie) []string {
	var out []string
	for i := 1; i < len(t.Nodes); i++ {
		var names []string
		for _, e := range t.Nodes[i].Reach {
			names = append(names, g.EntityName(e))
		}
		sort.Strings(names)
		out = append(out, pathString(g, t.Path(int32(i)))+": "+strings.Join(names, ","))
	}
	sort.Strings(out)
	return out
}

func TestBuildTrie(t *testing.T) {
	g := movies(t)
	cases := []struct {
		name    string
		anchors []string
		hops    int
		lim     Limits
		want    []string
		capped  bool
	}{
		{name: "one hop from a director", anchors: []string{"Michael Mann"}, hops: 1, lim: Limits{100, 100},
			want: []string{"^directed_by: Collateral,Heat"}},
		{name: "two hops from a director", anchors: []string{"Michael Mann"}, hops: 2, lim: Limits{100, 100},
			want: []string{
				"^directed_by.directed_by: Michael Mann",
				"^directed_by.has_genre: Crime",
				"^directed_by.starred_actors: Al Pacino,Robert De Niro,Tom Cruise",
				"^directed_by: Collateral,Heat",
			}},
		{name: "two anchors share one trie", anchors: []string{"Al Pacino", "Tom Cruise"}, hops: 1, lim: Limits{100, 100},
			want: []string{"^starred_actors: Collateral,Heat"}},
		{name: "reach capped at the lowest ids", anchors: []string{"Crime"}, hops: 1, lim: Limits{1, 100},
			want: []string{"^has_genre: Heat"}},
		{name: "nodes capped", anchors: []string{"Heat"}, hops: 2, lim: Limits{100, 3}, capped: true,
			// Relation ids follow first appearance: directed_by, starred_actors, has_genre.
			want: []string{"directed_by: Michael Mann", "starred_actors: Al Pacino,Robert De Niro"}},
		{name: "no anchors is a bare root", hops: 2, lim: Limits{100, 100}},
		{name: "zero hops is a bare root", anchors: []string{"Heat"}, hops: 0, lim: Limits{100, 100}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var anchors []int32
			for _, a := range c.anchors {
				anchors = append(anchors, ent(t, g, a))
			}
			tr, err := Build(context.Background(), g, anchors, c.hops, c.lim)
			if err != nil {
				t.Fatal(err)
			}
			if got := contents(g, tr); !slices.Equal(got, c.want) {
				t.Errorf("trie\n got %q\nwant %q", got, c.want)
			}
			if tr.Capped != c.capped {
				t.Errorf("Capped = %v, want %v", tr.Capped, c.capped)
			}
			for i := 1; i < len(tr.Nodes); i++ {
				if got, ok := tr.Find(tr.Path(int32(i))); !ok || got != int32(i) {
					t.Errorf("Find(Path(%d)) = %d, %v", i, got, ok)
				}
			}
		})
	}
}

func TestBuildRejects(t *testing.T) {
	g := movies(t)
	for _, c := range []struct {
		hops int
		lim  Limits
	}{{-1, Limits{1, 1}}, {2, Limits{0, 1}}, {2, Limits{1, 0}}} {
		if _, err := Build(context.Background(), g, nil, c.hops, c.lim); err == nil {
			t.Errorf("Build(hops %d, %+v): no error", c.hops, c.lim)
		}
	}
	if _, err := Build(context.Background(), nil, nil, 2, Limits{1, 1}); err == nil {
		t.Error("Build(nil KG): no error")
	}
	tr, err := Build(context.Background(), g, []int32{-4, 1 << 30}, 2, Limits{10, 10})
	if err != nil || len(tr.Anchors) != 0 || len(tr.Nodes) != 1 {
		t.Errorf("unknown anchors: trie %+v, %v; want a bare root", tr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, g, []int32{ent(t, g, "Heat")}, 2, Limits{10, 10}); err == nil {
		t.Error("cancelled context: no error")
	}
}

func randomGraph(t testing.TB, rng *rand.Rand, n, m int) *kg.Graph {
	t.Helper()
	triples := make([][3]string, m)
	for i := range triples {
		triples[i] = [3]string{fmt.Sprintf("e%d", rng.IntN(n)), fmt.Sprintf("r%d", rng.IntN(3)), fmt.Sprintf("e%d", rng.IntN(n))}
	}
	return signalstest.Graph(t, triples)
}

// walk returns the entities the KG reaches from anchors along path, by
// brute force over every triple.
func walk(g kg.Reader, anchors []int32, path []Step) []int32 {
	front := map[int32]bool{}
	for _, a := range anchors {
		front[a] = true
	}
	for _, s := range path {
		next := map[int32]bool{}
		for i := 0; i < g.NumTriples(); i++ {
			tr := g.Triple(int32(i))
			if tr.Rel != s.Rel {
				continue
			}
			if !s.Inverse && front[tr.Head] {
				next[tr.Tail] = true
			}
			if s.Inverse && front[tr.Tail] {
				next[tr.Head] = true
			}
		}
		front = next
	}
	out := make([]int32, 0, len(front))
	for e := range front {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// TestTrieIsComplete is the KG-Trie's completeness property (GCR section
// 4.2: the trie indexes every path within L hops of the question
// entities): on random graphs with bounds that do not bind, every
// relation path of 1..L steps the KG walks from the anchors is a trie
// node, with exactly the entities the KG reaches along it, and the trie
// holds no other node.
func TestTrieIsComplete(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 35))
	for round := 0; round < 200; round++ {
		g := randomGraph(t, rng, 3+rng.IntN(12), 1+rng.IntN(40))
		anchors := []int32{int32(rng.IntN(g.NumEntities()))}
		if rng.IntN(3) == 0 {
			anchors = append(anchors, int32(rng.IntN(g.NumEntities())))
		}
		hops := 1 + rng.IntN(3)
		tr, err := Build(context.Background(), g, anchors, hops, Limits{MaxReach: 1 << 20, MaxNodes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		var all []Step
		for r := range g.NumRelations() {
			all = append(all, Step{Rel: int32(r)}, Step{Rel: int32(r), Inverse: true})
		}
		want := 0
		var enumerate func(path []Step)
		enumerate = func(path []Step) {
			if len(path) > 0 {
				reach := walk(g, anchors, path)
				if len(reach) == 0 {
					return
				}
				want++
				n, ok := tr.Find(path)
				if !ok {
					t.Fatalf("round %d: the KG walks %s from %v, the trie lacks it", round, pathString(g, path), anchors)
				}
				if got := tr.Nodes[n].Reach; !slices.Equal(got, reach) {
					t.Fatalf("round %d: %s reaches %v in the KG, %v in the trie", round, pathString(g, path), reach, got)
				}
			}
			if len(path) == hops {
				return
			}
			for _, s := range all {
				enumerate(append(slices.Clip(path), s))
			}
		}
		enumerate(nil)
		if got := len(tr.Nodes) - 1; got != want {
			t.Fatalf("round %d: trie has %d nodes, the KG %d paths", round, got, want)
		}
	}
}
