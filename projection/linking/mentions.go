package linking

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
)

// Mention is one span of a question that names KG entities: the
// question's topic entities (the links it was answered from) and every
// other span whose words name an entity exactly (a second thing the
// question names: "which school with the mascot B did A attend"), with
// the entities it may name and why the chosen one won.
type Mention struct {
	// Text is the span's text, Question[Start:End].
	Text       string `json:"text"`
	Start, End int
	// Entity is the candidate chosen.
	Entity string `json:"entity"`
	// Topic says the mention is one of the links the question is
	// answered from (given, marked or linked), not one found beside them.
	Topic bool `json:"topic"`
	// Near says no name matches the span exactly: the entity index found
	// the entity, spelt nearly the same (nearMentions).
	Near bool `json:"near,omitempty"`
	// Candidates are the entities the span names, the chosen one first.
	Candidates []Choice `json:"candidates"`
	// Why says why Entity won: "given", "the only entity so named", "1
	// hop from bob_martin", "the most edges".
	Why string `json:"why"`
}

// Choice is one entity a mention may name, with what decides among them:
// how near it lies to the question's other mentions and how many edges it
// has.
type Choice struct {
	Entity string `json:"entity"`
	// Hops is the fewest hops from it to another mention's entity (its
	// chosen one for a topic, any candidate of the others), up to
	// MaxMentionHops; 0 when none is that near or proximity was not read.
	Hops   int `json:"hops"`
	Degree int `json:"degree"`
}

// MaxMentionHops is how far apart two mentions' entities are looked for:
// a question's entities usually meet within two hops ("the airport that
// serves B" in "the country that contains it").
const MaxMentionHops = 2

// proximity bounds: the edges read per entity, and the entities reached
// within MaxMentionHops of the mentions.
const (
	nearEdges = 64
	nearReach = 4096
)

// MentionsOf returns every mention of question in g: the links first
// found (the topic entities, each with the entities its text names in g)
// and, beside them, the longest n-grams of the other words whose
// normalised text is an entity's name or alias (kg.Reader.EntitiesByNorm),
// in question order, at most DefaultMaxLinks in all. A span naming
// several entities is resolved to the one nearest the other mentions'
// entities in g (fewest hops), then the one with the most edges, then by
// name. Over a KG that finds names at its own end (kg.NameSearcher: a
// SPARQL endpoint) every n-gram is looked up in one batch
// (LookupNames), so the mentions are the same as over the KG in memory.
// Linker.Mentions adds near matches through an entity index.
func MentionsOf(ctx context.Context, g kg.Reader, question string, links []Link) ([]Mention, error) {
	return mentions(ctx, g, nil, question, links)
}

// Mentions is MentionsOf over the linker's KG with, where the linker has
// an entity index, the near matches it finds among the words no exact
// name covers (nearMentions): a name misspelt or spelt otherwise ("barak
// obama", "harry potter and the philosophers stone").
func (l *Linker) Mentions(ctx context.Context, question string, links []Link) ([]Mention, error) {
	var near *nearIndex
	if l.ents != nil && l.ents.Opened() && l.vocab != nil {
		l.vocab.build(l.g)
		near = &nearIndex{ents: l.ents, vocab: l.vocab}
	}
	return mentions(ctx, l.g, near, question, links)
}

// nearIndex is what near matches read: the entity index and the words of
// the KG's names.
type nearIndex struct {
	ents  *kgvec.Entities
	vocab *vocabulary
}

func mentions(ctx context.Context, g kg.Reader, nidx *nearIndex, question string, links []Link) ([]Mention, error) {
	var out []Mention
	for _, l := range links {
		m := Mention{Text: l.Mention, Start: l.Start, End: l.End, Entity: l.Entity, Topic: true, Why: l.Method}
		m.Candidates = []Choice{{Entity: l.Entity}}
		out = append(out, m)
	}
	if g == nil {
		return out, nil
	}
	ws := Words(question)
	used := make([]bool, len(ws))
	for i, w := range ws {
		for _, l := range links {
			if l.End > l.Start && w.Start < l.End && w.End > l.Start {
				used[i] = true
			}
		}
	}
	var l Linker
	lookup := g.EntitiesByNorm
	if ns := kg.Searcher(g); ns != nil {
		// Every name asked in one batch, not a round trip each: the
		// topics' (for their namesakes) and every n-gram's.
		var texts []string
		for _, lk := range links {
			texts = append(texts, lk.Mention)
		}
		l.ngrams(question, ws, slices.Clone(used), func(sp Span, _ int) bool {
			texts = append(texts, question[sp.Start:sp.End])
			return false
		})
		found, err := kg.LookupNamesOf(ctx, ns, texts)
		if err != nil {
			return nil, fmt.Errorf("mentions of %q: %w", clip(question), err)
		}
		lookup = func(text string) []int32 { return found[text] }
	}
	// Names of the topic entities that other entities share.
	var cands [][]int32
	for _, l := range links {
		ids := slices.Clone(lookup(l.Mention))
		if id, ok := g.Entity(l.Entity); ok && !slices.Contains(ids, id) {
			ids = append([]int32{id}, ids...)
		}
		cands = append(cands, ids)
	}
	l.ngrams(question, ws, used, func(sp Span, _ int) bool {
		if len(out) >= DefaultMaxLinks {
			return false
		}
		ids := lookup(question[sp.Start:sp.End])
		if len(ids) == 0 {
			return false
		}
		out = append(out, Mention{Text: question[sp.Start:sp.End], Start: sp.Start, End: sp.End})
		cands = append(cands, ids)
		return true
	})
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mentions of %q: %w", clip(question), err)
	}
	var near []nearMatch
	if nidx != nil && len(out) < DefaultMaxLinks {
		var err error
		if near, err = nidx.nearMentions(ctx, question, ws, used, DefaultMaxLinks-len(out)); err != nil {
			return nil, fmt.Errorf("mentions of %q: %w", clip(question), err)
		}
		for _, n := range near {
			out = append(out, Mention{Text: question[n.span.Start:n.span.End], Start: n.span.Start, End: n.span.End})
			cands = append(cands, []int32{n.id})
		}
	}
	resolve(g, out, cands)
	for i, n := range near {
		m := &out[len(out)-len(near)+i]
		m.Near = true
		m.Why = fmt.Sprintf("a near match of %q in the entity index (similarity %.2f, letters %.2f)", g.EntityName(n.id), n.score, n.letters)
	}
	slices.SortStableFunc(out, func(a, b Mention) int { return cmp.Compare(a.Start, b.Start) })
	return out, nil
}

