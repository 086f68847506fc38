package kg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"

	"github.com/stem-kgqa/stem/atomicfile"
)

// Snapshot layout, version 3 (all integers little-endian). The file is a
// 160-byte header followed by sections in a fixed order; every section
// starts at a multiple of 8 bytes and is padded with zero bytes to the next
// multiple of 8, so that a loader can point int32 slices straight into a
// memory mapping of the file.
//
//	header (160 bytes):
//	  0   magic "STEMKG" (6 bytes)
//	  6   version uint32 (SnapshotVersion)
//	  10  6 zero bytes
//	  16  nEnt, nRel, nTri, dups            uint64 each
//	  48  entBytes, relBytes                 lengths of the name blobs
//	  64  entSlots, relSlots                 lengths of the name hash indexes
//	  80  normGroups, normIDs, normSlots     the normalised-name index
//	  104 nAlias, aliasBytes                 the aliases
//	  120 aliasGroups, aliasIDs, aliasSlots  their normalised-name index
//	  144 16 zero bytes (reserved)
//	sections:
//	  entOff    (nEnt+1) x uint32   entity name i is entBlob[entOff[i]:entOff[i+1]]
//	  entBlob   entBytes bytes
//	  entSlots  entSlots x int32    hash index: entity id or -1
//	  relOff, relBlob, relSlots     the same for relations
//	  heads, rels, tails            nTri x int32 each
//	  outOff (nEnt+1), outIdx (nTri)  int32: triples by head, rows by (rel, tail)
//	  inOff (nEnt+1), inIdx (nTri)    int32: triples by tail, rows by (rel, head)
//	  normSlots normSlots x int32   hash of Normalize(name) -> group or -1
//	  normOff   (normGroups+1) x int32, normIDs normIDs x int32: the groups
//	  aliasOff  (nAlias+1) x uint32, aliasBlob aliasBytes bytes: the aliases
//	  aliasEnt  nAlias x int32      the entity of each alias
//	  aliasSlots, aliasOff2 (aliasGroups+1), aliasIDs: the aliases grouped
//	            by Normalize, as normSlots, normOff and normIDs group names
//	crc uint32   CRC-32C (Castagnoli) of every byte before it
//
// The hash indexes use FNV-1a 64 of the (normalised) name bytes, folded
// (h ^ h>>32), reduced to the range tableSize(keys) by multiplication,
// with forward linear probing (see nameTable); the array may run past the
// range by the keys that spill over its end. The loader verifies the
// checksum and, beside it on another core, the structure in O(n): offsets
// monotone, ids in range, every adjacency row holding its own entity's
// triples in strictly increasing (relation, other end) order (which also
// rules out duplicate triples), every name reachable from its home slot
// and unique, the normalised groups well-formed, aliases naming entities
// that exist. Rows and names are checked one by one up to 2M of them and
// 262,144 of them, evenly spread, beyond (fullChecks), ids always. So a damaged or hostile
// file fails to load with an error naming it, and a loaded graph never
// indexes out of range later. (The normalised indexes
// are checked for shape, not recomputed: that would cost a Normalize per
// entity; a crafted file could at worst make EntitiesByNorm miss.)
const (
	snapshotMagic = "STEMKG"
	// SnapshotVersion is the snapshot layout this build reads and writes.
	// Versions 1 (names as lengths plus blob, no stored indexes) and 2
	// (power-of-two hash indexes, no aliases) are refused with a message
	// to rebuild.
	SnapshotVersion = 3
	headerSize      = 160
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteSnapshot writes g to path in the binary snapshot format, atomically
// (see package atomicfile), so a crash never leaves a torn snapshot.
func WriteSnapshot(path string, g *Graph) error {
	if g.NumTriples() == 0 {
		return fmt.Errorf("write snapshot %s: %w", path, ErrEmpty)
	}
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return EncodeSnapshot(w, g) }); err != nil {
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	dropCached(path)
	return nil
}

