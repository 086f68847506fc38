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
	// walks are the edge walked from its head (walks[kg.Outgoing]) and
	// from its tail (walks[kg.Incoming]).
	walks [2]walk
}

// from returns the edge as a walk standing on schema node n walks it.
func (e *sEdge) from(n int) *walk {
	if e.head == n {
		return &e.walks[kg.Outgoing]
	}
	return &e.walks[kg.Incoming]
}

// ends says which ends of a triple enter its text: the near one (where
// a walk stands; a schema triple's head) and the far one (its tail).
type ends struct{ near, far bool }

// walk is a schema edge oriented as a step walks it: from the node the
// walk stands on to the other, with the KG triple's text and the schema
// vector for that direction.
type walk struct {
	edge     int // index into sGraph.edges
	from, to int // schema nodes: where the walk stands, where it goes
	// text says which KG ends enter the KG triple's text.
	text ends
	// vec is the unit vector of the schema triple's text under the
	// tracer's TextMode (the placeholder ends dropped), walked this way.
	vec []float32
	// dir is Outgoing when the walk goes from the schema head: a KG edge
	// leaving the walk's entity then points the way the schema edge does.
	dir kg.Dir
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
		schemaEnds := ends{mh, mt}        // schema-side ends, walked from the head
		var fromHead, fromTail ends       // KG-side ends, walked from the head, from the tail
		switch t.cfg.Text {
		case TextFull:
			fromHead, fromTail = ends{true, true}, ends{true, true}
		case TextKnownEnds:
			fromHead, fromTail = ends{mh, mt}, ends{mt, mh}
		case TextRelation:
			schemaEnds = ends{}
		case TextFarMention:
			// Near ends never; a far end only when it is a mention.
			schemaEnds.near = false
			fromHead, fromTail = ends{far: mt}, ends{far: mh}
		}
		e.walks = [2]walk{
			kg.Outgoing: {edge: len(s.edges), from: h, to: tl, text: fromHead, dir: kg.Outgoing},
			kg.Incoming: {edge: len(s.edges), from: tl, to: h, text: fromTail, dir: kg.Incoming},
		}
		texts = append(texts, s.text(h, tl, e.relText, schemaEnds))
		if t.cfg.Text == TextFarMention {
			texts = append(texts, s.text(h, tl, e.relText, ends{near: mh}))
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
		s.edges[i].walks[kg.Outgoing].vec = vecs[2*i*t.dim : (2*i+1)*t.dim]
		s.edges[i].walks[kg.Incoming].vec = vecs[(2*i+1)*t.dim : (2*i+2)*t.dim]
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

// text writes the schema triple (h, rel, tl) with only the chosen ends
// (near: the head h, far: the tail tl).
func (s *sGraph) text(h, tl int, rel string, incl ends) string {
	words := make([]string, 0, 3)
	if incl.near {
		words = append(words, kg.EntityText(s.nodes[h]))
	}
	words = append(words, rel)
	if incl.far {
		words = append(words, kg.EntityText(s.nodes[tl]))
	}
	return strings.Join(words, " ")
}
