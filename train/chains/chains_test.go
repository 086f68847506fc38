package chains

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// graph builds a KG from "head rel tail" lines; triple ids are line order.
func graph(t testing.TB, lines ...string) *kg.Graph {
	t.Helper()
	b := kg.NewBuilder()
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("bad triple %q", l)
		}
		b.Add(f[0], f[1], f[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func ids(t testing.TB, g *kg.Graph, names []string) []int32 {
	t.Helper()
	var out []int32
	for _, n := range names {
		id, ok := g.Entity(n)
		if !ok {
			id = int32(g.NumEntities()) + 100 // not in the KG
		}
		out = append(out, id)
	}
	return out
}

// show writes a chain as "q -r-> m <-s- a": each step with its triple's
// real direction.
func show(g *kg.Graph, c Chain) string {
	var b strings.Builder
	b.WriteString(g.EntityName(c.Entities[0]))
	for i, t := range c.Triples {
		r := g.RelationName(g.Triple(t).Rel)
		if c.Forward(g, i) {
			b.WriteString(" -" + r + "-> ")
		} else {
			b.WriteString(" <-" + r + "- ")
		}
		b.WriteString(g.EntityName(c.Entities[i+1]))
	}
	return b.String()
}

func masked(ts [][3]string) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t[0]+" "+t[1]+" "+t[2])
	}
	return out
}

