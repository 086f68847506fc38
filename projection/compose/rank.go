package compose

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/zeroshot"
)

// ranker ranks a question's aligned paths with the type fit of the
// entities each reaches, computed only where it can change the top of the
// ranking. A path's score is its alignment plus typeWeight times its type
// fit (0 to 1) less the reach tie-break, so its alignment with a fit of 1
// bounds it: paths are scored in the order of that bound until the k-th
// best score is above every bound left. The type fit (the sampled
// entities' edges, their inferred kinds) is most of a question's cost, and
// most of a hub's hundreds of paths align too badly to need it; the
// ranking returned is the one scoring every path gives.
type ranker struct {
	p     *Planner
	kinds *kindFitter
	fit   func(front []int32) float32
	// k is the number of best paths that must be exact: the beam, or the
	// paths Config.Learnt rescores.
	k int
	// fitTop is the best type fit a path may have: 1, or 0 when the
	// question asks for no type (no type word, wh-word or kind).
	fitTop float32
	cs     []cand
}

// cand is a path to rank: its walk, its alignment and, once computed,
// its score.
type cand struct {
	w      zeroshot.Walk
	align  float32
	score  float32
	scored bool
}

// ranked is a scored path with its place among the ranker's candidates.
type ranked struct {
	projection.ScoredPath
	ci int
}

// add adds walk w, aligned to the question with score align.
func (r *ranker) add(w zeroshot.Walk, align float32) {
	r.cs = append(r.cs, cand{w: w, align: align})
}

// score returns candidate i's score, computing it once.
func (r *ranker) score(i int) float32 {
	c := &r.cs[i]
	if !c.scored {
		r.finish(c, r.fit(c.w.Front))
	}
	return c.score
}

// finish scores c, its type fit fit given.
func (r *ranker) finish(c *cand, fit float32) {
	c.score = c.align + typeWeight*max(fit, r.kinds.fit(c.w.Front)) - reachTie*float32(math.Log(float64(max(1, c.w.Reach))))
	c.scored = true
}

// below reports whether candidate i's score is below floor. Where the
// question asks for a kind, the sampled entities are judged one by one,
// and judging stops, leaving i unscored, once even the rest all of the
// kind would leave it below: a verdict on an entity no question has
// judged yet is most of a path's score. Otherwise i is scored.
func (r *ranker) below(i int, floor float32) bool {
	c := &r.cs[i]
	if c.scored || r.kinds.kind == "" {
		return r.score(i) < floor
	}
	fit := r.fit(c.w.Front)
	tie := reachTie * float32(math.Log(float64(max(1, c.w.Reach))))
	n := min(len(c.w.Front), typeSample)
	held := 0
	for j, e := range c.w.Front[:n] {
		if r.kinds.verdict(e).v == constraint.Holds {
			held++
		}
		// The kind fit counts at most the entities held so far and
		// those not judged yet; the score grows with it.
		if c.align+typeWeight*max(fit, float32(held+n-1-j)/float32(n))-tie < floor {
			return true
		}
	}
	r.finish(c, fit)
	return c.score < floor
}

// bound returns a bound on candidate i's score: its score with the best
// type fit. Rounding is monotone, so no fit makes the score exceed it.
func (r *ranker) bound(i int) float32 {
	c := &r.cs[i]
	return c.align + typeWeight*r.fitTop - reachTie*float32(math.Log(float64(max(1, c.w.Reach))))
}

// settle scores candidates, highest bound first, until k are scored and
// the next bound is below the k-th best score: no unscored candidate can
// then reach the k-th place, nor tie it. It returns that score, or -Inf
// when there are fewer than k candidates (all then scored).
func (r *ranker) settle() float32 {
	neg := float32(math.Inf(-1))
	if len(r.cs) < r.k {
		for i := range r.cs {
			r.score(i)
		}
		return neg
	}
	order := make([]int, len(r.cs))
	bounds := make([]float32, len(r.cs))
	for i := range order {
		order[i], bounds[i] = i, r.bound(i)
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case bounds[a] > bounds[b]:
			return -1
		case bounds[a] < bounds[b]:
			return 1
		}
		return a - b
	})
	best := make([]float32, 0, r.k) // the k best scores, best first
	for _, i := range order {
		if len(best) == r.k && bounds[i] < best[r.k-1] {
			break
		}
		// A candidate below the k-th best score cannot rank, whatever
		// its exact score: more than k score above it.
		if len(best) == r.k && r.below(i, best[r.k-1]) {
			continue
		}
		s := r.score(i)
		if len(best) == r.k && s <= best[r.k-1] {
			continue
		}
		at, _ := slices.BinarySearchFunc(best, s, func(a, b float32) int {
			if a >= b {
				return -1
			}
			return 1
		})
		if len(best) == r.k {
			best = best[:r.k-1]
		}
		best = slices.Insert(best, at, s)
	}
	return best[r.k-1]
}

