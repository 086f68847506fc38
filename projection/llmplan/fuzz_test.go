package llmplan

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/schema"
)

var decompositionSeeds = []string{
	`(("rome's nearby airport is [ENT1]",), Breadth)`,
	`("[ENT1] is contained by Aomori Prefecture.", "[ENT1] experienced the 2011 earthquake"), Precision)`,
	"((“Corfu is belong to [ENT1].”, “[ENT1]’s official language is [ENT2].”), Breadth)",
	"Sure:\n```json\n{\"assertions\": [\"[ENT1] directed Inception\"], \"strategy\": \"Precision\"}\n```",
	"1. Clutch the Bear is the mascot of [ENT1]\n2. [ENT1]'s arena is [ENT2]\nStrategy: Breadth",
	"<think>hmm (\"[ENT3]\"</think>(texarkana, arkansas is in [ENT1], Precision)",
	`(('a \"b\" [ENT1]', "c\\d [ent 2]"), 'x')`,
	"[[\"[ENT1] x\", {\"step\": \"[ENT2] y\"}], \"breadth\"",
	"(\"unterminated [ENT1]",
	"((((([ENT1]",
	"'", "“", "[ENT1", ")]}", "\\u00e9 [ENT1]",
}

var tripleSeeds = []string{
	"[\n(\"Kagoshima Prefecture\", \"location.location.containedby\", \"[ENT1]\"),\n]",
	`{"triples": [["Inception", "directed_by", "[ENT1]"], ["[ENT1]", "spouse", "[ENT2]"]]}`,
	`[{"head": "Inception", "relation": "directed_by", "tail": "[ENT1]"}]`,
	"[(Rome, location.location.nearby_airports, [ent1]), ]",
	"Inception -> directed_by -> [ENT1]",
	"[(“Jenny’s Father”, “film.performance.character”, “[ENT1]”)]",
	`[("a", "b")]`, `{"head": }`, "(((", "\"\"\"", "[ENT1] -> -> x",
}

// FuzzParseDecomposition checks that the parser never panics, that what it
// accepts is a plan (assertions present, bounded, one with a placeholder,
// all tidy), and that a parsed plan printed by FormatDecomposition parses
// back to itself.
func FuzzParseDecomposition(f *testing.F) {
	for _, s := range decompositionSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		d, err := ParseDecomposition(reply)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if n := len(d.Assertions); n == 0 || n > MaxAssertions {
			t.Fatalf("%d assertions", n)
		}
		if !anyPlaceholder(d.Assertions) {
			t.Fatalf("no placeholder in %q", d.Assertions)
		}
		for _, a := range d.Assertions {
			if a == "" || a != tidy(a) {
				t.Fatalf("assertion %q is not tidy", a)
			}
		}
		s := FormatDecomposition(d)
		back, err := ParseDecomposition(s)
		if err != nil {
			t.Fatalf("reparse of %q: %v", s, err)
		}
		if !reflect.DeepEqual(back, d) {
			t.Fatalf("reparse of %q = %+v, want %+v", s, back, d)
		}
	})
}

// FuzzParseTriples checks the same for triples.
func FuzzParseTriples(f *testing.F) {
	for _, s := range tripleSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		ts, err := ParseTriples(reply)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if n := len(ts); n == 0 || n > MaxTriples {
			t.Fatalf("%d triples", n)
		}
		for _, tr := range ts {
			for _, f := range []string{tr.Head, tr.Rel, tr.Tail} {
				if f == "" || f != tidy(f) {
					t.Fatalf("field %q of %v is not tidy", f, tr)
				}
			}
		}
		s := FormatTriples(ts)
		back, err := ParseTriples(s)
		if err != nil {
			t.Fatalf("reparse of %q: %v", s, err)
		}
		if !reflect.DeepEqual(back, ts) {
			t.Fatalf("reparse of %q = %v, want %v", s, back, ts)
		}
	})
}

// randText draws tidy text from an alphabet rich in the characters the
// parsers treat specially.
func randText(r *rand.Rand, withPlaceholder bool) string {
	alphabet := []string{"a", "b", "Rome", "é", " ", ",", "(", ")", "[", "]", "{", "}", `"`, "'", `\`, ":", "“", "”", "‘", "’", "-", ">", "1", ".", "precision", "x"}
	var b strings.Builder
	for range 1 + r.IntN(12) {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	if withPlaceholder {
		b.WriteString(" [ENT" + string(rune('1'+r.IntN(3))) + "]")
	}
	s := tidy(b.String())
	if s == "" {
		s = "z"
	}
	return s
}

// TestFormatParseProperty: any well-formed plan printed by the formatters
// parses back to itself.
func TestFormatParseProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var d Decomposition
		n := 1 + r.IntN(4)
		seen := map[string]bool{}
		for j := range n {
			a := randText(r, j == 0 || r.IntN(2) == 0)
			if _, isSt := strategyOf(a); isSt || seen[a] {
				continue
			}
			seen[a] = true
			d.Assertions = append(d.Assertions, a)
		}
		if len(d.Assertions) == 0 || !anyPlaceholder(d.Assertions) {
			continue
		}
		if r.IntN(3) > 0 {
			d.HasStrategy = true
			d.Strategy = schema.Strategy(r.IntN(2))
		}
		s := FormatDecomposition(d)
		got, err := ParseDecomposition(s)
		if err != nil || !reflect.DeepEqual(got, d) {
			t.Fatalf("case %d: ParseDecomposition(%q) = %+v, %v; want %+v", i, s, got, err, d)
		}

		ts := make([]schema.Triple, 1+r.IntN(3))
		for j := range ts {
			ts[j] = schema.Triple{Head: randText(r, false), Rel: randText(r, false), Tail: randText(r, r.IntN(2) == 0)}
		}
		s = FormatTriples(ts)
		back, err := ParseTriples(s)
		if err != nil || !reflect.DeepEqual(back, ts) {
			t.Fatalf("case %d: ParseTriples(%q) = %v, %v; want %v", i, s, back, err, ts)
		}
	}
}
