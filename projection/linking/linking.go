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
//
// A KG that finds names at its own end (kg.NameSearcher: a SPARQL
// endpoint) is asked for every n-gram in one batch, and its text index,
// where it has one, stands in for the scan: the entities sharing words
// with the question's unlinked words are matched to its n-grams by
// normalised name, and, when none matches, re-ranked by the encoder
// (Linker.Encoder), so no vector is held for every entity.
//
// MentionsOf then lists every mention of the question: the links it is
// answered from and each other span naming an entity exactly (a second
// thing the question names; over an endpoint every n-gram in one look-up,
// through its text index where it has one), a name several entities share
// resolved by graph proximity to the other mentions, each with its
// candidates and why one won; planners read them as
// projection.Input.Linked. Linker.Mentions adds the near matches its
// entity index finds for a misspelt name.
package linking

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
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
	// Method says how the link was found: "marked", "name", "encoder"
	// (nearest of every entity's vector) or "text" (ranked by the encoder
	// among the entities a text index found).
	Method string
}

// Linker links questions against one graph. It is safe for concurrent use.
type Linker struct {
	g    kg.Reader
	ents *kgvec.Entities
	// vocab is the words of the KG's names, for near mentions (Mentions).
	vocab *vocabulary
	// Encoder, when set, ranks the entities a KG's text index finds
	// (kg.NameSearcher) by similarity to the question's words when none
	// of them is named exactly.
	Encoder models.Encoder
	// Search is how many entities a text search returns (0 =
	// DefaultSearch).
	Search int
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

// DefaultSearch is how many entities a text search returns for a
// question.
const DefaultSearch = 50

// maxTextN is the longest n-gram, in words, the encoder compares with the
// entities a text search found.
const maxTextN = 4

// New returns a linker over g. ents may be nil, which disables the encoder
// fallback.
func New(g kg.Reader, ents *kgvec.Entities) *Linker {
	return &Linker{g: g, ents: ents, vocab: &vocabulary{}}
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
		id, ok, err := l.best(ctx, l.g.EntitiesByNorm(m))
		if err != nil {
			return nil, fmt.Errorf("link %q: %w", clip(question), err)
		}
		if ok {
			return []Link{{Entity: l.g.EntityName(id), Mention: m, Start: sp.Start, End: sp.End, Score: 1, Method: "marked"}}, nil
		}
	}
	if l.g == nil {
		return nil, fmt.Errorf("link %q: %w (no KG to match against)", clip(question), ErrNoEntity)
	}
	used := make([]bool, len(ws))
	lookup := func(text string) []int32 { return l.g.EntitiesByNorm(text) }
	ns := kg.Searcher(l.g)
	remote := ns != nil
	if remote {
		// Every n-gram in one batch, not a round trip each.
		var texts []string
		l.ngrams(question, ws, used, func(sp Span, _ int) bool { texts = append(texts, question[sp.Start:sp.End]); return false })
		found, err := kg.LookupNamesOf(ctx, ns, texts)
		if err != nil {
			return nil, fmt.Errorf("link %q: %w", clip(question), err)
		}
		lookup = func(text string) []int32 { return found[text] }
	}
	links, err := l.byName(ctx, question, ws, used, lookup)
	if err != nil {
		return nil, err
	}
	if remote {
		more, hits, err := l.byText(ctx, ns, question, ws, used)
		if err != nil {
			return nil, err
		}
		if len(more) == 0 && len(links) == 0 && l.Encoder != nil && len(hits) > 0 {
			if more, err = l.rank(ctx, question, ws, used, hits); err != nil {
				return nil, err
			}
		}
		links = append(links, more...)
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

// ngrams calls try with the span and length in words of each n-gram of
// the unused words that is not all stop words, longest first and then
// left to right, marking its words used when try returns true.
func (l *Linker) ngrams(question string, ws []Span, used []bool, try func(sp Span, n int) bool) {
	maxN := l.MaxN
	if maxN <= 0 {
		maxN = 10
	}
	for n := min(maxN, len(ws)); n >= 1; n-- {
		for i := 0; i+n <= len(ws); i++ {
			if anyUsed(used[i:i+n]) || allStop(question, ws[i:i+n]) {
				continue
			}
			if try(Span{ws[i].Start, ws[i+n-1].End}, n) {
				for k := i; k < i+n; k++ {
					used[k] = true
				}
			}
		}
	}
}

// byName links the longest n-grams whose normalised text names an entity
// by lookup.
func (l *Linker) byName(ctx context.Context, question string, ws []Span, used []bool, lookup func(string) []int32) ([]Link, error) {
	var links []Link
	var err error
	l.ngrams(question, ws, used, func(sp Span, _ int) bool {
		if err != nil {
			return false
		}
		text := question[sp.Start:sp.End]
		id, ok, e := l.best(ctx, lookup(text))
		if e != nil {
			err = fmt.Errorf("link %q: %w", clip(question), e)
			return false
		}
		if ok {
			links = append(links, Link{Entity: l.g.EntityName(id), Mention: text, Start: sp.Start, End: sp.End, Score: 1, Method: "name"})
		}
		return ok
	})
	return links, err
}

// byText links the unused words through the KG's text index, in two
// searches as byName goes, longest first: their n-grams of two to
// maxTextN words as phrases, then their single words. Entities found
// whose normalised name is one of the n-grams are linked as byName over
// the whole KG would link them. It returns every entity found too, for
// the caller to rank (rank) when none is linked.
func (l *Linker) byText(ctx context.Context, ns kg.NameSearcher, question string, ws []Span, used []bool) ([]Link, []kg.NameHit, error) {
	limit := l.Search
	if limit <= 0 {
		limit = DefaultSearch
	}
	var links []Link
	var all []kg.NameHit
	for _, long := range []bool{true, false} {
		var phrases []string
		l.ngrams(question, ws, used, func(sp Span, n int) bool {
			if long && n >= 2 && n <= maxTextN || !long && n == 1 {
				phrases = append(phrases, question[sp.Start:sp.End])
			}
			return false
		})
		if len(phrases) == 0 {
			continue
		}
		hits, err := ns.SearchNames(ctx, phrases, limit)
		if errors.Is(err, kg.ErrNoTextIndex) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("link %q: %w", clip(question), err)
		}
		all = append(all, hits...)
		byNorm := map[string][]int32{}
		for _, h := range hits {
			k := kg.Normalize(h.Label)
			if !slices.Contains(byNorm[k], h.ID) {
				byNorm[k] = append(byNorm[k], h.ID)
			}
		}
		found, err := l.byName(ctx, question, ws, used, func(text string) []int32 { return byNorm[kg.Normalize(text)] })
		if err != nil {
			return nil, nil, err
		}
		links = append(links, found...)
	}
	return links, all, nil
}

// rank links the text search hit the encoder finds closest to an n-gram
// (up to maxTextN words) of the unused words, if it scores MinScore.
func (l *Linker) rank(ctx context.Context, question string, ws []Span, used []bool, hits []kg.NameHit) ([]Link, error) {
	type ngram struct {
		sp Span
		n  int
	}
	var grams []ngram
	l.ngrams(question, ws, used, func(sp Span, n int) bool {
		if n <= maxTextN {
			grams = append(grams, ngram{sp, n})
		}
		return false
	})
	if len(grams) == 0 {
		return nil, nil
	}
	// Shortest first: ties go to the engine's order, then to the shorter
	// and earlier n-gram.
	slices.SortStableFunc(grams, func(a, b ngram) int { return cmp.Compare(a.n, b.n) })
	texts := make([]string, len(grams))
	for i, g := range grams {
		texts[i] = question[g.sp.Start:g.sp.End]
	}
	sim, err := similarity(ctx, l.Encoder, texts, hits)
	if err != nil {
		return nil, fmt.Errorf("link %q: %w", clip(question), err)
	}
	minScore := l.MinScore
	if minScore == 0 {
		minScore = 0.6
	}
	best, bestScore, bestSpan := -1, minScore, Span{}
	for j := range hits {
		for i, g := range grams {
			if c := sim(i, j); c > bestScore {
				best, bestScore, bestSpan = j, c, g.sp
			}
		}
	}
	if best < 0 {
		return nil, nil
	}
	return []Link{{Entity: l.g.EntityName(hits[best].ID), Mention: question[bestSpan.Start:bestSpan.End], Start: bestSpan.Start, End: bestSpan.End, Score: bestScore, Method: "text"}}, nil
}

// similarity encodes texts and the hits' labels in one batch and returns
// the cosine similarity of text i and hit j.
func similarity(ctx context.Context, enc models.Encoder, texts []string, hits []kg.NameHit) (func(i, j int) float32, error) {
	all := slices.Clone(texts)
	for _, h := range hits {
		all = append(all, h.Label)
	}
	vecs, err := models.EncodeAll(ctx, enc, all)
	if err != nil {
		return nil, err
	}
	d := enc.Dim()
	row := func(i int) []float32 { return vecs[i*d : (i+1)*d] }
	return func(i, j int) float32 { return models.Cosine(row(i), row(len(texts)+j)) }, nil
}

// best returns the entity of ids with the most edges (the namesake most
// questions are about), the first on a tie; over a kg.NameSearcher the
// edges are counted at the KG's end.
func (l *Linker) best(ctx context.Context, ids []int32) (int32, bool, error) {
	if len(ids) == 0 {
		return 0, false, nil
	}
	if len(ids) == 1 {
		return ids[0], true, nil
	}
	deg, err := kg.Degrees(ctx, l.g, ids)
	if err != nil {
		return 0, false, err
	}
	b := 0
	for i := range ids {
		if deg[i] > deg[b] {
			b = i
		}
	}
	return ids[b], true, nil
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

// Candidate is an entity found for a query, with its encoder similarity.
type Candidate struct {
	Entity string
	// Label is the name or alias that matched the query.
	Label string
	Score float32
}

// Search returns up to k entities of a KG that finds names at its own end
// for a free-text query, best first by the encoder's similarity of the
// query and the entity's matching name: the entities named exactly as
// the query (after kg.Normalize), and those its text index finds by the
// query's words. It is `stem search` over a SPARQL endpoint, where no
// vector is held for every entity; without a text index only exact names
// are found.
func Search(ctx context.Context, g kg.Reader, enc models.Encoder, query string, k int) ([]Candidate, error) {
	ns := kg.Searcher(g)
	if ns == nil {
		return nil, fmt.Errorf("search %q: the KG cannot find names at its end", clip(query))
	}
	found, err := ns.LookupNames(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", clip(query), err)
	}
	var hits []kg.NameHit
	for _, id := range found[query] {
		hits = append(hits, kg.NameHit{ID: id, Label: g.EntityName(id)})
	}
	// The query as a phrase, and each of its words.
	phrases := []string{query}
	for _, w := range Words(query) {
		phrases = append(phrases, query[w.Start:w.End])
	}
	more, err := ns.SearchNames(ctx, phrases, max(k, DefaultSearch))
	if err != nil && !errors.Is(err, kg.ErrNoTextIndex) {
		return nil, fmt.Errorf("search %q: %w", clip(query), err)
	}
	hits = append(hits, more...)
	sim, err := similarity(ctx, enc, []string{query}, hits)
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", clip(query), err)
	}
	best := map[int32]Candidate{}
	var order []int32
	for i, h := range hits {
		c := Candidate{Entity: g.EntityName(h.ID), Label: h.Label, Score: sim(0, i)}
		if b, ok := best[h.ID]; !ok {
			order = append(order, h.ID)
			best[h.ID] = c
		} else if c.Score > b.Score {
			best[h.ID] = c
		}
	}
	out := make([]Candidate, len(order))
	for i, id := range order {
		out[i] = best[id]
	}
	// Stable: ties keep the exact names first, then the engine's order.
	slices.SortStableFunc(out, func(a, b Candidate) int { return cmp.Compare(b.Score, a.Score) })
	return out[:min(k, len(out))], nil
}
