package graphraft

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
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
)

// String names the template as the package doc does.
func (t Template) String() string {
	switch t {
	case OneHop:
		return "one-hop"
	case TwoHop:
		return "two-hop"
	case Between:
		return "between"
	}
	return fmt.Sprintf("Template(%d)", int(t))
}

// Step is one relation of a query, walked from head to tail unless
// Inverse ((e)<-[r]-(x) walks r from tail to head).
type Step struct {
	Rel     int32
	Inverse bool
}

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
	switch q.Template {
	case OneHop:
		b.WriteString(edge(q.Steps[0], "(x)"))
	case TwoHop:
		b.WriteString(edge(q.Steps[0], "(y)") + edge(q.Steps[1], "(x)"))
	case Between:
		b.WriteString(edge(q.Steps[0], "(x)") + edge(q.Steps[1], node(q.Anchors[1])))
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
	switch q.Template {
	case OneHop:
		lines = append(lines, pat(a, q.Steps[0], "?x"))
	case TwoHop:
		lines = append(lines, pat(a, q.Steps[0], "?y"), pat("?y", q.Steps[1], "?x"))
		if q.Steps[0].Rel == q.Steps[1].Rel && q.Steps[0].Inverse != q.Steps[1].Inverse {
			lines = append(lines, fmt.Sprintf("FILTER(?x != %s)", a))
		}
	case Between:
		b := iri(g.EntityName(q.Anchors[1]))
		lines = append(lines, pat(a, q.Steps[0], "?x"), pat("?x", q.Steps[1], b))
	}
	return "SELECT DISTINCT ?x WHERE {\n  " + strings.Join(lines, "\n  ") + "\n}"
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

func far(g kg.Reader, id int32, s Step) int32 {
	t := g.Triple(id)
	if s.Inverse {
		return t.Head
	}
	return t.Tail
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
	a := q.Anchors[0]
	switch q.Template {
	case OneHop:
		for _, id := range walk(g, a, q.Steps[0]) {
			if full() {
				break
			}
			out = append(out, Path{Answer: far(g, id, q.Steps[0]), Triples: []int32{id}})
		}
	case TwoHop, Between:
		for _, id1 := range walk(g, a, q.Steps[0]) {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("execute %s: %w", q.Key(g), err)
			}
			y := far(g, id1, q.Steps[0])
			for _, id2 := range walk(g, y, q.Steps[1]) {
				if id2 == id1 || full() {
					continue
				}
				x := far(g, id2, q.Steps[1])
				ans := x
				if q.Template == Between {
					if x != q.Anchors[1] {
						continue
					}
					ans = y
				}
				out = append(out, Path{Answer: ans, Triples: []int32{id1, id2}})
			}
		}
	}
	return out, nil
}

// valid rejects a query whose shape or ids g cannot run.
func (q Query) valid(g kg.Reader) error {
	want := map[Template][2]int{OneHop: {1, 1}, TwoHop: {2, 1}, Between: {2, 2}}
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

// Enumerate returns every template instance around anchors that matches
// at least one path in g: the one- and two-hop queries of each anchor
// (both directions per hop) and the length-two paths between each pair of
// anchors, in a fixed order. maxReach bounds the intermediate entities
// whose relations are read per first step (0 = no bound), so a hub does
// not blow the set up; the queries kept are still all executable.
func Enumerate(ctx context.Context, g kg.Reader, anchors []int32, maxReach int) ([]Query, error) {
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
	for _, a := range anchors {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("enumerate: %w", err)
		}
		for _, s1 := range steps(g, a) {
			add(Query{Template: OneHop, Steps: []Step{s1}, Anchors: []int32{a}})
			ids := walk(g, a, s1)
			if maxReach > 0 && len(ids) > maxReach {
				ids = ids[:maxReach]
			}
			for _, id1 := range ids {
				y := far(g, id1, s1)
				for _, s2 := range steps(g, y) {
					// A second step only back over the first triple
					// matches nothing (Execute's rule).
					if s2.Rel == s1.Rel && s2.Inverse != s1.Inverse && len(walk(g, y, s2)) == 1 {
						continue
					}
					add(Query{Template: TwoHop, Steps: []Step{s1, s2}, Anchors: []int32{a}})
					for _, b := range anchors {
						if b == a {
							continue
						}
						for _, id2 := range walk(g, y, s2) {
							if id2 != id1 && far(g, id2, s2) == b {
								add(Query{Template: Between, Steps: []Step{s1, s2}, Anchors: []int32{a, b}})
								break
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}