func TestFind(t *testing.T) {
	tests := []struct {
		name     string
		kg       []string
		opt      Options
		starts   []string
		answers  []string
		chains   []string
		masked   []string
		ph       map[string]string
		slot     string
		hops     int
		found    int64
		capped   int64
		cappedA  int
		unreach  []string
		noChains bool
	}{
		{
			name: "one hop forward", kg: []string{"q r a", "x r q"},
			starts: []string{"q"}, answers: []string{"a"},
			chains: []string{"q -r-> a"}, masked: []string{"q r [ENT1]"},
			ph: map[string]string{"[ENT1]": "a"}, slot: "[ENT1]", hops: 1, found: 1,
		},
		{
			name: "reversed edge keeps its direction", kg: []string{"a r q"},
			starts: []string{"q"}, answers: []string{"a"},
			chains: []string{"q <-r- a"}, masked: []string{"[ENT1] r q"},
			ph: map[string]string{"[ENT1]": "a"}, slot: "[ENT1]", hops: 1, found: 1,
		},
		{
			name: "parallel edges are distinct chains", kg: []string{"q r1 m", "m r2 a", "a r3 m"},
			starts: []string{"q"}, answers: []string{"a"},
			chains: []string{"q -r1-> m -r2-> a", "q -r1-> m <-r3- a"},
			masked: []string{"q r1 [ENT1]", "[ENT1] r2 [ENT2]", "[ENT2] r3 [ENT1]"},
			ph:     map[string]string{"[ENT1]": "m", "[ENT2]": "a"}, slot: "[ENT2]", hops: 2, found: 2,
		},
		{
			name: "two answers share placeholders", kg: []string{"q r m1", "q r m2", "m1 s a1", "m2 s a1", "m2 s a2", "a2 s far"},
			starts: []string{"q"}, answers: []string{"a1", "a2"},
			chains: []string{"q -r-> m1 -s-> a1", "q -r-> m2 -s-> a1", "q -r-> m2 -s-> a2"},
			masked: []string{"q r [ENT1]", "[ENT1] s [ENT2]", "q r [ENT3]", "[ENT3] s [ENT2]", "[ENT3] s [ENT4]"},
			ph:     map[string]string{"[ENT1]": "m1", "[ENT2]": "a1", "[ENT3]": "m2", "[ENT4]": "a2"}, slot: "[ENT2]", hops: 2, found: 3,
		},
		{
			name: "only the shortest chains", kg: []string{"q r a", "q r m", "m r a"},
			starts: []string{"q"}, answers: []string{"a"},
			chains: []string{"q -r-> a"}, masked: []string{"q r [ENT1]"},
			ph: map[string]string{"[ENT1]": "a"}, slot: "[ENT1]", hops: 1, found: 1,
		},
		{
			name: "two question entities: the nearer one", kg: []string{"q1 r m", "m r a", "q2 s a"},
			starts: []string{"q1", "q2"}, answers: []string{"a"},
			chains: []string{"q2 -s-> a"}, masked: []string{"q2 s [ENT1]"},
			ph: map[string]string{"[ENT1]": "a"}, slot: "[ENT1]", hops: 1, found: 1,
		},
		{
			name: "question entities stay named", kg: []string{"q1 r a", "q2 s a"},
			starts: []string{"q1", "q2"}, answers: []string{"a"},
			chains: []string{"q1 -r-> a", "q2 -s-> a"}, masked: []string{"q1 r [ENT1]", "q2 s [ENT1]"},
			ph: map[string]string{"[ENT1]": "a"}, slot: "[ENT1]", hops: 1, found: 2,
		},
		{
			name: "answer in another component", kg: []string{"q r x", "y r z"},
			starts: []string{"q"}, answers: []string{"z"},
			unreach: []string{"z"}, noChains: true,
		},
		{
			name: "answer beyond the hop limit", kg: []string{"q r b", "b r c", "c r d", "d r a"},
			starts: []string{"q"}, answers: []string{"a"},
			unreach: []string{"a"}, noChains: true,
		},
		{
			name: "hop limit raised", kg: []string{"q r b", "b r c", "c r d", "d r a"}, opt: Options{MaxHops: 4},
			starts: []string{"q"}, answers: []string{"a"},
			chains: []string{"q -r-> b -r-> c -r-> d -r-> a"},
			masked: []string{"q r [ENT1]", "[ENT1] r [ENT2]", "[ENT2] r [ENT3]", "[ENT3] r [ENT4]"},
			ph:     map[string]string{"[ENT1]": "b", "[ENT2]": "c", "[ENT3]": "d", "[ENT4]": "a"}, slot: "[ENT4]", hops: 4, found: 1,
		},
		{
			name: "one answer out of reach", kg: []string{"q r a", "y r z"},
			starts: []string{"q"}, answers: []string{"z", "a", "nowhere"},
			chains: []string{"q -r-> a"}, masked: []string{"q r [ENT1]"},
			ph: map[string]string{"[ENT1]": "a"}, slot: "[ENT1]", hops: 1, found: 1,
			unreach: []string{"nowhere", "z"},
		},
		{
			name: "isolated question entity with a self-loop", kg: []string{"q r q", "y r z"},
			starts: []string{"q"}, answers: []string{"z"},
			unreach: []string{"z"}, noChains: true,
		},
		// A closed walk is kept in the orientation that reads first by
		// names ("children" before "parents"), whatever the triple ids.
		{
			name: "answer is the question entity: closed walk", kg: []string{"tasha parents will", "will children tasha", "will gender male"},
			starts: []string{"tasha"}, answers: []string{"tasha"},
			chains: []string{"tasha <-children- will <-parents- tasha"},
			masked: []string{"[ENT1] children tasha", "[ENT2] parents [ENT1]"},
			ph:     map[string]string{"[ENT1]": "will", "[ENT2]": "tasha"}, slot: "[ENT2]", hops: 2, found: 1,
		},
		{
			name: "answer is the question entity: closed walk, ids the other way", kg: []string{"will children tasha", "tasha parents will", "will gender male"},
			starts: []string{"tasha"}, answers: []string{"tasha"},
			chains: []string{"tasha <-children- will <-parents- tasha"},
			masked: []string{"[ENT1] children tasha", "[ENT2] parents [ENT1]"},
			ph:     map[string]string{"[ENT1]": "will", "[ENT2]": "tasha"}, slot: "[ENT2]", hops: 2, found: 1,
		},
		{
			name: "answer is the question entity: self-loop", kg: []string{"s tracks s", "s genre pop"},
			starts: []string{"s"}, answers: []string{"s"},
			chains: []string{"s -tracks-> s"}, masked: []string{"s tracks [ENT1]"},
			ph: map[string]string{"[ENT1]": "s"}, slot: "[ENT1]", hops: 1, found: 1,
		},
		{
			name: "answer is the question entity: triangle", kg: []string{"x r y", "y s z", "z t x"},
			starts: []string{"x"}, answers: []string{"x"},
			chains: []string{"x -r-> y -s-> z -t-> x"},
			masked: []string{"x r [ENT1]", "[ENT1] s [ENT2]", "[ENT2] t [ENT3]"},
			ph:     map[string]string{"[ENT1]": "y", "[ENT2]": "z", "[ENT3]": "x"}, slot: "[ENT3]", hops: 3, found: 1,
		},
		{
			name: "answer is the question entity without a closed walk", kg: []string{"q r x"},
			starts: []string{"q"}, answers: []string{"q"},
			unreach: []string{"q"}, noChains: true,
		},
		{
			name: "cap keeps the first chains", kg: []string{"q r m1", "q r m2", "q r m3", "q r m4", "q r m5", "m1 s a", "m2 s a", "m3 s a", "m4 s a", "m5 s a"},
			opt:    Options{MaxPaths: 2},
			starts: []string{"q"}, answers: []string{"a"},
			chains: []string{"q -r-> m1 -s-> a", "q -r-> m2 -s-> a"},
			masked: []string{"q r [ENT1]", "[ENT1] s [ENT2]", "q r [ENT3]", "[ENT3] s [ENT2]"},
			ph:     map[string]string{"[ENT1]": "m1", "[ENT2]": "a", "[ENT3]": "m2"}, slot: "[ENT2]", hops: 2, found: 5, capped: 3,
		},
		{
			name: "cap is shared out over the answers", kg: []string{"q r m1", "q r m2", "q r m3", "m1 s a", "m2 s a", "m3 s a", "q r b"},
			opt:    Options{MaxPaths: 2},
			starts: []string{"q"}, answers: []string{"a", "b"},
			chains: []string{"q -r-> m1 -s-> a", "q -r-> b"},
			masked: []string{"q r [ENT1]", "[ENT1] s [ENT2]", "q r [ENT3]"},
			ph:     map[string]string{"[ENT1]": "m1", "[ENT2]": "a", "[ENT3]": "b"}, slot: "[ENT2]", hops: 2, found: 4, capped: 2,
		},
		{
			name: "more answers than the cap", kg: []string{"q r a", "q r b", "q r c"},
			opt:    Options{MaxPaths: 2},
			starts: []string{"q"}, answers: []string{"a", "b", "c"},
			chains: []string{"q -r-> a", "q -r-> b"},
			masked: []string{"q r [ENT1]", "q r [ENT2]"},
			ph:     map[string]string{"[ENT1]": "a", "[ENT2]": "b"}, slot: "[ENT1]", hops: 1, found: 3, capped: 1, cappedA: 1,
		},
		{
			name: "min hops skips the shortcut", kg: []string{"q gender male", "q parents f", "f gender male"},
			opt:    Options{MinHops: 2},
			starts: []string{"q"}, answers: []string{"male"},
			chains: []string{"q -parents-> f -gender-> male"},
			masked: []string{"q parents [ENT1]", "[ENT1] gender [ENT2]"},
			ph:     map[string]string{"[ENT1]": "f", "[ENT2]": "male"}, slot: "[ENT2]", hops: 2, found: 1,
		},
		{
			name: "min hops walks back over a parallel triple", kg: []string{"x parents p", "p children x", "x nationality uk"},
			opt:    Options{MinHops: 3},
			starts: []string{"x"}, answers: []string{"uk"},
			chains: []string{"x -parents-> p -children-> x -nationality-> uk", "x <-children- p <-parents- x -nationality-> uk"},
			masked: []string{"x parents [ENT1]", "[ENT1] children x", "x nationality [ENT2]"},
			ph:     map[string]string{"[ENT1]": "p", "[ENT2]": "uk"}, slot: "[ENT2]", hops: 3, found: 2,
		},
		{
			name: "min hops falls back to the shortest chain", kg: []string{"q r a"},
			opt:    Options{MinHops: 2},
			starts: []string{"q"}, answers: []string{"a"},
			chains: []string{"q -r-> a"}, masked: []string{"q r [ENT1]"},
			ph: map[string]string{"[ENT1]": "a"}, slot: "[ENT1]", hops: 1, found: 1,
		},
		{
			name: "min hops for a closed walk", kg: []string{"e spouse h", "h children m", "m parents e", "e children m"},
			opt:    Options{MinHops: 3},
			starts: []string{"e"}, answers: []string{"e"},
			// Each closed walk in the orientation that reads first by names.
			chains: []string{"e -children-> m <-children- h <-spouse- e", "e <-parents- m <-children- h <-spouse- e"},
			masked: []string{"e children [ENT1]", "[ENT2] children [ENT1]", "[ENT3] spouse [ENT2]", "[ENT1] parents e"},
			ph:     map[string]string{"[ENT1]": "m", "[ENT2]": "h", "[ENT3]": "e"}, slot: "[ENT3]", hops: 3, found: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := graph(t, tc.kg...)
			f := NewFinder(g, tc.opt)
			starts := ids(t, g, tc.starts)
			for run := 0; run < 2; run++ { // the second run reuses the scratch space
				res := f.Find(starts, ids(t, g, tc.answers))
				var got []string
				for _, c := range res.Chains {
					got = append(got, show(g, c))
				}
				if !slices.Equal(got, tc.chains) {
					t.Fatalf("run %d chains:\n got %q\nwant %q", run, got, tc.chains)
				}
				if res.Found != tc.found || res.Capped != tc.capped || res.CappedAnswers != tc.cappedA {
					t.Errorf("found/capped/capped answers = %d/%d/%d, want %d/%d/%d", res.Found, res.Capped, res.CappedAnswers, tc.found, tc.capped, tc.cappedA)
				}
				var un []string
				for _, a := range res.Unreachable {
					if a >= 0 && int(a) < g.NumEntities() {
						un = append(un, g.EntityName(a))
					} else {
						un = append(un, "nowhere")
					}
				}
				slices.Sort(un)
				if !slices.Equal(un, tc.unreach) {
					t.Errorf("unreachable = %q, want %q", un, tc.unreach)
				}
				if tc.noChains {
					continue
				}
				ev := Mask(g, starts, res.Chains)
				if m := masked(ev.Masked); !slices.Equal(m, tc.masked) {
					t.Errorf("masked:\n got %q\nwant %q", m, tc.masked)
				}
				if len(ev.Triples) != len(ev.Masked) {
					t.Errorf("%d triples, %d masked", len(ev.Triples), len(ev.Masked))
				}
				if !maps.Equal(ev.Placeholders, tc.ph) || ev.AnswerSlot != tc.slot || ev.Hops != tc.hops {
					t.Errorf("placeholders %v slot %s hops %d, want %v %s %d", ev.Placeholders, ev.AnswerSlot, ev.Hops, tc.ph, tc.slot, tc.hops)
				}
			}
		})
	}
}

