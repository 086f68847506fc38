package sparql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/stem-kgqa/stem/kg"
)

// The values of Config.TextIndex.
const (
	TextAuto     = "auto"     // use Virtuoso's bif:contains if the engine accepts it
	TextVirtuoso = "virtuoso" // use bif:contains; a rejection is an error
	TextNone     = "none"     // no text search
)

// MaxSearchWords bounds the words of one text search, over all its
// phrases: a question's n-grams, not a paragraph.
const MaxSearchWords = 128

// SearchNames finds up to limit entities whose name, alias or label (the
// Names predicates, in Lang) holds one of the phrases, its normalised
// words in order, best first by the engine's relevance score, each entity
// once. One-word phrases find every name with the word; longer ones only
// names with the whole phrase ("john f kennedy" is not "Robert F.
// Kennedy"), which is how a name is found among millions sharing a word.
//
// It uses Virtuoso's free-text index (bif:contains), an engine extension:
// when Config.TextIndex says so or, by default, when the engine accepts
// it (the first search probes it). It returns kg.ErrNoTextIndex when
// there is none: a standard SPARQL engine has no index to search, and a
// FILTER(CONTAINS()) over every literal is a scan of the whole KG.
// Virtuoso answers from the index only, so it must be built after a load
// (internal/virtuoso's Server.Load does, as docs/sparql.md says), or
// nothing is found.
func (g *Graph) SearchNames(ctx context.Context, phrases []string, limit int) ([]kg.NameHit, error) {
	g.mu.Lock()
	mode := g.text
	g.mu.Unlock()
	if mode == TextNone || len(g.cfg.Names) == 0 {
		return nil, kg.ErrNoTextIndex
	}
	var terms []string
	nwords := 0
	for _, p := range phrases {
		ws := searchWords(p)
		if len(ws) == 0 || nwords+len(ws) > MaxSearchWords {
			continue
		}
		nwords += len(ws)
		// Double quotes make a phrase of its words; searchWords keeps
		// only letters and digits, so nothing can break out.
		if t := `"` + strings.Join(ws, " ") + `"`; !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	expr := strings.Join(terms, " OR ")
	q := fmt.Sprintf("SELECT ?e ?l ?sc WHERE { VALUES ?p { %s } ?e ?p ?l . ?l bif:contains %s option (score ?sc) %s FILTER(isIRI(?e)) } ORDER BY DESC(?sc) ?e ?l LIMIT %d",
		strings.Join(g.namePreds(), " "), literal(expr), g.langFilter(), 4*limit)
	r, err := g.textSelect(ctx, mode, q)
	if err != nil {
		return nil, err
	}
	ents := make([]Term, len(r.Rows))
	for i, row := range r.Rows {
		ents[i] = row["e"]
	}
	if err := g.learn(ctx, ents); err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var hits []kg.NameHit
	seen := map[int32]bool{}
	for _, row := range r.Rows {
		id := g.ents.id(g.entName(row["e"]), row["e"])
		if seen[id] {
			continue
		}
		seen[id] = true
		sc, _ := strconv.ParseFloat(row["sc"].Value, 64) // a score the engine left out ranks as 0
		hits = append(hits, kg.NameHit{ID: id, Label: row["l"].Value, Score: sc})
		if len(hits) == limit {
			break
		}
	}
	return hits, nil
}

// textSelect runs a query that uses the text index (bif:contains) in
// mode, and settles TextAuto: an engine that refuses it has none
// (kg.ErrNoTextIndex, and TextNone from then on), one that answers has.
func (g *Graph) textSelect(ctx context.Context, mode, q string) (*Results, error) {
	r, err := g.c.Select(ctx, q)
	if err != nil {
		if mode == TextAuto && errors.Is(err, ErrRejected) {
			g.mu.Lock()
			g.text = TextNone
			g.mu.Unlock()
			return nil, fmt.Errorf("%w (the engine refused bif:contains: %v)", kg.ErrNoTextIndex, err)
		}
		return nil, err
	}
	if mode == TextAuto {
		g.mu.Lock()
		g.text = TextVirtuoso
		g.mu.Unlock()
	}
	return r, nil
}

// searchWords are text's normalised words (kg.Normalize) of letters and
// digits only.
func searchWords(text string) []string {
	return strings.FieldsFunc(kg.Normalize(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Bounds of MatchNames: the words of a phrase searched (a longer name is
// found by its first matchWords words and kept by its whole text), and
// the rows one search may return before it gives way to LookupNames.
const (
	matchWords = 4
	matchRows  = 10000
)

// MatchNames returns, for each name, the entities whose name, alias or
// label (the Names predicates) equals it after kg.Normalize, as
// LookupNames does, but in one query through the engine's text index
// (bif:contains, see SearchNames): the labels holding a name's words are
// found by the index and kept when they normalise to the name. It is what
// linking a question's every n-gram asks, where LookupNames would send
// every common spelling of each (thousands of terms: seconds a question
// on Virtuoso). It returns kg.ErrNoTextIndex when there is no index, or
// when the names are too many words or find too many labels for one
// search, so that kg.LookupNamesOf falls back to LookupNames.
func (g *Graph) MatchNames(ctx context.Context, names []string) (map[string][]int32, error) {
	g.mu.Lock()
	mode := g.text
	g.mu.Unlock()
	if mode == TextNone || len(g.cfg.Names) == 0 {
		return nil, kg.ErrNoTextIndex
	}
	want := map[string]bool{}
	var terms []string
	nwords, longest := 0, 0
	for _, n := range names {
		ws := searchWords(n)
		if len(ws) == 0 {
			continue
		}
		want[strings.Join(ws, " ")] = true
		longest = max(longest, len(n))
		if t := `"` + strings.Join(ws[:min(len(ws), matchWords)], " ") + `"`; !slices.Contains(terms, t) {
			terms = append(terms, t)
			nwords += min(len(ws), matchWords)
		}
	}
	out := map[string][]int32{}
	if len(terms) == 0 {
		return out, nil
	}
	if nwords > MaxSearchWords {
		return nil, fmt.Errorf("%w: %d words to match, more than one search holds (%d)", kg.ErrNoTextIndex, nwords, MaxSearchWords)
	}
	// A label is at most about twice the name's length (punctuation,
	// "John F. Kennedy"): longer ones holding the words are not the name.
	q := fmt.Sprintf("SELECT DISTINCT ?e ?l WHERE { VALUES ?p { %s } ?e ?p ?l . ?l bif:contains %s %s FILTER(isIRI(?e) && strlen(str(?l)) <= %d) } LIMIT %d",
		strings.Join(g.namePreds(), " "), literal(strings.Join(terms, " OR ")), g.langFilter(), 2*longest+8, matchRows)
	r, err := g.textSelect(ctx, mode, q)
	if err != nil {
		return nil, err
	}
	if len(r.Rows) >= matchRows {
		return nil, fmt.Errorf("%w: %d labels or more hold the names' words", kg.ErrNoTextIndex, matchRows)
	}
	var ents []Term
	var keys []string
	for _, row := range r.Rows {
		if k := strings.Join(searchWords(row["l"].Value), " "); want[k] {
			ents, keys = append(ents, row["e"]), append(keys, k)
		}
	}
	if err := g.learn(ctx, ents); err != nil {
		return nil, err
	}
	byKey := map[string][]int32{}
	g.mu.Lock()
	for i, t := range ents {
		if id := g.ents.id(g.entName(t), t); !slices.Contains(byKey[keys[i]], id) {
			byKey[keys[i]] = append(byKey[keys[i]], id)
		}
	}
	g.mu.Unlock()
	for _, n := range names {
		if ids := byKey[strings.Join(searchWords(n), " ")]; len(ids) > 0 {
			ids = slices.Clone(ids)
			slices.Sort(ids)
			out[n] = ids
		}
	}
	return out, nil
}

var _ kg.NameMatcher = (*Graph)(nil)
