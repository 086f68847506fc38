package generation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/tracing"
)

func TestParseAnswerList(t *testing.T) {
	tests := []struct{ in, want string }{
		{`["a", "b"]`, "a|b"},
		{"['a', 'b c']", "a|b c"},
		{"Answer: a, b", "a|b"},
		{"1. a\n2. b\n- c\n", "a|b|c"},
		{"a", "a"},
		{"", ""},
		{"a\na\n", "a"},
	}
	for _, tc := range tests {
		if got := strings.Join(ParseAnswerList(tc.in), "|"); got != tc.want {
			t.Errorf("ParseAnswerList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestChainsWith(t *testing.T) {
	chains := []string{"A -> r -> B -> s -> C", "A -> r -> B <- t <- D", "X -> r -> Y"}
	got := chainsWith(chains, "B")
	if len(got) != 1 || got[0] != "A -> r -> B" {
		t.Errorf("chainsWith(B) = %q", got)
	}
	if got := chainsWith(chains, "D"); len(got) != 1 || got[0] != "A -> r -> B <- t <- D" {
		t.Errorf("chainsWith(D) = %q", got)
	}
	if got := chainsWith(chains, "r"); got != nil {
		t.Errorf("a relation is not an entity: %q", got)
	}
}

// FuzzEachEntity holds eachEntity to a plain reference: split the chain at
// every " -> " and " <- ", keep the even parts, and each part's end offset.
func FuzzEachEntity(f *testing.F) {
	for _, s := range []string{"A -> r -> B <- s <- C", "Tom Hanks -> starred -> Big", "A", "", " -> ", "a <-  <- b", "x ->y -> z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, chain string) {
		type part struct {
			name string
			end  int
		}
		var want []part
		off, rest := 0, chain
		for i := 0; ; i++ {
			a, b := strings.Index(rest, " -> "), strings.Index(rest, " <- ")
			k := a
			if k < 0 || (b >= 0 && b < k) {
				k = b
			}
			if k < 0 {
				if i%2 == 0 {
					want = append(want, part{rest, off + len(rest)})
				}
				break
			}
			if i%2 == 0 {
				want = append(want, part{rest[:k], off + k})
			}
			off, rest = off+k+4, rest[k+4:]
		}
		var got []part
		eachEntity(chain, func(name string, end int) { got = append(got, part{name, end}) })
		if len(got) != len(want) {
			t.Fatalf("eachEntity(%q) = %v, want %v", chain, got, want)
		}
		for i := range got {
			if got[i] != want[i] || chain[:got[i].end] != chain[:want[i].end] {
				t.Fatalf("eachEntity(%q) = %v, want %v", chain, got, want)
			}
		}
	})
}

func TestSupportIndexManyCuts(t *testing.T) {
	// More cuts than the scan handles: the set takes over, order and
	// de-duplication stay the same.
	var chains []string
	for i := range 40 {
		c := fmt.Sprintf("A -> r -> B%d <- s <- X", i)
		chains = append(chains, c, c)
	}
	got := supportIndex(chains, []string{"X", "A"})
	if len(got["X"]) != 40 || got["X"][39] != "A -> r -> B39 <- s <- X" || len(got["A"]) != 1 || got["A"][0] != "A" {
		t.Errorf("X: %d cuts, last %q; A: %q", len(got["X"]), got["X"][len(got["X"])-1], got["A"])
	}
}

// FuzzSupportIndex holds supportIndex, with few names (scanned) and many
// (a set), to the plain definition: each chain cut after the name's first occurrence as an
// entity, duplicates dropped, chain order kept.
func FuzzSupportIndex(f *testing.F) {
	f.Add("A -> r -> B <- s <- C\nA -> r -> B\nAB -> r -> A\nr -> A -> r")
	f.Add("Tom Hanks -> starred -> Big -> year -> 1988\nBig <- starred <- Tom Hanks")
	f.Add("x -> x -> x\nx")
	f.Fuzz(func(t *testing.T, text string) {
		chains := strings.Split(text, "\n")
		var names []string
		for _, c := range chains {
			eachEntity(c, func(name string, _ int) {
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			})
		}
		names = append(names, "r", "->", "")
		want := map[string][]string{}
		for _, n := range names {
			for _, c := range chains {
				cut, found := "", false
				eachEntity(c, func(name string, end int) {
					if !found && name == n {
						cut, found = c[:end], true
					}
				})
				if found && n != "" && !slices.Contains(want[n], cut) {
					want[n] = append(want[n], cut)
				}
			}
		}
		for _, set := range [][]string{names, names[:min(len(names), 3)]} {
			got := supportIndex(chains, set)
			for _, n := range set {
				if !slices.Equal(got[n], want[n]) {
					t.Fatalf("supportIndex(%q, %d names)[%q] = %q, want %q", chains, len(set), n, got[n], want[n])
				}
			}
		}
	})
}

func TestChainWithin(t *testing.T) {
	rels := map[string]bool{"directed_by": true, "born in": true}
	for chain, want := range map[string]bool{
		"Inception -> directed_by -> Nolan":                      true,
		"Inception -> directed_by -> Nolan -> born in -> London": true,
		"Inception -> written_by -> Nolan":                       false,
		"London <- born in <- Nolan <- spouse <- Emma":           false,
		"Inception": true,
	} {
		if got := chainWithin(chain, rels); got != want {
			t.Errorf("chainWithin(%q) = %v, want %v", chain, got, want)
		}
	}
}

// chainsWith is supportIndex for one name.
func chainsWith(chains []string, name string) []string {
	return supportIndex(chains, []string{name})[name]
}

func TestStructuralDropsCVTsBesideNamedAnswers(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"named and CVTs", []string{"Phil Knight", "m.09rzrss", "Bill Bowerman", "g.11b6x_q"}, "Phil Knight|Bill Bowerman"},
		{"only CVTs stay", []string{"m.09rzrss", "m.0my29ql"}, "m.09rzrss|m.0my29ql"},
		{"names like ids are kept", []string{"m.A", "M.0abc", "m.", "mg.0ab"}, "m.A|M.0abc|m.|mg.0ab"},
		{"none", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := &tracing.Result{}
			for i, n := range tc.in {
				res.Answers = append(res.Answers, tracing.Answer{Entity: int32(i), Name: n, Score: float32(len(tc.in) - i)})
			}
			got, err := Structural{}.Generate(context.Background(), "q", nil, res)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, a := range got {
				names = append(names, a.Name)
			}
			if s := strings.Join(names, "|"); s != tc.want {
				t.Errorf("answers %q, want %q", s, tc.want)
			}
		})
	}
}

