package kg

import (
	"hash/maphash"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Name tables are stored compactly so that a 10M-triple graph needs no Go
// string header or map entry per name (those cost 50-80 bytes an entity):
//
//   - blob holds every name's bytes back to back, in id order;
//   - off (n+1 entries) gives name id the bytes blob[off[id]:off[id+1]];
//   - slots is an open-addressing hash index (linear probing); a slot
//     holds a name id or -1 (empty).
//
// A table's slots are in one of two layouts. While names are interned
// (Builder, BuildSnapshot's runs), it is a power-of-two table that grows,
// probed with wrap-around from the masked hash (intern, find). A graph's
// tables, stored in snapshots as they are, have the canonical layout
// (canonicalSlots): the hash range is tableSize(n) slots, a name's home is
// its hash reduced to that range by multiplication (homeIn), names sit in
// order of (home, id) each at the first free slot from its home, and
// probes run forward without wrapping (the array is longer than the range
// when the last names spill past it). Graph.Entity uses lookup.
//
// The hash is FNV-1a 64 of the name bytes, folded (h ^ h>>32). With the
// reduction and the layout it is part of the snapshot format, so it must
// never change without a new SnapshotVersion.
type nameTable struct {
	blob  []byte
	off   []uint32
	slots []int32
}

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
	// minSlots is the smallest interning table.
	minSlots = 8
)

// hashName is FNV-1a 64 of s, the documented, stable hash of the snapshot
// format.
func hashName(s string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// internSeed keys the hash of interning tables and build partitions:
// they never leave the process, so they hash with the runtime's fast
// hash (maphash) rather than the format's FNV, byte by byte.
var internSeed = maphash.MakeSeed()

// internHash is the hash of interning tables and build partitions.
func internHash(s string) uint64 { return maphash.String(internSeed, s) }

// home is the first slot an interning table of mask+1 slots probes for
// hash h.
func home(h uint64, mask int) int { return int((h ^ h>>32) & uint64(mask)) }

// homeIn is a stored table's home slot for hash h in a range of size
// slots: the folded hash times size, over 2^32 (Lemire's multiply-shift
// reduction), which needs no power-of-two size.
func homeIn(h uint64, size int) int { return int((uint64(uint32(h^h>>32)) * uint64(size)) >> 32) }

// tableSize returns the hash range of a stored table of n keys, n + n/4
// + 1: linear probing at a load of at most 4/5 stays short (about 3 probes
// for a miss), and at millions of names the slots are a tenth of a graph's
// memory, so the range is not rounded up to a power of two.
func tableSize(n int) int { return n + n/4 + 1 }

// newNameTable returns an empty table, ready to intern into.
func newNameTable() nameTable {
	return nameTable{off: []uint32{0}, slots: emptySlots(minSlots)}
}

func emptySlots(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = -1
	}
	return s
}

// len returns the number of names; the zero table (a Graph literal in a
// test) has none.
func (t *nameTable) len() int {
	if len(t.off) == 0 {
		return 0
	}
	return len(t.off) - 1
}

// name returns name id as a string without copying. That is safe because
// the blob is never modified once a name is in it: a Builder only appends
// past the end, and a Graph's blob (Go memory or a read-only file mapping)
// is immutable.
func (t *nameTable) name(id int32) string {
	a, b := t.off[id], t.off[id+1]
	if a == b {
		return ""
	}
	return unsafe.String(&t.blob[a], int(b-a))
}

// lookup returns the id of the name s in a table of canonical layout.
// Probing stops at an empty slot or the end of the slots.
func (t *nameTable) lookup(s string) (int32, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	for i := homeIn(hashName(s), tableSize(t.len())); i < len(t.slots); i++ {
		id := t.slots[i]
		if id < 0 {
			return 0, false
		}
		if t.name(id) == s {
			return id, true
		}
	}
	return 0, false
}

// find is lookup for a table being interned into.
func (t *nameTable) find(s string) (int32, bool) {
	mask := len(t.slots) - 1
	for i := home(internHash(s), mask); ; i = (i + 1) & mask {
		id := t.slots[i]
		if id < 0 {
			return 0, false
		}
		if t.name(id) == s {
			return id, true
		}
	}
}

// intern returns the id of name s, adding it when new. s may alias a
// caller's buffer: its bytes are copied into the blob. The table grows at
// a load of 2/3, so probes always meet an empty slot.
func (t *nameTable) intern(s string) int32 {
	mask := len(t.slots) - 1
	i := home(internHash(s), mask)
	for ; ; i = (i + 1) & mask {
		id := t.slots[i]
		if id < 0 {
			break
		}
		if t.name(id) == s {
			return id
		}
	}
	id := int32(t.len())
	t.blob = append(t.blob, s...)
	t.off = append(t.off, uint32(len(t.blob)))
	if n := t.len(); n+n/2 >= len(t.slots) {
		t.rehash(2 * len(t.slots))
	} else {
		t.slots[i] = id
	}
	return id
}

