package synth

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// The kinds of complex question (Config.Complex), in the order each split
// writes them.
const (
	// KindConjunction: two anchors meeting at the answer ("which film has
	// directed by A and language B ?").
	KindConjunction = "conjunction"
	// KindConjunctionCVT: two anchors meeting at a CVT node ("what is the
	// jurisdiction of office of the government positions held of A with
	// office position or title B ?").
	KindConjunctionCVT = "conjunction-cvt"
	// KindSuperlative: the earliest or latest of the facts a CVT dates
	// ("what is the earliest team of the teams of A ?").
	KindSuperlative = "superlative"
	// KindComparative: the facts a CVT dates before or after a year.
	KindComparative = "comparative"
	// KindTyped: the answer's type word picks the last step out of a CVT
	// ("which film character does the film of A have ?").
	KindTyped = "typed"
	// KindLargest: the superlative over a numeric literal ("which
	// location has containedby A and the largest area ?").
	KindLargest = "superlative-number"
	// KindCount: how many tails one relation gives an entity ("how many
	// film of does A have ?"); the gold answer is the count, as a string.
	KindCount = "count"
	// KindRelative: a relative clause two hops from the answer, through
	// an entity of its own ("which location has containedby A and
	// nearby airports an airport with serves B ?"): the second anchor
	// reaches the answer through an intermediate entity, neither a CVT
	// nor a hub.
	KindRelative = "relative"
)

// ComplexKinds lists the complex question kinds.
var ComplexKinds = []string{KindConjunction, KindConjunctionCVT, KindSuperlative, KindComparative, KindTyped, KindLargest, KindCount, KindRelative}

// ComplexQuestion is one line of a complex question file (JSON lines, the
// benchmark format "synth"): the question, its topic entities in the
// order the text names them, its gold answers and its gold schema graph,
// whose fields are schema.Graph's.
type ComplexQuestion struct {
	ID       string       `json:"id"`
	Kind     string       `json:"kind"`
	Question string       `json:"question"`
	Entities []string     `json:"entities"`
	Answers  []string     `json:"answers"`
	Graph    ComplexGraph `json:"graph"`
}

// ComplexGraph is a gold schema graph as schema.Graph encodes to JSON
// (this package does not import schema).
type ComplexGraph struct {
	Triples     []ComplexTriple     `json:"Triples"`
	Answer      string              `json:"Answer"`
	Constraints []ComplexConstraint `json:"Constraints,omitempty"`
}

// ComplexTriple is a schema.Triple.
type ComplexTriple struct {
	Head string `json:"Head"`
	Rel  string `json:"Rel"`
	Tail string `json:"Tail"`
}

// ComplexConstraint is a schema.Constraint (Kind "order", "time" or
// "type", as package constraint reads them).
type ComplexConstraint struct {
	Node  string `json:"Node,omitempty"`
	Kind  string `json:"Kind"`
	Value string `json:"Value"`
	Text  string `json:"Text"`
}

// inIndex lists each entity's in-edges (triple indices), for the complex
// questions' answer sets.
type inIndex struct {
	start []int32 // by entity: its in-edges are edges[start[e]:start[e+1]]
	edges []int32
	// dated are the edges from a named entity to a CVT with dates, which
	// superlative and comparative questions start from.
	dated []int32
	// areas are the edges giving a place its area.
	areas []int32
}

func (g *gen) buildIn() *inIndex {
	n := len(g.first)
	ix := &inIndex{start: make([]int32, n+1), edges: make([]int32, len(g.tails))}
	for _, t := range g.tails {
		ix.start[t+1]++
	}
	for i := 1; i <= n; i++ {
		ix.start[i] += ix.start[i-1]
	}
	for i, t := range g.tails {
		if t >= g.nNamed && g.heads[i] < g.nNamed && g.dateOf(t, dateFrom) >= 0 {
			ix.dated = append(ix.dated, int32(i))
		}
		if g.s.rels[g.rels[i]].name == areaRel {
			ix.areas = append(ix.areas, int32(i))
		}
	}
	fill := slices.Clone(ix.start[:n])
	for i, t := range g.tails {
		ix.edges[fill[t]] = int32(i)
		fill[t]++
	}
	return ix
}

