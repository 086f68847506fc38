package synth

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/train/dataset"
)

func TestFormOf(t *testing.T) {
	tests := []struct {
		rel  string
		want relForm
	}{
		{"nationality", relForm{noun: "nationality"}},
		{"place_of_birth", relForm{noun: "place of birth"}},
		{"people.person.spouse_s", relForm{noun: "spouse"}},
		{"__people__person__gender", relForm{noun: "gender"}},
		{"http://dbpedia.org/ontology/birthPlace", relForm{noun: "birth place"}},
		{"directed_by", relForm{passive: "directed by"}},
		{"written_by", relForm{passive: "written by"}},
		{"has_genre", relForm{noun: "genre"}},
		{"in_language", relForm{noun: "language"}},
		{"release_year", relForm{noun: "release year"}},
		{"part_of", relForm{noun: "part"}},
	}
	for _, tc := range tests {
		if got := formOf(tc.rel); got != tc.want {
			t.Errorf("formOf(%q) = %+v, want %+v", tc.rel, got, tc.want)
		}
	}
}

// questions collects every question the verbalizer writes for it over
// many seeds: the templates are drawn at random, so the set is what a
// test can pin down exactly.
func questions(t *testing.T, it dataset.Item, mention MentionStyle) []string {
	t.Helper()
	set := map[string]bool{}
	for seed := range uint64(300) {
		q, err := Verbalizer{Mention: mention, Seed: seed}.Question(&it)
		if err != nil {
			t.Fatal(err)
		}
		set[q] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func TestVerbalizer(t *testing.T) {
	tests := []struct {
		name    string
		item    dataset.Item
		mention MentionStyle
		want    []string
	}{
		{"two forward nouns",
			dataset.Item{ID: "1", Entities: []string{"anna_of_x"}, AnswerSlot: "[ENT2]",
				Masked: [][3]string{{"anna_of_x", "spouse", "[ENT1]"}, {"[ENT1]", "nationality", "[ENT2]"}}},
			MentionRaw,
			[]string{
				"anna_of_x 's spouse 's nationality ?",
				"the nationality of anna_of_x 's spouse ?",
				"the nationality of the spouse of anna_of_x ?",
				"what is anna_of_x 's spouse 's nationality ?",
				"what is the nationality of anna_of_x 's spouse ?",
				"what is the nationality of the spouse of anna_of_x ?",
				"which is the nationality of the spouse of anna_of_x ?",
				"which nationality does anna_of_x 's spouse have ?",
			}},
		{"reversed passive verb, bracket mention",
			dataset.Item{ID: "2", Entities: []string{"Joel Zwick"}, AnswerSlot: "[ENT1]",
				Masked: [][3]string{{"[ENT1]", "directed_by", "Joel Zwick"}}},
			MentionBracket,
			[]string{
				"what is directed by [Joel Zwick] ?",
				"what was directed by [Joel Zwick] ?",
				"which ones were directed by [Joel Zwick] ?",
			}},
		{"forward passive verb",
			dataset.Item{ID: "3", Entities: []string{"Kismet"}, AnswerSlot: "[ENT1]",
				Masked: [][3]string{{"Kismet", "directed_by", "[ENT1]"}}},
			MentionBracket,
			[]string{
				"[Kismet] was directed by what ?",
				"what is [Kismet] directed by ?",
				"what was [Kismet] directed by ?",
			}},
		{"reversed noun then forward noun, branch ignored",
			dataset.Item{ID: "4", Entities: []string{"usa"}, AnswerSlot: "[ENT2]",
				Masked: [][3]string{{"[ENT1]", "nationality", "usa"}, {"[ENT1]", "gender", "[ENT2]"}, {"[ENT3]", "spouse", "[ENT1]"}}},
			MentionRaw,
			[]string{
				"the gender of the one whose nationality is usa ?",
				"the gender of the one with usa as nationality ?",
				"what is the gender of the one whose nationality is usa ?",
				"what is the gender of the one with usa as nationality ?",
				"which is the gender of the one whose nationality is usa ?",
				"which is the gender of the one with usa as nationality ?",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := questions(t, tc.item, tc.mention)
			if !slices.Equal(got, tc.want) {
				t.Errorf("questions:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

func TestVerbalizerApply(t *testing.T) {
	it := dataset.Item{ID: "x#0", Entities: []string{"x"}, AnswerSlot: "[ENT1]", Masked: [][3]string{{"x", "spouse", "[ENT1]"}}}
	v := Verbalizer{Mention: MentionRaw, Seed: 4}
	if err := v.Apply(&it); err != nil {
		t.Fatal(err)
	}
	again, _ := v.Question(&it)
	if it.Question == "" || it.Question != again || it.QuestionSource != QuestionSourceVerbalizer || len(it.Assertions) != 0 {
		t.Errorf("item after Apply: %+v (again %q)", it, again)
	}
	bad := dataset.Item{ID: "y", Entities: []string{"x"}, AnswerSlot: "[ENT2]", Masked: [][3]string{{"x", "spouse", "[ENT1]"}}}
	if err := v.Apply(&bad); err == nil {
		t.Error("Apply accepted an item whose slot is in no triple")
	}
}

func TestParseMention(t *testing.T) {
	for _, s := range []string{"raw", "bracket"} {
		if m, err := ParseMention(s); err != nil || string(m) != s {
			t.Errorf("ParseMention(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseMention("quoted"); err == nil {
		t.Error("ParseMention accepted quoted")
	}
	if got := fmt.Sprint(MentionBracket.Format("Joel Zwick"), MentionRaw.Format("a_b")); got != "[Joel Zwick]a_b" {
		t.Errorf("Format: %s", got)
	}
}
