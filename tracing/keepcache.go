package tracing

import (
	"math"
	"math/bits"
	"sync"
)

// keepCacheMin is the least candidate edges of one step whose kept edges
// a tracer remembers (keepCache): below it the names read are few.
const keepCacheMin = 4096

// keepCache remembers, per hub step, which of the step's candidate edges
// budget.keep kept and in what order (and which capWeak kept). At a hub the candidates tie by the
// hundreds of thousands, and keep's cut by name (cutTies) reads the names
// of all of them, a random read each: a warm server asking about the same
// hub again pays it per question. The key is the step's candidates
// themselves (every edge's triple, score and direction, hashed, and their
// count) with the room left in the budget, which is all keep's result
// depends on; the entry is the kept edges' places among the candidates.
// A hit is checked against the kept triples it stored, so a hash
// collision falls back to keep rather than changing the answers. Entries
// are never evicted; at most max places are kept.
type keepCache struct {
	mu  sync.RWMutex
	m   map[keepKey]keepEntry
	n   int
	max int
}

type keepKey struct {
	h1, h2  uint64
	n, kind int
	p       int // the cut's parameter (keep: the room, -1 for none)
}

type keepEntry struct {
	pos, tids []int32
	all       bool // the cut kept sel as it was (pos and tids nil)
}

func newKeepCache(max int) *keepCache {
	return &keepCache{m: map[keepKey]keepEntry{}, max: max}
}

// keyOf hashes the candidates (two independent 64-bit hashes).
func keyOf(sel []cand, kind, p int) keepKey {
	h1, h2 := uint64(0x9e3779b97f4a7c15), uint64(0xc2b2ae3d27d4eb4f)
	for _, c := range sel {
		v := uint64(uint32(c.tid)) | uint64(math.Float32bits(c.score))<<32
		a := uint64(0)
		if c.aligned {
			a = 1
		}
		h1 = bits.RotateLeft64((h1^v)*0xff51afd7ed558ccd, 29) + a
		h2 = bits.RotateLeft64((h2+v^a<<7)*0xc4ceb9fe1a85ec53, 31) ^ v
	}
	return keepKey{h1, h2, len(sel), kind, p}
}

// keep is budget.keep for the step of walk w, through the tracer's
// keepCache when the step is a hub's.
func (r *run) keep(w *walk, sel []cand) []cand {
	mk, b := r.t.cfg.MaxKeep, &r.out.spent
	if r.t.kept == nil || mk <= 0 || len(sel) < keepCacheMin {
		return b.keep(mk, sel, r.candName(w))
	}
	if b.limit == 0 {
		b.limit = mk
	}
	room := max(b.limit-b.kept, 0) // keep cuts at 0 below 0
	if len(sel) <= room {
		room = -1
	}
	out, hit := r.cached(sel, cutKeep, room, func(sel []cand) []cand { return b.keep(mk, sel, r.candName(w)) })
	if hit {
		if room >= 0 {
			b.hit = true
		}
		b.kept += len(out)
	}
	return out
}

// capWeak is capWeak for the step of walk w, through the tracer's
// keepCache when the step is a hub's.
func (r *run) capWeak(w *walk, sel []cand, best float32, mw int) []cand {
	if r.t.kept == nil || len(sel) < keepCacheMin {
		return capWeak(sel, best, mw, r.candName(w))
	}
	out, _ := r.cached(sel, cutWeak, mw<<32|int(math.Float32bits(best)), func(sel []cand) []cand {
		return capWeak(sel, best, mw, r.candName(w))
	})
	return out
}

// The cuts keepCache remembers.
const (
	cutKeep = iota
	cutWeak
)

// cached returns cut(sel), the kind of cut with parameter p, from the
// tracer's keepCache when it holds it (hit) and else computing it and
// keeping it. cut must depend only on sel and p, and its result must be
// edges of sel.
func (r *run) cached(sel []cand, kind, p int, cut func([]cand) []cand) (out []cand, hit bool) {
	c, b := r.t.kept, &r.out.spent
	k := keyOf(sel, kind, p)
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if ok && e.all {
		return sel, true
	}
	if ok && len(e.pos) <= len(sel) {
		out := b.tmp[:0]
		for i, p := range e.pos {
			if sel[p].tid != e.tids[i] {
				ok = false
				break
			}
			out = append(out, sel[p])
		}
		b.tmp = out
		if ok {
			return sel[:copy(sel, out)], true
		}
	}
	orig := append(b.tids[:0], make([]int32, len(sel))...)
	for i, c := range sel {
		orig[i] = c.tid
	}
	b.tids = orig
	out = cut(sel)
	if pos, ok := placesOf(orig, out); ok {
		if len(pos) == len(orig) && identity(pos) {
			c.mu.Lock()
			if _, ok := c.m[k]; !ok {
				c.m[k] = keepEntry{all: true}
			}
			c.mu.Unlock()
			return out, false
		}
		tids := make([]int32, len(out))
		for i, c := range out {
			tids[i] = c.tid
		}
		c.mu.Lock()
		if _, ok := c.m[k]; !ok && c.n+len(pos) <= c.max {
			c.m[k] = keepEntry{pos: pos, tids: tids}
			c.n += len(pos)
		}
		c.mu.Unlock()
	}
	return out, false
}

// placesOf returns where each of out's edges is in orig (the candidates'
// triples before keep), false when a triple of out is there more than once.
func placesOf(orig []int32, out []cand) ([]int32, bool) {
	size := 1 << bits.Len(uint(2*len(out)+1))
	mask := uint32(size - 1)
	slot := make([]int32, size) // 1 + index into out, 0 = empty
	hash := func(tid int32) uint32 { return uint32(uint64(uint32(tid))*0x9e3779b97f4a7c15>>32) & mask }
	for i, c := range out {
		h := hash(c.tid)
		for slot[h] != 0 {
			if out[slot[h]-1].tid == c.tid {
				return nil, false
			}
			h = (h + 1) & mask
		}
		slot[h] = int32(i + 1)
	}
	pos := make([]int32, len(out))
	for i := range pos {
		pos[i] = -1
	}
	for p, tid := range orig {
		for h := hash(tid); slot[h] != 0; h = (h + 1) & mask {
			if j := slot[h] - 1; out[j].tid == tid {
				if pos[j] >= 0 {
					return nil, false
				}
				pos[j] = int32(p)
				break
			}
		}
	}
	for _, p := range pos {
		if p < 0 {
			return nil, false
		}
	}
	return pos, true
}

// identity reports whether pos is 0, 1, ... in order.
func identity(pos []int32) bool {
	for i, p := range pos {
		if int(p) != i {
			return false
		}
	}
	return true
}