// in returns the heads of e's in-edges of relation rel.
func (g *gen) in(ix *inIndex, e, rel int32) []int32 {
	var out []int32
	for _, i := range ix.edges[ix.start[e]:ix.start[e+1]] {
		if g.rels[i] == rel {
			out = append(out, g.heads[i])
		}
	}
	return out
}

// out returns the tails of e's out-edges of relation rel.
func (g *gen) out(e, rel int32) []int32 {
	var out []int32
	for j := g.first[e]; j < g.first[e]+g.cnt[e]; j++ {
		if g.rels[j] == rel {
			out = append(out, g.tails[j])
		}
	}
	return out
}

// plain reports whether e is a named entity that is not a date literal:
// what a question may name and answer with.
func (g *gen) plain(e int32) bool {
	return e < g.nNamed && !g.s.types[g.typeOf[e]].literal
}

// typeWord is the last word of e's type ("film character").
func (g *gen) typeWord(e int32) string {
	n := g.s.types[g.typeOf[e]].name
	return strings.ReplaceAll(n[strings.LastIndexByte(n, '.')+1:], "_", " ")
}

// dateOf returns the date literal a CVT's from (or to) edge names, -1
// when it has none.
func (g *gen) dateOf(c int32, end dateEnd) int32 {
	for j := g.first[c]; j < g.first[c]+g.cnt[c]; j++ {
		if g.s.rels[g.rels[j]].date == end {
			return g.tails[j]
		}
	}
	return -1
}

// yearOf is a date literal's year.
func (g *gen) yearOf(d int32) int {
	y, _ := strconv.Atoi(g.name(d)[:4])
	return y
}

func setOf(xs []int32) []int32 {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// complexSplit is one complex split being written: n questions of each
// kind, ids prefix-1, prefix-2, ..., drawn with r; seen holds the keys of
// questions written already, so that a train split repeats no test
// question, and counts gets the number written per kind.
type complexSplit struct {
	r      *rand.Rand
	n      int
	prefix string
	w      *bufio.Writer
	seen   map[string]bool
	counts map[string]int
}

// complexQuestions writes up to sp.n questions of each kind (ComplexKinds)
// as JSON lines.
func (g *gen) complexQuestions(ctx context.Context, ix *inIndex, sp complexSplit) error {
	enc := json.NewEncoder(sp.w)
	enc.SetEscapeHTML(false)
	id := 0
	for _, kind := range ComplexKinds {
		made := 0
		for tries := 0; made < sp.n && tries < 200*sp.n; tries++ {
			if tries%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			q, key, ok := g.complexOne(sp.r, ix, kind)
			if !ok || sp.seen[key] {
				continue
			}
			sp.seen[key] = true
			id++
			q.ID = sp.prefix + "-" + strconv.Itoa(id)
			q.Kind = kind
			if err := enc.Encode(q); err != nil {
				return fmt.Errorf("synth: write complex questions: %w", err)
			}
			made++
		}
		sp.counts[kind] += made
	}
	return nil
}

// complexOne draws one question of kind, with a key that identifies what
// it asks; ok is false when the draw gave none.
func (g *gen) complexOne(r *rand.Rand, ix *inIndex, kind string) (ComplexQuestion, string, bool) {
	i := r.Int32N(int32(len(g.heads)))
	if (kind == KindSuperlative || kind == KindComparative) && len(ix.dated) > 0 {
		i = ix.dated[r.IntN(len(ix.dated))]
	}
	h, rel, t := g.heads[i], g.rels[i], g.tails[i]
	switch kind {
	case KindConjunction:
		return g.conjunction(r, ix, h, rel, t)
	case KindTyped:
		return g.typed(r, h, rel, t)
	case KindCount:
		return g.count(h, rel)
	case KindRelative:
		return g.relative(r, ix, h, rel, t)
	case KindLargest:
		if len(ix.areas) == 0 {
			return ComplexQuestion{}, "", false
		}
		return g.largest(r, ix, g.heads[ix.areas[r.IntN(len(ix.areas))]])
	default:
		return g.dated(r, kind, h, rel, t)
	}
}

// names returns the names of es.
func (g *gen) names(es []int32) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = g.name(e)
	}
	return out
}

