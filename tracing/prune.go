package tracing

import (
	"context"
	"math"
	"slices"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// pruneMin is the degree from which a step scores an entity's relations
// before its edges. A country or a gender at Freebase's scale has millions
// of edges in a few hundred relations; when an edge's score depends on its
// relation alone (the far end is not in the text and no guidance bias is
// added per edge), every edge of a relation scores the same, so a step
// needs to look only at the edges of the relations it can select: those
// scoring at least min(Theta, best) (Breadth) or the best (Precision). The
// rows are sorted by relation, so each relation's run is found by binary
// search, and the step selects exactly what it would from all the edges.
const pruneMin = 4096

// pruned narrows the out- and in-rows of the walk's entity to the
// relation runs the step can select, copied into the run's buffers for
// depth; it returns the rows unchanged when the scores are not the
// relations' alone, and how many relations it scored.
func (r *run) pruned(ctx context.Context, w *walk, depth int, out, in []int32) ([]int32, []int32, int, error) {
	t := r.t
	n, x, sv := w.from, r.bind[w.from], w.vec
	if len(out)+len(in) < pruneMin || t.noPrune || t.add == nil || w.text.far || r.bind[w.to] >= 0 || r.bias.perEdge() {
		return out, in, 0, nil
	}
	if t.lazyParts {
		if err := r.encodeParts(ctx, x, ends{near: w.text.near}, nil); err != nil {
			return nil, nil, 0, err
		}
	}
	var near []float32
	if w.text.near {
		if t.lazyParts {
			near = r.parts[x]
		} else {
			near = t.entParts[int(x)*t.dim : int(x+1)*t.dim]
		}
	}
	score := func(rel int32) float32 {
		rv := t.relParts[int(rel)*t.dim : int(rel+1)*t.dim]
		if near != nil {
			return cos2(sv, rv, near)
		}
		return cos1(sv, rv)
	}
	type span struct {
		row      []int32
		rel      int32
		score    float32
		eligible bool
	}
	var spans [2][]span
	best := float32(-2)
	for side, row := range [][]int32{out, in} {
		lo := 0
		for _, hr := range t.runsOf(x, kg.Dir(side), row) {
			sp := span{row: row[lo:hr.hi], rel: hr.rel, score: score(hr.rel)}
			// Usually the first edge decides.
			if side == 0 && r.reusable(n, sp.row[0], hr.loop) || side == 1 && !hr.loop && r.reusable(n, sp.row[0], false) {
				sp.eligible = true
			}
			for _, tid := range sp.row[1:] {
				if sp.eligible {
					break
				}
				tr := t.triple(tid)
				if side == 0 && r.reusable(n, tid, tr.Head == tr.Tail) || side == 1 && tr.Head != tr.Tail && r.reusable(n, tid, false) {
					sp.eligible = true
				}
			}
			if sp.eligible {
				best = max(best, sp.score)
			}
			spans[side] = append(spans[side], sp)
			lo = int(hr.hi)
		}
	}
	cut := best - tieEps
	if r.strat == schema.Breadth {
		cut = min(cut, t.cfg.Theta)
	}
	// What the search budget leaves (MaxScan): when the selectable
	// relations' edges pass it, the best relations that fit are looked at
	// and the others not, the budget counted as reached.
	nRuns := len(spans[0]) + len(spans[1])
	take := cut
	if ms := r.maxScan; ms > 0 {
		room := ms - r.out.spent.scanned - nRuns
		total := 0
		var scores []float32
		for _, side := range spans {
			for _, sp := range side {
				if sp.score >= cut {
					total += len(sp.row)
					scores = append(scores, sp.score)
				}
			}
		}
		if total > room {
			r.out.spent.hit = true
			slices.Sort(scores)
			take = float32(math.Inf(1))
			for _, sc := range slices.Backward(scores) {
				n := 0
				for _, side := range spans {
					for _, sp := range side {
						if sp.score >= sc {
							n += len(sp.row)
						}
					}
				}
				if n > room {
					break
				}
				take = sc
			}
		}
	}
	buf := r.rowBuf(depth)
	size := 0
	for _, side := range spans {
		for _, sp := range side {
			if sp.score >= take {
				size += len(sp.row)
			}
		}
	}
	if cap(buf) < size && size >= bigBuf {
		buf = pooled[int32](&t.bigRows, size)
	}
	runs := r.runBuf(depth)
	var rows [2][]int32
	for side := range spans {
		start := len(buf)
		for _, sp := range spans[side] {
			if sp.score >= take {
				buf = append(buf, sp.row...)
				runs[side] = append(runs[side], relRun{n: len(sp.row), rel: sp.rel})
			}
		}
		rows[side] = buf[start:len(buf):len(buf)]
	}
	r.rows[depth] = buf
	r.runs[depth] = runs
	return rows[0], rows[1], nRuns, nil
}

// relRun is a run of n edges of one relation in a pruned row: collect
// need not read each edge's relation from the KG's column.
type relRun struct {
	n   int
	rel int32
}

// runBuf returns the empty per-side buffers of a pruned row's relation
// runs for depth.
func (r *run) runBuf(depth int) [2][]relRun {
	if r.runs == nil {
		r.runs = make([][2][]relRun, len(r.bufs))
	}
	b := r.runs[depth]
	return [2][]relRun{b[0][:0], b[1][:0]}
}

// pruneRuns returns the relation runs pruned recorded for depth's rows,
// none when the rows were not narrowed.
func (r *run) pruneRuns(depth int, narrowed bool) [2][]relRun {
	if !narrowed || r.runs == nil {
		return [2][]relRun{}
	}
	return r.runs[depth]
}

// rowBuf returns the empty buffer of pruned rows for depth.
func (r *run) rowBuf(depth int) []int32 {
	if r.rows == nil {
		r.rows = make([][]int32, len(r.bufs))
	}
	return r.rows[depth][:0]
}

// end returns the far end and relation of KG triple tid seen in
// direction d (from its head, Outgoing, or its tail): two column reads,
// not three, per edge of a hub.
func (t *Tracer) end(tid int32, d kg.Dir) (far, rel int32) {
	if t.rels == nil {
		tr := t.g.Triple(tid)
		return tr.Far(d), tr.Rel
	}
	if d == kg.Incoming {
		return t.heads[tid], t.rels[tid]
	}
	return t.tails[tid], t.rels[tid]
}
