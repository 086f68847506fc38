package sft

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
)

func TestVerbalize(t *testing.T) {
	tests := []struct {
		head, rel, tail string
		want            string
	}{
		// The brief's example and PathQuestion's relations.
		{"[ENT1]", "nationality", "[ENT2]", "The nationality of [ENT1] is [ENT2]."},
		{"frederica_of_mecklenburg-strelitz", "spouse", "[ENT1]", "The spouse of frederica of mecklenburg strelitz is [ENT1]."},
		{"[ENT1]", "parents", "[ENT2]", "[ENT2] is one of the parents of [ENT1]."},
		{"john_doe", "children", "[ENT1]", "[ENT1] is a child of john doe."},
		{"[ENT1]", "place_of_birth", "[ENT2]", "The place of birth of [ENT1] is [ENT2]."},
		{"[ENT1]", "cause_of_death", "[ENT2]", "The cause of death of [ENT1] is [ENT2]."},
		{"[ENT2]", "profession", "[ENT3]", "The profession of [ENT2] is [ENT3]."},
		// MetaQA's relations, with the film as the head as in its KB.
		{"[ENT1]", "directed_by", "Joel Zwick", "[ENT1] is directed by joel zwick."},
		{"[ENT1]", "written_by", "Anthony Mann", "[ENT1] is written by anthony mann."},
		{"[ENT1]", "starred_actors", "Sharon Tate", "sharon tate starred in [ENT1]."},
		{"[ENT1]", "has_genre", "[ENT2]", "The genre of [ENT1] is [ENT2]."},
		{"[ENT1]", "release_year", "[ENT2]", "The release year of [ENT1] is [ENT2]."},
		{"[ENT1]", "in_language", "[ENT2]", "The language of [ENT1] is [ENT2]."},
		{"[ENT1]", "has_tags", "[ENT2]", "[ENT1] is tagged with [ENT2]."},
		{"A Few Good Men", "has_imdb_rating", "[ENT1]", "The IMDb rating of a few good men is [ENT1]."},
		{"[ENT1]", "has_imdb_votes", "famous", "The IMDb votes of [ENT1] are famous."},
		{"$", "release_year", "[ENT1]", "The release year of $ is [ENT1]."},
		// Freebase and PathQuestion-Large.
		{"Kagoshima Prefecture", "location.location.containedby", "[ENT1]", "kagoshima prefecture is contained by [ENT1]."},
		{"[ENT1]", "__location__location__people_born_here", "[ENT2]", "[ENT2] was born in [ENT1]."},
		{"[ENT1]", "__people__person__gender", "[ENT2]", "The gender of [ENT1] is [ENT2]."},
		{"m.0abc12", "people.person.sibling_s", "[ENT1]", "[ENT1] is one of the siblings of m.0abc12."},
		{"[ENT1]", "location.location.contains", "[ENT2]", "[ENT1] contains [ENT2]."},
		{"[ENT1]", "common.topic.notable_for", "[ENT2]", "[ENT1] is notable for [ENT2]."},
		{"[ENT1]", "base.x.plays_for", "[ENT2]", "[ENT1] plays for [ENT2]."},
		{"[ENT1]", "measurement_unit.dated_integer.number", "[ENT2]", "The dated integer number of [ENT1] is [ENT2]."},
		{"[ENT1]", "http://dbpedia.org/ontology/birthPlace", "[ENT2]", "The birth place of [ENT1] is [ENT2]."},
		{"[ENT1]", "100%_rating", "[ENT2]", "The 100 rating of [ENT1] is [ENT2]."},
		{"[ENT1]", "", "[ENT2]", "[ENT1] is related to [ENT2]."},
		{"[ent1]", "spouse", "[ENT2]", "The spouse of [ent1] is [ENT2]."},
	}
	for _, tc := range tests {
		if got := Verbalize(tc.head, tc.rel, tc.tail); got != tc.want {
			t.Errorf("Verbalize(%q, %q, %q) = %q, want %q", tc.head, tc.rel, tc.tail, got, tc.want)
		}
	}
}

