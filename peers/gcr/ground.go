package gcr

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// grounding is one decoded path's KG triples: steps[i] holds the triples
// of its i-th relation that lie on some entity path from an anchor to one
// of ends.
type grounding struct {
	toks  []Token
	steps [][]int32
	ends  []int32 // sorted; the path's hypothesis answers
}

// groundPath walks toks from anchors step by step, keeping at most
// maxReach entities per step as the trie does, then keeps, from the last
// step back, only the triples that lie on an entity path to an end.
//
// An entity path may not step straight back over the triple it arrived
// by (tracing forbids only that walk): "the father of X's son" is X,
// reached by a parents triple, while "X's son's parent" walked back over
// X's own children triple says nothing. So an entity reached only by
// triple t does not leave by t, and the anchors count as ends whenever
// some other triple leads back to them.
func groundPath(g kg.Reader, anchors []int32, toks []Token, maxReach int) grounding {
	gr := grounding{toks: toks, steps: make([][]int32, len(toks))}
	front := anchors
	// arrived maps an entity of front to the triples of the previous step
	// that reach it; nil for the anchors, which no triple reaches.
	var arrived map[int32][]int32
	for i, tok := range toks {
		var trips, far []int32
		for _, e := range front {
			ids := g.OutRel(e, tok.Rel)
			if tok.Inverse {
				ids = g.InRel(e, tok.Rel)
			}
			in := arrived[e]
			for _, id := range ids {
				if len(in) == 1 && in[0] == id {
					continue
				}
				trips = append(trips, id)
				far = append(far, farEnd(g, id, tok))
			}
		}
		slices.Sort(far)
		far = slices.Compact(far)
		if len(far) > maxReach {
			far = far[:maxReach]
		}
		gr.steps[i] = slices.DeleteFunc(trips, func(id int32) bool {
			_, ok := slices.BinarySearch(far, farEnd(g, id, tok))
			return !ok
		})
		arrived = map[int32][]int32{}
		for _, id := range gr.steps[i] {
			e := farEnd(g, id, tok)
			arrived[e] = append(arrived[e], id)
		}
		front = far
	}
	if len(toks) == 0 {
		return gr
	}
	gr.ends = front
	// leaving maps an entity to the kept triples of the next step that
	// leave it; a triple stays when its far end is an end (last step) or
	// leaves again by some other triple.
	var leaving map[int32][]int32
	for i := len(toks) - 1; i >= 0; i-- {
		tok := toks[i]
		last := i == len(toks)-1
		gr.steps[i] = slices.DeleteFunc(gr.steps[i], func(id int32) bool {
			far := farEnd(g, id, tok)
			if last {
				_, ok := slices.BinarySearch(gr.ends, far)
				return !ok
			}
			return !slices.ContainsFunc(leaving[far], func(next int32) bool { return next != id })
		})
		leaving = map[int32][]int32{}
		for _, id := range gr.steps[i] {
			n := nearEnd(g, id, tok)
			leaving[n] = append(leaving[n], id)
		}
	}
	return gr
}

// farEnd is the end of triple id a walk along tok arrives at; nearEnd the
// one it leaves.
func farEnd(g kg.Reader, id int32, tok Token) int32 {
	t := g.Triple(id)
	if tok.Inverse {
		return t.Head
	}
	return t.Tail
}

func nearEnd(g kg.Reader, id int32, tok Token) int32 {
	t := g.Triple(id)
	if tok.Inverse {
		return t.Tail
	}
	return t.Head
}