// EncodeSnapshot writes g's snapshot to w. It streams, so the graph is not
// duplicated in memory. A graph built in memory gets its normalised-name
// index built here, so that loading the snapshot needs no build. The
// graph's tables are written as they are: built graphs have canonical
// hash indexes (see canonicalSlots), and a loaded one re-encodes to the
// bytes it was read from.
func EncodeSnapshot(w io.Writer, g *Graph) error {
	cw := &crcWriter{w: w, buf: make([]byte, 0, 256<<10)}
	ents, rels := g.ents.orEmpty(), g.relTab.orEmpty()
	norm := g.normIndex()
	alias := g.alias.orEmpty()
	nE, nR, nT := ents.len(), rels.len(), len(g.heads)
	outOff, inOff := g.outOff, g.inOff
	if len(outOff) != nE+1 || len(inOff) != nE+1 || len(g.outIdx) != nT || len(g.inIdx) != nT {
		return fmt.Errorf("encode snapshot: graph adjacency does not match its %d entities and %d triples", nE, nT)
	}
	var h [headerSize]byte
	copy(h[:], snapshotMagic)
	le := binary.LittleEndian
	le.PutUint32(h[6:], SnapshotVersion)
	for i, v := range []int{nE, nR, nT, g.dups, len(ents.blob), len(rels.blob), len(ents.slots), len(rels.slots),
		norm.groups(), len(norm.ids), len(norm.slots),
		alias.len(), len(alias.tab.blob), alias.norm.groups(), len(alias.norm.ids), len(alias.norm.slots)} {
		le.PutUint64(h[16+8*i:], uint64(v))
	}
	cw.bytes(h[:])
	for _, t := range []*nameTable{ents, rels} {
		cw.u32s(t.off)
		cw.bytes(t.blob)
		cw.pad()
		cw.i32s(t.slots)
	}
	for _, col := range [][]int32{g.heads, g.rels, g.tails, outOff, g.outIdx, inOff, g.inIdx, norm.slots, norm.off, norm.ids} {
		cw.i32s(col)
	}
	cw.u32s(alias.tab.off)
	cw.bytes(alias.tab.blob)
	cw.pad()
	for _, col := range [][]int32{alias.ent, alias.norm.slots, alias.norm.off, alias.norm.ids} {
		cw.i32s(col)
	}
	sum := cw.crc
	cw.u32Raw(sum)
	return cw.flush()
}

// crcWriter buffers output and keeps a running CRC and length of it.
type crcWriter struct {
	w   io.Writer
	buf []byte
	crc uint32
	n   int64
	err error
}

func (c *crcWriter) flush() error {
	if c.err == nil && len(c.buf) > 0 {
		_, c.err = c.w.Write(c.buf)
	}
	c.buf = c.buf[:0]
	return c.err
}

// u32Raw appends v without adding it to the CRC (the checksum itself).
func (c *crcWriter) u32Raw(v uint32) {
	if len(c.buf)+4 > cap(c.buf) {
		c.flush()
	}
	c.buf = binary.LittleEndian.AppendUint32(c.buf, v)
}

func (c *crcWriter) bytes(b []byte) {
	c.n += int64(len(b))
	for len(b) > 0 {
		if len(c.buf) == cap(c.buf) {
			c.flush()
		}
		n := min(len(b), cap(c.buf)-len(c.buf))
		c.buf = append(c.buf, b[:n]...)
		c.crc = crc32.Update(c.crc, castagnoli, b[:n])
		b = b[n:]
	}
}

// pad writes zero bytes up to the next multiple of 8.
func (c *crcWriter) pad() {
	var zero [8]byte
	c.bytes(zero[:(8-c.n%8)%8])
}

// i32s writes a section of int32s, padded.
func (c *crcWriter) i32s(s []int32) {
	if littleEndian() {
		c.bytes(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s)))
	} else {
		var b [4]byte
		for _, v := range s {
			binary.LittleEndian.PutUint32(b[:], uint32(v))
			c.bytes(b[:])
		}
	}
	c.pad()
}

