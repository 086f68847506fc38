package synth

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseP6(t *testing.T) {
	two := P6Reply{Sentences: []string{"Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."}, Question: "Where was the husband of Marie_Curie born?"}
	tests := []struct {
		name  string
		reply string
		want  P6Reply
	}{
		{"prompt format", `[("Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."), "Where was the husband of Marie_Curie born?"]`, two},
		{"single quotes and apostrophes",
			`[('X's spouse is [ENT1].', '[ENT1] is from [ENT2].'), 'What is the nationality of X's spouse?']`,
			P6Reply{Sentences: []string{"X's spouse is [ENT1].", "[ENT1] is from [ENT2]."}, Question: "What is the nationality of X's spouse?"}},
		{"typographic quotes", "[(“Marie_Curie is married to [ENT1].”, “[ENT1] was born in [ENT2].”), “Where was the husband of Marie_Curie born?”]", two},
		{"unquoted", `[(Marie_Curie is married to [ENT1]., [ENT1] was born in [ENT2].), Where was the husband of Marie_Curie born?]`, two},
		{"no outer brackets", `("Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."), "Where was the husband of Marie_Curie born?"`, two},
		{"prose, fence and think block", "<think>the first triple says...</think>\nHere is the result:\n```\n" +
			`[("Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2].",), "Where was the husband of Marie_Curie born?"]` + "\n```", two},
		{"json array", `[["Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."], "Where was the husband of Marie_Curie born?"]`, two},
		{"json object", `{"sentences": ["Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."], "multi-hop question": "Where was the husband of Marie_Curie born?"}`, two},
		{"labelled lines", "Sentences:\n1. Marie_Curie is married to [ENT1].\n2. [ENT1] was born in [ENT2].\nMulti-Hop Question: Where was the husband of Marie_Curie born?", two},
		{"escaped quote", `[("A \"B\" film is [ENT1].",), "Which is it?"]`, P6Reply{Sentences: []string{`A "B" film is [ENT1].`}, Question: "Which is it?"}},
		{"question with comma, unquoted", `[("[ENT1] was directed by Y.",), Which films, if any, did Y direct?]`,
			P6Reply{Sentences: []string{"[ENT1] was directed by Y."}, Question: "Which films, if any, did Y direct?"}},
		{"flat tuple", `("[ENT1] was directed by Y.", "Which films did Y direct?")`,
			P6Reply{Sentences: []string{"[ENT1] was directed by Y."}, Question: "Which films did Y direct?"}},
		{"no solution", "No Solution", P6Reply{NoSolution: true}},
		{"no solution quoted", "“No Solution”.", P6Reply{NoSolution: true}},
		{"no solution in prose", "<think>hmm</think>These sentences cannot form one question, so: No Solution", P6Reply{NoSolution: true}},
		{"no solution as question", `[("[ENT1] is male.",), "No Solution"]`, P6Reply{NoSolution: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseP6(tc.reply)
			if err != nil {
				t.Fatalf("ParseP6: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestParseP6Errors(t *testing.T) {
	for _, reply := range []string{
		"",
		"   ",
		"<think>I am still thinking",
		"I would rather not.",
		`[("a", "b"), ]`,
		"Question: what?",
		"[(" + strings.Repeat(`"[ENT1] x.", `, MaxSentences+1) + `), "q?"]`,
		strings.Repeat("x", MaxReplyBytes+1),
	} {
		_, err := ParseP6(reply)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseP6(%.40q) = %v, want a *ParseError", reply, err)
		}
	}
}

func TestFormatP6RoundTrip(t *testing.T) {
	for _, r := range []P6Reply{
		{Sentences: []string{"a"}, Question: "q"},
		{Sentences: []string{`say "hi", \ then`, "it's [ENT1]'s", "x\ny"}, Question: `what's "this", then?`},
	} {
		got, err := ParseP6(FormatP6(r.Sentences, r.Question))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("round trip of %#v gave %#v (via %s)", r, got, FormatP6(r.Sentences, r.Question))
		}
	}
}

// FuzzParseP6 checks that no reply makes the parser panic or return a
// reply breaking its contract, and that what it reads survives a round
// trip through FormatP6.
func FuzzParseP6(f *testing.F) {
	f.Add(`[("Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."), "Where was the husband of Marie_Curie born?"]`)
	f.Add("No Solution")
	f.Add(`{"sentences": ["a [ENT1]"], "question": "q?"}`)
	f.Add("1. a [ENT1]\nQuestion: q?")
	f.Fuzz(func(t *testing.T, reply string) {
		r, err := ParseP6(reply)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if r.NoSolution {
			if len(r.Sentences) != 0 || r.Question != "" {
				t.Fatalf("no-solution reply with content: %#v", r)
			}
			return
		}
		if len(r.Sentences) == 0 || len(r.Sentences) > MaxSentences || r.Question == "" {
			t.Fatalf("reply breaks the contract: %#v", r)
		}
		for _, s := range append(r.Sentences, r.Question) {
			if s != strings.TrimSpace(s) || s == "" {
				t.Fatalf("untrimmed or empty field %q in %#v", s, r)
			}
			if strings.Contains(strings.ToLower(s), "no solution") || strings.Contains(s, "think>") || strings.Contains(s, "```") || strings.ContainsAny(s, "\r\t") {
				return // the cleaner reads these specially: no round trip
			}
		}
		again, err := ParseP6(FormatP6(r.Sentences, r.Question))
		if err != nil {
			t.Fatalf("round trip of %#v: %v", r, err)
		}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip of %#v gave %#v", r, again)
		}
	})
}