// TestMaskTriples checks that T holds the KG triples themselves, each once.
func TestMaskTriples(t *testing.T) {
	g := graph(t, "q r1 m", "m r2 a", "a r3 m")
	f := NewFinder(g, Options{})
	starts := ids(t, g, []string{"q"})
	ev := Mask(g, starts, f.Find(starts, ids(t, g, []string{"a"})).Chains)
	want := [][3]string{{"q", "r1", "m"}, {"m", "r2", "a"}, {"a", "r3", "m"}}
	if !slices.Equal(ev.Triples, want) {
		t.Errorf("T = %q, want %q", ev.Triples, want)
	}
}

func TestMatchesAndContains(t *testing.T) {
	g := graph(t, "film starred_actors tom", "film directed_by ann", "film2 starred_actors tom")
	f := NewFinder(g, Options{})
	starts := ids(t, g, []string{"tom"})
	res := f.Find(starts, ids(t, g, []string{"ann"}))
	if len(res.Chains) != 1 {
		t.Fatalf("chains %d", len(res.Chains))
	}
	c := res.Chains[0]
	ev := Mask(g, starts, res.Chains)
	inv, fwd := schema.Step{Rel: "starred_actors", Dir: schema.Inverse}, schema.Step{Rel: "directed_by", Dir: schema.Forward}
	tests := []struct {
		name string
		gp   schema.GoldPath
		want bool
	}{
		{"qtype pattern", schema.GoldPath{Start: "tom", Steps: []schema.Step{inv, fwd}}, true},
		{"any start", schema.GoldPath{Steps: []schema.Step{inv, fwd}}, true},
		{"either direction", schema.GoldPath{Steps: []schema.Step{{Rel: "starred_actors", Dir: schema.Either}, fwd}}, true},
		{"wrong direction", schema.GoldPath{Steps: []schema.Step{{Rel: "starred_actors", Dir: schema.Forward}, fwd}}, false},
		{"wrong relation", schema.GoldPath{Steps: []schema.Step{inv, {Rel: "written_by", Dir: schema.Forward}}}, false},
		{"wrong start", schema.GoldPath{Start: "ann", Steps: []schema.Step{inv, fwd}}, false},
		{"too short", schema.GoldPath{Steps: []schema.Step{inv}}, false},
		{"gold triples in T", schema.GoldPath{Start: "tom", Steps: []schema.Step{inv, fwd}, Entities: []string{"film", "ann"}}, true},
		{"gold triple not in T", schema.GoldPath{Start: "tom", Steps: []schema.Step{inv, fwd}, Entities: []string{"film2", "ann"}}, false},
	}
	for _, tc := range tests {
		if got := Contains(g, []schema.GoldPath{tc.gp}, res.Chains, ev.Triples); got != tc.want {
			t.Errorf("%s: Contains = %v, want %v", tc.name, got, tc.want)
		}
		if tc.gp.Entities == nil {
			if got := Matches(g, c, tc.gp); got != tc.want {
				t.Errorf("%s: Matches = %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

// Schema keeps one chain per relation pattern, however many answers the
// pattern reaches, and numbers the shared answer placeholder last.
func TestSchema(t *testing.T) {
	g := graph(t,
		"sharon starred m1", "sharon starred m2", "sharon starred m3",
		"m1 year 1967", "m2 year 1968", "m3 year 1968",
		"sharon born 1943",
	)
	f := NewFinder(g, Options{})
	id := func(n string) int32 {
		e, ok := g.Entity(n)
		if !ok {
			t.Fatalf("no %s", n)
		}
		return e
	}
	start := []int32{id("sharon")}
	res := f.Find(start, []int32{id("1967"), id("1968")})
	ch := slices.Clone(res.Chains)
	if len(ch) != 3 {
		t.Fatalf("%d chains, want 3", len(ch))
	}
	ev := Schema(g, start, ch, 0)
	wantMasked := [][3]string{{"sharon", "starred", "[ENT1]"}, {"[ENT1]", "year", "[ENT2]"}}
	if !slices.Equal(ev.Masked, wantMasked) || ev.AnswerSlot != "[ENT2]" {
		t.Fatalf("masked %v slot %s, want %v [ENT2]", ev.Masked, ev.AnswerSlot, wantMasked)
	}
	if want := [][3]string{{"sharon", "starred", "m1"}, {"m1", "year", "1967"}}; !slices.Equal(ev.Triples, want) {
		t.Fatalf("triples %v, want %v", ev.Triples, want)
	}
	if ev.Placeholders["[ENT1]"] != "m1" || ev.Placeholders["[ENT2]"] != "1967" || len(ev.Placeholders) != 2 {
		t.Fatalf("placeholders %v", ev.Placeholders)
	}
	// A cap of one pattern keeps the most frequent.
	more := append(ch, Chain{Entities: []int32{id("sharon"), id("1943")}, Triples: []int32{tripleID(t, g, "sharon", "born", "1943")}})
	if ev := Schema(g, start, more, 1); len(ev.Masked) != 2 || ev.Masked[1][1] != "year" {
		t.Fatalf("cap 1: %v", ev.Masked)
	}
	if ev := Schema(g, start, more, 0); len(ev.Masked) != 3 || ev.Masked[2] != [3]string{"sharon", "born", "[ENT2]"} {
		t.Fatalf("two patterns: %v", ev.Masked)
	}
}

func tripleID(t *testing.T, g *kg.Graph, h, r, tl string) int32 {
	t.Helper()
	for i := range int32(g.NumTriples()) {
		tr := g.Triple(i)
		if g.EntityName(tr.Head) == h && g.RelationName(tr.Rel) == r && g.EntityName(tr.Tail) == tl {
			return i
		}
	}
	t.Fatalf("no triple %s %s %s", h, r, tl)
	return -1
}
