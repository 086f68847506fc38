package schema

import (
	"strconv"
	"strings"
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

// PathGraph builds the schema graph of a relation path leaving entity:
// entity -> [ENT1] -> [ENT2] ..., the answer being the last placeholder. A
// Forward or Either step is written (previous, rel, next) as Path
// does; an Inverse step is written (next, rel, previous), e.g.
// ([ENT1], starred_actors, Tom Hanks) for "movies starring Tom Hanks".
func PathGraph(entity string, steps []Step) Graph {
	g := Graph{Triples: make([]Triple, len(steps))}
	prev := entity
	for i, s := range steps {
		next := "[ENT" + strconv.Itoa(i+1) + "]"
		if s.Dir == Inverse {
			g.Triples[i] = Triple{Head: next, Rel: s.Rel, Tail: prev}
		} else {
			g.Triples[i] = Triple{Head: prev, Rel: s.Rel, Tail: next}
		}
		prev = next
	}
	if len(steps) > 0 {
		g.Answer = prev
	}
	return g
}