// conjunction asks for the x with x -rel-> a and x -r2-> b, two edges of
// head x; only where b narrows what a alone gives.
func (g *gen) conjunction(r *rand.Rand, ix *inIndex, x, rel, a int32) (ComplexQuestion, string, bool) {
	if !g.plain(x) || !g.plain(a) || g.cnt[x] < 2 {
		return ComplexQuestion{}, "", false
	}
	j := g.first[x] + r.Int32N(g.cnt[x])
	r2, b := g.rels[j], g.tails[j]
	if r2 == rel || b == a || !g.plain(b) {
		return ComplexQuestion{}, "", false
	}
	byA := setOf(g.in(ix, a, rel))
	var ans []int32
	for _, y := range setOf(g.in(ix, b, r2)) {
		if _, ok := slices.BinarySearch(byA, y); ok {
			ans = append(ans, y)
		}
	}
	if len(ans) == 0 || len(ans) > maxAnswers || len(ans) == len(byA) {
		return ComplexQuestion{}, "", false
	}
	an, bn := g.name(a), g.name(b)
	q := ComplexQuestion{
		Question: fmt.Sprintf("which %s has %s %s and %s %s ?", g.typeWord(x), g.relWords(rel), an, g.relWords(r2), bn),
		Entities: []string{an, bn}, Answers: g.names(ans),
		Graph: ComplexGraph{Triples: []ComplexTriple{{"[ENT1]", g.s.rels[rel].name, an}, {"[ENT1]", g.s.rels[r2].name, bn}}, Answer: "[ENT1]"},
	}
	return q, fmt.Sprint("c", a, rel, b, r2), true
}

// cvtFacts lists p's CVTs of relation r0 with, for each, its tails of
// relation r2.
func (g *gen) cvtFacts(p, r0, r2 int32) (cvts []int32, tails [][]int32) {
	for _, c := range g.out(p, r0) {
		if c < g.nNamed {
			continue
		}
		cvts = append(cvts, c)
		tails = append(tails, g.out(c, r2))
	}
	return cvts, tails
}

// answerEdge picks a CVT c's out-edge to a plain entity other than the
// edge skip's relation, -1 when it has none.
func (g *gen) answerEdge(r *rand.Rand, c, skip int32) int32 {
	var js []int32
	for j := g.first[c]; j < g.first[c]+g.cnt[c]; j++ {
		if g.rels[j] != skip && g.plain(g.tails[j]) {
			js = append(js, j)
		}
	}
	if len(js) == 0 {
		return -1
	}
	return js[r.IntN(len(js))]
}