// u32s writes a section of uint32s, padded.
func (c *crcWriter) u32s(s []uint32) {
	c.i32s(unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(s))), len(s)))
}

// littleEndian reports whether this machine stores integers little-endian,
// the snapshot's byte order, so that sections can be used in place.
func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// ReadSnapshot loads a snapshot written by WriteSnapshot. On Linux the
// file is memory-mapped read-only and the graph's tables point into the
// mapping (zero copy: the page cache is shared between processes and
// loading costs one checksum pass plus the structural checks); elsewhere
// the file is read into memory and used in place the same way. The
// mapping is kept for the life of the process, because slices handed out
// by the graph (Columns, Out, names) may outlive it. Everything is checked
// (see the layout above) before any of it is trusted.
func ReadSnapshot(path string) (*Graph, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", path, err)
	}
	g, err := DecodeSnapshot(data, path)
	if err != nil {
		unmap()
		return nil, err
	}
	return g, nil
}

// snapHeader is the decoded header: element counts of every section.
type snapHeader struct {
	nEnt, nRel, nTri, dups, entBytes, relBytes, entSlots, relSlots, normGroups, normIDs, normSlots uint64
	nAlias, aliasBytes, aliasGroups, aliasIDs, aliasSlots                                          uint64
}

// sectionSizes returns the byte length of every section, in file order,
// and the file's total length; h's counts must be bounded (below 2^33) so
// that the sums cannot overflow.
func (h *snapHeader) sectionSizes() ([]uint64, uint64) {
	sizes := []uint64{
		4 * (h.nEnt + 1), h.entBytes, 4 * h.entSlots,
		4 * (h.nRel + 1), h.relBytes, 4 * h.relSlots,
		4 * h.nTri, 4 * h.nTri, 4 * h.nTri,
		4 * (h.nEnt + 1), 4 * h.nTri, 4 * (h.nEnt + 1), 4 * h.nTri,
		4 * h.normSlots, 4 * (h.normGroups + 1), 4 * h.normIDs,
		4 * (h.nAlias + 1), h.aliasBytes, 4 * h.nAlias,
		4 * h.aliasSlots, 4 * (h.aliasGroups + 1), 4 * h.aliasIDs,
	}
	total := uint64(headerSize)
	for _, n := range sizes {
		total += (n + 7) &^ 7
	}
	return sizes, total + 4
}

