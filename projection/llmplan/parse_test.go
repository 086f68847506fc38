package llmplan

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/schema"
)

func TestParseDecomposition(t *testing.T) {
	P, B := schema.Precision, schema.Breadth
	tests := []struct {
		name  string
		reply string
		want  []string
		st    schema.Strategy
		hasSt bool
	}{
		{"paper format balanced", `(("rome's nearby airport is [ENT1]",), Breadth)`,
			[]string{"rome's nearby airport is [ENT1]"}, B, true},
		{"paper format unbalanced", `("[ENT1] is contained by Aomori Prefecture.", "[ENT1] experienced the event of the 2011 Tōhoku earthquake and tsunami"), Precision)`,
			[]string{"[ENT1] is contained by Aomori Prefecture.", "[ENT1] experienced the event of the 2011 Tōhoku earthquake and tsunami"}, P, true},
		{"single quotes with apostrophe", `(('Bessie Smith's music genre is [ENT1]', '[ENT1] is a genre'), 'Precision')`,
			[]string{"Bessie Smith's music genre is [ENT1]", "[ENT1] is a genre"}, P, true},
		{"curly quotes", "((“Corfu is belong to [ENT1].”, “[ENT1]’s official language is [ENT2].”), Breadth)",
			[]string{"Corfu is belong to [ENT1].", "[ENT1]’s official language is [ENT2]."}, B, true},
		{"curly single quotes", "(‘Brussels is the capital city of [ENT1]’, ‘European Union contains [ENT1].’), Precision)",
			[]string{"Brussels is the capital city of [ENT1]", "European Union contains [ENT1]."}, P, true},
		{"prose and code fence", "Sure! Here is the decomposition:\n```python\n((\"Inception was directed by [ENT1]\",), Precision)\n```\nThis question has one answer.",
			[]string{"Inception was directed by [ENT1]"}, P, true},
		{"think block", "<think>Maybe Breadth? the director (\"x [ENT9]\",)</think>((\"Inception was directed by [ENT1]\",), Precision)",
			[]string{"Inception was directed by [ENT1]"}, P, true},
		{"json object", `{"assertions": ["[ENT1] is the mascot of San Francisco Giants"], "strategy": "Precision", "reasoning": "only one mascot, not Breadth"}`,
			[]string{"[ENT1] is the mascot of San Francisco Giants"}, P, true},
		{"json array pair", `[["[ENT1] directed Inception", "[ENT2] is a film by [ENT1]"], "Breadth"]`,
			[]string{"[ENT1] directed Inception", "[ENT2] is a film by [ENT1]"}, B, true},
		{"strategy on its own line", "[\"[ENT1] is the capital of France\",]\nStrategy: Breadth",
			[]string{"[ENT1] is the capital of France"}, B, true},
		{"markdown strategy line beats prose", "The plan (I considered Breadth):\n(\"[ENT1] is the capital of France\",)\n**Strategy:** Precision",
			[]string{"[ENT1] is the capital of France"}, P, true},
		{"numbered list", "Assertions:\n1. Clutch the Bear is the mascot of [ENT1]\n2. [ENT1]'s arena stadium is [ENT2]\nStrategy: Precision",
			[]string{"Clutch the Bear is the mascot of [ENT1]", "[ENT1]'s arena stadium is [ENT2]"}, P, true},
		{"numbered quoted list", "1. \"Clutch the Bear is the mascot of [ENT1]\",\n2) '[ENT1] plays in [ENT2]'\n- Breadth",
			[]string{"Clutch the Bear is the mascot of [ENT1]", "[ENT1] plays in [ENT2]"}, B, true},
		{"unquoted tuple", "((texarkana, arkansas is part of [ENT1], [ENT1] is a county), Precision)",
			[]string{"texarkana, arkansas is part of [ENT1]", "[ENT1] is a county"}, P, true},
		{"no strategy", `("[ENT1] is the capital of France",)`,
			[]string{"[ENT1] is the capital of France"}, P, false},
		{"conflicting prose strategy", "Either Precision or Breadth.\n(\"[ENT1] is the capital of France\",)",
			[]string{"[ENT1] is the capital of France"}, P, false},
		{"placeholder spelling and spaces", "((\"the  capital of   France is [ ent1 ]\",), breadth)",
			[]string{"the capital of France is [ENT1]"}, B, true},
		{"escapes", `(("[ENT1] wrote \"Ulysses\"",), Precision)`,
			[]string{`[ENT1] wrote "Ulysses"`}, P, true},
		{"trailing comma and duplicates", `(("[ENT1] wrote Ulysses", "[ENT1] wrote Ulysses",), Precision,)`,
			[]string{"[ENT1] wrote Ulysses"}, P, true},
		{"quoted strategy after group", `("[ENT1] wrote Ulysses",), "Breadth"`,
			[]string{"[ENT1] wrote Ulysses"}, B, true},
		{"only first of several plans", "1. ((\"[ENT1] wrote Ulysses\",), Precision)\n2. ((\"Ulysses was written by [ENT1]\",), Breadth)",
			[]string{"[ENT1] wrote Ulysses"}, P, true},
		{"bare line", "[ENT1] is the author of Ulysses\nStrategy: Precision",
			[]string{"[ENT1] is the author of Ulysses"}, P, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDecomposition(tc.reply)
			if err != nil {
				t.Fatalf("ParseDecomposition(%q): %v", tc.reply, err)
			}
			if !reflect.DeepEqual(d.Assertions, tc.want) {
				t.Errorf("assertions = %q, want %q", d.Assertions, tc.want)
			}
			if d.HasStrategy != tc.hasSt || (tc.hasSt && d.Strategy != tc.st) {
				t.Errorf("strategy = %v (has %v), want %v (has %v)", d.Strategy, d.HasStrategy, tc.st, tc.hasSt)
			}
		})
	}
}