func TestCount(t *testing.T) {
	ents := func(names ...string) []Answer {
		var out []Answer
		for i, n := range names {
			out = append(out, Answer{Name: n, Entity: n, Score: float32(i + 1), Supported: true, Chains: []string{"spain -> languages -> " + n, "spain -> official -> " + n}})
		}
		return out
	}
	for _, tc := range []struct {
		name, question string
		answers        []Answer
		want           []string // answer names in order
		chains         int      // the count's support
	}{
		{"counted", "how many languages do they speak in spain ?", ents("catalan", "basque", "galician"), []string{"3", "catalan", "basque", "galician"}, 6},
		{"capitals", "How  Many kids does bob have", ents("ann"), []string{"1", "ann"}, 2},
		{"no count asked", "what languages do they speak in spain ?", ents("catalan", "basque"), []string{"catalan", "basque"}, 0},
		{"the KG states the number", "how many people live in lyon ?", ents("513275"), []string{"513275"}, 0},
		{"nothing to count", "how many films did bob direct ?", nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Count(tc.question, tc.answers)
			var names []string
			for _, a := range got {
				names = append(names, a.Name)
			}
			if !slices.Equal(names, tc.want) {
				t.Fatalf("answers %v, want %v", names, tc.want)
			}
			if tc.chains > 0 && (len(got[0].Chains) != tc.chains || got[0].Score != float32(len(tc.answers)) || got[0].Entity != "") {
				t.Errorf("count %+v: want %d chains, score %d and no entity", got[0], tc.chains, len(tc.answers))
			}
		})
	}
}
