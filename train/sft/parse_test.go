package sft

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stem-kgqa/stem/projection/llmplan"
)

func TestParseAssertions(t *testing.T) {
	two := []string{"[ENT1] is directed by joel zwick.", "The language of [ENT1] is [ENT2]."}
	tests := []struct {
		name, reply string
		want        []string
		err         string
	}{
		{"P4 list", `["[ENT1] is directed by joel zwick.", "The language of [ENT1] is [ENT2]."]`, two, ""},
		{"trailing comma, single quotes", "[ '[ENT1] is directed by joel zwick.', 'The language of [ENT1] is [ENT2].', ]", two, ""},
		{"typographic quotes", "[“[ENT1] is directed by joel zwick.”, “The language of [ENT1] is [ENT2].”]", two, ""},
		{"numbered lines", "1. [ENT1] is directed by joel zwick.\n2. The language of [ENT1] is [ENT2].", two, ""},
		{"quoted numbered lines", "1) \"[ENT1] is directed by joel zwick.\"\n2) \"The language of [ENT1] is [ENT2].\"", two, ""},
		{"bullets", "Here they are:\n- [ENT1] is directed by joel zwick.\n- The language of [ENT1] is [ENT2].", two, ""},
		{"json object", `{"assertions": ["[ENT1] is directed by joel zwick.", "The language of [ENT1] is [ENT2]."]}`, two, ""},
		{"fenced with think", "<think>two triples, so two</think>\n```json\n[\"[ENT1] is directed by joel zwick.\", \"The language of [ENT1] is [ENT2].\"]\n```", two, ""},
		{"echoed triples then output", "Given Triple List: [(\"[ENT1]\", \"directed_by\", \"Joel Zwick\")]\nOutput: [\"[ENT1] is directed by joel zwick.\"]", []string{"[ENT1] is directed by joel zwick."}, ""},
		{"output on next line", "**Output:**\n[\"[ENT1] is directed by joel zwick.\"]", []string{"[ENT1] is directed by joel zwick."}, ""},
		{"canonical placeholders, spaces collapsed", `["[ ent1 ]  is directed by\njoel zwick."]`, []string{"[ENT1] is directed by joel zwick."}, ""},
		{"comma inside a quoted assertion", `["[ENT1] was born in texarkana, arkansas", "texarkana, arkansas is in [ENT2]"]`, []string{"[ENT1] was born in texarkana, arkansas", "texarkana, arkansas is in [ENT2]"}, ""},
		{"no placeholder", `["joel zwick directed a film"]`, nil, "placeholder"},
		{"empty", "", nil, "no assertion"},
		{"prose", "I cannot help with that.", nil, "no assertion"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAssertions(tc.reply)
			if tc.err != "" {
				var pe *llmplan.ParseError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &pe) {
					t.Fatalf("got %q, %v; want a *llmplan.ParseError with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestCheckAssertions(t *testing.T) {
	masked := [][3]string{{"[ENT1]", "directed_by", "Joel Zwick"}, {"[ENT1]", "in_language", "[ENT2]"}}
	tests := []struct {
		name   string
		as     []string
		reason string
	}{
		{"good", []string{"[ENT1] is by joel zwick.", "[ENT1] is in [ENT2]."}, ""},
		{"lower-case placeholder is the same", []string{"[ent1] is by joel zwick.", "[ENT1] is in [ ENT2 ]."}, ""},
		{"fewer", []string{"[ENT1] is by joel zwick."}, "llm: 1 assertions for 2 triples"},
		{"more", []string{"a [ENT1]", "b [ENT1] [ENT2]", "c"}, "llm: 3 assertions for 2 triples"},
		{"lost placeholder", []string{"[ENT1] is by joel zwick.", "[ENT1] is in German."}, "llm: an assertion lacks a placeholder of its triple"},
		{"renumbered", []string{"[ENT1] is by joel zwick.", "[ENT1] is in [ENT3]."}, "llm: an assertion lacks a placeholder of its triple"},
		{"foreign placeholder", []string{"[ENT1] is by joel zwick and in [ENT2].", "[ENT1] is in [ENT2]."}, "llm: an assertion names a placeholder its triple lacks"},
		{"swapped order", []string{"[ENT1] is in [ENT2].", "[ENT1] is by joel zwick."}, "llm: an assertion names a placeholder its triple lacks"},
	}
	for _, tc := range tests {
		err := CheckAssertions(tc.as, masked)
		if tc.reason == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var re *ReplyError
		if !errors.As(err, &re) || re.Reason != tc.reason {
			t.Errorf("%s: got %v, want reason %q", tc.name, err, tc.reason)
		}
	}
}

func TestFormatAssertionsRoundTrip(t *testing.T) {
	as := []string{`[ENT1] said "hi" \ there.`, "The language of [ENT1] is [ENT2].", "[ENT2] (a city, in Japan) is big"}
	got, err := ParseAssertions(FormatAssertions(as))
	if err != nil || !slices.Equal(got, as) {
		t.Fatalf("got %q, %v; want %q", got, err, as)
	}
}

// FuzzParseAssertions checks that any reply is either refused or read into
// tidy assertions that survive being written and read again; seeds are in
// testdata/fuzz/FuzzParseAssertions.
func FuzzParseAssertions(f *testing.F) {
	f.Add(`["[ENT1] is directed by joel zwick.", "The language of [ENT1] is [ENT2]."]`)
	f.Add("1. [ENT1] is directed by X\n2) [ENT2] is [ENT1]")
	f.Fuzz(func(t *testing.T, reply string) {
		as, err := ParseAssertions(reply)
		if err != nil {
			return
		}
		if len(as) == 0 || len(as) > llmplan.MaxAssertions {
			t.Fatalf("%d assertions accepted", len(as))
		}
		for _, a := range as {
			if a == "" || a != strings.TrimSpace(a) || strings.ContainsAny(a, "\n\t") {
				t.Fatalf("untidy assertion %q", a)
			}
		}
		if !utf8.ValidString(reply) {
			return // invalid bytes may be rewritten on the way
		}
		back, err := ParseAssertions(FormatAssertions(as))
		if err != nil || !slices.Equal(back, as) {
			t.Fatalf("%q did not read back: %q, %v", as, back, err)
		}
	})
}
