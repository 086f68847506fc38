package projection

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// Bounds of a join: the entities a path's level is collected to (a hub's
// level is no set a second thing narrows by meaning), and the edges read
// from the second thing.
const (
	joinLevelCap = 5000
	joinEdges    = 20000
	// joinViaDegree is the most edges a node inside the path may have:
	// a mediator (a CVT) or a thing of its own has few.
	joinViaDegree = 100
)

// Join is where a second thing the question names attaches to a path
// planned from its topic entity: the path's node it links to (Level 1 to
// len(steps): 1 the first inner node, len(steps) the answer), the
// relation and direction of that link, and how many answers the path
// reaches before and after.
type Join struct {
	Entity string
	Level  int
	Rel    string
	// Out is true when the link runs from the path's node to Entity
	// (to the intermediate entity, for a join through one).
	Out bool
	// Via is, for a join through an intermediate entity (a relative
	// clause: "the country that contains an airport that serves B"), the
	// relation linking that entity and Entity; Rel and Out then say how
	// it links to the path's node. "" for a join in one hop.
	Via string
	// ViaOut is true when Via's link runs from the intermediate entity
	// to Entity.
	ViaOut bool
	// Hops is the path's length: Level == Hops joins at the answer.
	Hops    int
	Answers int
	Before  int
}

// joinKey groups the links from a second thing to a path's level: the
// level, the relation and direction of the link into the level's node,
// and, through an intermediate entity, the relation and direction of
// that entity's link to the second thing (via -1 in one hop).
type joinKey struct {
	level  int
	rel    int32
	out    bool
	via    int32
	viaOut bool
}

// JoinMention finds where other, an entity the question names beside
// anchor, links to the nodes the path steps walks from anchor in g, so
// that it narrows the path's answers: "who played X in film Y" walks
// actor -> performance (a CVT) -> character, and the film links to the
// performance, so only the characters of the performances in that film
// remain. Of the links that narrow (the answers left are some, not all),
// the one leaving the fewest answers wins, the node nearest the anchor on
// a tie (a CVT before the answer). A link in one hop is taken where one
// narrows; else a link through one intermediate entity of at most
// joinViaDegree edges, on no level of the path (a relative clause: "which
// country contains an airport that serves B" joins B -serves- airport
// -containedby- the answer). ok is false when other links to no level,
// narrows nothing, or a level is a hub's (over joinLevelCap entities).
func JoinMention(g kg.Reader, anchor string, steps []schema.Step, other string) (Join, bool) {
	return joinMention(g, anchor, steps, other, JoinOptions{})
}

// JoinOptions are what a join may read beyond the path's levels.
type JoinOptions struct {
	// OneHop takes joins in one hop only: over a graph that holds the
	// second thing's edges but not its neighbours' (a neighbourhood one
	// step deep), a join through an intermediate entity is not seen, and
	// none is looked for, so that the plan is what the whole KG gives.
	OneHop bool
}

// joinMention is JoinMention, through an intermediate entity only where
// opts allows it.
func joinMention(g kg.Reader, anchor string, steps []schema.Step, other string, opts JoinOptions) (Join, bool) {
	a, ok := g.Entity(anchor)
	b, okb := g.Entity(other)
	if !ok || !okb || a == b || len(steps) == 0 {
		return Join{}, false
	}
	levels := make([][]int32, len(steps)+1)
	levels[0] = []int32{a}
	for i, s := range steps {
		levels[i+1] = walkStep(g, levels[i], s)
		if len(levels[i+1]) == 0 || len(levels[i+1]) > joinLevelCap {
			return Join{}, false
		}
	}
	// A path through a hub (a country, a gender) reaches its answers by
	// no meaning: a second thing linked to one of them is chance.
	for _, level := range levels[1:len(steps)] {
		for _, x := range level {
			if g.Degree(x) > joinViaDegree {
				return Join{}, false
			}
		}
	}
	jl := joinLinks{g: g, levels: levels, links: map[joinKey][]int32{}}
	// b's edges are kept as they are read: a join through an entity
	// walks on from the same ones.
	type edge struct {
		m, rel int32
		out    bool
	}
	var near []edge
	jl.neighbours(b, func(x, rel int32, out bool) bool {
		jl.add(x, joinKey{rel: rel, out: out, via: -1})
		near = append(near, edge{x, rel, out})
		return true
	})
	if best, found := jl.best(steps, other); found || opts.OneHop {
		return best, found
	}
	jl.keys, jl.links = nil, map[joinKey][]int32{}
	read := 0
	for _, e := range near {
		m := e.m
		if m == a || g.Degree(m) > joinViaDegree || jl.onLevel(m) {
			continue
		}
		jl.neighbours(m, func(x, rel int32, out bool) bool {
			read++
			if x != b {
				jl.add(x, joinKey{rel: rel, out: out, via: e.rel, viaOut: e.out})
			}
			return read < joinEdges
		})
		if read >= joinEdges {
			break
		}
	}
	return jl.best(steps, other)
}