func TestRelationWords(t *testing.T) {
	tests := map[string]string{
		"place_of_birth":                         "place of birth",
		"film.film.directed_by":                  "directed by",
		"__people__person__place_of_birth":       "place of birth",
		"location.location.containedby":          "contained by",
		"people.person.sibling_s":                "siblings",
		"x.dated_integer.number":                 "dated integer number",
		"http://dbpedia.org/ontology/birthPlace": "birth place",
		"directed by":                            "directed by",
		"people.person.":                         "person",
		"":                                       "",
	}
	for in, want := range tests {
		if got := RelationWords(in); got != want {
			t.Errorf("RelationWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// checkMentions fails unless every end of the triple can be found in the
// sentence: placeholders verbatim, names as kg.EntityText.
func checkMentions(t *testing.T, head, rel, tail string) {
	t.Helper()
	s := Verbalize(head, rel, tail)
	for _, e := range []string{head, tail} {
		if !strings.Contains(s, entityText(e)) {
			t.Errorf("Verbalize(%q, %q, %q) = %q lacks %q", head, rel, tail, s, entityText(e))
		}
	}
	if strings.ContainsAny(s, "\n\r") || !strings.HasSuffix(s, ".") || strings.Contains(s, "%!") {
		t.Errorf("Verbalize(%q, %q, %q) = %q: not one sentence", head, rel, tail, s)
	}
}

// TestVerbalizeKeepsEntities is the property every assertion needs: the
// SAGB must find the triple's ends in it.
func TestVerbalizeKeepsEntities(t *testing.T) {
	rels := []string{"nationality", "parents", "children", "directed_by", "starred_actors", "has_tags", "in_language",
		"__location__location__people_born_here", "location.location.containedby", "people.person.sibling_s",
		"base.x.plays_for", "x.y.type", "%s%d", "a..b", "__", ".", "http://x.org/", "has", "is", "by", "of"}
	ents := []string{"[ENT1]", "[ENT12]", "[ ent3 ]", "Joel Zwick", "frederica_of_mecklenburg-strelitz", "$", "m.0abc12",
		"Café_Müller", "%d", "a [b] c", "  spaced  out  ", "100%", "[ENT1]x", "é"}
	r := rand.New(rand.NewPCG(7, 7))
	for range 2000 {
		checkMentions(t, ents[r.IntN(len(ents))], rels[r.IntN(len(rels))], ents[r.IntN(len(ents))])
	}
}

// TestVerbalizeBenchmarkRelations runs the property over every relation of
// the benchmarks' KBs.
func TestVerbalizeBenchmarkRelations(t *testing.T) {
	rels := map[string]bool{}
	for _, f := range []string{"pathquestion/PQL2-KB.txt", "pathquestion/3H-kb.txt"} {
		fh, err := os.Open(shareddata.Path(t, f))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if parts := strings.Split(sc.Text(), "\t"); len(parts) == 3 {
				rels[parts[1]] = true
			}
		}
		fh.Close()
	}
	fh, err := os.Open(shareddata.Path(t, "webqsp/rog_paths_train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	dec := json.NewDecoder(fh)
	for dec.More() {
		var row struct {
			GroundPaths [][]string `json:"ground_paths"`
		}
		if err := dec.Decode(&row); err != nil {
			t.Fatal(err)
		}
		for _, p := range row.GroundPaths {
			for _, r := range p {
				rels[r] = true
			}
		}
	}
	if len(rels) < 1000 {
		t.Fatalf("read only %d relations", len(rels))
	}
	for r := range rels {
		if RelationWords(r) == "" {
			t.Errorf("RelationWords(%q) is empty", r)
		}
		checkMentions(t, "[ENT1]", r, "Barack_Obama")
	}
}

func TestVerbalizerAsserter(t *testing.T) {
	as, err := Verbalizer{}.Assert(context.Background(), "q", [][3]string{{"[ENT1]", "directed_by", "Joel Zwick"}, {"[ENT1]", "in_language", "[ENT2]"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"[ENT1] is directed by joel zwick.", "The language of [ENT1] is [ENT2]."}
	if strings.Join(as, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", as, want)
	}
	if err := CheckAssertions(as, [][3]string{{"[ENT1]", "directed_by", "Joel Zwick"}, {"[ENT1]", "in_language", "[ENT2]"}}); err != nil {
		t.Error(err)
	}
	if (Verbalizer{}).Source() != "verbalizer" || kg.EntityText("Joel Zwick") != "joel zwick" {
		t.Error("source or entity text changed")
	}
}
