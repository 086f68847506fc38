// Package constraint reads what a question states about its answer beyond
// the relation path to it, and checks answers against it in the KG: a time
// ("in 2011", "in the 90s", "current", "now", "before 1990", "after
// 2001"), an order in time ("first", "last") or by a number the answer
// has ("largest", "smallest"), a gender ("his wife", "her brother") and a
// type ("which state"). Detect writes them as the constraint edges of a schema graph
// (schema.Constraint); Apply judges the traced answers where the KG holds
// the attribute (a CVT's from and to dates, people.person.gender, the
// types the answer's relations and type edges name) and says so where it
// does not, rather than guess. Where the KG types none of the answers,
// their kinds are inferred (Checker.Kind: a relation named for the kind,
// WordNet's instance pointers through Checker.Lexicon, the entities beside
// them), so that "in which country" tells a country from a city on a KG
// with no type edges. Where the KG holds no dates for the answers, an
// order in time reads the years (or a series' numerals) in their names.
// Checker.Meet narrows the answers of any plan to those that meet the
// other things the question names ("the school with the mascot B").
//
// The package imports only kg and schema.
package constraint

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// The constraint kinds (schema.Constraint.Kind).
const (
	Time   = "time"
	Order  = "order"
	Gender = "gender"
	Type   = "type"
)

var (
	yearRE = regexp.MustCompile(`\b(1[0-9]{3}|20[0-9]{2})\b`)
	// compareRE is a comparative over time: "before 1990", "after
	// 2001", "since 1985".
	compareRE = regexp.MustCompile(`\b(before|after|since)\s+(1[0-9]{3}|20[0-9]{2})\b`)
	decadeRE  = regexp.MustCompile(`\b(?:(1[0-9]|20)([0-9])0s|(?:the )?([0-9])0s)\b`)
)

// Words that ask for the answer at a time: now, or first or last of
// several in time.
var (
	currentWords = []string{"current", "currently", "now", "today", "present", "presently", "nowadays"}
	firstWords   = []string{"first", "earliest", "original"}
	lastWords    = []string{"last", "latest", "newest", "recent", "recently"}
	// Superlatives over a number the KG gives the answer (an area, a
	// height, a population): the greatest or the least.
	maxWords = []string{"largest", "biggest", "highest", "tallest", "longest", "heaviest"}
	minWords = []string{"smallest", "lowest", "shortest", "lightest"}
)

// Relational nouns that name the answer's gender.
var (
	femaleWords = []string{"wife", "mother", "mom", "mum", "daughter", "sister", "girlfriend", "aunt", "niece", "granddaughter", "grandmother", "grandma", "queen", "princess", "widow", "bride", "stepmother", "stepdaughter"}
	maleWords   = []string{"husband", "father", "dad", "son", "brother", "boyfriend", "uncle", "nephew", "grandson", "grandfather", "grandpa", "king", "prince", "widower", "groom", "stepfather", "stepson"}
)

// Words that follow "what"/"which" but name no type of the answer.
var notTypes = []string{"is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would", "has", "have", "had", "to",
	"kind", "type", "sort", "kinds", "types", "of", "the", "a", "an", "part", "else", "other", "all", "about",
	"year", "years", "time", "date", "day", "month", "age", "happened", "happens", "made", "makes"}

