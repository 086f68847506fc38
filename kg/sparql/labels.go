package sparql

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/stem-kgqa/stem/kg"
)

// DefaultIDs matches the local names that are opaque ids: Freebase's
// machine ids (m.02mjmr, g.11b6d2xh5_).
const DefaultIDs = kg.FreebaseIDs

// ids compiles Config.IDs: "" is DefaultIDs, "none" is no opaque ids.
func ids(expr string) (*regexp.Regexp, error) {
	switch expr {
	case "none":
		return nil, nil
	case "":
		expr = DefaultIDs
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("sparql: ids pattern %q: %w", expr, err)
	}
	return re, nil
}

// opaque reports whether t is an IRI whose local name is an opaque id
// (a Freebase MID): such an entity is named by its label. With NamingRDF
// every IRI is.
func (g *Graph) opaque(t Term) bool {
	if g.rdf() {
		return t.Type == "uri"
	}
	if g.ids == nil || t.Type != "uri" {
		return false
	}
	local, ok := strings.CutPrefix(t.Value, g.cfg.Prefix)
	return ok && g.ids.MatchString(local)
}

// entName is the stem name of entity term t: its label when its IRI is an
// opaque id with a label learned (see learn), else nameOf. The caller
// holds g.mu.
func (g *Graph) entName(t Term) string {
	if g.opaque(t) {
		if l := g.labels[t.Value]; l != "" {
			return l
		}
	}
	return g.nameOf(t)
}

// cvt reports whether t is a CVT (a Freebase mediator: a performance, a
// marriage, a government position held), an opaque id with no label, as
// far as learn has found; NamingRDF has none. The caller holds g.mu.
func (g *Graph) cvt(t Term) bool {
	if g.rdf() || !g.opaque(t) {
		return false
	}
	l, known := g.labels[t.Value]
	return known && l == ""
}

// learn fetches the labels of the opaque ids among terms that are not
// known yet, in one query per batch. An entity's name is its label in
// Config.Lang (or an untagged one; the least in code-point order when it
// has several) when no other entity of the KG carries that label, and
// "label (id)" when others do, so that two namesakes stay two entities
// and each name says which one it is. An id with no label is a CVT and
// keeps its id as its name.
func (g *Graph) learn(ctx context.Context, terms []Term) error {
	var ask []string
	g.mu.Lock()
	seen := map[string]bool{}
	for _, t := range terms {
		if !g.opaque(t) || seen[t.Value] {
			continue
		}
		if _, ok := g.labels[t.Value]; !ok {
			seen[t.Value] = true
			ask = append(ask, "<"+t.Value+">")
		}
	}
	g.mu.Unlock()
	if len(ask) == 0 {
		return nil
	}
	// An entity's labels and the other entities carrying each: under
	// Label, or with NamingRDF under any of kg.LabelPredicates.
	pe, po, values := "<"+g.cfg.Label+">", "<"+g.cfg.Label+">", ""
	if g.rdf() {
		preds := strings.Join(iris(kg.LabelPredicates), " ")
		pe, po, values = "?lp", "?lq", fmt.Sprintf("VALUES ?lp { %s } VALUES ?lq { %s } ", preds, preds)
	}
	// The batches are asked at once (the client bounds the queries in
	// flight): the CVTs around a hub are thousands, ten batches or more.
	var jobs []func() error
	for lo, hi := range chunks(len(ask), g.cfg.Batch) {
		jobs = append(jobs, func() error { return g.learnBatch(ctx, ask[lo:hi], pe, po, values) })
	}
	return all(jobs...)
}

// learnBatch asks the labels of one batch of opaque ids (see learn).
func (g *Graph) learnBatch(ctx context.Context, ask []string, pe, po, values string) error {
	q := fmt.Sprintf("SELECT ?e ?l (COUNT(DISTINCT ?o) AS ?n) WHERE { VALUES ?e { %s } %s?e %s ?l %s ?o %s ?l } GROUP BY ?e ?l",
		strings.Join(ask, " "), values, pe, g.langFilter(), po)
	r, err := g.c.Select(ctx, q)
	if err != nil {
		return err
	}
	type cand struct {
		label  string
		tagged bool
		n      int
	}
	best := map[string]cand{}
	for _, row := range r.Rows {
		n, err := g.count(row["n"])
		if err != nil {
			return err
		}
		e, l := row["e"].Value, row["l"]
		c := cand{label: l.Value, tagged: l.Lang != "", n: n}
		if b, ok := best[e]; !ok || c.tagged && !b.tagged || c.tagged == b.tagged && c.label < b.label {
			best[e] = c
		}
	}
	g.mu.Lock()
	if len(g.labels) > g.cfg.MaxCached {
		g.labels = map[string]string{}
	}
	for _, iri := range ask {
		iri = iri[1 : len(iri)-1]
		c, ok := best[iri]
		switch {
		case !ok || strings.TrimSpace(c.label) == "":
			g.labels[iri] = ""
		case c.n > 1:
			g.labels[iri] = c.label + " (" + g.idOf(iri) + ")"
		default:
			g.labels[iri] = c.label
		}
	}
	g.mu.Unlock()
	return nil
}

