// Package linking finds a question's entities in a knowledge graph and the
// spans of the question that name them, so that planners can anchor schema
// graphs on KG entities and mask the mentions out of the question text.
//
// Three sources are tried, most reliable first: an entity the dataset marks
// (MetaQA writes the topic entity in square brackets), the longest
// non-overlapping word n-grams whose normalised text equals an entity's
// normalised name (kg.Normalize, kg.Graph.EntitiesByNorm), and, when no
// n-gram matches, the entity nearest to the question by encoder similarity
// (kgvec.Entities.Nearest).
package linking

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
)

var (
	// ErrEmptyQuestion is returned for a question with no words.
	ErrEmptyQuestion = errors.New("empty question")
	// ErrNoEntity is returned when no part of the question names a KG
	// entity and the encoder fallback finds none close enough.
	ErrNoEntity = errors.New("no linkable entity in question")
)

// Span is a byte range [Start, End) of the question.
type Span struct{ Start, End int }

// Link is one question entity: the KG entity and the span naming it.
type Link struct {
	// Entity is the KG entity's name.
	Entity string
	// Mention is the question text that names it (Question[Start:End]).
	Mention    string
	Start, End int
	// Score is 1 for a name match and the cosine similarity for an
	// encoder match.
	Score float32
	// Method says how the link was found: "marked", "name" or "encoder".
	Method string
}

// Linker links questions against one graph. It is safe for concurrent use.
type Linker struct {
	g    kg.Reader
	ents *kgvec.Entities
	// MaxN is the longest n-gram, in words, tried against entity names;
	// 0 means 10.
	MaxN int
	// MinScore is the least cosine similarity the encoder fallback
	// accepts; 0 means 0.6.
	MinScore float32
	// MaxLinks caps the distinct entities returned (0 = DefaultMaxLinks).
	// A planner masks every mention in the question, so without a cap a
	// long question naming many entities costs time quadratic in its
	// length.
	MaxLinks int
}

// DefaultMaxLinks is how many distinct entities a question links at most.
const DefaultMaxLinks = 16

// New returns a linker over g. ents may be nil, which disables the encoder
// fallback.
func New(g kg.Reader, ents *kgvec.Entities) *Linker {
	return &Linker{g: g, ents: ents}
}

// Link returns the question's entities, in the order they occur in the
// question. A MetaQA-style bracketed mention is taken as the only entity
// when the graph knows its name (or when the graph is nil).
func (l *Linker) Link(ctx context.Context, question string) ([]Link, error) {
	ws := Words(question)
	if len(ws) == 0 {
		return nil, ErrEmptyQuestion
	}
	if m, sp, ok := Marked(question); ok {
		// The link's span is the name inside the brackets.
		in := question[sp.Start+1 : sp.End-1]
		sp.Start += 1 + strings.Index(in, m)
		sp.End = sp.Start + len(m)
		if l.g == nil {
			return []Link{{Entity: m, Mention: m, Start: sp.Start, End: sp.End, Score: 1, Method: "marked"}}, nil
		}
		if id, ok := l.best(m); ok {
			return []Link{{Entity: l.g.EntityName(id), Mention: m, Start: sp.Start, End: sp.End, Score: 1, Method: "marked"}}, nil
		}
	}
	if l.g == nil {
		return nil, fmt.Errorf("link %q: %w (no KG to match against)", clip(question), ErrNoEntity)
	}
	maxN := l.MaxN
	if maxN <= 0 {
		maxN = 10
	}
	used := make([]bool, len(ws))
	var links []Link
	for n := min(maxN, len(ws)); n >= 1; n-- {
		for i := 0; i+n <= len(ws); i++ {
			if anyUsed(used[i:i+n]) || allStop(question, ws[i:i+n]) {
				continue
			}
			sp := Span{ws[i].Start, ws[i+n-1].End}
			id, ok := l.best(question[sp.Start:sp.End])
			if !ok {
				continue
			}
			for k := i; k < i+n; k++ {
				used[k] = true
			}
			links = append(links, Link{Entity: l.g.EntityName(id), Mention: question[sp.Start:sp.End], Start: sp.Start, End: sp.End, Score: 1, Method: "name"})
		}
	}
	if len(links) > 0 {
		sortByStart(links)
		return l.distinct(links), nil
	}
	if l.ents != nil {
		var content []string
		for _, w := range ws {
			if !stopWords[strings.ToLower(question[w.Start:w.End])] {
				content = append(content, question[w.Start:w.End])
			}
		}
		if len(content) > 0 {
			hits, err := l.ents.Nearest(ctx, strings.Join(content, " "), 1)
			if err != nil {
				return nil, fmt.Errorf("link %q: %w", clip(question), err)
			}
			minScore := l.MinScore
			if minScore == 0 {
				minScore = 0.6
			}
			if len(hits) > 0 && hits[0].Score >= minScore {
				h := hits[0]
				link := Link{Entity: h.Name, Score: h.Score, Method: "encoder"}
				if sp, ok := Find(question, h.Name); ok {
					link.Mention, link.Start, link.End = question[sp.Start:sp.End], sp.Start, sp.End
				}
				return []Link{link}, nil
			}
		}
	}
	return nil, fmt.Errorf("link %q: %w", clip(question), ErrNoEntity)
}

// distinct keeps the first link to each entity, at most MaxLinks of them:
// an entity named twice is one entity of the question.
func (l *Linker) distinct(links []Link) []Link {
	limit := l.MaxLinks
	if limit <= 0 {
		limit = DefaultMaxLinks
	}
	seen := map[string]bool{}
	out := links[:0]
	for _, lk := range links {
		if !seen[lk.Entity] && len(out) < limit {
			seen[lk.Entity] = true
			out = append(out, lk)
		}
	}
	return out
}

