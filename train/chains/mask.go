package chains

import (
	"slices"
	"strconv"

	"github.com/stem-kgqa/stem/kg"
)

// Evidence is the union of a question's chains as triples T and their
// masked form T' (see the package documentation for the masking rules).
type Evidence struct {
	// Triples is T as KG names (head, relation, tail), each triple once,
	// in order of first appearance walking the chains.
	Triples [][3]string
	// Masked is T', parallel to Triples. Relations stay KG relation
	// names, as the oracle planner's schema graphs (schema.PathGraph)
	// write them, so tripgnn.Builder encodes both alike.
	Masked [][3]string
	// Placeholders maps each placeholder of Masked to the KG entity name
	// it hides.
	Placeholders map[string]string
	// AnswerSlot is the placeholder the first chain ends at ("" in the
	// one case where that end is left named, see Mask).
	AnswerSlot string
	// Hops is the longest chain's length.
	Hops int
}

// Mask builds the evidence of chains; entities are the question entities,
// which stay named.
func Mask(g *kg.Graph, entities []int32, chains []Chain) Evidence {
	ev := Evidence{Placeholders: map[string]string{}}
	isQ := make(map[int32]bool, len(entities))
	for _, e := range entities {
		isQ[e] = true
	}
	ph := map[int32]string{}    // masked entity -> placeholder
	reply := map[int32]string{} // question entity -> placeholder of it as the answer of a closed walk
	n := 0
	name := func(e int32, closing bool) string {
		m := ph
		if isQ[e] {
			if !closing {
				return g.EntityName(e)
			}
			m = reply
		}
		if p, ok := m[e]; ok {
			return p
		}
		n++
		p := "[ENT" + strconv.Itoa(n) + "]"
		m[e] = p
		ev.Placeholders[p] = g.EntityName(e)
		return p
	}
	seen := map[int32]bool{}
	for _, c := range chains {
		ev.Hops = max(ev.Hops, c.Len())
		for i, t := range c.Triples {
			// A triple already in T keeps the names it got then, so no
			// placeholder is made that no masked triple holds.
			if seen[t] {
				continue
			}
			seen[t] = true
			from, to := c.Entities[i], c.Entities[i+1]
			closing := i == len(c.Triples)-1 && isQ[to]
			nf, nt := name(from, false), name(to, closing)
			tr := g.Triple(t)
			rel := g.RelationName(tr.Rel)
			ev.Triples = append(ev.Triples, [3]string{g.EntityName(tr.Head), rel, g.EntityName(tr.Tail)})
			if tr.Head == from {
				ev.Masked = append(ev.Masked, [3]string{nf, rel, nt})
			} else {
				ev.Masked = append(ev.Masked, [3]string{nt, rel, nf})
			}
		}
	}
	if len(chains) > 0 {
		// The first chain's answer is masked wherever it is not a question
		// entity. A question entity is masked as the end of a closed walk
		// unless that walk's last triple came earlier in the walk (a walk
		// over self-loops), which leaves no slot.
		end := chains[0].End()
		if isQ[end] {
			ev.AnswerSlot = reply[end]
		} else {
			ev.AnswerSlot = ph[end]
		}
	}
	return ev
}

// DefaultMaxPatterns is the most relation patterns Schema keeps: with
// 3-hop patterns, four fill 12 of the 16 assertions a plan may have
// (llmplan.MaxAssertions).
const DefaultMaxPatterns = 4

// Schema reduces chains to the schema graph a planner should learn to
// write for the question: chains that walk the same relations in the same
// directions from the same question entity are one pattern, kept once
// through its first chain, so a question with forty answers along one
// pattern gives the two assertions of that pattern, not eighty. Up to
// maxPatterns patterns are kept (0 means DefaultMaxPatterns), the ones
// with the most chains first. Each kept pattern's intermediate entities
// get their own placeholders, numbered in order; every pattern ends at
// one shared answer placeholder, numbered last, because planners read the
// highest-numbered placeholder as the answer (schema.Graph.AnswerSlot).
// Triples holds the kept chains' KG triples, parallel to Masked, and
// Placeholders the entities of those chains.
func Schema(g *kg.Graph, entities []int32, chains []Chain, maxPatterns int) Evidence {
	if maxPatterns <= 0 {
		maxPatterns = DefaultMaxPatterns
	}
	ev := Evidence{Placeholders: map[string]string{}}
	type pattern struct {
		first int // index of the pattern's first chain
		count int
	}
	var pats []pattern
	index := map[string]int{}
	for i, c := range chains {
		ev.Hops = max(ev.Hops, c.Len())
		k := signature(g, c)
		if j, ok := index[k]; ok {
			pats[j].count++
			continue
		}
		index[k] = len(pats)
		pats = append(pats, pattern{first: i, count: 1})
	}
	// Most chains first; ties keep first-seen order.
	slices.SortStableFunc(pats, func(a, b pattern) int { return b.count - a.count })
	if len(pats) > maxPatterns {
		pats = pats[:maxPatterns]
	}
	isQ := make(map[int32]bool, len(entities))
	for _, e := range entities {
		isQ[e] = true
	}
	n := 0
	next := func() string {
		n++
		return "[ENT" + strconv.Itoa(n) + "]"
	}
	// Intermediate placeholders first, per pattern, then the answer's.
	inner := make([][]string, len(pats))
	for pi, p := range pats {
		c := chains[p.first]
		inner[pi] = make([]string, c.Len()+1)
		for i := 1; i < c.Len(); i++ {
			e := c.Entities[i]
			if isQ[e] {
				inner[pi][i] = g.EntityName(e)
				continue
			}
			inner[pi][i] = next()
			ev.Placeholders[inner[pi][i]] = g.EntityName(e)
		}
		inner[pi][0] = g.EntityName(c.Entities[0])
	}
	ev.AnswerSlot = next()
	ev.Placeholders[ev.AnswerSlot] = g.EntityName(chains[pats[0].first].End())
	for pi, p := range pats {
		c := chains[p.first]
		inner[pi][c.Len()] = ev.AnswerSlot
		for i, t := range c.Triples {
			tr := g.Triple(t)
			rel := g.RelationName(tr.Rel)
			from, to := inner[pi][i], inner[pi][i+1]
			ev.Triples = append(ev.Triples, [3]string{g.EntityName(tr.Head), rel, g.EntityName(tr.Tail)})
			if c.Forward(g, i) {
				ev.Masked = append(ev.Masked, [3]string{from, rel, to})
			} else {
				ev.Masked = append(ev.Masked, [3]string{to, rel, from})
			}
		}
	}
	return ev
}

// signature is a chain's pattern: its start entity and each step's
// relation and direction.
func signature(g *kg.Graph, c Chain) string {
	b := make([]byte, 0, 16*c.Len())
	b = strconv.AppendInt(b, int64(c.Start()), 10)
	for i, t := range c.Triples {
		b = append(b, '|')
		b = strconv.AppendInt(b, int64(g.Triple(t).Rel), 10)
		if c.Forward(g, i) {
			b = append(b, '>')
		} else {
			b = append(b, '<')
		}
	}
	return string(b)
}
