package synth

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/dataset"
)

// MentionStyle says how a generated question writes its entity.
type MentionStyle string

// Mention styles of the benchmarks: PathQuestion writes the KG name as it
// is ("anna_of_holstein-gottorp"), MetaQA writes it in brackets
// ("[Joel Zwick]"). Matching the style of the questions a planner will see
// keeps the entity's mention maskable the same way in both.
const (
	MentionRaw     MentionStyle = "raw"
	MentionBracket MentionStyle = "bracket"
)

// ParseMention reads "raw" or "bracket".
func ParseMention(s string) (MentionStyle, error) {
	switch m := MentionStyle(s); m {
	case MentionRaw, MentionBracket:
		return m, nil
	}
	return "", fmt.Errorf("mention style %q: want raw or bracket", s)
}

// Format writes an entity name in the style.
func (m MentionStyle) Format(name string) string {
	if m == MentionBracket {
		return "[" + name + "]"
	}
	return name
}

// QuestionSourceVerbalizer is the QuestionSource of verbalised items.
const QuestionSourceVerbalizer = "verbalizer"

// Verbalizer writes a question for an item from the words of its chain's
// relations, without a language model: for the chain X -spouse-> [ENT1]
// -nationality-> [ENT2] it writes, for instance, "what is the nationality
// of the spouse of X ?" or "X 's spouse 's nationality ?". Several phrasings
// exist per step (forward and reversed edges, nouns such as "nationality"
// and passive verbs such as "directed by"); which one is used is drawn from
// a stream seeded by (Seed, item ID), so a rerun writes the same questions.
// The templates know nothing about any dataset's relations.
type Verbalizer struct {
	Mention MentionStyle
	Seed    uint64
}

// relForm is how a relation reads: a noun ("nationality", "release year")
// or a passive verb ("directed by").
type relForm struct {
	noun    string
	passive string
}

var (
	leadAux    = map[string]bool{"has": true, "have": true, "is": true, "was": true, "in": true, "of": true}
	trailPreps = map[string]bool{"of": true, "in": true, "for": true, "to": true, "at": true, "on": true, "from": true, "with": true}
)

// formOf reads a relation name: the last segment of a dotted Freebase name
// ("people.person.spouse_s" -> "spouse"), an IRI's local name, or the
// whole name, in words.
func formOf(rel string) relForm {
	s := rel
	if !strings.Contains(s, "://") {
		if i := strings.LastIndex(s, "__"); i >= 0 && i+2 < len(s) {
			s = s[i+2:]
		}
		if i := strings.LastIndexAny(s, "./#"); i >= 0 && i+1 < len(s) {
			s = s[i+1:]
		}
	}
	w := strings.Fields(kg.RelationText(s))
	if len(w) > 1 && w[len(w)-1] == "s" { // Freebase plural marker "_s"
		w = w[:len(w)-1]
	}
	if len(w) == 0 {
		return relForm{noun: rel}
	}
	if len(w) >= 2 && w[len(w)-1] == "by" {
		return relForm{passive: strings.Join(w, " ")}
	}
	if len(w) > 1 && leadAux[w[0]] {
		w = w[1:]
	}
	if len(w) > 1 && trailPreps[w[len(w)-1]] {
		w = w[:len(w)-1]
	}
	return relForm{noun: strings.Join(w, " ")}
}

// RelationForm reads a relation name as the verbalizer does: a noun
// ("nationality" from "people.person.nationality", "release year") or,
// for a name ending in "by", a passive verb ("directed by"); exactly one
// of the two is set.
func RelationForm(rel string) (noun, passive string) {
	f := formOf(rel)
	return f.noun, f.passive
}

// phrase is a noun phrase for the entity a chain has reached; poss says
// whether "'s" may follow it without changing what it refers to.
type phrase struct {
	text string
	poss bool
}

// extend returns the phrase for the entity one step further along.
func extend(rng *rand.Rand, p phrase, st schema.Step) phrase {
	f := formOf(st.Rel)
	inv := st.Dir == schema.Inverse
	switch {
	case f.passive != "" && !inv:
		return pickPhrase(rng,
			phrase{text: "the one " + p.text + " was " + f.passive},
			phrase{text: "whatever " + p.text + " was " + f.passive})
	case f.passive != "":
		return pickPhrase(rng,
			phrase{text: "the ones " + f.passive + " " + p.text},
			phrase{text: "something " + f.passive + " " + p.text})
	case inv:
		return pickPhrase(rng,
			phrase{text: "the one whose " + f.noun + " is " + p.text},
			phrase{text: "the one with " + p.text + " as " + f.noun})
	case p.poss:
		return pickPhrase(rng,
			phrase{text: "the " + f.noun + " of " + p.text},
			phrase{text: p.text + " 's " + f.noun, poss: true})
	default:
		return phrase{text: "the " + f.noun + " of " + p.text}
	}
}

func pickPhrase(rng *rand.Rand, ps ...phrase) phrase { return ps[rng.IntN(len(ps))] }

func pick(rng *rand.Rand, ss ...string) string { return ss[rng.IntN(len(ss))] }

// ask returns the question whose answer is one step further from p.
func ask(rng *rand.Rand, p phrase, st schema.Step) string {
	f := formOf(st.Rel)
	inv := st.Dir == schema.Inverse
	var q string
	switch {
	case f.passive != "" && !inv:
		q = pick(rng,
			"what was "+p.text+" "+f.passive+" ?",
			p.text+" was "+f.passive+" what ?",
			"what is "+p.text+" "+f.passive+" ?")
	case f.passive != "":
		q = pick(rng,
			"what was "+f.passive+" "+p.text+" ?",
			"which ones were "+f.passive+" "+p.text+" ?",
			"what is "+f.passive+" "+p.text+" ?")
	case inv:
		q = pick(rng,
			"what has "+p.text+" as its "+f.noun+" ?",
			"whose "+f.noun+" is "+p.text+" ?",
			"which ones have "+p.text+" as "+f.noun+" ?")
	case p.poss:
		q = pick(rng,
			"what is the "+f.noun+" of "+p.text+" ?",
			"what is "+p.text+" 's "+f.noun+" ?",
			"the "+f.noun+" of "+p.text+" ?",
			p.text+" 's "+f.noun+" ?",
			"which "+f.noun+" does "+p.text+" have ?")
	default:
		q = pick(rng,
			"what is the "+f.noun+" of "+p.text+" ?",
			"the "+f.noun+" of "+p.text+" ?",
			"which is the "+f.noun+" of "+p.text+" ?")
	}
	return q
}

// Question writes the question of the item's chain (see Chain).
func (v Verbalizer) Question(it *dataset.Item) (string, error) {
	steps, err := Chain(it)
	if err != nil {
		return "", err
	}
	h := fnv.New64a()
	h.Write([]byte(it.ID))
	rng := rand.New(rand.NewPCG(v.Seed, h.Sum64()))
	p := phrase{text: v.Mention.Format(it.Entities[0]), poss: true}
	for _, st := range steps[:len(steps)-1] {
		p = extend(rng, p, st)
	}
	return ask(rng, p, steps[len(steps)-1]), nil
}

// Apply sets the item's question and marks it as verbalised. Assertions
// are left alone: `stem data sft` writes them.
func (v Verbalizer) Apply(it *dataset.Item) error {
	q, err := v.Question(it)
	if err != nil {
		return err
	}
	it.Question, it.QuestionSource = q, QuestionSourceVerbalizer
	return nil
}