func TestParseDecompositionRejects(t *testing.T) {
	tests := []struct{ name, reply, reason string }{
		{"empty", "", "no assertion"},
		{"prose only", "I cannot answer that question, sorry.", "no assertion"},
		{"no placeholder", `(("Rome is in Italy",), Precision)`, "placeholder"},
		{"strategy only", "Strategy: Breadth", "no assertion"},
		{"unclosed think", "<think>the answer is (\"[ENT1] is x\",)", "no assertion"},
		{"runaway", runaway(), "more than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDecomposition(tc.reply)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseDecomposition(%q) = %+v, %v; want a *ParseError", tc.reply, d, err)
			}
			if !strings.Contains(pe.Reason, tc.reason) || pe.What != "decomposition" {
				t.Errorf("error %v: want reason containing %q", err, tc.reason)
			}
		})
	}
}

func TestParseTriples(t *testing.T) {
	tr := func(h, r, t string) schema.Triple { return schema.Triple{Head: h, Rel: r, Tail: t} }
	tests := []struct {
		name  string
		reply string
		want  []schema.Triple
	}{
		{"paper format", "[\n(\"Kagoshima Prefecture\", \"location.location.containedby\", \"[ENT1]\"),\n]",
			[]schema.Triple{tr("Kagoshima Prefecture", "location.location.containedby", "[ENT1]")}},
		{"two tuples one line", `[("[ENT1]", "location.location.containedby", "Aomori Prefecture"), ("[ENT1]", "location.location.events", "2011 Tōhoku earthquake and tsunami")]`,
			[]schema.Triple{tr("[ENT1]", "location.location.containedby", "Aomori Prefecture"), tr("[ENT1]", "location.location.events", "2011 Tōhoku earthquake and tsunami")}},
		{"json arrays", `{"triples": [["Inception", "directed_by", "[ENT1]"], ["[ENT1]", "spouse", "[ENT2]"]]}`,
			[]schema.Triple{tr("Inception", "directed_by", "[ENT1]"), tr("[ENT1]", "spouse", "[ENT2]")}},
		{"json objects", `[{"head": "Inception", "relation": "directed_by", "tail": "[ENT1]"}, {"subject": "[ENT1]", "predicate": "born_in", "object": "[ENT2]"}]`,
			[]schema.Triple{tr("Inception", "directed_by", "[ENT1]"), tr("[ENT1]", "born_in", "[ENT2]")}},
		{"single quotes and prose", "Here are the triples:\n```\n[('Rome', 'location.location.nearby_airports', '[ENT1]'),]\n```\nHope this helps (it should).",
			[]schema.Triple{tr("Rome", "location.location.nearby_airports", "[ENT1]")}},
		{"curly quotes", "[(“Jenny’s Father”, “film.performance.character”, “[ENT1]”)]",
			[]schema.Triple{tr("Jenny’s Father", "film.performance.character", "[ENT1]")}},
		{"unquoted", "[(Rome, location.location.nearby_airports, [ent1]), ]",
			[]schema.Triple{tr("Rome", "location.location.nearby_airports", "[ENT1]")}},
		{"one per line numbered", "1. (\"Inception\", \"directed_by\", \"[ENT1]\")\n2. (\"[ENT1]\", \"born_in\", \"[ENT2]\")",
			[]schema.Triple{tr("Inception", "directed_by", "[ENT1]"), tr("[ENT1]", "born_in", "[ENT2]")}},
		{"bare quoted line", `"Inception", "directed_by", "[ENT1]"`,
			[]schema.Triple{tr("Inception", "directed_by", "[ENT1]")}},
		{"arrows", "Inception -> directed_by -> [ENT1]",
			[]schema.Triple{tr("Inception", "directed_by", "[ENT1]")}},
		{"comma inside quotes", `[("texarkana, arkansas", "location.hud_county_place.county", "[ENT1]")]`,
			[]schema.Triple{tr("texarkana, arkansas", "location.hud_county_place.county", "[ENT1]")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTriples(tc.reply)
			if err != nil {
				t.Fatalf("ParseTriples(%q): %v", tc.reply, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseTriplesRejects(t *testing.T) {
	tests := []struct{ name, reply, reason string }{
		{"empty", "", "no (head"},
		{"prose", "I am not sure which relation fits.", "no (head"},
		{"two fields", `[("Inception", "[ENT1]")]`, "2 fields"},
		{"four fields", `[("Inception", "directed_by", "[ENT1]", "extra")]`, "4 fields"},
		{"echoed assertions", `["Inception was directed by [ENT1]"]`, "1 fields"},
		{"empty field", `[("Inception", "", "[ENT1]")]`, "empty field"},
		{"partial object", `[{"head": "Inception", "tail": "[ENT1]"}]`, "lacks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTriples(tc.reply)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseTriples(%q) = %v, %v; want a *ParseError", tc.reply, got, err)
			}
			if !strings.Contains(pe.Reason, tc.reason) || pe.What != "triples" {
				t.Errorf("error %v: want reason containing %q", err, tc.reason)
			}
		})
	}
}

func TestParseStrategyReply(t *testing.T) {
	tests := []struct {
		reply string
		want  schema.Strategy
		ok    bool
	}{
		{"Precision", schema.Precision, true},
		{"breadth.", schema.Breadth, true},
		{"<think>Precision or Breadth?</think>\nBreadth", schema.Breadth, true},
		{"It could be Precision, but Breadth.\nStrategy: Breadth", schema.Breadth, true},
		{"Precision or Breadth", 0, false},
		{"I don't know", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		got, err := ParseStrategyReply(tc.reply)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseStrategyReply(%q) = %v, %v; want %v, ok %v", tc.reply, got, err, tc.want, tc.ok)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	ds := []Decomposition{
		{Assertions: []string{"[ENT1] is the mascot of San Francisco Giants"}, Strategy: schema.Breadth, HasStrategy: true},
		{Assertions: []string{`a "quoted" \ back [ENT1]`, "it's [ENT2]’s, (odd) [x]"}, Strategy: schema.Precision, HasStrategy: true},
		{Assertions: []string{"[ENT1] wrote Ulysses", "Precision is [ENT2]"}},
	}
	for _, d := range ds {
		s := FormatDecomposition(d)
		got, err := ParseDecomposition(s)
		if err != nil {
			t.Fatalf("ParseDecomposition(%q): %v", s, err)
		}
		if !reflect.DeepEqual(got, d) {
			t.Errorf("round trip of %q: got %+v, want %+v", s, got, d)
		}
	}
	ts := []schema.Triple{{Head: `a "b", c`, Rel: "film.film.directed_by", Tail: "[ENT1]"}, {Head: "[ENT1]", Rel: `r\s`, Tail: "it’s (x)"}}
	s := FormatTriples(ts)
	got, err := ParseTriples(s)
	if err != nil || !reflect.DeepEqual(got, ts) {
		t.Errorf("round trip of %q: got %v, %v; want %v", s, got, err, ts)
	}
}

// runaway is a reply that repeats distinct assertions past MaxAssertions.
func runaway() string {
	var b strings.Builder
	b.WriteString("(")
	for i := range MaxAssertions + 1 {
		fmt.Fprintf(&b, "\"[ENT1] is thing %d\", ", i)
	}
	b.WriteString(")")
	return b.String()
}

func TestCleanInvalidUTF8(t *testing.T) {
	// Lower-casing would turn the bad byte into three, misplacing the cut.
	got := clean("\xff\xfe<THINK>x</think>((\"[ENT1] y\",), Breadth)")
	if want := "\xff\xfe((\"[ENT1] y\",), Breadth)"; got != want {
		t.Errorf("clean = %q, want %q", got, want)
	}
}
