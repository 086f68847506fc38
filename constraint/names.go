package constraint

import (
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// byName judges an order in time ("first", "last") over the answers'
// names where the KG holds no dates for any of them: many events and
// editions are named for their year ("2014 World Series", "1976–77
// European Cup") or numbered in a series ("Super Bowl XLIII"). The
// answers whose name holds a year keep the earliest (latest) ones; where
// too few do, those whose names differ only in a trailing Roman numeral
// keep the least (greatest). Answers with neither stay unknown; where
// fewer than half the answers (or two) have one, the order is
// unchecked.
func byName(g kg.Reader, c schema.Constraint, answers []Answer, keep []int, rep Report) ([]int, Report) {
	if c.Value != "first" && c.Value != "last" {
		return keep, rep
	}
	years := map[int]int{}
	for _, i := range keep {
		if y := yearRE.FindString(g.EntityName(answers[i].Entity)); y != "" {
			years[i] = year(y)
		}
	}
	// Editions named for their year, not a few answers that happen to
	// hold a number ("1984" among a band's albums).
	enough := func(val map[int]int) bool { return len(val) >= 2 && 2*len(val) >= len(keep) }
	val := years
	if !enough(val) {
		val = numbered(g, answers, keep)
	}
	if !enough(val) {
		return keep, rep
	}
	best := 0
	for _, v := range val {
		if best == 0 || c.Value == "first" && v < best || c.Value == "last" && v > best {
			best = v
		}
	}
	rep.Unknown = len(keep) - len(val)
	rep.ByName = true
	return keepBest(keep, val, best, rep)
}

// numbered returns the trailing Roman numerals of the answers of keep
// whose names are one series: the same words before the numeral, shared
// by two answers or more ("Super Bowl X", "Super Bowl XL"); none when
// the numbered answers are of several series (kings of several names).
func numbered(g kg.Reader, answers []Answer, keep []int) map[int]int {
	val := map[int]int{}
	series := ""
	for _, i := range keep {
		name := g.EntityName(answers[i].Entity)
		sp := strings.LastIndexByte(name, ' ')
		if sp <= 0 {
			continue
		}
		n := roman(name[sp+1:])
		if n == 0 {
			continue
		}
		if series != "" && name[:sp] != series {
			return nil
		}
		series, val[i] = name[:sp], n
	}
	return val
}

// roman reads a Roman numeral of I, V, X, L and C, 0 for anything else.
func roman(s string) int {
	digit := map[byte]int{'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100}
	n := 0
	for i := 0; i < len(s); i++ {
		d := digit[s[i]]
		if d == 0 {
			return 0
		}
		if i+1 < len(s) && digit[s[i+1]] > d {
			n -= d
		} else {
			n += d
		}
	}
	return n
}

// Series returns the series an answer's name places it in, for an order
// in time judged by names: the name without its year ("2014 World
// Series" and "2010 World Series" are both "world series") or without a
// trailing Roman numeral ("Super Bowl XLIII": "super bowl"), lower case;
// ok is false for a name with neither.
func Series(name string) (string, bool) {
	if loc := yearRE.FindStringIndex(name); loc != nil {
		s := strings.Join(strings.Fields(strings.ToLower(name[:loc[0]]+" "+name[loc[1]:])), " ")
		return s, s != ""
	}
	if sp := strings.LastIndexByte(name, ' '); sp > 0 && roman(name[sp+1:]) > 0 {
		return strings.ToLower(strings.TrimSpace(name[:sp])), true
	}
	return "", false
}
