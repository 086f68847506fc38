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
// budget.keep kept and in what order. At a hub the candidates tie by the
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
	h1, h2 uint64
	n      int
	room   int // -1: no cut, the result does not depend on the room
}

type keepEntry struct {
	pos, tids []int32
}

func newKeepCache(max int) *keepCache {
	return &keepCache{m: map[keepKey]keepEntry{}, max: max}
}

// keyOf hashes the candidates (two independent 64-bit hashes).
func keyOf(sel []cand, room int) keepKey {
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
	return keepKey{h1, h2, len(sel), room}
}

// keep is budget.keep for the step of walk w, through the tracer's
// keepCache when the step is a hub's.
func (r *run) keep(w *walk, sel []cand) []cand {
	mk, c, b := r.t.cfg.MaxKeep, r.t.kept, &r.out.spent
	if c == nil || mk <= 0 || len(sel) < keepCacheMin {
		return b.keep(mk, sel, r.candName(w))
	}
	if b.limit == 0 {
		b.limit = mk
	}
	room := max(b.limit-b.kept, 0) // keep cuts at 0 below 0
	if len(sel) <= room {
		room = -1
	}
	k := keyOf(sel, room)
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
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
			if room >= 0 {
				b.hit = true
			}
			b.kept += len(out)
			return sel[:copy(sel, out)]
		}
	}
	orig := append(b.tids[:0], make([]int32, len(sel))...)
	for i, c := range sel {
		orig[i] = c.tid
	}
	b.tids = orig
	out := b.keep(mk, sel, r.candName(w))
	if pos, ok := placesOf(orig, out); ok {
		tids := make([]int32, len(out))
		for i, c := range out {
			tids[i] = c.tid
		}
		c.mu.Lock()
		if _, ok := c.m[k]; !ok && c.n+len(pos) <= c.max {
			c.m[k] = keepEntry{pos, tids}
			c.n += len(pos)
		}
		c.mu.Unlock()
	}
	return out
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