// joinLinks collects the links from a second thing to a path's levels.
type joinLinks struct {
	g      kg.Reader
	levels [][]int32
	// links groups the links by key: the nodes of the key's level that
	// are linked so.
	links map[joinKey][]int32
	keys  []joinKey // in the order first seen
}

// neighbours calls f with each edge of e (its in-edges first, up to
// joinEdges of them in all): the node at its other end, its relation,
// and whether it runs from that node to e. f returns false to stop.
func (jl *joinLinks) neighbours(e int32, f func(x, rel int32, out bool) bool) {
	read := 0
	for _, dir := range [2]bool{true, false} {
		edges := jl.g.In(e) // a node -> e edge: the link leaves the node
		if !dir {
			edges = jl.g.Out(e)
		}
		for _, tid := range edges {
			if read >= joinEdges {
				return
			}
			read++
			t := jl.g.Triple(tid)
			x := t.Head
			if !dir {
				x = t.Tail
			}
			if !f(x, t.Rel, dir) {
				return
			}
		}
	}
}

// onLevel reports whether x is a node of the path (the anchor included).
func (jl *joinLinks) onLevel(x int32) bool {
	return slices.ContainsFunc(jl.levels, func(level []int32) bool {
		_, ok := slices.BinarySearch(level, x)
		return ok
	})
}

// add records x under k at each level of the path it is on.
func (jl *joinLinks) add(x int32, k joinKey) {
	for l := 1; l < len(jl.levels); l++ {
		if _, ok := slices.BinarySearch(jl.levels[l], x); !ok {
			continue
		}
		k.level = l
		if _, seen := jl.links[k]; !seen {
			jl.keys = append(jl.keys, k)
		}
		jl.links[k] = append(jl.links[k], x)
	}
}

// best returns the join of the links collected that leaves the fewest
// answers of the path steps, and some (the level nearest the anchor on a
// tie, then the first seen); ok is false when none narrows.
func (jl *joinLinks) best(steps []schema.Step, other string) (best Join, found bool) {
	before := len(jl.levels[len(steps)])
	for _, k := range jl.keys {
		front := slices.Compact(slices.Sorted(slices.Values(jl.links[k])))
		if len(front) == len(jl.levels[k.level]) {
			continue // every node of the level links to it: no narrowing
		}
		for _, s := range steps[k.level:] {
			front = walkStep(jl.g, front, s)
		}
		n := len(front)
		if n == 0 || n >= before {
			continue
		}
		j := Join{Entity: other, Level: k.level, Rel: jl.g.RelationName(k.rel), Out: k.out, Hops: len(steps), Answers: n, Before: before}
		if k.via >= 0 {
			j.Via, j.ViaOut = jl.g.RelationName(k.via), k.viaOut
		}
		if !found || n < best.Answers || n == best.Answers && (k.level < best.Level || k.level == best.Level && j.namedBefore(best)) {
			best, found = j, true
		}
	}
	return best, found
}

