package kg

import (
	"github.com/stem-kgqa/stem/internal/extsort"
)

// A stored hash index (the name tables' slots and the normalised-name
// index's) has one canonical layout, whatever built it: keys are placed by
// linear probing in order of (home slot, key id), the lowest first. Any
// layout reachable by linear probing loads (see checkNames); fixing one
// makes a snapshot a function of its graph alone, so that a graph built in
// memory and the same graph built on disk in bounded memory
// (BuildSnapshot), which cannot insert keys in id order into a table it
// does not hold, write the same bytes.
//
// Inserting in home order means each key lands at max(home, last+1), where
// last is where the previous key landed: one sweep over the sorted keys.
// Keys pushed past the end wrap around to the free slots at the start, in
// order, after every other key is placed (sweepSlots).

// sweepSlots places keys given in (home, id) order in a table of size
// slots. put receives every key that does not wrap, in increasing slot
// order; the keys that wrap are returned in order, for the caller to put
// in the first free slots from slot 0 (placeWrapped).
func sweepSlots(size int, next func() (home, id uint32, ok bool), put func(pos int, id int32) error) (wrapped []int32, err error) {
	last := -1
	for {
		h, id, ok := next()
		if !ok {
			return wrapped, nil
		}
		p := max(int(h), last+1)
		if p >= size {
			wrapped = append(wrapped, int32(id))
			continue
		}
		if err := put(p, int32(id)); err != nil {
			return nil, err
		}
		last = p
	}
}

// canonicalSlots returns the canonical hash index of n keys for a table of
// size slots, key i hashing to hash(i).
func canonicalSlots(size, n int, hash func(i int32) uint64) []int32 {
	mask := size - 1
	pairs := make([]uint32, 2*n)
	for i := 0; i < n; i++ {
		pairs[2*i] = uint32(home(hash(int32(i)), mask))
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
	wrapped, _ := sweepSlots(size, next, func(pos int, id int32) error {
		slots[pos] = id
		return nil
	})
	placeWrapped(slots, wrapped)
	return slots
}

// placeWrapped puts the wrapped keys in the first free slots, in order.
func placeWrapped(slots []int32, wrapped []int32) {
	for i := 0; len(wrapped) > 0 && i < len(slots); i++ {
		if slots[i] < 0 {
			slots[i] = wrapped[0]
			wrapped = wrapped[1:]
		}
	}
}

// canonical returns t with its hash index in the canonical layout at
// tableSize, sharing t's names.
func (t *nameTable) canonical() *nameTable {
	n := t.len()
	return &nameTable{blob: t.blob, off: t.off, slots: canonicalSlots(tableSize(n), n, func(i int32) uint64 { return hashName(t.name(i)) })}
}

// canonicalNorm returns x with its hash index in the canonical layout,
// sharing x's groups; names are the entity names x groups.
func canonicalNorm(x *normIndex, names *nameTable) normIndex {
	var buf []byte
	groups := x.groups()
	slots := canonicalSlots(tableSize(groups), groups, func(g int32) uint64 {
		buf = appendNormalize(buf[:0], names.name(x.ids[x.off[g]]))
		return hashName(bytesView(buf))
	})
	return normIndex{slots: slots, off: x.off, ids: x.ids}
}
