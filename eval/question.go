package eval

import (
	"strings"

	"github.com/stem-kgqa/stem/kg"
)

// Direction says which way a gold relation is followed from the entity
// reached so far.
type Direction int

const (
	// Forward follows head -> tail: the current entity is the head.
	Forward Direction = iota
	// Inverse follows tail -> head: the current entity is the tail, as in
	// director_to_movie, which walks directed_by backwards.
	Inverse
	// Either follows the relation both ways. WebQSP's ground paths were
	// found on an undirected graph (RoG builds an nx.Graph), so their
	// direction is unknown.
	Either
)

// String returns "forward", "inverse" or "either".
func (d Direction) String() string {
	switch d {
	case Forward:
		return "forward"
	case Inverse:
		return "inverse"
	case Either:
		return "either"
	}
	return "Direction(?)"
}

// Step is one relation of a gold path with the way it is walked.
type Step struct {
	Rel string
	Dir Direction
}

// GoldPath is one ground-truth reasoning path of a question.
type GoldPath struct {
	// Start is the topic entity the path leaves; "" means any of the
	// question's topic entities (WebQSP ground paths do not say which).
	Start string
	Steps []Step
	// Entities are the entities reached after each step, when the dataset
	// names them (PathQuestion); nil otherwise. len(Entities) == len(Steps).
	Entities []string
}

// Relations returns the path's relation names in order.
func (p GoldPath) Relations() []string {
	out := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.Rel
	}
	return out
}

// Key identifies the path's relation pattern (direction included), for
// de-duplicating gold paths.
func (p GoldPath) Key() string {
	var b strings.Builder
	b.WriteString(p.Start)
	for _, s := range p.Steps {
		b.WriteByte('\x00')
		if s.Dir == Inverse {
			b.WriteByte('^')
		} else if s.Dir == Either {
			b.WriteByte('~')
		}
		b.WriteString(s.Rel)
	}
	return b.String()
}

// Triples returns the path's concrete triples (head, relation, tail) in KG
// orientation when Entities names every step's entity, else nil.
func (p GoldPath) Triples() [][3]string {
	if len(p.Entities) != len(p.Steps) || len(p.Steps) == 0 || p.Start == "" {
		return nil
	}
	out := make([][3]string, len(p.Steps))
	prev := p.Start
	for i, s := range p.Steps {
		if s.Dir == Inverse {
			out[i] = [3]string{p.Entities[i], s.Rel, prev}
		} else {
			out[i] = [3]string{prev, s.Rel, p.Entities[i]}
		}
		prev = p.Entities[i]
	}
	return out
}

// Question is one benchmark question with everything needed to plan,
// retrieve and score it.
type Question struct {
	// ID is the dataset's id, or "file:line" for datasets without ids.
	ID   string
	Text string
	// Answers is the gold answer set, as KG entity names.
	Answers []string
	// Entities are the question's topic entities, as KG entity names.
	Entities []string
	// Gold lists the ground-truth reasoning paths.
	Gold []GoldPath
	// Hops is the length of the shortest gold path (0 when there is none).
	Hops int
	// Type is the dataset's question type when it has one (MetaQA qtype).
	Type string
	// Graph is the question's own KG (WebQSP, RoG); nil means the
	// dataset's shared KG, passed to Run in Options.Graph.
	Graph *kg.Graph
}

func shortestHops(paths []GoldPath) int {
	h := 0
	for _, p := range paths {
		if n := len(p.Steps); n > 0 && (h == 0 || n < h) {
			h = n
		}
	}
	return h
}