// rehash rebuilds an interning table's index with size slots.
func (t *nameTable) rehash(size int) {
	t.slots = emptySlots(size)
	mask := size - 1
	for id := int32(0); int(id) < t.len(); id++ {
		i := home(internHash(t.name(id)), mask)
		for t.slots[i] >= 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = id
	}
}

// canonicalize gives an interned table the stored layout, for a graph.
func (t *nameTable) canonicalize() {
	t.slots = canonicalSlots(t.len(), func(i int32) uint64 { return hashName(t.name(i)) })
}

// orEmpty returns t, or a valid empty table when t is the zero value, so
// that any Graph value encodes to a snapshot that decodes.
func (t *nameTable) orEmpty() *nameTable {
	if len(t.off) == 0 {
		return &nameTable{off: []uint32{0}, slots: canonicalSlots(0, nil)}
	}
	return t
}

// normIndex maps normalised entity names to the entities carrying them,
// compactly: groups of ids (one group per distinct non-empty Normalize
// result) in CSR form, and a hash index of canonical layout from the hash
// of the normalised text to a group. The normalised text itself is not
// stored: a probe compares the query with Normalize of the group's first
// entity name (normEqual, without allocating).
type normIndex struct {
	slots []int32 // group or -1, canonical over tableSize(groups)
	off   []int32 // groups+1 offsets into ids
	ids   []int32 // entity ids, grouped, increasing within a group
}

// groups returns the number of groups.
func (x *normIndex) groups() int {
	if len(x.off) == 0 {
		return 0
	}
	return len(x.off) - 1
}

// buildNormIndex groups the entities of names by Normalize(name), the
// groups in order of their first entity.
func buildNormIndex(names *nameTable) normIndex {
	n := names.len()
	// Grouping interns the keys in a table of its own; the index keeps
	// only their hashes.
	slots := emptySlots(max(minSlots, 1<<bitsFor(n+n/2+1)))
	mask := len(slots) - 1
	group := make([]int32, n)
	var first, sizes []int32
	var hashes []uint64
	var buf []byte
	for id := int32(0); int(id) < n; id++ {
		name := names.name(id)
		buf = appendNormalize(buf[:0], name)
		if len(buf) == 0 {
			group[id] = -1
			continue
		}
		key := unsafe.String(&buf[0], len(buf))
		i := home(internHash(key), mask)
		for ; slots[i] >= 0; i = (i + 1) & mask {
			if normEqual(names.name(first[slots[i]]), key) {
				break
			}
		}
		g := slots[i]
		if g < 0 {
			g = int32(len(first))
			slots[i] = g
			first = append(first, id)
			sizes = append(sizes, 0)
			hashes = append(hashes, hashName(key))
		}
		group[id] = g
		sizes[g]++
	}
	off := make([]int32, len(sizes)+1)
	for i, s := range sizes {
		off[i+1] = off[i] + s
	}
	next := sizes // reused as write cursors
	copy(next, off[:len(sizes)])
	ids := make([]int32, off[len(sizes)])
	for id, g := range group {
		if g >= 0 {
			ids[next[g]] = int32(id)
			next[g]++
		}
	}
	return normIndex{slots: canonicalSlots(len(hashes), func(g int32) uint64 { return hashes[g] }), off: off, ids: ids}
}

// bitsFor returns the bits needed to count to n.
func bitsFor(n int) int {
	b := 0
	for n>>b != 0 {
		b++
	}
	return b
}

// lookup returns the entities whose normalised name is key (non-empty).
func (x *normIndex) lookup(names *nameTable, key string) []int32 {
	if len(x.slots) == 0 {
		return nil
	}
	size := tableSize(x.groups())
	h := homeIn(hashName(key), size)
	var buf [64]byte
	for i := h; i < len(x.slots); i++ {
		g := x.slots[i]
		if g < 0 {
			return nil
		}
		a, b := x.off[g], x.off[g+1]
		name := names.name(x.ids[a])
		if normEqual(name, key) {
			return x.ids[a:b:b]
		}
		// Groups sit in order of their home slot (the canonical layout):
		// one whose home is past key's ends a miss here, not at the end
		// of the cluster. A miss at a load of 4/5 then reads about 3
		// groups, not about 13.
		if norm := appendNormalize(buf[:0], name); len(norm) > 0 && homeIn(hashName(unsafe.String(&norm[0], len(norm))), size) > h {
			return nil
		}
	}
	return nil
}

// normEqual reports whether Normalize(name) == key without building
// Normalize(name): it runs Normalize's loop and compares as it goes.
func normEqual(name, key string) bool {
	if isNormalASCII(name) {
		return name == key
	}
	j := 0
	space := false
	var buf [utf8.UTFMax]byte
	for _, r := range name {
		if isSep(r) {
			space = j > 0
			continue
		}
		if space {
			if j >= len(key) || key[j] != ' ' {
				return false
			}
			j++
			space = false
		}
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			if j >= len(key) || key[j] != byte(r) {
				return false
			}
			j++
			continue
		}
		n := utf8.EncodeRune(buf[:], unicode.ToLower(r))
		if j+n > len(key) || key[j:j+n] != string(buf[:n]) {
			return false
		}
		j += n
	}
	return j == len(key)
}