// best returns the entity whose normalised name equals text's, preferring
// the one with the most edges when several share it (the namesake most
// questions are about).
func (l *Linker) best(text string) (int32, bool) {
	ids := l.g.EntitiesByNorm(text)
	if len(ids) == 0 {
		return 0, false
	}
	b := ids[0]
	for _, id := range ids[1:] {
		if l.g.Degree(id) > l.g.Degree(b) {
			b = id
		}
	}
	return b, true
}

// Marked returns the text inside the first "[...]" of question (MetaQA's
// topic-entity mark) and the span of the whole bracketed group. A group
// that holds a placeholder ("[ENT1]") or nothing is not a mark.
func Marked(question string) (mention string, span Span, ok bool) {
	i := strings.IndexByte(question, '[')
	if i < 0 {
		return "", Span{}, false
	}
	j := strings.IndexByte(question[i+1:], ']')
	if j < 0 {
		return "", Span{}, false
	}
	m := strings.TrimSpace(question[i+1 : i+1+j])
	if m == "" || strings.HasPrefix(strings.ToUpper(m), "ENT") && strings.Trim(m[3:], "0123456789") == "" {
		return "", Span{}, false
	}
	return m, Span{i, i + j + 2}, true
}

// Words returns the byte spans of question's words: maximal runs of
// letters and digits, the same separators kg.Normalize uses, so a run of
// words normalises to the same key as a KG name written with '_' or
// punctuation.
func Words(question string) []Span {
	var out []Span
	start := -1
	for i, r := range question {
		if isSep(r) {
			if start >= 0 {
				out = append(out, Span{start, i})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, Span{start, len(question)})
	}
	return out
}

// Mentions returns the text of question that names each of entities, in
// order, skipping entities the question does not name (see Find).
func Mentions(question string, entities []string) []string {
	var out []string
	for _, e := range entities {
		if sp, ok := Find(question, e); ok {
			out = append(out, question[sp.Start:sp.End])
		}
	}
	return out
}

// Find returns the shortest span of question whose words, normalised, are
// the words of name: "anna_of_holstein-gottorp" is found in "the parent of
// anna_of_holstein-gottorp 's son", "Inception" in "who directed inception ?".
// A MetaQA bracket group around the match is included.
func Find(question, name string) (Span, bool) {
	want := strings.Fields(kg.Normalize(name))
	if len(want) == 0 {
		return Span{}, false
	}
	ws := Words(question)
	for i := 0; i+len(want) <= len(ws); i++ {
		match := true
		for k, w := range want {
			s := ws[i+k]
			if kg.Normalize(question[s.Start:s.End]) != w {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		sp := Span{ws[i].Start, ws[i+len(want)-1].End}
		if sp.Start > 0 && question[sp.Start-1] == '[' {
			if e := strings.IndexByte(question[sp.End:], ']'); e >= 0 && strings.TrimSpace(question[sp.End:sp.End+e]) == "" {
				sp = Span{sp.Start - 1, sp.End + e + 1}
			}
		}
		return sp, true
	}
	return Span{}, false
}

// Mask returns question with every mention removed: a MetaQA bracket
// group, then each mention found by Find (or, failing that, as a
// case-insensitive substring). Mentions that do not occur are ignored, so
// an unmasked question comes back unchanged apart from spacing.
func Mask(question string, mentions []string) string {
	return MaskWith(question, mentions, "")
}

// MaskWith is Mask with each mention replaced by repl (surrounded by
// spaces) instead of removed, so that word order around the mention ("of
// ENT 's son") survives masking.
func MaskWith(question string, mentions []string, repl string) string {
	repl = " " + repl + " "
	q := question
	if _, sp, ok := Marked(q); ok {
		q = q[:sp.Start] + repl + q[sp.End:]
	}
	for _, m := range mentions {
		if strings.TrimSpace(m) == "" {
			continue
		}
		if sp, ok := Find(q, m); ok {
			q = q[:sp.Start] + repl + q[sp.End:]
			continue
		}
		if i := strings.Index(strings.ToLower(q), strings.ToLower(m)); i >= 0 && len(strings.ToLower(q)) == len(q) {
			q = q[:i] + repl + q[i+len(m):]
		}
	}
	return strings.Join(strings.Fields(q), " ")
}

func anyUsed(u []bool) bool {
	for _, b := range u {
		if b {
			return true
		}
	}
	return false
}

// allStop reports whether every word of ws is a stop word: such n-grams
// ("the", "who is") name entities only by accident.
func allStop(q string, ws []Span) bool {
	for _, w := range ws {
		if !stopWords[strings.ToLower(q[w.Start:w.End])] {
			return false
		}
	}
	return true
}

func sortByStart(ls []Link) {
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ls[j].Start < ls[j-1].Start; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

func isSep(r rune) bool {
	// Delegate to kg.Normalize's notion of a separator: a rune is a
	// separator exactly when it normalises to nothing.
	if r < utf8.RuneSelf {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}
	return kg.Normalize(string(r)) == ""
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// stopWords are question and function words that never name an entity on
// their own.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the of in on at to for from by with and or is are was were be been
		who whom whose what which where when why how did does do done has have had
		that this these those it its he she they them his her their i you we me my your our
		s 's as about into than then there here also can could would should will shall may might
		name names tell list give show find many much movie movies film films book books
		1 2 3 4 5 6 7 8 9 0 one two three`) {
		m[w] = true
	}
	return m
}()
