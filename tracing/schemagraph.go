package tracing

import (
	"context"
	"fmt"
	"strings"

	"github.com/stem-kgqa/stem/internal/editdist"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// sEdge is one schema triple between two schema nodes.
type sEdge struct {
	head, tail int
	relText    string
	// rel is the KG relation the schema edge names exactly, -1 when it
	// names none (an LLM's paraphrase, a masked id): where the walk's
	// entity has edges of rel, only they match (Config.SoftSymbols off).
	rel int32
	// vec is the unit vector of the schema triple's text under the tracer's
	// TextMode (the placeholder ends dropped).
	vec []float32
	// inclHead / inclTail: whether the KG end matched to the schema head /
	// tail enters the KG triple's text when the edge is walked from its
	// head; revHead / revTail the same when walked from its tail, with rvec
	// the schema vector for that direction.
	inclHead, inclTail bool
	revHead, revTail   bool
	rvec               []float32
}

// sGraph is a schema graph compiled for tracing: nodes are the distinct
// mentions and placeholders, adj lists the edges at each node.
type sGraph struct {
	nodes  []string
	isPH   []bool
	edges  []sEdge
	adj    [][]int
	answer int // node of the answer placeholder
}

// compile numbers the nodes, encodes the schema triples and lists
// non-fatal problems (relations the KG does not know by name or text).
func (t *Tracer) compile(ctx context.Context, g schema.Graph) (*sGraph, []string, error) {
	s := &sGraph{answer: -1}
	ids := map[string]int{}
	node := func(name string) int {
		c := schema.CanonicalPlaceholder(strings.TrimSpace(name))
		if id, ok := ids[c]; ok {
			return id
		}
		ids[c] = len(s.nodes)
		s.nodes = append(s.nodes, c)
		s.isPH = append(s.isPH, schema.IsPlaceholder(c))
		s.adj = append(s.adj, nil)
		return ids[c]
	}
	var probs []string
	texts := make([]string, 0, len(g.Triples))
	for i, tr := range g.Triples {
		h, tl := node(tr.Head), node(tr.Tail)
		e := sEdge{head: h, tail: tl, relText: kg.RelationText(strings.TrimSpace(tr.Rel)), rel: -1}
		if id, ok := t.g.Relation(strings.TrimSpace(tr.Rel)); ok {
			e.rel = id
		} else if !t.relByText[e.relText] {
			probs = append(probs, fmt.Sprintf("relation %q of triple %d is not a KG relation (matched by similarity only)", tr.Rel, i))
		}
		mh, mt := !s.isPH[h], !s.isPH[tl] // which ends are mentions
		sh, st := mh, mt                  // schema-side ends, walked from the head
		switch t.cfg.Text {
		case TextFull:
			e.inclHead, e.inclTail, e.revHead, e.revTail = true, true, true, true
		case TextKnownEnds:
			e.inclHead, e.inclTail, e.revHead, e.revTail = mh, mt, mh, mt
		case TextRelation:
			sh, st = false, false
		case TextFarMention:
			// Near ends never; a far end only when it is a mention.
			sh = false
			e.inclTail, e.revHead = mt, mh
		}
		texts = append(texts, schemaText(s, h, tl, e.relText, sh, st))
		if t.cfg.Text == TextFarMention {
			texts = append(texts, schemaText(s, h, tl, e.relText, mh, false))
		} else {
			texts = append(texts, texts[len(texts)-1])
		}
		s.adj[h] = append(s.adj[h], len(s.edges))
		if tl != h {
			s.adj[tl] = append(s.adj[tl], len(s.edges))
		}
		s.edges = append(s.edges, e)
	}
	if a := g.AnswerSlot(); a != "" {
		if id, ok := ids[a]; ok {
			s.answer = id
		}
	}
	vecs := make([]float32, len(texts)*t.dim) // two per edge: walked from the head, from the tail
	if err := t.enc.Encode(ctx, texts, vecs); err != nil {
		return nil, nil, fmt.Errorf("encode schema triples with %s: %w", t.enc.Name(), err)
	}
	for i := range s.edges {
		s.edges[i].vec = vecs[2*i*t.dim : (2*i+1)*t.dim]
		s.edges[i].rvec = vecs[(2*i+1)*t.dim : (2*i+2)*t.dim]
	}
	return s, probs, nil
}

// mentionNodes lists the schema nodes that are entity mentions.
func (s *sGraph) mentionNodes() []int {
	var out []int
	for i, ph := range s.isPH {
		if !ph {
			out = append(out, i)
		}
	}
	return out
}

// bestNode returns the mention node whose name best matches the question
// mention (or, failing a mention, the anchor's entity text) and its ratio.
func (s *sGraph) bestNode(mention, entityText string) (int, float32) {
	best, bestR := -1, float32(-1)
	for _, n := range s.mentionNodes() {
		r := editdist.Ratio(kg.Normalize(s.nodes[n]), kg.Normalize(mention))
		if entityText != "" {
			r = max(r, editdist.Ratio(kg.Normalize(s.nodes[n]), kg.Normalize(entityText)))
		}
		if r > bestR {
			best, bestR = n, r
		}
	}
	return best, bestR
}

// schemaText writes a schema triple with only the chosen ends.
func schemaText(s *sGraph, h, tl int, rel string, inclH, inclT bool) string {
	words := make([]string, 0, 3)
	if inclH {
		words = append(words, kg.EntityText(s.nodes[h]))
	}
	words = append(words, rel)
	if inclT {
		words = append(words, kg.EntityText(s.nodes[tl]))
	}
	return strings.Join(words, " ")
}
