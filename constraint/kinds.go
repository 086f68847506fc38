package constraint

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/kg"
)

// Instances says what kinds of thing a proper name names, from a
// dictionary's instance pointers: *wordnet.Lexicon (France is an instance
// of a European country, a kind of country; Lyon of a city). The
// constraint check reads it where the KG states no type.
type Instances interface {
	// InstanceKinds returns the kind words name is an instance of, by
	// steps up the hierarchy ([0] what it is an instance of, [1] their
	// hypernyms, ...), lower case with words joined by '_'; none for a
	// name that names no instance.
	InstanceKinds(name string) [][]string
}

// KindSteps is how far up a dictionary's hierarchy a kind makes a name
// one of it: France is an instance of a European country, a kind of
// country; Francis Ford Coppola of a film maker, a producer, a creator, a
// person. Farther up, every city is a "country" (an area); a kind found
// there leaves the name unknown, one found nowhere makes it not one.
const KindSteps = 3

// Checker checks answers against constraints in a KG. Its zero Lexicon
// judges types by what the KG states alone.
type Checker struct {
	Graph kg.Reader
	// Lexicon, when not nil, names the kinds of the entities the KG gives
	// no type: by their own names, or by those of the entities that
	// stand in the same relation to the same neighbour (Kind).
	Lexicon Instances
	// RelationKinds, when not nil, holds each relation's kind word as
	// Kind reads it from the relation's name (RelationKinds): a caller
	// that judges many entities reads the names once per KG, not once per
	// edge.
	RelationKinds []string
	// Over, when not nil, says an entity has more than MeetVia edges
	// although Graph holds fewer of them: a remote KG's neighbourhood
	// fetched within that bound (kg.WithinFetcher) leaves such an
	// entity's edges unread. Meet walks through none of them.
	Over func(e int32) bool
}

// RelationKinds returns each relation of g's kind word, the singular of
// the last word of its name ("country" of "located_in_countries"; "" for
// a name of no words): a relation leading to an entity by such a name
// makes it one of that kind (Kind's step 2).
func RelationKinds(g kg.Reader) []string {
	out := make([]string, g.NumRelations())
	for r := range out {
		out[r] = relationKind(g.RelationName(int32(r)))
	}
	return out
}

// relationKind is the kind word of a relation named r.
func relationKind(r string) string {
	if words := strings.Fields(kg.RelationText(r)); len(words) > 0 {
		return singular(words[len(words)-1])
	}
	return ""
}

// kgType is Kind's reason for a type the KG states: no inference to
// explain.
const kgType = "a KG type"

// Bounds of the structural inference: how many of an entity's edges are
// read for its role, and how many entities in the same role are asked.
const (
	kindEdges    = 64
	kindSiblings = 8
	// kindAnswers is how many answers of a set Kinds infers kinds for;
	// the rest stay unknown (a Breadth plan's hundreds would cost a
	// millisecond for what only reorders them).
	kindAnswers = 32
)

// Kinds judges each of es against kind as Kind does, but only by the
// KG's types (step 1) when the KG states a type for any of them: where a
// KG types some answers, an untyped one is no likelier of the kind for
// WordNet's say-so (Freebase's educational institutions are typed, and
// "Dartmouth College", an instance of a college in WordNet, would go
// before every typed one on "what college did X attend"); the inference
// is for KGs that type none of them. inferred says the verdicts were
// inferred (none of es is typed).
func (c Checker) Kinds(es []int32, kind string) (vs []Verdict, whys []string, inferred bool) {
	vs, whys = make([]Verdict, len(es)), make([]string, len(es))
	words := make([][]string, len(es))
	typed := false
	for i, e := range es {
		words[i] = kg.TypeWords(kg.TypesOf(c.Graph, e))
		typed = typed || len(words[i]) > 0
	}
	for i, e := range es {
		switch {
		case len(words[i]) > 0 && slices.Contains(words[i], kind):
			vs[i], whys[i] = Holds, kgType
		case len(words[i]) > 0:
			vs[i] = Fails
		case !typed && i < kindAnswers:
			vs[i], whys[i] = c.Kind(e, kind)
		}
	}
	return vs, whys, !typed
}

// Kind judges whether entity e is a kind (a singular noun: "country"),
// and says how it knows, for --explain. The evidence, first found wins:
//
//  1. the KG's types (kg.TypesOf: type edges, Freebase-style relation
//     names);
//  2. a relation whose name ends in the kind leads to e ("country" makes
//     its tails countries);
//  3. the lexicon's kinds of e's own name (WordNet: lyon is a city);
//  4. the entities standing in the same relation to the same neighbour
//     (springfield located_in france beside lyon and paris, cities), by
//     2 and 3: e is of the kind when most of those known are (never
//     of another for theirs).
//
// Unknown when nothing says.
func (c Checker) Kind(e int32, kind string) (Verdict, string) {
	return c.judge(e, kind, c.facts, c.siblings, true)
}

