package tracing

import (
	"sort"
	"sync"

	"github.com/stem-kgqa/stem/kg"
)

// farCacheMin is the least edges of one relation at one entity whose far
// ends a tracer keeps (farCache): below it a run's reads are few.
const farCacheMin = 4096

// farCache keeps, per (entity, relation, direction) run of a hub's edges
// that a step has collected, the far ends of the run's edges in row
// order. A run of a hub is millions of edges at 100M triples, and reading
// each one's far end from the triple columns is a random read (two cache
// misses) per edge; the next step that floods the same run (another
// reading of the question, another question about the same country or
// gender) reads them in order instead. The first collect of a run reads
// the columns as before and fills the entry, so nothing is read up front
// and results do not depend on the cache. At most max far ends are kept
// (entries are never evicted: a server's hubs are few and stay hot).
//
// It also keeps each hub row's relation runs (hubRun), found once by
// binary searches of the relation column, a few random reads per
// relation, rather than at every step at the hub.
type farCache struct {
	mu   sync.RWMutex
	m    map[uint64][]int32
	runs map[uint64][]hubRun
	n    int // far ends kept
	max  int
}

// newFarCache returns a cache of at most max far ends.
func newFarCache(max int) *farCache {
	return &farCache{m: map[uint64][]int32{}, runs: map[uint64][]hubRun{}, max: max}
}

// hubRun is one relation's run in an entity's row: it ends at row index
// hi (it starts where the one before ends); loop says its first edge is a
// self-loop.
type hubRun struct {
	hi   int32
	rel  int32
	loop bool
}

// runsOf returns the relation runs of row, entity x's edges in direction
// d, kept in the tracer's farCache when the row is a hub's (pruneMin edges
// or more).
func (t *Tracer) runsOf(x int32, d kg.Dir, row []int32) []hubRun {
	c, rels, heads, tails := t.fars, t.rels, t.heads, t.tails
	k := uint64(uint32(x))<<1 | uint64(d)
	if c != nil && len(row) >= pruneMin {
		c.mu.RLock()
		runs, ok := c.runs[k]
		c.mu.RUnlock()
		if ok {
			return runs
		}
	}
	var runs []hubRun
	for lo := 0; lo < len(row); {
		rel := rels[row[lo]]
		hi := lo + sort.Search(len(row)-lo, func(i int) bool { return rels[row[lo+i]] > rel })
		runs = append(runs, hubRun{hi: int32(hi), rel: rel, loop: heads[row[lo]] == tails[row[lo]]})
		lo = hi
	}
	if c != nil && len(row) >= pruneMin {
		c.mu.Lock()
		if _, ok := c.runs[k]; !ok {
			c.runs[k] = runs
		}
		c.mu.Unlock()
	}
	return runs
}

func farKey(x, rel int32, d kg.Dir) uint64 {
	return uint64(uint32(x))<<32 | uint64(uint32(rel))<<1 | uint64(d)
}

// get returns the far ends of the run, nil when they are not kept.
func (c *farCache) get(x, rel int32, d kg.Dir) []int32 {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	f := c.m[farKey(x, rel, d)]
	c.mu.RUnlock()
	return f
}

// room reports whether n more far ends may be kept.
func (c *farCache) room(n int) bool {
	if c == nil {
		return false
	}
	c.mu.RLock()
	ok := c.n+n <= c.max
	c.mu.RUnlock()
	return ok
}

// put keeps the far ends of a run.
func (c *farCache) put(x, rel int32, d kg.Dir, fars []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := farKey(x, rel, d)
	if _, ok := c.m[k]; ok || c.n+len(fars) > c.max {
		return
	}
	c.m[k] = fars
	c.n += len(fars)
}
