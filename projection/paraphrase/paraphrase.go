// Package paraphrase reads a question's words for the relations they
// name where the words and the relation's name share nothing: English
// forms, not any dataset's vocabulary. "is X a man or a woman ?" asks X's
// gender; "X 's grandmother" is X's mother's mother. The compose planner
// aligns the rewritten words to relation paths, and the default
// confidence (package selection) reads the same words, so a relation the
// planner walked for them counts as named.
package paraphrase

import "strings"

// kinWords are the kin nouns that "grand" doubles: a grandmother is a
// mother's or father's mother, a grandson a son's or daughter's son, so
// "grandmother" names its kin relation walked twice.
var kinWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`mother father parent parents mom mum mama ma dad daddy papa pa
		child children kid kids son sons daughter daughters`) {
		m[w] = true
	}
	return m
}()

// grandKin returns the kin noun a "grand" word doubles ("mother" of
// "grandmother", "children" of "grandchildren"), "" for any other word.
func grandKin(w string) string {
	k, ok := strings.CutPrefix(w, "grand")
	if !ok || !kinWords[k] {
		return ""
	}
	return k
}

// alternatives are pairs of words whose "A or B" asks which of them the
// answer is, and the property word that names the choice: "is X a man or
// a woman ?" asks X's gender.
var alternatives = map[[2]string]string{
	{"man", "woman"}: "gender", {"woman", "man"}: "gender",
	{"male", "female"}: "gender", {"female", "male"}: "gender",
	{"boy", "girl"}: "gender", {"girl", "boy"}: "gender",
}

// Rewrite reads the question's tokens for what their words name: an
// alternative ("a man or a woman") becomes the property it asks for
// ("gender"), and a "grand" kin word its kin relation twice, as a
// possessive link ("X 's grandmother" is "X 's mother 's mother", "the
// grandmother of X" "the mother of mother of X"), unless kept says the KG
// names the word itself in a relation.
func Rewrite(toks []string, kept func(string) bool) []string {
	article := func(t string) bool { return t == "a" || t == "an" || t == "the" }
	out := make([]string, 0, len(toks)+4)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if j := i + 1; j < len(toks) && toks[j] == "or" {
			j++
			for j < len(toks) && article(toks[j]) {
				j++
			}
			if j < len(toks) {
				if prop, ok := alternatives[[2]string{t, toks[j]}]; ok {
					out = append(out, prop)
					i = j
					continue
				}
			}
		}
		if k := grandKin(t); k != "" && (kept == nil || !kept(t)) {
			link := "of"
			if i > 0 && toks[i-1] == "s" {
				link = "s"
			}
			out = append(out, k, link, k)
			continue
		}
		out = append(out, t)
	}
	return out
}