// PossibleKinds returns every kind Kind can find some entity of the KG to
// be (Holds): the type words the KG states of its entities, the kinds of
// its relations, and the lexicon's kinds of its entities' names up to
// KindSteps. Kind finds no entity of a kind not in it, so a caller that
// ranks by kinds can bound what a kind check adds. It reads every entity
// once; a KG that grows as it is read (a remote backend) must not be
// asked.
func (c Checker) PossibleKinds() map[string]bool {
	g := c.Graph
	out := map[string]bool{}
	add := func(words []string) {
		for _, w := range words {
			out[w] = true
		}
	}
	isType := make([]bool, g.NumRelations())
	for r := range g.NumRelations() {
		name := g.RelationName(int32(r))
		k := ""
		if c.RelationKinds != nil {
			k = c.RelationKinds[r]
		} else {
			k = relationKind(name)
		}
		if k != "" {
			out[k] = true
		}
		isType[r] = kg.TypeRelation(name)
	}
	// kg.TypesOf, over every entity at once: each triple's relation
	// states its head's type by its name, or, a type relation, by its
	// tail's.
	typed := make([]bool, len(isType)) // the relation's name read
	for t := range int32(g.NumTriples()) {
		tr := g.Triple(t)
		switch {
		case isType[tr.Rel]:
			add(kg.TypeWords([]string{g.EntityName(tr.Tail)}))
		case !typed[tr.Rel]:
			typed[tr.Rel] = true
			if d := kg.RelationType(g.RelationName(tr.Rel)); d != "" {
				add(kg.TypeWords([]string{d}))
			}
		}
	}
	if c.Lexicon != nil {
		for e := range int32(g.NumEntities()) {
			steps := c.Lexicon.InstanceKinds(g.EntityName(e))
			for _, step := range steps[:min(len(steps), KindSteps)] {
				add(step)
			}
		}
	}
	return out
}

// kindFacts is what Kind reads of one entity, whatever the kind asked:
// its types, the kinds of the relations leading to it and the lexicon's
// kinds of its name.
type kindFacts struct {
	typed     bool     // the KG states a type (kg.TypesOf)
	typeWords []string // kg.TypeWords of those types
	// inKinds holds the kind words of the relations of e's first
	// kindEdges incoming edges, each once, with the first relation that
	// gave it.
	inKinds []relKind
	// inst is the lexicon's InstanceKinds of e's name; nil without a
	// lexicon.
	inst [][]string
}

// relKind is a relation's kind word (RelationKinds) and the relation.
type relKind struct {
	kind string
	rel  int32
}

// facts reads e's kindFacts from the KG and the lexicon.
func (c Checker) facts(e int32) *kindFacts {
	g := c.Graph
	types := kg.TypesOf(g, e)
	f := &kindFacts{typed: len(types) > 0, typeWords: kg.TypeWords(types)}
	in := g.In(e)
	// In is sorted by relation: a relation's kind is read once per run
	// of its edges, not once per edge.
	lastRel, k := int32(-1), ""
	for _, tid := range in[:min(len(in), kindEdges)] {
		rel := g.Triple(tid).Rel
		switch {
		case c.RelationKinds != nil:
			k = c.RelationKinds[rel]
		case rel != lastRel:
			k = relationKind(g.RelationName(rel))
		}
		lastRel = rel
		if k != "" && !slices.ContainsFunc(f.inKinds, func(r relKind) bool { return r.kind == k }) {
			f.inKinds = append(f.inKinds, relKind{k, rel})
		}
	}
	if c.Lexicon != nil {
		f.inst = c.Lexicon.InstanceKinds(g.EntityName(e))
	}
	return f
}

// judge is Kind with e's facts and siblings read by the functions given
// (a KindCache keeps them); the reason is written only when why is set.
func (c Checker) judge(e int32, kind string, facts func(int32) *kindFacts, siblings func(int32) []sibling, why bool) (Verdict, string) {
	g := c.Graph
	f := facts(e)
	if len(f.typeWords) > 0 {
		if slices.Contains(f.typeWords, kind) {
			return Holds, kgType
		}
		return Fails, ""
	}
	if v, reason := c.named(e, f, kind, why); v != Unknown {
		return v, reason
	}
	held, failed, who := 0, 0, ""
	for _, s := range siblings(e) {
		switch v, _ := c.named(s.entity, facts(s.entity), kind, false); v {
		case Holds:
			held++
			if why && who == "" {
				who = fmt.Sprintf("as %s, which also %s %s", g.EntityName(s.entity), s.how(g), g.EntityName(s.via))
			}
		case Fails:
			failed++
		}
	}
	if held > 0 && held >= failed {
		if !why {
			return Holds, ""
		}
		return Holds, fmt.Sprintf("%s (%d of %d such entities known)", who, held, held+failed)
	}
	// Entities beside e known to be of another kind say nothing against
	// it: films named after cities stand beside films WordNet does not
	// know.
	return Unknown, ""
}