// DecodeSnapshot builds a graph from snapshot bytes; name labels errors.
// It never panics, whatever the bytes. On a little-endian machine, when
// data is 8-byte aligned (as a mapping or a fresh allocation is), the
// graph points into data instead of copying it, so data must not be
// modified while the graph is in use; otherwise the bytes are copied.
func DecodeSnapshot(data []byte, name string) (*Graph, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", name, ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(data) < len(snapshotMagic) {
		if bytes.HasPrefix([]byte(snapshotMagic), data) {
			return nil, corrupt("truncated: %d bytes, shorter than the header", len(data))
		}
		return nil, corrupt("not a KG snapshot (no %q magic)", snapshotMagic)
	}
	if string(data[:len(snapshotMagic)]) != snapshotMagic {
		return nil, corrupt("not a KG snapshot (no %q magic)", snapshotMagic)
	}
	if len(data) < len(snapshotMagic)+4 {
		return nil, corrupt("truncated: %d bytes, shorter than the header", len(data))
	}
	le := binary.LittleEndian
	crcOK := func() bool { return checksumOK(data) }
	version := le.Uint32(data[6:])
	switch {
	case version != SnapshotVersion && version != 0 && !crcOK():
		// Every version keeps the trailing checksum; a version field that
		// fails it is a damaged file, not a reason to upgrade or rebuild.
		return nil, corrupt("checksum mismatch: the file is damaged (its version field reads %d)", version)
	case version > SnapshotVersion:
		return nil, fmt.Errorf("%s: %w: format version %d, this build reads up to %d (upgrade stem, or rebuild the snapshot with `stem kg build`)",
			name, ErrNewerVersion, version, SnapshotVersion)
	case version == 0:
		return nil, corrupt("format version 0")
	case version < SnapshotVersion:
		return nil, fmt.Errorf("%s: %w: the snapshot is version %d, this stem reads version %d: rebuild it with 'stem kg build'",
			name, ErrOldVersion, version, SnapshotVersion)
	}
	if len(data) < headerSize+4 {
		return nil, corrupt("truncated: %d bytes, shorter than the header", len(data))
	}
	var h snapHeader
	for i, p := range []*uint64{&h.nEnt, &h.nRel, &h.nTri, &h.dups, &h.entBytes, &h.relBytes, &h.entSlots, &h.relSlots,
		&h.normGroups, &h.normIDs, &h.normSlots, &h.nAlias, &h.aliasBytes, &h.aliasGroups, &h.aliasIDs, &h.aliasSlots} {
		*p = le.Uint64(data[16+8*i:])
	}
	if h.nEnt > maxID || h.nRel > maxID || h.nTri > maxID || h.dups > maxID || h.nAlias > maxID {
		return nil, corrupt("counts out of range (%d entities, %d relations, %d triples, %d duplicates, %d aliases)", h.nEnt, h.nRel, h.nTri, h.dups, h.nAlias)
	}
	for _, n := range []uint64{h.entBytes, h.relBytes, h.aliasBytes} {
		if n > uint64(len(data)) || n > math.MaxUint32 {
			return nil, corrupt("name blob lengths (%d, %d, %d) exceed the file size %d", h.entBytes, h.relBytes, h.aliasBytes, len(data))
		}
	}
	if h.normGroups > h.nEnt || h.normIDs > h.nEnt {
		return nil, corrupt("normalised index of %d groups and %d ids for %d entities", h.normGroups, h.normIDs, h.nEnt)
	}
	if h.aliasGroups > h.nAlias || h.aliasIDs > h.nAlias {
		return nil, corrupt("alias index of %d groups and %d ids for %d aliases", h.aliasGroups, h.aliasIDs, h.nAlias)
	}
	for _, c := range []struct {
		what     string
		slots, n uint64
	}{{"entity", h.entSlots, h.nEnt}, {"relation", h.relSlots, h.nRel}, {"normalised-name", h.normSlots, h.normGroups},
		{"alias", h.aliasSlots, h.aliasGroups}} {
		if lo := uint64(tableSize(int(c.n))); c.slots < lo || c.slots > lo+c.n {
			return nil, corrupt("%s hash index of %d slots for %d keys (want %d to %d)", c.what, c.slots, c.n, lo, lo+c.n)
		}
	}
	if !bytesZero(data[10:16]) || !bytesZero(data[144:headerSize]) {
		return nil, corrupt("reserved header bytes are not zero")
	}
	// Section sizes in bytes, in file order; all are bounded above by the
	// checks so far (counts < 2^31, slots < 2^32), so uint64 sums cannot
	// overflow.
	sizes, want := h.sectionSizes()
	if uint64(len(data)) < want {
		return nil, corrupt("truncated: %d bytes, the header promises %d", len(data), want)
	}
	if uint64(len(data)) > want {
		return nil, corrupt("%d trailing bytes after the checksum", uint64(len(data))-want)
	}
	// The checksum pass runs beside the structural checks (which are
	// safe on any bytes); a mismatch is reported before what they find.
	crcDone := make(chan bool, 1)
	file := data // data may be replaced by an aligned copy below
	go func() { crcDone <- checksumOK(file) }()
	crcErr := func() error {
		if <-crcDone {
			return nil
		}
		return corrupt("checksum mismatch (stored %08x, computed %08x)",
			le.Uint32(file[len(file)-4:]), crc32.Checksum(file[:len(file)-4], castagnoli))
	}
	if h.nTri == 0 {
		if err := crcErr(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", name, ErrEmpty)
	}
	// Use the bytes in place when they are aligned little-endian ints;
	// otherwise copy them into an aligned buffer (or, big-endian, decode).
	if !littleEndian() || uintptr(unsafe.Pointer(unsafe.SliceData(data)))%8 != 0 {
		buf := make([]uint64, (len(data)+7)/8)
		aligned := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), len(data))
		copy(aligned, data)
		data = aligned
	}
	sec := make([][]byte, len(sizes))
	at := uint64(headerSize)
	for i, n := range sizes {
		sec[i] = data[at : at+n : at+n]
		end := (at + n + 7) &^ 7
		if !bytesZero(data[at+n : end]) {
			return nil, corrupt("section %d has non-zero padding", i)
		}
		at = end
	}
	g := &Graph{dups: int(h.dups)}
	g.ents = nameTable{off: u32view(sec[0]), blob: sec[1], slots: i32view(sec[2])}
	g.relTab = nameTable{off: u32view(sec[3]), blob: sec[4], slots: i32view(sec[5])}
	g.heads, g.rels, g.tails = i32view(sec[6]), i32view(sec[7]), i32view(sec[8])
	g.outOff, g.outIdx, g.inOff, g.inIdx = i32view(sec[9]), i32view(sec[10]), i32view(sec[11]), i32view(sec[12])
	norm := normIndex{slots: i32view(sec[13]), off: i32view(sec[14]), ids: i32view(sec[15])}
	alias := aliasIndex{tab: nameTable{off: u32view(sec[16]), blob: sec[17]}, ent: i32view(sec[18]),
		norm: normIndex{slots: i32view(sec[19]), off: i32view(sec[20]), ids: i32view(sec[21])}}

	// The checks read every section once; names and the normalised index
	// on one core, the columns and adjacency on another.
	var nameErr error
	wait := goIfLarge(int(h.nEnt+h.nTri), func() {
		if nameErr = checkNames(&g.ents, "entity"); nameErr == nil {
			if nameErr = checkNames(&g.relTab, "relation"); nameErr == nil {
				if nameErr = checkNorm(&norm, int(h.nEnt)); nameErr == nil {
					nameErr = checkAliases(&alias, int(h.nEnt))
				}
			}
		}
	})
	err := checkColumns(g)
	wait()
	if cerr := crcErr(); cerr != nil {
		return nil, cerr
	}
	if nameErr != nil {
		err = nameErr
	}
	if err != nil {
		return nil, corrupt("%v", err)
	}
	g.norm = norm
	g.alias = alias
	return g, nil
}