// namedBefore breaks a tie between two joins through an intermediate
// entity by their relations' names and directions, not by the order
// the graph lists its edges in, which differs between a KG and a
// neighbourhood fetched from it. A join in one hop keeps the first seen.
func (j Join) namedBefore(k Join) bool {
	if j.Via == "" {
		return false
	}
	return cmp.Or(strings.Compare(j.Via, k.Via), cmp.Compare(b2i(j.ViaOut), b2i(k.ViaOut)),
		strings.Compare(j.Rel, k.Rel), cmp.Compare(b2i(j.Out), b2i(k.Out))) < 0
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BestJoin returns, of the entities others (anchor among them is
// skipped), the join (JoinMention, as opts allows) that leaves the
// fewest answers of the path steps from anchor in g, the first on a tie;
// a join in one hop before any through an intermediate entity. ok is
// false when none narrows the path's answers.
func BestJoin(g kg.Reader, anchor string, steps []schema.Step, others []string, opts JoinOptions) (best Join, ok bool) {
	for _, e := range others {
		if e == anchor {
			continue
		}
		j, found := joinMention(g, anchor, steps, e, opts)
		if !found {
			continue
		}
		if !ok || j.before(best) {
			best, ok = j, true
		}
	}
	return best, ok
}

// before reports whether j is the better join than k: in one hop where
// k is not, else the one leaving fewer answers.
func (j Join) before(k Join) bool {
	if (j.Via == "") != (k.Via == "") {
		return j.Via == ""
	}
	return j.Answers < k.Answers
}

// Attach adds j's link to graph, a path graph from schema.PathGraph of
// the path j was found on: the entity joined to the path's node at
// j.Level ("[ENTi]" inside the path, the answer at its end), through a
// node of its own ("[ENTk]", k past the graph's) for a join through an
// intermediate entity, so that tracing intersects the two branches there.
func (j Join) Attach(graph schema.Graph) schema.Graph {
	node := graph.Answer
	if j.Level < j.Hops {
		node = fmt.Sprintf("[ENT%d]", j.Level)
	}
	to := j.Entity
	var via []schema.Triple
	if j.Via != "" {
		to = fmt.Sprintf("[ENT%d]", nextVar(graph))
		v := schema.Triple{Head: j.Entity, Rel: j.Via, Tail: to}
		if j.ViaOut {
			v = schema.Triple{Head: to, Rel: j.Via, Tail: j.Entity}
		}
		via = append(via, v)
	}
	t := schema.Triple{Head: to, Rel: j.Rel, Tail: node}
	if j.Out {
		t = schema.Triple{Head: node, Rel: j.Rel, Tail: to}
	}
	out := graph
	out.Triples = append(append(slices.Clone(graph.Triples), t), via...)
	return out
}

// nextVar returns the least k such that no node of graph is "[ENTk]" or
// a later one.
func nextVar(graph schema.Graph) int {
	k := 1
	for _, t := range graph.Triples {
		for _, n := range [2]string{t.Head, t.Tail} {
			digits, ok := strings.CutPrefix(n, "[ENT")
			digits, ok2 := strings.CutSuffix(digits, "]")
			if i, err := strconv.Atoi(digits); ok && ok2 && err == nil && i >= k {
				k = i + 1
			}
		}
	}
	return k
}

// Note says what j does, for --explain.
func (j Join) Note() string {
	where := "the answer"
	if j.Level < j.Hops {
		where = fmt.Sprintf("the path's node after hop %d", j.Level)
	}
	if j.Via != "" {
		return fmt.Sprintf("join: %q links to %s by %s then %s, through an entity, and narrows %d answers to %d", j.Entity, where, j.Via, j.Rel, j.Before, j.Answers)
	}
	return fmt.Sprintf("join: %q links to %s by %s and narrows %d answers to %d", j.Entity, where, j.Rel, j.Before, j.Answers)
}

// ThroughHub says the path steps from anchor in g walks through a hub:
// a node inside the path (not the anchor, not the answers) of more than
// joinViaDegree edges, such as a gender or a country every person links
// to. Such a path reaches its answers by no meaning, so a second thing
// the question names that one of them meets is chance ("who did tom
// hanks play in apollo 13" read as Tom Hanks' gender's characters, one
// of which is near the film). A path whose level grows past what a join
// reads counts as one.
func ThroughHub(g kg.Reader, anchor string, steps []schema.Step) bool {
	a, ok := g.Entity(anchor)
	if !ok {
		return false
	}
	front := []int32{a}
	for _, s := range steps[:max(len(steps)-1, 0)] {
		front = walkStep(g, front, s)
		if len(front) > joinLevelCap {
			return true
		}
		for _, x := range front {
			if g.Degree(x) > joinViaDegree {
				return true
			}
		}
	}
	return false
}

// walkStep returns the distinct entities one step reaches from front in
// g (an Either step both ways), sorted.
func walkStep(g kg.Reader, front []int32, s schema.Step) []int32 {
	r, ok := g.Relation(s.Rel)
	if !ok {
		return nil
	}
	var next []int32
	for _, e := range front {
		if s.Dir != schema.Inverse {
			for _, t := range g.OutRel(e, r) {
				next = append(next, g.Triple(t).Tail)
			}
		}
		if s.Dir != schema.Forward {
			for _, t := range g.InRel(e, r) {
				next = append(next, g.Triple(t).Head)
			}
		}
		if len(next) > 4*joinLevelCap {
			return next[:0:0]
		}
	}
	slices.Sort(next)
	return slices.Compact(next)
}
