package graphraft

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/peers/signals"
)

// Template is the shape of a query around the question entities.
type Template int

const (
	// OneHop is (e)-[r]-(x): x one relation from anchor e.
	OneHop Template = iota + 1
	// TwoHop is (e)-[r1]-(y)-[r2]-(x): x two relations from anchor e.
	TwoHop
	// Between is (a)-[r1]-(x)-[r2]-(b): x the middle of a length-two path
	// between two question entities a and b.
	Between
	// ThreeHop is (e)-[r1]-(y1)-[r2]-(y2)-[r3]-(x), enumerated only when
	// Config.Hops is 3: the paper's templates stop at two hops, which
	// cannot reach a three-hop question's answer (PathQuestion's PQ-3H).
	ThreeHop
)

// MaxHops is the longest chain template.
const MaxHops = 3

// chain returns the template of a chain of n steps from one anchor.
func chainTemplate(n int) Template {
	return [...]Template{0, OneHop, TwoHop, ThreeHop}[n]
}

// String names the template as the package doc does.
func (t Template) String() string {
	switch t {
	case OneHop:
		return "one-hop"
	case TwoHop:
		return "two-hop"
	case Between:
		return "between"
	case ThreeHop:
		return "three-hop"
	}
	return fmt.Sprintf("Template(%d)", int(t))
}

// Step is one relation of a query, walked from head to tail unless
// Inverse ((e)<-[r]-(x) walks r from tail to head): the relation step
// every peer shares.
type Step = signals.Step

// Query is one template instance: a template, its relations in walk order
// and its anchors (one for OneHop and TwoHop, two for Between, where the
// second step is walked from x towards Anchors[1]). Its ids are those of
// the kg.Reader it was enumerated from.
type Query struct {
	Template Template
	Steps    []Step
	Anchors  []int32
}

// Key is a readable identity of q's relation pattern, anchors left out:
// "children>parents<" for children walked forward, then parents
// backward. Training counts and the planner match on it.
func (q Query) Key(g kg.Reader) string {
	var b strings.Builder
	if q.Template == Between {
		b.WriteString("between:")
	}
	for _, s := range q.Steps {
		b.WriteString(g.RelationName(s.Rel))
		if s.Inverse {
			b.WriteByte('<')
		} else {
			b.WriteByte('>')
		}
	}
	return b.String()
}

// Cypher is q as the Cypher pattern GraphRAFT would run on Neo4j; it is
// shown to the LLM selector and in explanations, never executed here.
func (q Query) Cypher(g kg.Reader) string {
	node := func(e int32) string { return fmt.Sprintf("({name: %q})", g.EntityName(e)) }
	edge := func(s Step, v string) string {
		if s.Inverse {
			return fmt.Sprintf("<-[:%s]-%s", "`"+g.RelationName(s.Rel)+"`", v)
		}
		return fmt.Sprintf("-[:%s]->%s", "`"+g.RelationName(s.Rel)+"`", v)
	}
	var b strings.Builder
	b.WriteString("MATCH " + node(q.Anchors[0]))
	if q.Template == Between {
		b.WriteString(edge(q.Steps[0], "(x)") + edge(q.Steps[1], node(q.Anchors[1])))
	} else {
		for i, s := range q.Steps {
			b.WriteString(edge(s, chainVar(i, len(q.Steps), "(", ")")))
		}
	}
	b.WriteString(" RETURN DISTINCT x")
	return b.String()
}