// checksumOK reports whether data ends with the CRC-32C of what precedes it.
func checksumOK(data []byte) bool {
	return len(data) >= 4 && crc32.Checksum(data[:len(data)-4], castagnoli) == binary.LittleEndian.Uint32(data[len(data)-4:])
}

// bytesZero reports whether b holds only zero bytes.
func bytesZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// i32view returns b (aligned, little-endian on this machine, or decoded
// otherwise) as int32s.
func i32view(b []byte) []int32 {
	n := len(b) / 4
	if n == 0 {
		return []int32{}
	}
	if littleEndian() {
		return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return s
}

// u32view is i32view for uint32s.
func u32view(b []byte) []uint32 {
	s := i32view(b)
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// checkOffsets verifies that a table's offsets tile its blob with
// non-empty names.
func checkOffsets(t *nameTable, what string) error {
	n := len(t.off) - 1
	if t.off[0] != 0 || int(t.off[n]) != len(t.blob) {
		return fmt.Errorf("%s name offsets do not span their blob", what)
	}
	for i := 0; i < n; i++ {
		if t.off[i] >= t.off[i+1] {
			return fmt.Errorf("%s %d has an empty name (or offsets go backwards)", what, i)
		}
	}
	return nil
}

// checkNames verifies a stored name table: non-empty names tiling the
// blob, and a hash index holding every id exactly once, each at or after
// its home slot with no empty slot between, with no two equal names (so
// Entity(EntityName(id)) == id for every id).
func checkNames(t *nameTable, what string) error {
	if err := checkOffsets(t, what); err != nil {
		return err
	}
	n := len(t.off) - 1
	if err := checkPermutation(t.slots, n); err != nil {
		return fmt.Errorf("%s %w", what, err)
	}
	// Every slot now holds -1 or a valid id.
	size := tableSize(n)
	lastEmpty := -1
	every, next := checkEvery(len(t.slots)), 0
	for i, id := range t.slots {
		if id < 0 {
			lastEmpty = i
			continue
		}
		if i < next {
			continue
		}
		next = i + every
		s := t.name(id)
		h := homeIn(hashName(s), size)
		if h > i || lastEmpty >= h {
			return fmt.Errorf("%s %d is not reachable from its hash slot", what, id)
		}
		// The slots from its home on hold valid ids.
		for j := h; j < i; j++ {
			if t.name(t.slots[j]) == s {
				return fmt.Errorf("%s name %q appears twice", what, s)
			}
		}
	}
	return nil
}

// checkAliases verifies the aliases: names tiling their blob, entities in
// range, and their normalised index's shape.
func checkAliases(x *aliasIndex, nEnt int) error {
	if err := checkOffsets(&x.tab, "alias"); err != nil {
		return err
	}
	for i, e := range x.ent {
		if uint32(e) >= uint32(nEnt) {
			return fmt.Errorf("alias %d names entity %d, out of range [0, %d)", i, e, nEnt)
		}
	}
	return checkNorm(&x.norm, x.tab.len())
}

// checkNorm verifies the shape of the normalised-name index: non-empty
// groups of increasing entity ids, each entity in at most one group, and a
// hash index holding every group exactly once.
func checkNorm(x *normIndex, nEnt int) error {
	groups := len(x.off) - 1
	if x.off[0] != 0 || int(x.off[groups]) != len(x.ids) {
		return fmt.Errorf("normalised-name groups do not span their ids")
	}
	// Whether an entity is in two groups is a random access per id: above
	// fullChecks, the ids are only checked to be in range and in order.
	var seen []uint64
	if nEnt <= fullChecks {
		seen = make([]uint64, (nEnt+63)/64)
	}
	for grp := 0; grp < groups; grp++ {
		a, b := x.off[grp], x.off[grp+1]
		if a >= b || int(b) > len(x.ids) {
			return fmt.Errorf("normalised-name group %d is empty (or offsets go backwards or overrun)", grp)
		}
		prev := int32(-1)
		for _, id := range x.ids[a:b] {
			if id <= prev || int(id) >= nEnt {
				return fmt.Errorf("normalised-name group %d: id %d out of order or range", grp, id)
			}
			if seen != nil {
				if seen[id/64]&(1<<(id%64)) != 0 {
					return fmt.Errorf("entity %d is in two normalised-name groups", id)
				}
				seen[id/64] |= 1 << (id % 64)
			}
			prev = id
		}
	}
	if err := checkPermutation(x.slots, groups); err != nil {
		return fmt.Errorf("normalised-name %w", err)
	}
	return nil
}

// checkPermutation checks that slots hold -1 or ids in [0, n), each of
// the n once: with a bitmap up to fullChecks, above by their count and
// the sums of the ids and of their squares (a sequential pass; a forged
// index could pass it, but not a damaged one, and lookups stay in range).
func checkPermutation(slots []int32, n int) error {
	var seen []uint64
	if n <= fullChecks {
		seen = make([]uint64, (n+63)/64)
	}
	var count, sum, sq uint64
	for i, id := range slots {
		if id == -1 {
			continue
		}
		if id < 0 || int(id) >= n {
			return fmt.Errorf("hash slot %d holds %d, out of range [0, %d)", i, id, n)
		}
		if seen != nil {
			if seen[id/64]&(1<<(id%64)) != 0 {
				return fmt.Errorf("hash index holds %d twice", id)
			}
			seen[id/64] |= 1 << (id % 64)
		}
		count++
		sum += uint64(id)
		sq += uint64(id) * uint64(id)
	}
	// Sums of 0..n-1 and of their squares, mod 2^64.
	m := uint64(n)
	wantSum, wantSq := m*(m-1)/2, uint64(0)
	if m > 0 {
		// (m-1)m(2m-1)/6, dividing before multiplying so that it is exact
		// modulo 2^64.
		a, b, c := m-1, m, 2*m-1
		for _, d := range []uint64{2, 3} {
			switch {
			case a%d == 0:
				a /= d
			case b%d == 0:
				b /= d
			default:
				c /= d
			}
		}
		wantSq = a * b * c
	}
	if count != m || sum != wantSum || sq != wantSq {
		return fmt.Errorf("hash index holds %d of %d keys (or some twice)", count, n)
	}
	return nil
}

// checkColumns verifies the triple columns and both adjacencies.
func checkColumns(g *Graph) error {
	nE, nR := int32(g.ents.len()), int32(g.relTab.len())
	for _, c := range []struct {
		col   []int32
		bound int32
		what  string
	}{{g.heads, nE, "head"}, {g.rels, nR, "relation"}, {g.tails, nE, "tail"}} {
		for i, v := range c.col {
			if uint32(v) >= uint32(c.bound) {
				return fmt.Errorf("triple %d: %s id %d out of range [0, %d)", i, c.what, uint32(v), c.bound)
			}
		}
	}
	var inOK bool
	every := checkEvery(len(g.outOff))
	wait := goIfLarge(len(g.heads), func() { inOK = checkCSR(g.inOff, g.inIdx, g.tails, g.rels, g.heads, every) })
	outOK := checkCSR(g.outOff, g.outIdx, g.heads, g.rels, g.tails, every)
	wait()
	if !outOK {
		return fmt.Errorf("out-adjacency does not match the triples (or a triple appears twice)")
	}
	if !inOK {
		return fmt.Errorf("in-adjacency does not match the triples")
	}
	return nil
}

// checkCSR checks a stored adjacency: offsets from 0 to the triple count,
// never decreasing, and row e holding exactly the triples whose key1 is e,
// in strictly increasing (key2, key3) order. That is the order sortCSR
// produces for a graph without duplicate triples, so a valid file is
// exactly what a fresh build would give; and since every row entry has
// key1 == its row and rows are strictly ordered, the rows are a
// permutation of the triple ids.
func checkCSR(off, idx, key1, key2, key3 []int32, every int) bool {
	n := len(key1)
	nE := len(off) - 1
	next := 0 // the next row whose triples are checked
	if off[0] != 0 || int(off[nE]) != n {
		return false
	}
	for e := int32(0); int(e) < nE; e++ {
		start, end := off[e], off[e+1]
		if start > end || int(end) > n {
			return false
		}
		if int(e) != next {
			continue
		}
		next += every
		for k := start; k < end; k++ {
			v := idx[k]
			if uint32(v) >= uint32(n) || key1[v] != e {
				return false
			}
			if k > start {
				prev := idx[k-1]
				if cmp2(key2[prev], key3[prev], key2[v], key3[v]) >= 0 {
					return false
				}
			}
		}
	}
	for _, v := range idx {
		if uint32(v) >= uint32(n) {
			return false
		}
	}
	return true
}

// fullChecks is the size up to which the per-name and per-row checks
// look at every name and row. They read the names and columns in hash
// and adjacency order, a cache miss each, which at 100M triples is tens
// of seconds; above it they look at sampledChecks of them, evenly spread,
// and every id is still checked to be in range, so a loaded graph never
// indexes out of range, and a file whose checksum holds but whose
// structure was forged can at worst make a lookup miss.
const (
	fullChecks    = 1 << 21
	sampledChecks = 1 << 18
)

// checkEvery returns the stride of the sampled checks over n items.
func checkEvery(n int) int {
	if n <= fullChecks {
		return 1
	}
	return n / sampledChecks
}