// kth returns the k-th best score of the candidates so far, -Inf when
// there are fewer than k: a path whose bound falls below it cannot rank.
func (r *ranker) kth() float32 {
	if len(r.cs) < r.k {
		return float32(math.Inf(-1))
	}
	return r.settle()
}

// top returns the k best candidates, best first, in the order a stable
// sort of every scored path gives.
func (r *ranker) top() []ranked {
	r.settle()
	var out []ranked
	for i := range r.cs {
		if r.cs[i].scored {
			out = append(out, r.path(i))
		}
	}
	slices.SortStableFunc(out, byScore)
	return out[:min(len(out), r.k)]
}

// path returns candidate i as a scored path.
func (r *ranker) path(i int) ranked {
	c := &r.cs[i]
	return ranked{projection.ScoredPath{Steps: zeroshot.SchemaSteps(r.p.g, c.w.Steps), Score: r.score(i), Reach: c.w.Reach}, i}
}

// byScore orders paths best first, then by the fewer entities reached.
func byScore(a, b ranked) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return a.Reach - b.Reach
}

// walkOnFit is the share of a path's reached entities that must be of the
// asked kind for the path to be taken as reaching it.
const walkOnFit = 0.5

// walkOn lets the best path walk on to the kind the question asks for:
// when the best of all (the ranker's top, best first) reaches no entity
// of that kind, by the KG's relation words (the type fit) or by the
// inferred kinds, and a path that walks one or two more hops from its end
// does ("in which country is the company that X works for": the company's
// based_in, the city's located_in), the shortest such path, best ranked
// among all the candidates, is moved first with a score just above it. It
// returns the beam's paths and a note for --explain, "" when nothing
// moved.
func (r *ranker) walkOn(all []ranked) ([]projection.ScoredPath, string) {
	k := r.kinds
	note := ""
	if k.kind != "" && len(all) > 0 {
		all, note = r.walkOnto(all)
	}
	out := make([]projection.ScoredPath, min(len(all), r.p.cfg.Beam))
	for i := range out {
		out[i] = all[i].ScoredPath
	}
	return out, note
}

// walkOnto is walkOn for a question that asks for a kind.
func (r *ranker) walkOnto(all []ranked) ([]ranked, string) {
	k := r.kinds
	best := r.cs[all[0].ci].w
	if k.fit(best.Front) >= walkOnFit || r.fit(best.Front) >= walkOnFit {
		return all, ""
	}
	pos := make(map[int]int, len(all))
	for i, a := range all {
		pos[a.ci] = i
	}
	// before reports whether candidate a comes before b in the ranking of
	// every path: the top in its order, then the rest by score.
	before := func(a, b int) bool {
		pa, ina := pos[a]
		pb, inb := pos[b]
		switch {
		case ina && inb:
			return pa < pb
		case ina != inb:
			return ina
		}
		return byScore(r.path(a), r.path(b)) < 0 || byScore(r.path(a), r.path(b)) == 0 && a < b
	}
	at := -1
	for ci, c := range r.cs {
		w := c.w
		extra := len(w.Steps) - len(best.Steps)
		if extra < 1 || extra > 2 || !slices.Equal(w.Steps[:len(best.Steps)], best.Steps) || k.fit(w.Front) < walkOnFit {
			continue
		}
		if n := len(best.Steps); n > 0 && w.Steps[n].Rel == best.Steps[n-1].Rel && w.Steps[n].Inv != best.Steps[n-1].Inv {
			continue // straight back to where the path came from
		}
		if at < 0 || len(w.Steps) < len(r.cs[at].w.Steps) || len(w.Steps) == len(r.cs[at].w.Steps) && before(ci, at) {
			at = ci
		}
	}
	if at < 0 {
		return all, ""
	}
	moved := r.path(at)
	w := r.cs[at].w
	why := ""
	for _, e := range w.Front[:min(len(w.Front), typeSample)] {
		if v := k.verdict(e); v.v == constraint.Holds {
			_, why = k.check.Kind(e, k.kind)
			break
		}
	}
	moved.Score = all[0].Score + reachTie
	if i, ok := pos[at]; ok {
		copy(all[1:i+1], all[:i])
		all[0] = moved
	} else {
		all = append([]ranked{moved}, all...)
	}
	var rels []string
	for _, s := range moved.Steps[len(best.Steps):] {
		rels = append(rels, stepName(s))
	}
	return all, fmt.Sprintf("type %q: the best path reaches none; walked on by %s to reach one (%s)", k.kind, strings.Join(rels, ", "), why)
}