// SPARQL compiles q to a SPARQL SELECT over a KG whose entities and
// relations are named kg.TermIRI(base, name), as kg.WriteNTriples and the
// kg/sparql backend name them. A multi-hop walk may not return over the
// triple it came by (Execute's rule); only a walk back along the same
// relation can break it, and then the triple is the same exactly when x is
// the anchor, hence the FILTER.
func (q Query) SPARQL(g kg.Reader, base string) string {
	iri := func(name string) string { return "<" + kg.TermIRI(base, name) + ">" }
	pat := func(from string, s Step, to string) string {
		if s.Inverse {
			from, to = to, from
		}
		return fmt.Sprintf("%s %s %s .", from, iri(g.RelationName(s.Rel)), to)
	}
	a := iri(g.EntityName(q.Anchors[0]))
	var lines []string
	if q.Template == Between {
		b := iri(g.EntityName(q.Anchors[1]))
		lines = append(lines, pat(a, q.Steps[0], "?x"), pat("?x", q.Steps[1], b))
	} else {
		nodes := []string{a}
		for i, s := range q.Steps {
			nodes = append(nodes, chainVar(i, len(q.Steps), "?", ""))
			lines = append(lines, pat(nodes[i], s, nodes[i+1]))
		}
		// Step i+1 walks back over step i's triple exactly when it
		// returns to node i.
		for i := 0; i+1 < len(q.Steps); i++ {
			if q.Steps[i].Rel == q.Steps[i+1].Rel && q.Steps[i].Inverse != q.Steps[i+1].Inverse {
				lines = append(lines, fmt.Sprintf("FILTER(%s != %s)", nodes[i+2], nodes[i]))
			}
		}
	}
	return "SELECT DISTINCT ?x WHERE {\n  " + strings.Join(lines, "\n  ") + "\n}"
}

// chainVar names the node after step i of an n-step chain: x for the
// last, y for the middle of two, y1, y2 for those of three.
func chainVar(i, n int, open, close string) string {
	switch {
	case i == n-1:
		return open + "x" + close
	case n == 2:
		return open + "y" + close
	}
	return fmt.Sprintf("%sy%d%s", open, i+1, close)
}

// Path is one match of a query: its answer and the KG triples, in step
// order, that bind it.
type Path struct {
	Answer  int32
	Triples []int32
}

// walk returns the triples leaving e along s and, for each, the entity
// it arrives at.
func walk(g kg.Reader, e int32, s Step) []int32 {
	if s.Inverse {
		return g.InRel(e, s.Rel)
	}
	return g.OutRel(e, s.Rel)
}

// Execute runs q over g in memory, the plan a graph database would run for
// q.SPARQL or q.Cypher: every match, at most limit of them (0 = no limit),
// in KG order. A walk never steps straight back over the triple it
// arrived by, so "the parent of X's son" reaches X only by the son's own
// parents triple, not by X's children triple walked backwards.
func Execute(ctx context.Context, g kg.Reader, q Query, limit int) ([]Path, error) {
	if err := q.valid(g); err != nil {
		return nil, err
	}
	var out []Path
	full := func() bool { return limit > 0 && len(out) >= limit }
	ids := make([]int32, 0, len(q.Steps))
	var rec func(e int32) error
	rec = func(e int32) error {
		k := len(ids)
		if k == len(q.Steps) {
			ans := e
			if q.Template == Between {
				if e != q.Anchors[1] {
					return nil
				}
				ans = signals.Far(g, ids[0], q.Steps[0])
			}
			out = append(out, Path{Answer: ans, Triples: slices.Clone(ids)})
			return nil
		}
		if k == 1 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("execute %s: %w", q.Key(g), err)
			}
		}
		for _, id := range walk(g, e, q.Steps[k]) {
			if full() {
				return nil
			}
			if k > 0 && id == ids[k-1] {
				continue
			}
			ids = append(ids, id)
			err := rec(signals.Far(g, id, q.Steps[k]))
			ids = ids[:k]
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := rec(q.Anchors[0]); err != nil {
		return nil, err
	}
	return out, nil
}

// valid rejects a query whose shape or ids g cannot run.
func (q Query) valid(g kg.Reader) error {
	want := map[Template][2]int{OneHop: {1, 1}, TwoHop: {2, 1}, ThreeHop: {3, 1}, Between: {2, 2}}
	w, ok := want[q.Template]
	if !ok || len(q.Steps) != w[0] || len(q.Anchors) != w[1] {
		return fmt.Errorf("query %v with %d steps and %d anchors: malformed", q.Template, len(q.Steps), len(q.Anchors))
	}
	for _, a := range q.Anchors {
		if a < 0 || int(a) >= g.NumEntities() {
			return fmt.Errorf("query %v: anchor %d not in the KG", q.Template, a)
		}
	}
	for _, s := range q.Steps {
		if s.Rel < 0 || int(s.Rel) >= g.NumRelations() {
			return fmt.Errorf("query %v: relation %d not in the KG", q.Template, s.Rel)
		}
	}
	return nil
}

