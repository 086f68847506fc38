package tripgnn

import (
	"errors"
	"slices"

	"github.com/stem-kgqa/stem/kg"
)

// Default subgraph caps. 64 neighbours per node keeps a MetaQA film's whole
// neighbourhood and samples genre, year and language hubs; 800 entities keeps
// a training step of a batch of graphs well under a second on two cores at
// the default width (see the package benchmarks).
const (
	DefaultMaxNeighbors = 64
	DefaultMaxNodes     = 800
)

// SubgraphOptions caps a question subgraph.
type SubgraphOptions struct {
	// Hops is the breadth-first depth; 0 means the number of schema
	// triples of the question's plan.
	Hops int
	// MaxNeighbors caps the incident triples a node expands through
	// (0 = DefaultMaxNeighbors).
	MaxNeighbors int
	// MaxNodes caps the subgraph's entities (0 = DefaultMaxNodes).
	MaxNodes int
}

func (o SubgraphOptions) withDefaults() SubgraphOptions {
	if o.MaxNeighbors <= 0 {
		o.MaxNeighbors = DefaultMaxNeighbors
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = DefaultMaxNodes
	}
	return o
}

// ErrNoQuestionEntity marks a question none of whose entities is in the KG.
var ErrNoQuestionEntity = errors.New("no question entity is in the KG")

// mix is splitmix64's finaliser: a fixed hash that spreads (node, triple)
// pairs evenly, so the hub sample is deterministic and label-blind.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Subgraph returns the capped hops-neighbourhood of seeds in g (see the
// package documentation): the KG ids of its entities, seeds first then in
// breadth-first order, and the ids of the KG triples among them, sorted.
// Seeds outside g are an error; an empty seeds list gives
// ErrNoQuestionEntity.
func Subgraph(g kg.Reader, seeds []int32, hops int, opt SubgraphOptions) (ents, triples []int32, err error) {
	opt = opt.withDefaults()
	local := map[int32]bool{}
	for _, s := range seeds {
		if s < 0 || int(s) >= g.NumEntities() {
			return nil, nil, errors.New("tripgnn: seed entity id outside the KG")
		}
		if !local[s] {
			local[s] = true
			ents = append(ents, s)
		}
	}
	if len(ents) == 0 {
		return nil, nil, ErrNoQuestionEntity
	}
	type cand struct {
		h uint64
		t int32
	}
	var buf []cand
	frontier := slices.Clone(ents)
	for d := 0; d < hops && len(ents) < opt.MaxNodes; d++ {
		var next []int32
		for _, e := range frontier {
			buf = buf[:0]
			for _, rows := range [2][]int32{g.Out(e), g.In(e)} {
				for _, t := range rows {
					buf = append(buf, cand{mix(uint64(uint32(e))<<32 | uint64(uint32(t))), t})
				}
			}
			if len(buf) > opt.MaxNeighbors {
				slices.SortFunc(buf, func(a, b cand) int {
					if a.h != b.h {
						if a.h < b.h {
							return -1
						}
						return 1
					}
					return int(a.t - b.t)
				})
				buf = buf[:opt.MaxNeighbors]
			}
			for _, c := range buf {
				tr := g.Triple(c.t)
				o := tr.Tail
				if o == e {
					o = tr.Head
				}
				if local[o] {
					continue
				}
				if len(ents) >= opt.MaxNodes {
					break
				}
				local[o] = true
				ents = append(ents, o)
				next = append(next, o)
			}
		}
		frontier = next
	}
	for _, e := range ents {
		for _, t := range g.Out(e) {
			if local[g.Triple(t).Tail] {
				triples = append(triples, t)
			}
		}
	}
	slices.Sort(triples)
	return ents, triples, nil
}
