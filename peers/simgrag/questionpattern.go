package simgrag

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
)

// questionPatterns are the no-LLM stand-in's pattern graphs written from
// the question alone, as the paper's LLM writes its pattern (section
// 4.1): the KG is not read until retrieval. The question's first entity
// mention is the known node; its content words (the question without the
// mentions, wh-words and function words), ordered from the mention
// outwards, are cut into h contiguous groups for each h of 1..hops, each
// group the relation text of one edge of a chain through UNKNOWN nodes
// to the answer (the last). The stand-in cannot tell how many hops the
// question asks, as the LLM can, so every length is tried and
// bestPerTerm keeps the one whose best subgraph is nearest per GSD term.
// None without a mention or a content word.
func questionPatterns(req plan.Request, hops int) []schema.Graph {
	mentions := signals.Mentions(req)
	if len(mentions) == 0 || strings.TrimSpace(mentions[0]) == "" {
		return nil
	}
	words := contentWords(req.Question, mentions)
	var out []schema.Graph
	for h := 1; h <= min(hops, len(words)); h++ {
		steps := make([]schema.Step, h)
		for i := range h {
			lo, hi := i*len(words)/h, (i+1)*len(words)/h
			steps[i] = schema.Step{Rel: strings.Join(words[lo:hi], " ")}
		}
		out = append(out, schema.PathGraph(mentions[0], steps))
	}
	return out
}

// stopWords are the words of a question that name no relation: wh-words,
// auxiliaries, articles, prepositions of a path's glue and pronouns.
var stopWords = map[string]bool{
	"what": true, "who": true, "whom": true, "whose": true, "which": true, "where": true, "when": true, "how": true,
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "did": true, "does": true, "do": true,
	"the": true, "a": true, "an": true, "of": true, "by": true, "in": true, "on": true, "to": true, "for": true,
	"that": true, "this": true, "s": true, "and": true, "or": true, "with": true, "as": true, "at": true, "from": true,
	"his": true, "her": true, "its": true, "their": true, "he": true, "she": true, "it": true, "they": true,
	"has": true, "have": true, "had": true, "also": true,
}

// contentWords returns question's words that may name a relation, in
// order of their distance in words from the first mention, nearest
// first, and at equal distance those after it first ("the father of X's
// son" walks son, then father: a possessive's noun is the step taken at
// X), so that the first group is the relation at the known node.
func contentWords(question string, mentions []string) []string {
	toks := tokenize(strings.ToLower(question))
	mention := tokenize(strings.ToLower(strings.TrimSpace(mentions[0])))
	start := -1
	for i := 0; len(mention) > 0 && i+len(mention) <= len(toks); i++ {
		if slices.Equal(toks[i:i+len(mention)], mention) {
			start = i
			break
		}
	}
	ms := map[string]bool{}
	for _, m := range mentions {
		for _, w := range tokenize(strings.ToLower(m)) {
			ms[w] = true
		}
	}
	type word struct {
		w     string
		dist  int
		after bool
	}
	var ws []word
	for i, w := range toks {
		if stopWords[w] || ms[w] {
			continue
		}
		var d int
		switch {
		case start < 0:
			d = len(toks) - i // no mention found: nearest the end first
		case i < start:
			d = start - i
		default:
			d = i - (start + len(mention) - 1)
		}
		ws = append(ws, word{w, d, start >= 0 && i > start})
	}
	slices.SortStableFunc(ws, func(a, b word) int {
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		if a.after != b.after {
			if a.after {
				return -1
			}
			return 1
		}
		return 0
	})
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.w
	}
	return out
}

// tokenize splits s into words of letters and digits ('_' joins
// PathQuestion's entity names into one word).
func tokenize(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
}

// bestPerTerm keeps the subgraphs of the one pattern (found.graph) whose
// best subgraph has the smallest GSD per term (known nodes and edges),
// so patterns of different lengths compare; ties keep the shorter (the
// earlier graph).
func bestPerTerm(all []found) []found {
	best, bestAvg := -1, 0.0
	for _, f := range all {
		avg := f.sub.GSD / float64(max(f.pat.terms, 1))
		if best < 0 || avg < bestAvg || avg == bestAvg && f.graph < best {
			best, bestAvg = f.graph, avg
		}
	}
	return slices.DeleteFunc(all, func(f found) bool { return f.graph != best })
}