// Answers returns the distinct answers of paths, sorted.
func Answers(paths []Path) []int32 {
	out := make([]int32, 0, len(paths))
	for _, p := range paths {
		out = append(out, p.Answer)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// steps returns the distinct relation steps leaving e, in relation order.
func steps(g kg.Reader, e int32) []Step {
	var out []Step
	for _, inv := range []bool{false, true} {
		ids := g.Out(e)
		if inv {
			ids = g.In(e)
		}
		last := int32(-1)
		for _, id := range ids { // sorted by relation
			r := g.Triple(id).Rel
			if r != last {
				out = append(out, Step{Rel: r, Inverse: inv})
				last = r
			}
		}
	}
	return out
}

// hop is a frontier entity of a chain prefix and the triple it was
// reached by (-1 for the anchor).
type hop struct{ e, by int32 }

// Enumerate returns every template instance around anchors that matches
// at least one path in g: the chain queries of each anchor up to hops
// steps (1 or 2 are the paper's templates; MaxHops at most), each step in
// either direction, and the length-two paths between each pair of
// anchors, in a fixed order. maxReach bounds the entities each prefix's
// next step is read from (0 = no bound), so a hub does not blow the set
// up; the queries kept are still all executable.
func Enumerate(ctx context.Context, g kg.Reader, anchors []int32, hops, maxReach int) ([]Query, error) {
	if hops < 1 || hops > MaxHops {
		return nil, fmt.Errorf("enumerate: %d hops: want 1 to %d", hops, MaxHops)
	}
	var out []Query
	seen := map[string]bool{}
	add := func(q Query) {
		k := fmt.Sprint(q.Template, q.Anchors, q.Steps)
		if !seen[k] {
			seen[k] = true
			out = append(out, q)
		}
	}
	for _, a := range anchors {
		if a < 0 || int(a) >= g.NumEntities() {
			return nil, fmt.Errorf("enumerate: anchor %d not in the KG", a)
		}
	}
	// grow adds the one-step extensions of prefix from its frontier, then
	// grows each in the order first seen. A step is kept only if it leaves
	// some frontier entity by a triple other than the one it came by
	// (Execute's rule).
	var grow func(a int32, prefix []Step, frontier []hop) error
	grow = func(a int32, prefix []Step, frontier []hop) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("enumerate: %w", err)
		}
		n := len(prefix) + 1
		// Between needs the second step's frontier even at one hop.
		deeper := n < hops || (n == 1 && len(anchors) > 1)
		var order []Step
		next := map[Step][]hop{}
		for _, h := range frontier {
			for _, s := range steps(g, h.e) {
				ids := walk(g, h.e, s)
				if len(ids) == 1 && ids[0] == h.by {
					continue
				}
				q := Query{Template: chainTemplate(n), Steps: append(slices.Clone(prefix), s), Anchors: []int32{a}}
				if n <= hops {
					add(q)
				}
				if n == 2 {
					for _, b := range anchors {
						if b == a {
							continue
						}
						for _, id := range ids {
							if id != h.by && signals.Far(g, id, s) == b {
								add(Query{Template: Between, Steps: q.Steps, Anchors: []int32{a, b}})
								break
							}
						}
					}
				}
				if !deeper {
					continue
				}
				nx, ok := next[s]
				if !ok {
					order = append(order, s)
				}
				for _, id := range ids {
					if maxReach > 0 && len(nx) >= maxReach {
						break
					}
					if id != h.by {
						nx = append(nx, hop{signals.Far(g, id, s), id})
					}
				}
				next[s] = nx
			}
		}
		for _, s := range order {
			if err := grow(a, append(slices.Clone(prefix), s), next[s]); err != nil {
				return err
			}
		}
		return nil
	}
	for _, a := range anchors {
		if err := grow(a, nil, []hop{{a, -1}}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