// dated asks, of the CVTs p -r0-> c: which of their r2 tails meet a
// condition on c. KindConjunctionCVT: c -r1-> b also (a second anchor
// at the CVT); KindSuperlative: c starts earliest (latest);
// KindComparative: c's fact held before (after) a year.
func (g *gen) dated(r *rand.Rand, kind string, p, r0, c int32) (ComplexQuestion, string, bool) {
	if !g.plain(p) || c < g.nNamed {
		return ComplexQuestion{}, "", false
	}
	j := g.answerEdge(r, c, -1)
	if j < 0 {
		return ComplexQuestion{}, "", false
	}
	r2 := g.rels[j]
	cvts, tails := g.cvtFacts(p, r0, r2)
	var all []int32
	for _, ts := range tails {
		all = append(all, ts...)
	}
	all = setOf(all)
	pn := g.name(p)
	path := []ComplexTriple{{pn, g.s.rels[r0].name, "[ENT1]"}, {"[ENT1]", g.s.rels[r2].name, "[ENT2]"}}
	keep := func(ok func(c int32) bool) []int32 {
		var ans []int32
		for i, c := range cvts {
			if ok(c) {
				ans = append(ans, tails[i]...)
			}
		}
		return setOf(ans)
	}
	var (
		q   ComplexQuestion
		key string
		ans []int32
	)
	switch kind {
	case KindConjunctionCVT:
		k := g.answerEdge(r, c, r2)
		if k < 0 {
			return ComplexQuestion{}, "", false
		}
		r1, b := g.rels[k], g.tails[k]
		ans = keep(func(c int32) bool { return slices.Contains(g.out(c, r1), b) })
		bn := g.name(b)
		q = ComplexQuestion{
			Question: fmt.Sprintf("what is the %s of the %s of %s with %s %s ?", g.relWords(r2), g.relWords(r0), pn, g.relWords(r1), bn),
			Entities: []string{pn, bn},
			Graph:    ComplexGraph{Triples: append(path, ComplexTriple{"[ENT1]", g.s.rels[r1].name, bn}), Answer: "[ENT2]"},
		}
		key = fmt.Sprint("v", p, r0, r2, r1, b)
	case KindSuperlative:
		first := r.IntN(2) == 0
		best := int32(-1)
		for _, c := range cvts {
			d := g.dateOf(c, dateFrom)
			if d >= 0 && (best < 0 || first && d < best || !first && d > best) {
				best = d
			}
		}
		if best < 0 {
			return ComplexQuestion{}, "", false
		}
		ans = keep(func(c int32) bool { return g.dateOf(c, dateFrom) == best })
		word, value := "earliest", "first"
		if !first {
			word, value = "latest", "last"
		}
		q = ComplexQuestion{
			Question: fmt.Sprintf("what is the %s %s of the %s of %s ?", word, g.relWords(r2), g.relWords(r0), pn),
			Entities: []string{pn},
			Graph:    ComplexGraph{Triples: path, Answer: "[ENT2]", Constraints: []ComplexConstraint{{Kind: "order", Value: value, Text: word}}},
		}
		key = fmt.Sprint("s", p, r0, r2, first)
	case KindComparative:
		from := g.dateOf(c, dateFrom)
		if from < 0 {
			return ComplexQuestion{}, "", false
		}
		year := g.yearOf(from)
		before := r.IntN(2) == 0
		var word, value string
		if before {
			year++ // c's fact started before it
			word, value = "before", "-"+strconv.Itoa(year-1)
			ans = keep(func(c int32) bool { return g.yearOf(g.dateOf(c, dateFrom)) < year })
		} else {
			year-- // c's fact held after it
			word, value = "after", strconv.Itoa(year+1)+"-"
			ans = keep(func(c int32) bool { return g.yearOf(g.dateOf(c, dateTo)) > year })
		}
		q = ComplexQuestion{
			Question: fmt.Sprintf("what is the %s of the %s of %s %s %d ?", g.relWords(r2), g.relWords(r0), pn, word, year),
			Entities: []string{pn},
			Graph:    ComplexGraph{Triples: path, Answer: "[ENT2]", Constraints: []ComplexConstraint{{Kind: "time", Value: value, Text: word + " " + strconv.Itoa(year)}}},
		}
		key = fmt.Sprint("m", p, r0, r2, word, year)
	}
	// Only questions whose condition narrows the path's answers.
	if len(ans) == 0 || len(ans) > maxAnswers || len(ans) == len(all) {
		return ComplexQuestion{}, "", false
	}
	q.Answers = g.names(ans)
	return q, key, true
}

