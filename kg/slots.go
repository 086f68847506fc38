package kg

import (
	"github.com/stem-kgqa/stem/internal/extsort"
)

// A stored hash index (the name tables' slots, the normalised-name and
// alias indexes') has one canonical layout, whatever built it: keys are
// placed in order of (home slot, key id), each at max(home, last+1) where
// last is where the previous one landed, without wrapping around (the
// array grows past the hash range when the last keys spill over). Any
// layout where every key is reachable from its home loads (checkNames);
// fixing one makes a snapshot a function of its graph alone, so that a
// graph built in memory and the same graph built on disk in bounded
// memory (BuildSnapshot), which cannot insert keys in id order into a
// table it does not hold, write the same bytes.

// sweepSlots places keys given in (home, id) order, calling put with each
// key's slot, in increasing order; it returns the slots array's length,
// max(size, last slot + 1).
func sweepSlots(size int, next func() (home, id uint32, ok bool), put func(pos int, id int32) error) (int, error) {
	last := -1
	for {
		h, id, ok := next()
		if !ok {
			return max(size, last+1), nil
		}
		p := max(int(h), last+1)
		if err := put(p, int32(id)); err != nil {
			return 0, err
		}
		last = p
	}
}

// canonicalSlots returns the canonical hash index of n keys, key i hashing
// to hash(i), over the range tableSize(n).
func canonicalSlots(n int, hash func(i int32) uint64) []int32 {
	size := tableSize(n)
	pairs := make([]uint32, 2*n)
	for i := 0; i < n; i++ {
		pairs[2*i] = uint32(homeIn(hash(int32(i)), size))
		pairs[2*i+1] = uint32(i)
	}
	pairs = extsort.Sort(pairs, make([]uint32, len(pairs)), 2, 2)
	slots := emptySlots(size)
	k := 0
	next := func() (uint32, uint32, bool) {
		if k >= len(pairs) {
			return 0, 0, false
		}
		k += 2
		return pairs[k-2], pairs[k-1], true
	}
	sweepSlots(size, next, func(pos int, id int32) error {
		for pos >= len(slots) {
			slots = append(slots, -1)
		}
		slots[pos] = id
		return nil
	})
	return slots
}