// named judges e, whose facts are f, by the relations leading to it and
// by its own name (steps 2 and 3 of Kind); the reason is written only
// when why is set.
func (c Checker) named(e int32, f *kindFacts, kind string, why bool) (Verdict, string) {
	g := c.Graph
	for _, r := range f.inKinds {
		if r.kind == kind {
			if !why {
				return Holds, ""
			}
			return Holds, fmt.Sprintf("the tail of %q", g.RelationName(r.rel))
		}
	}
	if c.Lexicon == nil {
		return Unknown, ""
	}
	steps := f.inst
	for i, step := range steps {
		if !slices.Contains(step, kind) {
			continue
		}
		switch {
		case i >= KindSteps:
			return Unknown, ""
		case !why:
			return Holds, ""
		case i == 0:
			return Holds, fmt.Sprintf("WordNet: %s is an instance of %s", g.EntityName(e), kind)
		}
		return Holds, fmt.Sprintf("WordNet: %s is an instance of %s, a kind of %s", g.EntityName(e), steps[0][0], kind)
	}
	if len(steps) == 0 {
		return Unknown, ""
	}
	return Fails, ""
}

// sibling is an entity in the same role as another: it too leads by the
// relation rel to (or, in, comes by it from) via.
type sibling struct {
	entity, via int32
	rel         int32
	in          bool
}

// how says how s stands to via, for Kind's reason.
func (s sibling) how(g kg.Reader) string {
	if s.in {
		return "comes by " + g.RelationName(s.rel) + " from"
	}
	return g.RelationName(s.rel)
}

// siblings returns up to kindSiblings entities that stand in one of e's
// relations to the same neighbour: the other heads of e's outgoing edges'
// (relation, tail), the other tails of its incoming edges' (head,
// relation).
func (c Checker) siblings(e int32) []sibling {
	g := c.Graph
	var out []sibling
	seen := []int32{e}
	add := func(ids []int32, end func(kg.Triple) int32, via, rel int32, in bool) {
		for _, tid := range ids[:min(len(ids), kindEdges)] {
			s := end(g.Triple(tid))
			if len(out) < kindSiblings && !slices.Contains(seen, s) {
				seen = append(seen, s)
				out = append(out, sibling{s, via, rel, in})
			}
		}
	}
	outs := g.Out(e)
	for _, tid := range outs[:min(len(outs), kindEdges)] {
		if len(out) == kindSiblings {
			return out // the rest could add none
		}
		t := g.Triple(tid)
		add(g.InRel(t.Tail, t.Rel), func(t kg.Triple) int32 { return t.Head }, t.Tail, t.Rel, false)
	}
	ins := g.In(e)
	for _, tid := range ins[:min(len(ins), kindEdges)] {
		if len(out) == kindSiblings {
			return out
		}
		t := g.Triple(tid)
		add(g.OutRel(t.Head, t.Rel), func(t kg.Triple) int32 { return t.Tail }, t.Head, t.Rel, true)
	}
	return out
}

// KindCache judges kinds as Checker.Kind does, keeping what it reads of
// each entity (its types, the kinds of the relations leading to it, the
// lexicon's kinds of its name, its siblings) for the judgements that
// follow, whatever kind they ask: a planner judges the same hubs'
// neighbours question after question, "film" for one and "movie" for the
// next. It holds up to a bound of entities, then starts over; it is safe
// for concurrent use.
type KindCache struct {
	c     Checker
	limit int
	mu    sync.RWMutex
	facts map[int32]*kindFacts
	sibs  map[int32][]sibling
}

// NewKindCache returns a cache over c keeping up to limit entities
// (limit <= 0: 1<<18).
func NewKindCache(c Checker, limit int) *KindCache {
	if limit <= 0 {
		limit = 1 << 18
	}
	return &KindCache{c: c, limit: limit, facts: map[int32]*kindFacts{}, sibs: map[int32][]sibling{}}
}

// Kind is Checker.Kind's verdict on e, without its reason (ask the
// Checker for that).
func (k *KindCache) Kind(e int32, kind string) Verdict {
	v, _ := k.c.judge(e, kind, k.factsOf, k.siblingsOf, false)
	return v
}

// Typed reports whether the KG states e's type (kg.TypesOf gives one).
func (k *KindCache) Typed(e int32) bool { return k.factsOf(e).typed }

// factsOf returns e's facts, reading them once.
func (k *KindCache) factsOf(e int32) *kindFacts {
	return cached(k, k.facts, e, k.c.facts)
}

// siblingsOf returns e's siblings, reading them once.
func (k *KindCache) siblingsOf(e int32) []sibling {
	return cached(k, k.sibs, e, k.c.siblings)
}

// cached returns m[e], computing and keeping it on a miss; m is emptied
// when it holds k.limit entities.
func cached[V any](k *KindCache, m map[int32]V, e int32, read func(int32) V) V {
	k.mu.RLock()
	v, ok := m[e]
	k.mu.RUnlock()
	if ok {
		return v
	}
	v = read(e)
	k.mu.Lock()
	if len(m) >= k.limit {
		clear(m)
	}
	m[e] = v
	k.mu.Unlock()
	return v
}