// typed asks for the tails of one relation out of p's CVTs by their
// type word, where the CVT has edges to plain entities of two types.
func (g *gen) typed(r *rand.Rand, p, r0, c int32) (ComplexQuestion, string, bool) {
	if !g.plain(p) || c < g.nNamed {
		return ComplexQuestion{}, "", false
	}
	j := g.answerEdge(r, c, -1)
	if j < 0 {
		return ComplexQuestion{}, "", false
	}
	r2, y := g.rels[j], g.tails[j]
	if k := g.answerEdge(r, c, r2); k < 0 || g.typeOf[g.tails[k]] == g.typeOf[y] {
		return ComplexQuestion{}, "", false
	}
	_, tails := g.cvtFacts(p, r0, r2)
	var ans []int32
	for _, ts := range tails {
		ans = append(ans, ts...)
	}
	ans = setOf(ans)
	if len(ans) == 0 || len(ans) > maxAnswers {
		return ComplexQuestion{}, "", false
	}
	pn, tw := g.name(p), g.typeWord(y)
	q := ComplexQuestion{
		Question: fmt.Sprintf("which %s does the %s of %s have ?", tw, g.relWords(r0), pn),
		Entities: []string{pn}, Answers: g.names(ans),
		Graph: ComplexGraph{Triples: []ComplexTriple{{pn, g.s.rels[r0].name, "[ENT1]"}, {"[ENT1]", g.s.rels[r2].name, "[ENT2]"}}, Answer: "[ENT2]",
			Constraints: []ComplexConstraint{{Kind: "type", Value: tw[strings.LastIndexByte(tw, ' ')+1:], Text: tw}}},
	}
	return q, fmt.Sprint("t", p, r0, r2), true
}

// area returns e's area, its greatest (most) or least where it has
// several, as package constraint reads them; ok false when it has none.
func (g *gen) area(e int32, most bool) (v float64, ok bool) {
	for j := g.first[e]; j < g.first[e]+g.cnt[e]; j++ {
		if g.s.rels[g.rels[j]].name != areaRel {
			continue
		}
		x, err := strconv.ParseFloat(g.name(g.tails[j]), 64)
		if err == nil && (!ok || most && x > v || !most && x < v) {
			v, ok = x, true
		}
	}
	return v, ok
}

// largest asks which of the places sharing an edge (rel, a) with x has
// the largest (smallest) area: the places with an area and the greatest
// (least) one, where at least two have one.
func (g *gen) largest(r *rand.Rand, ix *inIndex, x int32) (ComplexQuestion, string, bool) {
	if x >= g.nNamed || g.cnt[x] < 2 {
		return ComplexQuestion{}, "", false
	}
	j := g.first[x] + r.Int32N(g.cnt[x])
	rel, a := g.rels[j], g.tails[j]
	if !g.plain(a) || ix.start[a+1]-ix.start[a] > 20*maxAnswers {
		// A hub's places are too many to rank, and to scan per draw.
		return ComplexQuestion{}, "", false
	}
	cands := setOf(g.in(ix, a, rel))
	if len(cands) > 4*maxAnswers {
		return ComplexQuestion{}, "", false
	}
	most := r.IntN(2) == 0
	var best float64
	var ans []int32
	with := 0
	for _, c := range cands {
		v, ok := g.area(c, most)
		if !ok {
			continue
		}
		with++
		switch {
		case len(ans) == 0 || most && v > best || !most && v < best:
			best, ans = v, []int32{c}
		case v == best:
			ans = append(ans, c)
		}
	}
	if with < 2 || len(ans) == with {
		return ComplexQuestion{}, "", false
	}
	word, value := "largest", "max"
	if !most {
		word, value = "smallest", "min"
	}
	an := g.name(a)
	q := ComplexQuestion{
		Question: fmt.Sprintf("which %s has %s %s and the %s area ?", g.typeWord(x), g.relWords(rel), an, word),
		Entities: []string{an}, Answers: g.names(ans),
		Graph: ComplexGraph{Triples: []ComplexTriple{{"[ENT1]", g.s.rels[rel].name, an}}, Answer: "[ENT1]",
			Constraints: []ComplexConstraint{{Kind: "order", Value: value, Text: word}}},
	}
	return q, fmt.Sprint("n", a, rel, most), true
}

