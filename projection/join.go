package projection

import (
	"fmt"
	"slices"

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
	// Out is true when the link runs from the path's node to Entity.
	Out bool
	// Hops is the path's length: Level == Hops joins at the answer.
	Hops    int
	Answers int
	Before  int
}

// JoinMention finds where other, an entity the question names beside
// anchor, links in one hop to the nodes the path steps walks from anchor
// in g, so that it narrows the path's answers: "who played X in film Y"
// walks actor -> performance (a CVT) -> character, and the film links to
// the performance, so only the characters of the performances in that
// film remain. Of the links that narrow (the answers left are some, not
// all), the one leaving the fewest answers wins, the node nearest the
// anchor on a tie (a CVT before the answer). ok is false when other links
// to no level, narrows nothing, or a level is a hub's (over
// joinLevelCap entities).
func JoinMention(g kg.Reader, anchor string, steps []schema.Step, other string) (Join, bool) {
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
	before := len(levels[len(steps)])
	// links groups b's edges by level, relation and direction: the nodes
	// of that level b links to so.
	type key struct {
		level int
		rel   int32
		out   bool
	}
	links := map[key][]int32{}
	var keys []key
	read := 0
	for _, dir := range [2]bool{true, false} {
		edges := g.In(b) // a node -> b edge: the link leaves the node
		if !dir {
			edges = g.Out(b)
		}
		for _, tid := range edges {
			if read >= joinEdges {
				break
			}
			read++
			t := g.Triple(tid)
			x := t.Head
			if !dir {
				x = t.Tail
			}
			for l := 1; l <= len(steps); l++ {
				if _, ok := slices.BinarySearch(levels[l], x); !ok {
					continue
				}
				k := key{level: l, rel: t.Rel, out: dir}
				if _, seen := links[k]; !seen {
					keys = append(keys, k)
				}
				links[k] = append(links[k], x)
			}
		}
	}
	best, found := Join{}, false
	for _, k := range keys {
		front := slices.Compact(slices.Sorted(slices.Values(links[k])))
		if len(front) == len(levels[k.level]) {
			continue // every node of the level links to it: no narrowing
		}
		for _, s := range steps[k.level:] {
			front = walkStep(g, front, s)
		}
		n := len(front)
		if n == 0 || n >= before {
			continue
		}
		if !found || n < best.Answers || n == best.Answers && k.level < best.Level {
			best = Join{Entity: other, Level: k.level, Rel: g.RelationName(k.rel), Out: k.out, Hops: len(steps), Answers: n, Before: before}
			found = true
		}
	}
	return best, found
}

// BestJoin returns, of the entities others (anchor among them is
// skipped), the join (JoinMention) that leaves the fewest answers of the
// path steps from anchor in g, the first on a tie. ok is false when none
// narrows the path's answers.
func BestJoin(g kg.Reader, anchor string, steps []schema.Step, others []string) (best Join, ok bool) {
	for _, e := range others {
		if e == anchor {
			continue
		}
		if j, found := JoinMention(g, anchor, steps, e); found && (!ok || j.Answers < best.Answers) {
			best, ok = j, true
		}
	}
	return best, ok
}

// Attach adds j's link to graph, a path graph from schema.PathGraph of
// the path j was found on: the entity joined to the path's node at j.Level ("[ENTi]" inside
// the path, the answer at its end), so that tracing intersects the two
// branches there.
func (j Join) Attach(graph schema.Graph) schema.Graph {
	node := graph.Answer
	if j.Level < j.Hops {
		node = fmt.Sprintf("[ENT%d]", j.Level)
	}
	t := schema.Triple{Head: j.Entity, Rel: j.Rel, Tail: node}
	if j.Out {
		t = schema.Triple{Head: node, Rel: j.Rel, Tail: j.Entity}
	}
	out := graph
	out.Triples = append(slices.Clone(graph.Triples), t)
	return out
}

// Note says what j does, for --explain.
func (j Join) Note() string {
	where := "the answer"
	if j.Level < j.Hops {
		where = fmt.Sprintf("the path's node after hop %d", j.Level)
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