// resolve fills each mention's candidates and, for a mention found beside
// the links, chooses among them: nearest the other mentions' entities,
// then most edges. A topic keeps the entity it was linked to; its
// namesakes are listed after it.
func resolve(g kg.Reader, ms []Mention, cands [][]int32) {
	// Each mention's entities as the others see them: a topic's chosen
	// one, every candidate of the rest.
	others := func(i int) map[int32]bool {
		set := map[int32]bool{}
		for j, m := range ms {
			if j == i {
				continue
			}
			if m.Topic {
				if id, ok := g.Entity(m.Entity); ok {
					set[id] = true
				}
				continue
			}
			for _, id := range cands[j] {
				set[id] = true
			}
		}
		return set
	}
	for i := range ms {
		m := &ms[i]
		ids := cands[i]
		if m.Topic && len(ids) <= 1 {
			continue
		}
		var target map[int32]bool
		if len(ids) > 1 {
			target = others(i)
		}
		choices := make([]Choice, len(ids))
		for k, id := range ids {
			choices[k] = Choice{Entity: g.EntityName(id), Degree: g.Degree(id)}
			if len(target) > 0 {
				choices[k].Hops = hops(g, id, target)
			}
		}
		if m.Topic {
			// The linked entity first, its namesakes after, by name.
			slices.SortStableFunc(choices, func(a, b Choice) int {
				if c := cmp.Compare(b2i(b.Entity == m.Entity), b2i(a.Entity == m.Entity)); c != 0 {
					return c
				}
				return cmp.Compare(a.Entity, b.Entity)
			})
			m.Candidates = choices
			continue
		}
		slices.SortStableFunc(choices, better)
		m.Candidates, m.Entity = choices, choices[0].Entity
		switch {
		case len(choices) == 1:
			m.Why = "the only entity so named"
		case choices[0].Hops > 0 && (choices[1].Hops == 0 || choices[0].Hops < choices[1].Hops):
			m.Why = fmt.Sprintf("%d hops from another mention's entity, the nearest", choices[0].Hops)
		default:
			m.Why = "the most edges"
		}
	}
}

// better orders choices: near before far before out of reach, then by
// edges.
func better(a, b Choice) int {
	ha, hb := a.Hops, b.Hops
	if ha == 0 {
		ha = MaxMentionHops + 1
	}
	if hb == 0 {
		hb = MaxMentionHops + 1
	}
	if c := cmp.Compare(ha, hb); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Degree, a.Degree); c != 0 {
		return c
	}
	// By name, never by a backend's ids, so every backend chooses alike.
	return cmp.Compare(a.Entity, b.Entity)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// hops returns the fewest hops, 1 to MaxMentionHops, from e to an entity
// of target over edges either way, reading at most nearEdges edges each
// way per entity and reaching at most nearReach entities; 0 when none is
// found.
func hops(g kg.Reader, e int32, target map[int32]bool) int {
	seen := map[int32]bool{e: true}
	level := []int32{e}
	for h := 1; h <= MaxMentionHops; h++ {
		var next []int32
		for _, x := range level {
			for _, edges := range [2][]int32{g.Out(x), g.In(x)} {
				for _, tid := range edges[:min(len(edges), nearEdges)] {
					t := g.Triple(tid)
					y := t.Tail
					if y == x {
						y = t.Head
					}
					if target[y] {
						return h
					}
					if !seen[y] && len(seen) < nearReach {
						seen[y] = true
						next = append(next, y)
					}
				}
			}
		}
		level = next
	}
	return 0
}