// count asks how many tails relation rel gives p, where they are two or
// more plain entities (a count of CVTs or of literals asks nothing a
// reader could check) and no more than maxAnswers.
func (g *gen) count(p, rel int32) (ComplexQuestion, string, bool) {
	if !g.plain(p) {
		return ComplexQuestion{}, "", false
	}
	ts := setOf(g.out(p, rel))
	if len(ts) < 2 || len(ts) > maxAnswers || slices.ContainsFunc(ts, func(t int32) bool { return !g.plain(t) }) {
		return ComplexQuestion{}, "", false
	}
	pn := g.name(p)
	q := ComplexQuestion{
		Question: fmt.Sprintf("how many %s does %s have ?", g.relWords(rel), pn),
		Entities: []string{pn}, Answers: []string{strconv.Itoa(len(ts))},
		Graph: ComplexGraph{Triples: []ComplexTriple{{pn, g.s.rels[rel].name, "[ENT1]"}}, Answer: "[ENT1]"},
	}
	return q, fmt.Sprint("k", p, rel), true
}

// relativeDegree is the most edges the intermediate entity of a
// relative clause may have: an entity of its own, as a join walks
// through (a hub's neighbours meet anything).
const relativeDegree = 100

// relative asks for the x with x -rel-> a and x -r2-> y -r1-> b for some
// entity y: a relative clause about the answer's neighbour y, two hops
// from it; only where the clause narrows what a alone gives, y is a
// named entity of at most relativeDegree edges and b no hub.
func (g *gen) relative(r *rand.Rand, ix *inIndex, x, rel, a int32) (ComplexQuestion, string, bool) {
	if !g.plain(x) || !g.plain(a) || g.cnt[x] < 2 {
		return ComplexQuestion{}, "", false
	}
	j := g.first[x] + r.Int32N(g.cnt[x])
	r2, y := g.rels[j], g.tails[j]
	if r2 == rel || y == a || y < g.nHub || !g.plain(y) || g.cnt[y] == 0 || g.degree(ix, y) > relativeDegree {
		return ComplexQuestion{}, "", false
	}
	k := g.first[y] + r.Int32N(g.cnt[y])
	r1, b := g.rels[k], g.tails[k]
	if b == x || b == a || b < g.nHub || !g.plain(b) {
		return ComplexQuestion{}, "", false
	}
	byA := setOf(g.in(ix, a, rel))
	viaB := setOf(g.in(ix, b, r1))
	var ans []int32
	for _, c := range byA {
		if slices.ContainsFunc(g.out(c, r2), func(y int32) bool {
			_, ok := slices.BinarySearch(viaB, y)
			return ok
		}) {
			ans = append(ans, c)
		}
	}
	if len(ans) == 0 || len(ans) > maxAnswers || len(ans) == len(byA) {
		return ComplexQuestion{}, "", false
	}
	an, bn := g.name(a), g.name(b)
	q := ComplexQuestion{
		Question: fmt.Sprintf("which %s has %s %s and %s %s with %s %s ?", g.typeWord(x), g.relWords(rel), an, g.relWords(r2), article(g.typeWord(y)), g.relWords(r1), bn),
		Entities: []string{an, bn}, Answers: g.names(ans),
		Graph: ComplexGraph{Triples: []ComplexTriple{{"[ENT1]", g.s.rels[rel].name, an}, {"[ENT1]", g.s.rels[r2].name, "[ENT2]"}, {"[ENT2]", g.s.rels[r1].name, bn}}, Answer: "[ENT1]"},
	}
	return q, fmt.Sprint("r", a, rel, b, r1, r2), true
}

// article puts "a" or "an" before word.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

// degree is e's number of edges, in and out.
func (g *gen) degree(ix *inIndex, e int32) int32 {
	return g.cnt[e] + ix.start[e+1] - ix.start[e]
}