// idOf is what tells an entity from its namesakes in its name, "label
// (id)": its local name under the prefix (a Freebase MID), or with
// NamingRDF its kg.LocalName, as kg.ReadNTriples writes it.
func (g *Graph) idOf(iri string) string {
	if g.rdf() {
		return kg.LocalName(iri)
	}
	return strings.TrimPrefix(iri, g.cfg.Prefix)
}

// resolve returns the term of the entity a stem name stands for: an
// entity served already; a name written "label (id)" (see learn); the
// IRI the name stands for under the prefix, when the endpoint holds it;
// or the one entity whose label the name is. ok is false when none is.
// What it finds is interned, the name asked becoming an alias of the
// entity's own name, so it is asked for once.
func (g *Graph) resolve(ctx context.Context, name string) (Term, bool, error) {
	t, ok, err := g.find(ctx, name)
	if err != nil || !ok {
		return t, ok, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	id := g.ents.id(g.entName(t), t)
	g.ents.ids[name] = id
	return t, true, nil
}

// find is resolve without the interning: the lookups, in that order.
func (g *Graph) find(ctx context.Context, name string) (Term, bool, error) {
	g.mu.Lock()
	if id, ok := g.ents.ids[name]; ok {
		t := g.ents.terms[id]
		g.mu.Unlock()
		return t, true, nil
	}
	known := g.notFound[name]
	met, ok := g.met[name]
	g.mu.Unlock()
	if ok && met.Type != "" {
		return met, true, nil // the IRI a fetched graph gave this name (metName)
	}
	if known || name == "" {
		return Term{}, false, nil
	}
	var cands []Term
	if i := strings.LastIndex(name, " ("); i > 0 && strings.HasSuffix(name, ")") {
		label, id := name[:i], name[i+2:len(name)-1]
		if g.rdf() {
			// A namesake named "label (local name)": among the entities
			// with the label, the one with that local name.
			es, err := g.byLabel(ctx, label, 1000)
			if err != nil {
				return Term{}, false, err
			}
			for _, t := range es {
				if kg.LocalName(t.Value) == id {
					cands = append(cands, t)
				}
			}
		} else if t := (Term{Type: "uri", Value: g.cfg.Prefix + id}); g.opaque(t) {
			cands = append(cands, t)
		}
	}
	cands = append(cands, Term{Type: "uri", Value: g.IRI(name)})
	for _, t := range cands {
		iri := termOf(t)
		r, err := g.c.Select(ctx, fmt.Sprintf("SELECT ?p WHERE { { %s ?p ?o } UNION { ?s ?p %s } } LIMIT 1", iri, iri))
		if err != nil {
			return Term{}, false, err
		}
		if len(r.Rows) == 0 {
			continue
		}
		if err := g.learn(ctx, []Term{t}); err != nil {
			return Term{}, false, err
		}
		return t, true, nil
	}
	if es, err := g.byLabel(ctx, name, 2); err != nil {
		return Term{}, false, err
	} else if len(es) == 1 {
		if err := g.learn(ctx, es); err != nil {
			return Term{}, false, err
		}
		return es[0], true, nil
	}
	g.mu.Lock()
	g.notFound[name] = true
	g.mu.Unlock()
	return Term{}, false, nil
}

// byLabel returns up to limit entities (opaque ids; with NamingRDF any
// IRI) whose label, in Lang or untagged, is label: under Label, or with
// NamingRDF under any of kg.LabelPredicates. None without ids or Label.
func (g *Graph) byLabel(ctx context.Context, label string, limit int) ([]Term, error) {
	pattern := "?e <" + g.cfg.Label + "> ?l"
	switch {
	case g.rdf():
		pattern = fmt.Sprintf("VALUES ?lp { %s } ?e ?lp ?l", strings.Join(iris(kg.LabelPredicates), " "))
	case g.ids == nil || g.cfg.Label == "":
		return nil, nil
	}
	r, err := g.c.Select(ctx, fmt.Sprintf("SELECT DISTINCT ?e WHERE { VALUES ?l { %s } %s } LIMIT %d", strings.Join(g.literals(label), " "), pattern, limit))
	if err != nil {
		return nil, err
	}
	var es []Term
	for _, row := range r.Rows {
		if t := row["e"]; g.opaque(t) {
			es = append(es, t)
		}
	}
	return es, nil
}
