package constraint

import (
	"fmt"
	"slices"
	"strings"

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
	g := c.Graph
	if words := kg.TypeWords(kg.TypesOf(g, e)); len(words) > 0 {
		if slices.Contains(words, kind) {
			return Holds, kgType
		}
		return Fails, ""
	}
	if v, why := c.named(e, kind); v != Unknown {
		return v, why
	}
	held, failed, who := 0, 0, ""
	for _, s := range c.siblings(e) {
		switch v, _ := c.named(s.entity, kind); v {
		case Holds:
			held++
			if who == "" {
				who = fmt.Sprintf("as %s, which also %s %s", g.EntityName(s.entity), s.how, g.EntityName(s.via))
			}
		case Fails:
			failed++
		}
	}
	if held > 0 && held >= failed {
		return Holds, fmt.Sprintf("%s (%d of %d such entities known)", who, held, held+failed)
	}
	// Entities beside e known to be of another kind say nothing against
	// it: films named after cities stand beside films WordNet does not
	// know.
	return Unknown, ""
}

// named judges e by the relations leading to it and by its own name
// (steps 2 and 3 of Kind).
func (c Checker) named(e int32, kind string) (Verdict, string) {
	g := c.Graph
	in := g.In(e)
	for _, tid := range in[:min(len(in), kindEdges)] {
		rel := g.Triple(tid).Rel
		var k string
		if c.RelationKinds != nil {
			k = c.RelationKinds[rel]
		} else {
			k = relationKind(g.RelationName(rel))
		}
		if k != "" && k == kind {
			return Holds, fmt.Sprintf("the tail of %q", g.RelationName(rel))
		}
	}
	if c.Lexicon == nil {
		return Unknown, ""
	}
	steps := c.Lexicon.InstanceKinds(g.EntityName(e))
	for i, step := range steps {
		if !slices.Contains(step, kind) {
			continue
		}
		switch {
		case i >= KindSteps:
			return Unknown, ""
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
// relation how to (or comes by it from) via.
type sibling struct {
	entity, via int32
	how         string
}

// siblings returns up to kindSiblings entities that stand in one of e's
// relations to the same neighbour: the other heads of e's outgoing edges'
// (relation, tail), the other tails of its incoming edges' (head,
// relation).
func (c Checker) siblings(e int32) []sibling {
	g := c.Graph
	var out []sibling
	seen := map[int32]bool{e: true}
	add := func(ids []int32, end func(kg.Triple) int32, via int32, how string) {
		for _, tid := range ids[:min(len(ids), kindEdges)] {
			s := end(g.Triple(tid))
			if !seen[s] && len(out) < kindSiblings {
				seen[s] = true
				out = append(out, sibling{s, via, how})
			}
		}
	}
	outs := g.Out(e)
	for _, tid := range outs[:min(len(outs), kindEdges)] {
		t := g.Triple(tid)
		add(g.InRel(t.Tail, t.Rel), func(t kg.Triple) int32 { return t.Head }, t.Tail, g.RelationName(t.Rel))
	}
	ins := g.In(e)
	for _, tid := range ins[:min(len(ins), kindEdges)] {
		t := g.Triple(tid)
		add(g.OutRel(t.Head, t.Rel), func(t kg.Triple) int32 { return t.Tail }, t.Head, "comes by "+g.RelationName(t.Rel)+" from")
	}
	return out
}