// ground grounds the decoded paths, votes for their ends and fills res's
// evidence, answers and chains. Match.Graph and Answer.Graph index the
// decoded paths (best first), Match.SchemaTriple the step of the path;
// TScore and Cum are the path's score.
func (r *Retriever) ground(ctx context.Context, g kg.Reader, trie *Trie, paths []Path, strat schema.Strategy, res *tracing.Result) {
	if len(paths) == 0 {
		return
	}
	best := paths[0].Score
	grounds := make([]grounding, len(paths))
	votes := map[int32]float64{}
	first := map[int32]int{}
	var total float64
	evidence := map[int32]tracing.Match{}
	for k, p := range paths {
		if ctx.Err() != nil {
			return
		}
		gr := groundPath(g, trie.Anchors, trie.Path(p.Node), r.cfg.MaxReach)
		grounds[k] = gr
		w := r.voteWeight(p.Score, best)
		total += w
		for _, e := range gr.ends {
			votes[e] += w
			if _, ok := first[e]; !ok {
				first[e] = k
			}
		}
		for i, step := range gr.steps {
			for _, id := range step {
				if _, ok := evidence[id]; !ok {
					evidence[id] = tracing.Match{Graph: k, SchemaTriple: i, Triple: id, TScore: p.Score, Cum: p.Score}
				}
			}
		}
	}
	for _, m := range evidence {
		res.Evidence = append(res.Evidence, m)
	}
	slices.SortFunc(res.Evidence, func(a, b tracing.Match) int {
		if c := cmp.Compare(b.Cum, a.Cum); c != 0 {
			return c
		}
		return cmp.Compare(a.Triple, b.Triple)
	})
	for e, v := range votes {
		res.Answers = append(res.Answers, tracing.Answer{Entity: e, Name: g.EntityName(e), Score: float32(v / total), Graph: first[e]})
	}
	slices.SortFunc(res.Answers, func(a, b tracing.Answer) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.Entity, b.Entity)
	})
	res.Chains = chains(g, trie.Anchors, grounds, r.cfg.MaxChains)
}

// vote keeps the hypotheses (res.Answers, best vote first) that the vote
// chooses: under Precision those within Margin of the best, under Breadth
// those at least BreadthFloor of it.
func (r *Retriever) vote(strat schema.Strategy, res *tracing.Result) {
	if len(res.Answers) == 0 {
		return
	}
	floor := res.Answers[0].Score * r.cfg.BreadthFloor
	if strat == schema.Precision {
		floor = res.Answers[0].Score * (1 - r.cfg.Margin)
	}
	k := 1
	for k < len(res.Answers) && res.Answers[k].Score >= floor-1e-6 {
		k++
	}
	res.Answers = res.Answers[:k]
}

// chains verbalises each decoded path's entity paths, best path first,
// one line per entity path from an anchor to an end, in tracing's format
// ("A -> relation -> B" along an edge, "A <- relation <- B" against it),
// which generation.Support reads. Edges at an entity are taken in the
// order of their other end's name, so the lines do not depend on how the
// backend numbered the triples. At most limit lines.
func chains(g kg.Reader, anchors []int32, grounds []grounding, limit int) []string {
	var out []string
	for _, gr := range grounds {
		if len(gr.toks) == 0 {
			continue
		}
		// adj[i] maps an entity to its step-i triples.
		adj := make([]map[int32][]int32, len(gr.toks))
		for i, step := range gr.steps {
			adj[i] = map[int32][]int32{}
			for _, id := range step {
				n := nearEnd(g, id, gr.toks[i])
				adj[i][n] = append(adj[i][n], id)
			}
			for _, l := range adj[i] {
				tok := gr.toks[i]
				slices.SortFunc(l, func(a, b int32) int {
					if c := strings.Compare(g.EntityName(farEnd(g, a, tok)), g.EntityName(farEnd(g, b, tok))); c != 0 {
						return c
					}
					return cmp.Compare(a, b)
				})
			}
		}
		var parts []string
		var walk func(e int32, i int)
		walk = func(e int32, i int) {
			if len(out) >= limit {
				return
			}
			if i == len(gr.toks) {
				out = append(out, strings.Join(parts, ""))
				return
			}
			tok := gr.toks[i]
			arrow := " -> "
			if tok.Inverse {
				arrow = " <- "
			}
			for _, id := range adj[i][e] {
				n := len(parts)
				far := farEnd(g, id, tok)
				parts = append(parts, arrow, g.RelationName(tok.Rel), arrow, g.EntityName(far))
				walk(far, i+1)
				parts = parts[:n]
			}
		}
		for _, a := range anchors {
			parts = append(parts[:0], g.EntityName(a))
			walk(a, 0)
		}
		if len(out) >= limit {
			break
		}
	}
	return out
}