// Detect returns the constraints the question states, in a fixed order
// (time, order, gender, type), each once.
func Detect(question string) []schema.Constraint {
	q := strings.ToLower(question)
	words := strings.FieldsFunc(q, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	has := func(set []string) string {
		for _, w := range words {
			if slices.Contains(set, w) {
				return w
			}
		}
		return ""
	}
	var out []schema.Constraint
	if m := decadeRE.FindStringSubmatch(q); m != nil {
		century, d := "19", m[3]
		if m[1] != "" {
			century, d = m[1], m[2]
		}
		from := century + d + "0"
		out = append(out, schema.Constraint{Kind: Time, Value: from + "-" + century + d + "9", Text: strings.TrimSpace(m[0])})
	} else if m := compareRE.FindStringSubmatch(q); m != nil {
		// A comparative: the fact held before (after) the year.
		y, _ := strconv.Atoi(m[2])
		v := "-" + strconv.Itoa(y-1)
		if m[1] != "before" {
			v = strconv.Itoa(y+1) + "-"
			if m[1] == "since" {
				v = m[2] + "-"
			}
		}
		out = append(out, schema.Constraint{Kind: Time, Value: v, Text: m[0]})
	} else if m := yearRE.FindString(q); m != "" {
		out = append(out, schema.Constraint{Kind: Time, Value: m, Text: m})
	} else if w := has(currentWords); w != "" {
		out = append(out, schema.Constraint{Kind: Time, Value: "current", Text: w})
	}
	if w := has(firstWords); w != "" {
		out = append(out, schema.Constraint{Kind: Order, Value: "first", Text: w})
	} else if w := has(lastWords); w != "" {
		out = append(out, schema.Constraint{Kind: Order, Value: "last", Text: w})
	} else if w := has(maxWords); w != "" {
		out = append(out, schema.Constraint{Kind: Order, Value: "max", Text: w})
	} else if w := has(minWords); w != "" {
		out = append(out, schema.Constraint{Kind: Order, Value: "min", Text: w})
	}
	if slices.Contains(words, "who") || slices.Contains(words, "whom") || slices.Contains(words, "name") {
		if w, female := answerNoun(words); w != "" {
			v := "male"
			if female {
				v = "female"
			}
			out = append(out, schema.Constraint{Kind: Gender, Value: v, Text: w})
		}
	}
	if t := typeNoun(words); t != "" {
		out = append(out, schema.Constraint{Kind: Type, Value: singular(t), Text: t})
	}
	return out
}

// answerNoun is the gendered relational noun that names the answer: in
// "the husband of the father of X's mom" the first one followed by "of",
// in "X's mom's husband" (no "of") the last one.
func answerNoun(words []string) (string, bool) {
	last, female := "", false
	for i, w := range words {
		f, m := slices.Contains(femaleWords, w), slices.Contains(maleWords, w)
		if !f && !m {
			continue
		}
		if i+1 < len(words) && words[i+1] == "of" {
			return w, f
		}
		last, female = w, f
	}
	return last, female
}

// typeNoun is the noun after the first "what" or "which" ("which state",
// "what kind of language"), "" when the words there are no type.
func typeNoun(words []string) string {
	for i, w := range words {
		if w != "what" && w != "which" {
			continue
		}
		j := i + 1
		for j < len(words) && slices.Contains([]string{"kind", "type", "sort", "kinds", "types", "of"}, words[j]) {
			j++
		}
		if j < len(words) && !slices.Contains(notTypes, words[j]) && !yearRE.MatchString(words[j]) {
			return words[j]
		}
		return ""
	}
	return ""
}

// iesWords are plurals in "ies" of singulars in "ie", which the "y" rule
// would misread ("movies" is no plural of "movy").
var iesWords = map[string]string{"movies": "movie", "cookies": "cookie", "zombies": "zombie", "rookies": "rookie",
	"calories": "calorie", "pies": "pie", "ties": "tie", "lies": "lie", "brownies": "brownie", "genies": "genie"}

// singular strips an English plural ending, enough to match type names
// ("countries" -> "country", "states" -> "state").
func singular(w string) string {
	if s, ok := iesWords[w]; ok {
		return s
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

// Verdict is how one answer fares against one constraint.
type Verdict int

const (
	// Unknown: the KG holds no such attribute for the answer.
	Unknown Verdict = iota
	// Holds: the KG says the answer meets the constraint.
	Holds
	// Fails: the KG says the answer does not.
	Fails
)

// Answer is one traced answer to check: its entity in g and the entities
// next to it in the evidence (a CVT it was reached through, whose dates
// say when the fact held).
type Answer struct {
	Entity int32
	Via    []int32
}

// Check judges a against c in g by what the KG states
// (Checker.Check with no lexicon).
func Check(g kg.Reader, c schema.Constraint, a Answer) Verdict {
	v, _ := Checker{Graph: g}.Check(c, a)
	return v
}

// Check judges a against c, and for a type that holds says how the kind
// was known (Kind). Order constraints are judged over a set of answers by
// Apply; here they are Unknown.
func (k Checker) Check(c schema.Constraint, a Answer) (Verdict, string) {
	switch c.Kind {
	case Gender:
		return gender(k.Graph, a.Entity, c.Value), ""
	case Type:
		return k.Kind(a.Entity, c.Value)
	case Time:
		return during(k.Graph, a, c.Value), ""
	}
	return Unknown, ""
}

// Reads returns the endings of the relation names that checking cs
// reads of an answer's outgoing edges (gender, spans), or nil when a check
// reads every edge (a type, a superlative's numbers): a remote KG then
// fetches those edges alone (kg.FetchOutEnding), not every edge of
// hundreds of answers. Each ending covers the names the check matches
// and maybe more; the check still matches names exactly.
func Reads(cs []schema.Constraint) []string {
	var out []string
	for _, c := range cs {
		switch {
		case c.Kind == Gender:
			out = append(out, "gender")
		case c.Kind == Time, c.Kind == Order && (c.Value == "first" || c.Value == "last"):
			out = append(out, "from", "to", "date")
		default:
			return nil
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// gender reads the answer's gender edge (a relation named "gender" or
// ending in ".gender") to an entity named female/male, woman/man.
func gender(g kg.Reader, e int32, want string) Verdict {
	v := Unknown
	for _, tid := range g.Out(e) {
		t := g.Triple(tid)
		r := g.RelationName(t.Rel)
		if r != "gender" && !strings.HasSuffix(r, ".gender") && !strings.HasSuffix(r, "__gender") {
			continue
		}
		switch kg.Normalize(g.EntityName(t.Tail)) {
		case "female", "woman":
			if want == "female" {
				return Holds
			}
			v = Fails
		case "male", "man":
			if want == "male" {
				return Holds
			}
			v = Fails
		}
	}
	return v
}

// span is a time interval in years; to 0 means still going on.
type span struct{ from, to int }

// spans reads the from/to dates of e and of the entities a came through:
// edges whose relation ends in from, to, start_date, end_date (or
// from_date, to_date) to an entity named by a date ("2011", "2011-07-01").
func spans(g kg.Reader, a Answer) []span {
	var out []span
	for _, e := range append([]int32{a.Entity}, a.Via...) {
		s, found := span{}, false
		for _, tid := range g.Out(e) {
			t := g.Triple(tid)
			r := g.RelationName(t.Rel)
			if i := strings.LastIndexAny(r, "._"); i >= 0 && !strings.HasSuffix(r, "start_date") && !strings.HasSuffix(r, "end_date") && !strings.HasSuffix(r, "from_date") && !strings.HasSuffix(r, "to_date") {
				r = r[i+1:]
			}
			y := year(g.EntityName(t.Tail))
			if y == 0 {
				continue
			}
			switch {
			case r == "from" || strings.HasSuffix(r, "start_date") || strings.HasSuffix(r, "from_date"):
				s.from, found = y, true
			case r == "to" || strings.HasSuffix(r, "end_date") || strings.HasSuffix(r, "to_date"):
				s.to, found = y, true
			}
		}
		if found {
			out = append(out, s)
		}
	}
	return out
}

// year reads the year a date name starts with, 0 when it is no date.
func year(name string) int {
	if len(name) < 4 {
		return 0
	}
	y, err := strconv.Atoi(name[:4])
	if err != nil || y < 1000 || y > 2100 || len(name) > 4 && name[4] != '-' && name[4] != '^' && name[4] != '"' {
		return 0
	}
	return y
}

// during judges a time constraint: a year, "YYYY-YYYY", "-YYYY" (up
// to), "YYYY-" (from) or "current".
func during(g kg.Reader, a Answer, value string) Verdict {
	ss := spans(g, a)
	if len(ss) == 0 {
		return Unknown
	}
	lo, hi := 0, 0
	if value == "current" {
		for _, s := range ss {
			if s.to == 0 {
				return Holds
			}
		}
		return Fails
	}
	if from, to, ok := strings.Cut(value, "-"); ok {
		// "-1989" is before 1990, "1991-" after 1990.
		lo, _ = strconv.Atoi(from)
		hi, _ = strconv.Atoi(to)
		if to == "" {
			hi = 1 << 30
		}
	} else {
		lo, _ = strconv.Atoi(value)
		hi = lo
	}
	for _, s := range ss {
		end := s.to
		if end == 0 {
			end = 1 << 30
		}
		if (s.from == 0 || s.from <= hi) && end >= lo {
			return Holds
		}
	}
	return Fails
}

// Report says what one constraint did to a question's answers.
type Report struct {
	Constraint schema.Constraint `json:"constraint"`
	// Held, Failed and Unknown count the answers by verdict; Dropped are
	// the failed ones removed (none when every answer failed: the
	// constraint, or the KG, is then wrong about them all).
	Held    int    `json:"held"`
	Failed  int    `json:"failed"`
	Unknown int    `json:"unknown"`
	Dropped int    `json:"dropped"`
	Note    string `json:"note"`
	// Kinds say, for the first few answers a type holds for where the KG
	// states no type, how their kind was inferred ("france: WordNet:
	// france is an instance of european_country, a kind of country").
	Kinds []string `json:"kinds,omitempty"`
	// Inferred says the KG states no type for any answer and the kinds
	// were inferred (Checker.Kind): the answers of another kind go last
	// and the rest keep their order.
	Inferred bool `json:"inferred,omitempty"`
	// ByName says an order was judged by the years (or the numerals of a
	// series: "Super Bowl XLIII") in the answers' names, the KG holding
	// no dates for any of them.
	ByName bool `json:"by_name,omitempty"`
}

// maxKinds is how many answers' inferred kinds a report names.
const maxKinds = 3

// Apply checks answers against cs in g and returns the order to keep them
// in (indices into answers) and a report per constraint. Time drops the
// answers the KG's dates contradict, unless that would drop them all;
// order keeps the earliest or latest answers among those with dates. Type
// and gender move the answers that meet them before the others and drop
// none: a KG's types are too sparse to exclude by, and a question's
// gendered word is not always the answer's (PathQuestion asks "who is the
// son of ..." of daughters too: dropping them cost PQ-3H 0.45 F1). Answers
// the KG says nothing about stay, and the report says the constraint went
// unchecked.
func Apply(g kg.Reader, cs []schema.Constraint, answers []Answer) ([]int, []Report) {
	return Checker{Graph: g}.Apply(cs, answers)
}

// Apply is Apply over k's KG, with k's lexicon to tell kinds by.
func (k Checker) Apply(cs []schema.Constraint, answers []Answer) ([]int, []Report) {
	g := k.Graph
	keep := make([]int, len(answers))
	for i := range keep {
		keep[i] = i
	}
	var reps []Report
	for _, c := range cs {
		rep := Report{Constraint: c}
		switch c.Kind {
		case Order:
			keep, rep = order(g, c, answers, keep)
		default:
			vs := make(map[int]Verdict, len(keep))
			whys := map[int]string{}
			inferred := false
			if c.Kind == Type {
				es := make([]int32, len(keep))
				for j, i := range keep {
					es[j] = answers[i].Entity
				}
				var v []Verdict
				var why []string
				v, why, inferred = k.Kinds(es, c.Value)
				rep.Inferred = inferred
				for j, i := range keep {
					vs[i], whys[i] = v[j], why[j]
				}
			}
			for _, i := range keep {
				if c.Kind != Type {
					vs[i], whys[i] = k.Check(c, answers[i])
				}
				switch vs[i] {
				case Holds:
					rep.Held++
					if why := whys[i]; why != "" && why != kgType && len(rep.Kinds) < maxKinds {
						rep.Kinds = append(rep.Kinds, g.EntityName(answers[i].Entity)+": "+why)
					}
				case Fails:
					rep.Failed++
				default:
					rep.Unknown++
				}
			}
			switch {
			case inferred:
				// An inferred kind is known for the famous few (WordNet
				// names Robert Louis Stevenson, not Dan Curtis): the
				// answers it says are of another kind go last, and the
				// rest keep their order.
				slices.SortStableFunc(keep, func(a, b int) int { return b2i(vs[a] == Fails) - b2i(vs[b] == Fails) })
			case c.Kind == Type || c.Kind == Gender:
				slices.SortStableFunc(keep, func(a, b int) int { return rank(vs[a]) - rank(vs[b]) })
			case rep.Failed > 0 && rep.Failed < len(keep):
				keep = slices.DeleteFunc(keep, func(i int) bool { return vs[i] == Fails })
				rep.Dropped = rep.Failed
			case c.Kind == Time && c.Value == "current" && rep.Failed > 1:
				// Every dated answer has ended: the latest to end is
				// the nearest to now (a KG's data stops at its own
				// present).
				keep, rep.Dropped = latestEnded(g, answers, keep, vs)
			}
		}
		rep.Note = note(rep, len(answers))
		reps = append(reps, rep)
	}
	return keep, reps
}

// latestEnded keeps, of keep, the answers whose facts ended latest among
// those that failed "current" (vs), and the unknown ones, and says how
// many it dropped.
func latestEnded(g kg.Reader, answers []Answer, keep []int, vs map[int]Verdict) ([]int, int) {
	end := map[int]int{}
	last := 0
	for _, i := range keep {
		if vs[i] != Fails {
			continue
		}
		for _, s := range spans(g, answers[i]) {
			end[i] = max(end[i], s.to)
		}
		last = max(last, end[i])
	}
	out := slices.DeleteFunc(slices.Clone(keep), func(i int) bool { return vs[i] == Fails && end[i] < last })
	return out, len(keep) - len(out)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rank orders type and gender verdicts: the answers that meet the
// constraint first; the others keep their order, since a type noun is
// often not the KG's word for the type ("role" for an instrument) and an
// answer of another known type is no likelier wrong than one of none.
func rank(v Verdict) int {
	if v == Holds {
		return 0
	}
	return 1
}

// order keeps, of keep, the answers with the earliest (first) or latest
// (last) start date.
func order(g kg.Reader, c schema.Constraint, answers []Answer, keep []int) ([]int, Report) {
	if c.Value == "max" || c.Value == "min" {
		return extreme(g, c, answers, keep)
	}
	rep := Report{Constraint: c}
	best, when := 0, map[int]int{}
	for _, i := range keep {
		y := 0
		for _, s := range spans(g, answers[i]) {
			if s.from != 0 && (y == 0 || c.Value == "first" && s.from < y || c.Value == "last" && s.from > y) {
				y = s.from
			}
		}
		if y == 0 {
			rep.Unknown++
			continue
		}
		when[i] = y
		if best == 0 || c.Value == "first" && y < best || c.Value == "last" && y > best {
			best = y
		}
	}
	if best == 0 {
		return byName(g, c, answers, keep, rep)
	}
	return keepBest(keep, when, best, rep)
}

// extreme keeps, of keep, the answers with the greatest (max) or least
// (min) number among their own out-edges' literals (an area, a height);
// answers with none are unknown, and where no answer has one the
// constraint is unchecked.
func extreme(g kg.Reader, c schema.Constraint, answers []Answer, keep []int) ([]int, Report) {
	rep := Report{Constraint: c}
	val := map[int]float64{}
	for _, i := range keep {
		found := false
		var v float64
		for _, tid := range g.Out(answers[i].Entity) {
			x, ok := number(g.EntityName(g.Triple(tid).Tail))
			if ok && (!found || c.Value == "max" && x > v || c.Value == "min" && x < v) {
				v, found = x, true
			}
		}
		if !found {
			rep.Unknown++
			continue
		}
		val[i] = v
	}
	if len(val) == 0 {
		return keep, rep
	}
	first := true
	var best float64
	for _, v := range val {
		if first || c.Value == "max" && v > best || c.Value == "min" && v < best {
			best, first = v, false
		}
	}
	return keepBest(keep, val, best, rep)
}

// keepBest keeps, of keep, the answers whose value is best, counting them
// held and the others with a value failed (those with none stay unknown),
// as the order and superlative checks both report them.
func keepBest[T comparable](keep []int, val map[int]T, best T, rep Report) ([]int, Report) {
	var out []int
	for _, i := range keep {
		if v, ok := val[i]; ok && v == best {
			rep.Held++
			out = append(out, i)
		} else if ok {
			rep.Failed++
		}
	}
	rep.Dropped = len(keep) - len(out)
	return out, rep
}

// number reads a numeric literal's name ("1250.5", "3e6", "42"^^xsd:int as
// a backend names it), ok false for anything else, dates included.
func number(name string) (float64, bool) {
	if i := strings.Index(name, "^^"); i >= 0 {
		name = strings.Trim(name[:i], `"`)
	}
	if name == "" || strings.Count(name, "-") > 1 || strings.ContainsAny(name, ":/ ") {
		return 0, false
	}
	x, err := strconv.ParseFloat(name, 64)
	return x, err == nil
}

// note says in words what a report means, for --explain.
func note(r Report, n int) string {
	c := r.Constraint
	switch {
	case n == 0:
		return fmt.Sprintf("%s %q: no answer to check", c.Kind, c.Text)
	case r.Held+r.Failed == 0:
		return fmt.Sprintf("%s %q not checked: the KG holds no %s for any of the %d answers", c.Kind, c.Text, attribute(c.Kind), n)
	case r.ByName:
		return fmt.Sprintf("%s %q by the years or numerals in the answers' names (the KG holds no dates for them): %d answers kept, %d dropped, %d with none in their name", c.Kind, c.Text, n-r.Dropped, r.Dropped, r.Unknown)
	case r.Dropped > 0:
		return fmt.Sprintf("%s %q: %d answers kept, %d dropped, %d with no %s in the KG", c.Kind, c.Text, n-r.Dropped, r.Dropped, r.Unknown, attribute(c.Kind))
	case r.Inferred && r.Held+r.Failed > 0:
		return fmt.Sprintf("%s %q (kinds inferred, the KG states none): %d answers of another kind ranked last; %d meet it, %d unknown", c.Kind, c.Text, r.Failed, r.Held, r.Unknown)
	case c.Kind == Type || c.Kind == Gender:
		return fmt.Sprintf("%s %q: %d answers that meet it ranked first, before %d that fail it and %d with no %s in the KG", c.Kind, c.Text, r.Held, r.Failed, r.Unknown, attribute(c.Kind))
	case r.Failed > 0:
		return fmt.Sprintf("%s %q: every checked answer fails it; none dropped", c.Kind, c.Text)
	}
	return fmt.Sprintf("%s %q: %d answers meet it, %d with no %s in the KG", c.Kind, c.Text, r.Held, r.Unknown, attribute(c.Kind))
}

func attribute(kind string) string {
	switch kind {
	case Time:
		return "dates"
	case Order:
		return "dates or numbers"
	case Gender:
		return "gender"
	}
	return "type"
}
