package compose

import "strings"

// The word classes below are English function words, not any dataset's
// vocabulary: they decide which words of a question may name a relation.

// stopWords never name a relation: articles, auxiliaries, pronouns,
// prepositions and the fillers of question phrasing ("what is the name
// of", "tell me").
var stopWords = wordSet(`a an the of in on at to for from by with and or is are was were be been being am
	did does do done has have had having that this these those it its he she they them his her their
	i you we me my your our us s as about into onto than then there here can could would should will shall
	may might must please name names called tell list give show find some any all each every
	kind type sort thing things one ones ever
	whom whose why
	through under over after before across within during without between among against along
	around behind below above beyond near upon via per since until toward towards off out up down`)

// whWords ask for the answer; which answer they ask for is read by
// answerKind.
var whWords = wordSet(`who what which where when how`)

// shareWords say that the answer shares the question entity's relation
// ("acted together with", "the same director", "co-directed", "also
// wrote"): a path that walks a relation and straight back along it may
// then be read from one relation word.
var shareWords = wordSet(`together same also share shares shared sharing co fellow both too alongside`)

// fillerAfterWh may stand between "which"/"what" and the noun that names
// the answer's type ("what kind of films", "which of the movies").
var fillerAfterWh = wordSet(`kind type sort sorts kinds types of the a an`)

// irregular maps irregular verb forms to a form that stems like the
// regular ones, so "wrote" and "written" meet "writer".
var irregular = map[string]string{
	"wrote": "write", "written": "write", "spoke": "speak", "spoken": "speak",
	"sang": "sing", "sung": "sing", "made": "make", "won": "win", "led": "lead",
	"held": "hold", "taught": "teach", "built": "build", "bought": "buy",
	"sold": "sell", "began": "begin", "begun": "begin", "chose": "choose",
	"chosen": "choose", "drew": "draw", "drawn": "draw", "drove": "drive",
	"driven": "drive", "flew": "fly", "flown": "fly", "founded": "found",
	"fought": "fight", "gave": "give", "given": "give", "grew": "grow",
	"grown": "grow", "knew": "know", "known": "know", "married": "marry",
	"paid": "pay", "ran": "run", "sent": "send", "shot": "shoot", "stood": "stand",
	"took": "take", "taken": "take", "thought": "think", "told": "tell",
	"went": "go", "gone": "go", "born": "birth", "bore": "birth", "died": "death",
	"dead": "death", "die": "death", "dies": "death", "lived": "live", "lives": "live",
	"children": "child", "men": "man", "women": "woman", "people": "person",
	"played": "play", "plays": "play",
}

// suffixes are stripped, longest first, to compare words by stem: "actors"
// and "act", "directed" and "director", "nationality" and "nation".
var suffixes = []string{"ality", "ities", "ation", "ments", "ment", "ions", "ness", "ship",
	"ings", "ity", "ion", "ers", "ors", "ing", "ess", "ies", "ied", "est", "ful",
	"ed", "er", "or", "es", "al", "ly", "ic", "s", "e", "y"}

// stem reduces a lowercase word to a crude stem: irregular forms first,
// then one suffix, keeping at least three letters.
func stem(w string) string {
	if r, ok := irregular[w]; ok {
		w = r
	}
	for _, s := range suffixes {
		if len(w)-len(s) >= 3 && strings.HasSuffix(w, s) {
			w = w[:len(w)-len(s)]
			break
		}
	}
	// Doubled final consonants ("starr" from "starred") meet "star".
	if n := len(w); n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiou", rune(w[n-1])) {
		w = w[:n-1]
	}
	return w
}

// sameStem reports whether a and b are forms of one word: equal stems, or
// one word or stem a prefix of the other of at least five letters
// ("nation" and "nationality", "located" and "location"), or a compound
// ending with the other ("screenwriter" and "writer", and by their stems
// "written": MetaQA 2-hop dev Hits@1 89.95 -> 90.85).
func sameStem(a, b string) bool {
	return stemsMatch(a, b, stem(a), stem(b))
}

// stemsMatch is sameStem with the stems sa and sb of a and b given.
func stemsMatch(a, b, sa, sb string) bool {
	return sa == sb || longPrefix(a, b) || longPrefix(sa, sb) || compound(a, b) || compound(b, a) || stemCompound(sa, sb) || stemCompound(sb, sa)
}

// compound reports whether a ends with b of five letters or more:
// "screenwriter" and "writer".
func compound(a, b string) bool {
	return len(b) >= 5 && len(a) > len(b) && strings.HasSuffix(a, b)
}

// longPrefix reports whether a and b share a prefix of at least five
// letters that lacks at most two letters of the shorter word.
func longPrefix(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	n := 0
	for n < len(a) && a[n] == b[n] {
		n++
	}
	return n >= 5 && n >= len(a)-2
}

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// stemCompound reports whether stem a ends with stem b of four letters or
// more: "screenwriter" and "written" ("screenwrit", "writ").
func stemCompound(a, b string) bool {
	return len(b) >= 4 && len(a) > len(b) && strings.HasSuffix(a, b)
}

// participle reports whether w reads as a past participle: a regular one
// ("directed", "starred") or an irregular form that stems like a verb
// ("written", "born").
func participle(w string) bool {
	if len(w) > 4 && strings.HasSuffix(w, "ed") {
		return true
	}
	_, irr := irregular[w]
	return irr && (strings.HasSuffix(w, "en") || strings.HasSuffix(w, "wn") || w == "born" || w == "made" || w == "sung" || w == "built" || w == "held")
}
