package models

// Lexicon says which words name the same thing or a kind of one another,
// from a dictionary rather than from co-occurrence: what word vectors,
// which place "son" near "parents", do not know. The zero-shot planners
// read a question's words against a KG's relation words with it.
// Implementations must be safe for concurrent use.
type Lexicon interface {
	// Related says how surely word names what relword names, from 0
	// (unrelated, or either word unknown) to 1 (synonyms); a word that
	// names a kind of relword's thing ("wife" and "spouse") scores in
	// between.
	Related(word, relword string) float32
	// Narrower lists words that name relword's thing or a kind of it
	// ("son", "daughter" and "kid" for "children"), relword's own forms
	// left out: what else a question may call it.
	Narrower(relword string) []string
}
