package sft

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// Verbalizer writes assertions by rule from the relation's name, with no
// model: the fallback when no LLM is configured, and a baseline that makes
// the whole data pipeline runnable offline. It is deterministic, so a rerun
// writes the same file.
type Verbalizer struct{}

var _ Asserter = Verbalizer{}

// Source returns "verbalizer", as Item.AssertionSource records it.
func (Verbalizer) Source() string { return SourceVerbalizer }

// Assert writes one assertion per masked triple with Verbalize; it never
// fails.
func (Verbalizer) Assert(_ context.Context, _ string, masked [][3]string) ([]string, error) {
	out := make([]string, len(masked))
	for i, t := range masked {
		out[i] = Verbalize(t[0], t[1], t[2])
	}
	return out, nil
}

// Verbalize turns a masked triple into one declarative sentence:
// ("[ENT1]", "nationality", "[ENT2]") -> "The nationality of [ENT1] is
// [ENT2]." Placeholders are kept verbatim, other entities are written as
// kg.EntityText ("Joel_Zwick" -> "joel zwick"), so every end of the triple
// can be found in the sentence. The relation is read from the most specific
// part of its name (see RelationWords) and fitted into one of a few
// sentence shapes: a noun ("The place of birth of X is Y."), a plural noun
// ("Y is one of the parents of X."), a passive verb ("X is directed by
// Y."), a verb with a preposition ("X plays for Y."), or one of the
// benchmark relations whose name reads badly ("Y starred in X.").
func Verbalize(head, rel, tail string) string {
	return fmt.Sprintf(shape(RelationWords(rel)), entityText(head), entityText(tail))
}

func entityText(s string) string {
	if schema.IsPlaceholder(s) {
		return s
	}
	return kg.EntityText(s)
}

// genericLast are last segments of Freebase-style names too vague to stand
// alone ("measurement_unit.dated_integer.number"); the segment before them
// is kept too.
func genericLast(s string) bool {
	switch s {
	case "type", "types", "name", "date", "from", "to", "id", "kind", "category", "value", "number", "source":
		return true
	}
	return false
}

// RelationWords is the readable core of a relation name: the last segment
// of a Freebase dotted path ("people.person.place_of_birth" -> "place of
// birth") or of PathQuestion-Large's "__people__person__gender" ->
// "gender", the last two when the last alone is vague ("x.y.type" -> "y
// type"); IRIs are reduced to their local name and camelCase split, as
// kg.RelationText does. Freebase's glued or suffixed names are repaired
// ("containedby" -> "contained by", "sibling_s" -> "siblings").
func RelationWords(rel string) string {
	s := strings.TrimSpace(rel)
	if s == "" {
		return ""
	}
	if strings.Contains(s, "://") || strings.HasPrefix(s, "urn:") || strings.ContainsFunc(s, unicode.IsSpace) {
		return fixWords(kg.RelationText(s))
	}
	var segs []string
	if strings.Contains(s, "__") {
		segs = strings.Split(strings.Trim(s, "_"), "__")
	} else {
		segs = strings.Split(s, ".")
	}
	for len(segs) > 1 && strings.Trim(segs[len(segs)-1], "_") == "" {
		segs = segs[:len(segs)-1]
	}
	last := segs[len(segs)-1]
	if len(segs) > 1 && genericLast(strings.ToLower(strings.Trim(last, "_"))) {
		last = segs[len(segs)-2] + "_" + last
	}
	w := kg.RelationText(last)
	if w == "" {
		w = kg.RelationText(s)
	}
	return fixWords(w)
}

// fixWords repairs Freebase names that do not split into words.
func fixWords(w string) string {
	switch w {
	case "containedby":
		return "contained by"
	}
	if strings.HasSuffix(w, " s") && len(w) > 2 {
		// Freebase marks plural properties "sibling_s", "position_s".
		return w[:len(w)-2] + "s"
	}
	return w
}

// shape returns the sentence for relation words as a format with the head
// as %[1]s and the tail as %[2]s.
func shape(w string) string {
	// Benchmark relations (MetaQA, PathQuestion, Freebase) whose names do
	// not fit the general shapes below.
	switch w {
	case "":
		return "%[1]s is related to %[2]s."
	case "starred actors":
		return "%[2]s starred in %[1]s."
	case "has tags":
		return "%[1]s is tagged with %[2]s."
	case "in language":
		return "The language of %[1]s is %[2]s."
	case "has imdb rating":
		return "The IMDb rating of %[1]s is %[2]s."
	case "has imdb votes":
		return "The IMDb votes of %[1]s are %[2]s."
	case "children":
		return "%[2]s is a child of %[1]s."
	case "people born here":
		return "%[2]s was born in %[1]s."
	}
	words := strings.Fields(w)
	first, last := words[0], words[len(words)-1]
	switch {
	case first == "is" || first == "was" || first == "are":
		return "%[1]s " + esc(w) + " %[2]s."
	case (first == "has" || first == "have") && len(words) > 1:
		return noun(strings.Join(words[1:], " "))
	case last == "contains" || last == "includes":
		return "%[1]s " + esc(w) + " %[2]s."
	case last == "by" && len(words) > 1:
		// A passive: "directed by", "contained by".
		return "%[1]s is " + esc(w) + " %[2]s."
	case preposition(last) && len(words) > 1:
		if verb3(first) {
			return "%[1]s " + esc(w) + " %[2]s."
		}
		// A participle or an adjective: "located in", "notable for".
		return "%[1]s is " + esc(w) + " %[2]s."
	}
	return noun(w)
}

// noun shapes a relation named by a noun phrase: the tail is the head's
// w, or one of them when w is plural.
func noun(w string) string {
	words := strings.Fields(w)
	if plural(words[0]) || plural(words[len(words)-1]) {
		return "%[2]s is one of the " + esc(w) + " of %[1]s."
	}
	return "The " + esc(w) + " of %[1]s is %[2]s."
}

// esc protects relation words that contain '%' from fmt.
func esc(s string) string { return strings.ReplaceAll(s, "%", "%%") }

func preposition(w string) bool {
	switch w {
	case "of", "in", "to", "for", "from", "with", "at", "on", "as", "into", "about", "under", "after", "near":
		return true
	}
	return false
}

// plural guesses an English plural from its ending: "parents", "genres",
// "airports", "children", but not "status", "address" or "analysis".
func plural(w string) bool {
	switch w {
	case "children", "people", "men", "women":
		return true
	}
	if len(w) < 3 || !strings.HasSuffix(w, "s") {
		return false
	}
	return !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") && !strings.HasSuffix(w, "ics")
}

// verb3 guesses a third-person verb ("plays", "belongs") from its ending;
// used only before a preposition, where a plural noun is unlikely.
func verb3(w string) bool { return plural(w) }
