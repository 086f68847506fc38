// Package schema holds schema graphs: the question-shaped patterns that
// projection produces and tracing matches against the KG. A schema graph is
// a small set of triples whose ends are either entity mentions from the
// question ("Inception") or placeholders ("[ENT1]") standing for unknown KG
// entities; shared placeholders link the triples into a path or tree.
package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/samber/lo"
)

// Strategy is how tracing selects KG edges for a schema edge.
type Strategy int

const (
	// Precision keeps the single best-scoring edge per step (greedy
	// selection), for questions with one answer.
	Precision Strategy = iota
	// Breadth keeps every edge whose score reaches the threshold, branching
	// into a search tree, for questions with several answers.
	Breadth
)

// String returns "precision" or "breadth".
func (s Strategy) String() string {
	switch s {
	case Precision:
		return "precision"
	case Breadth:
		return "breadth"
	}
	return "Strategy(" + strconv.Itoa(int(s)) + ")"
}

// ParseStrategy reads a strategy name, ignoring case.
func ParseStrategy(s string) (Strategy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "precision":
		return Precision, nil
	case "breadth":
		return Breadth, nil
	}
	return 0, fmt.Errorf("unknown strategy %q: want precision or breadth", s)
}

// Triple is one edge of a schema graph. Head and Tail are entity mentions or
// placeholders; Rel is relation text ("directed by") or a KG relation symbol
// ("film.film.directed_by").
type Triple struct {
	Head, Rel, Tail string
}

// String formats the triple as (head, rel, tail).
func (t Triple) String() string { return "(" + t.Head + ", " + t.Rel + ", " + t.Tail + ")" }

// Graph is a schema graph: the triples of one candidate plan.
type Graph struct {
	Triples []Triple
	// Answer is the placeholder whose bindings are the answers. Empty means
	// the placeholder that appears last in Triples (see AnswerSlot).
	Answer string
	// Constraints are what the question states about the answer beyond
	// the path to it ("in 2011", "his wife", "which state"): edges from
	// the answer slot to a value, checked against the KG after tracing
	// where the KG holds the attribute (package constraint).
	Constraints []Constraint
}

// Constraint is one constraint edge of a schema graph: the answer (Node,
// the answer slot when empty) has attribute Kind with Value. Kinds are
// "time" (Value a year, "YYYY-YYYY" for a span, or "current"), "order"
// ("first" or "last" by time), "gender" ("female" or "male") and "type"
// (a type noun, "state"). Text is the question's words that state it.
type Constraint struct {
	Node, Kind, Value, Text string
}

// String formats the constraint as (node, kind, value).
func (c Constraint) String() string {
	n := c.Node
	if n == "" {
		n = "[answer]"
	}
	return "(" + n + ", " + c.Kind + ", " + c.Value + ")"
}

// IsPlaceholder reports whether s names a placeholder: "[ENT" digits "]",
// case-insensitively, with optional spaces inside the brackets.
func IsPlaceholder(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 5 || s[0] != '[' || s[len(s)-1] != ']' {
		return false
	}
	in := strings.TrimSpace(s[1 : len(s)-1])
	if len(in) < 4 || !strings.EqualFold(in[:3], "ENT") {
		return false
	}
	for _, c := range in[3:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// CanonicalPlaceholder returns s in the form "[ENTn]" when it is a
// placeholder, else s unchanged, so that "[ent1]" and "[ ENT1 ]" link.
func CanonicalPlaceholder(s string) string {
	if !IsPlaceholder(s) {
		return s
	}
	in := strings.TrimSpace(strings.TrimSpace(s)[1 : len(strings.TrimSpace(s))-1])
	return "[ENT" + in[3:] + "]"
}

// Placeholders returns the distinct placeholders in order of first
// appearance.
func (g Graph) Placeholders() []string {
	return lo.Uniq(lo.FilterMap(g.ends(), func(n string, _ int) (string, bool) {
		return CanonicalPlaceholder(n), IsPlaceholder(n)
	}))
}

// ends lists every triple's head and tail, in order.
func (g Graph) ends() []string {
	return lo.FlatMap(g.Triples, func(t Triple, _ int) []string { return []string{t.Head, t.Tail} })
}

// Mentions returns the distinct entity mentions (ends that are not
// placeholders) in order of first appearance.
func (g Graph) Mentions() []string {
	return lo.Uniq(lo.Reject(g.ends(), func(n string, _ int) bool { return IsPlaceholder(n) }))
}

// AnswerSlot returns the answer placeholder: Answer when set, else the
// placeholder that appears last, else "" (a graph with no placeholder asks
// no question).
func (g Graph) AnswerSlot() string {
	if g.Answer != "" {
		return CanonicalPlaceholder(g.Answer)
	}
	var last string
	for _, t := range g.Triples {
		for _, n := range [2]string{t.Head, t.Tail} {
			if IsPlaceholder(n) {
				last = CanonicalPlaceholder(n)
			}
		}
	}
	return last
}

// Validate reports what makes g untraceable: no triples, an empty field, no
// entity mention to anchor on, or an answer placeholder that no triple uses.
func (g Graph) Validate() error {
	if len(g.Triples) == 0 {
		return fmt.Errorf("schema graph has no triples")
	}
	for i, t := range g.Triples {
		if strings.TrimSpace(t.Head) == "" || strings.TrimSpace(t.Rel) == "" || strings.TrimSpace(t.Tail) == "" {
			return fmt.Errorf("schema triple %d %s has an empty field", i+1, t)
		}
	}
	if len(g.Mentions()) == 0 {
		return fmt.Errorf("schema graph %s names no question entity to anchor on", g)
	}
	if a := g.AnswerSlot(); a == "" {
		return fmt.Errorf("schema graph %s has no placeholder to answer", g)
	} else if g.Answer != "" {
		found := false
		for _, p := range g.Placeholders() {
			found = found || p == a
		}
		if !found {
			return fmt.Errorf("answer placeholder %s does not occur in schema graph %s", a, g)
		}
	}
	return nil
}

// String formats the graph as its triples joined by "; ".
func (g Graph) String() string {
	parts := make([]string, len(g.Triples), len(g.Triples)+len(g.Constraints))
	for i, t := range g.Triples {
		parts[i] = t.String()
	}
	for _, c := range g.Constraints {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; ")
}

// Path builds the schema graph of a relation path leaving entity: entity
// -rels[0]-> [ENT1] -rels[1]-> [ENT2] ..., the answer being the last
// placeholder. Planners that predict relation paths (the oracle, the pattern
// and schema planners) produce their graphs with it.
func Path(entity string, rels ...string) Graph {
	g := Graph{Triples: make([]Triple, len(rels))}
	head := entity
	for i, r := range rels {
		tail := "[ENT" + strconv.Itoa(i+1) + "]"
		g.Triples[i] = Triple{Head: head, Rel: r, Tail: tail}
		head = tail
	}
	return g
}
