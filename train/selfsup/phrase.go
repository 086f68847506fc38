package selfsup

import (
	"math/rand/v2"
	"strings"

	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/synth"
)

// form is how a relation reads: a noun ("nationality", "cause of death")
// or a passive verb ("directed by"), whose participle ("directed") also
// reads actively ("who directed X").
type form struct {
	noun, passive, participle string
}

func formOf(rel string) form {
	noun, passive := synth.RelationForm(rel)
	return form{noun: noun, passive: passive, participle: strings.TrimSuffix(passive, " by")}
}

// phrase is a noun phrase for the entity a path has reached; poss says
// whether "'s" may follow it without changing what it refers to.
type phrase struct {
	text string
	poss bool
}

// pick returns one of ss drawn from rng.
func pick[T any](rng *rand.Rand, ss ...T) T { return ss[rng.IntN(len(ss))] }

// phraser writes questions from relation words, drawing its choices from
// rng; alts holds the other nouns a relation's noun may be written as
// (a lexicon's narrower words: "son" or "kid" for "children").
type phraser struct {
	rng  *rand.Rand
	alts map[string][]string
}

// form reads st's relation, its noun replaced half the time by one of its
// alternatives.
func (ph phraser) form(st schema.Step) form {
	f := formOf(st.Rel)
	if alts := ph.alts[f.noun]; len(alts) > 0 && ph.rng.IntN(2) == 0 {
		f.noun = alts[ph.rng.IntN(len(alts))]
	}
	return f
}

// extend returns a phrase for the entity one step further along st.
func (ph phraser) extend(p phrase, st schema.Step) phrase {
	rng, f := ph.rng, ph.form(st)
	inv := st.Dir == schema.Inverse
	switch {
	case f.passive != "" && !inv:
		return pick(rng,
			phrase{text: "the one " + p.text + " was " + f.passive},
			phrase{text: "whoever " + f.participle + " " + p.text},
			phrase{text: "the one who " + f.participle + " " + p.text})
	case f.passive != "":
		return pick(rng,
			phrase{text: "the ones " + f.passive + " " + p.text},
			phrase{text: "the ones " + p.text + " " + f.participle},
			phrase{text: "those " + f.passive + " " + p.text})
	case inv:
		return pick(rng,
			phrase{text: "the one whose " + f.noun + " is " + p.text},
			phrase{text: "the ones with " + p.text + " as " + f.noun},
			phrase{text: "those that have " + p.text + " as their " + f.noun})
	case p.poss:
		return pick(rng,
			phrase{text: "the " + f.noun + " of " + p.text},
			phrase{text: p.text + " 's " + f.noun, poss: true})
	default:
		return phrase{text: "the " + f.noun + " of " + p.text}
	}
}

// ask returns a question whose answer is one step further from p.
func (ph phraser) ask(p phrase, st schema.Step) string {
	rng, f := ph.rng, ph.form(st)
	inv := st.Dir == schema.Inverse
	switch {
	case f.passive != "" && !inv:
		return pick(rng,
			"who "+f.participle+" "+p.text+" ?",
			"what was "+p.text+" "+f.passive+" ?",
			p.text+" was "+f.passive+" who ?",
			p.text+" was "+f.passive+" what ?",
			"by whom was "+p.text+" "+f.participle+" ?")
	case f.passive != "":
		return pick(rng,
			"what was "+f.passive+" "+p.text+" ?",
			"which ones were "+f.passive+" "+p.text+" ?",
			p.text+" "+f.participle+" which ones ?",
			"what has "+p.text+" "+f.participle+" ?",
			"what are the ones "+f.passive+" "+p.text+" ?")
	case inv:
		return pick(rng,
			"whose "+f.noun+" is "+p.text+" ?",
			"what has "+p.text+" as its "+f.noun+" ?",
			"which ones have "+p.text+" as "+f.noun+" ?",
			p.text+" is the "+f.noun+" of what ?",
			"who has "+p.text+" as "+f.noun+" ?",
			"what is "+p.text+" the "+f.noun+" of ?")
	case p.poss:
		return pick(rng,
			"what is the "+f.noun+" of "+p.text+" ?",
			"the "+f.noun+" of "+p.text+" ?",
			"who is the "+f.noun+" of "+p.text+" ?",
			"what is "+p.text+" 's "+f.noun+" ?",
			p.text+" 's "+f.noun+" ?",
			"who is "+p.text+" 's "+f.noun+" ?",
			"what "+f.noun+" does "+p.text+" have ?")
	default:
		return pick(rng,
			"what is the "+f.noun+" of "+p.text+" ?",
			"the "+f.noun+" of "+p.text+" ?",
			"who is the "+f.noun+" of "+p.text+" ?",
			"which is the "+f.noun+" of "+p.text+" ?",
			"what are the "+f.noun+" of "+p.text+" ?")
	}
}

// phrasings writes up to n distinct questions for the path steps leaving
// the entity named mention, each drawn from rng: every step is read as a
// noun or a verb, forward or backward, nested as "of" phrases, possessive
// chains or relative clauses. Fewer than n come back when the templates
// run out.
func (ph phraser) phrasings(mention string, steps []schema.Step, n int) []string {
	var out []string
	seen := map[string]bool{}
	for try := 0; try < 4*n && len(out) < n; try++ {
		p := phrase{text: mention, poss: true}
		for _, st := range steps[:len(steps)-1] {
			p = ph.extend(p, st)
		}
		q := ph.ask(p, steps[len(steps)-1])
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}
