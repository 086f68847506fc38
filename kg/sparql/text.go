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

// searchWords are text's normalised words (kg.Normalize) of letters and
// digits only.
func searchWords(text string) []string {
	return strings.FieldsFunc(kg.Normalize(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
