package kg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// graphsEqual compares everything a caller can observe.
func graphsEqual(t testing.TB, a, b *Graph) {
	t.Helper()
	if a.NumEntities() != b.NumEntities() || a.NumRelations() != b.NumRelations() ||
		a.NumTriples() != b.NumTriples() || a.Duplicates() != b.Duplicates() {
		t.Fatalf("counts differ: %v vs %v", a.Stats(0), b.Stats(0))
	}
	if !slices.Equal(a.ents.blob, b.ents.blob) || !slices.Equal(a.ents.off, b.ents.off) ||
		!slices.Equal(a.relTab.blob, b.relTab.blob) || !slices.Equal(a.relTab.off, b.relTab.off) {
		t.Fatal("name tables differ")
	}
	for _, p := range [][2][]int32{{a.heads, b.heads}, {a.rels, b.rels}, {a.tails, b.tails},
		{a.outOff, b.outOff}, {a.outIdx, b.outIdx}, {a.inOff, b.inOff}, {a.inIdx, b.inIdx}} {
		if !slices.Equal(p[0], p[1]) {
			t.Fatal("columns or adjacency differ")
		}
	}
	for i := int32(0); int(i) < a.NumEntities(); i++ {
		n := a.EntityName(i)
		if id, ok := b.Entity(n); !ok || id != i {
			t.Fatalf("Entity(%q) = %d, %v", n, id, ok)
		}
		if !slices.Equal(a.EntitiesByNorm(n), b.EntitiesByNorm(n)) {
			t.Fatalf("EntitiesByNorm(%q) = %v vs %v", n, a.EntitiesByNorm(n), b.EntitiesByNorm(n))
		}
	}
	for i := int32(0); int(i) < a.NumRelations(); i++ {
		n := a.RelationName(i)
		if id, ok := b.Relation(n); !ok || id != i {
			t.Fatalf("Relation(%q) = %d, %v", n, id, ok)
		}
	}
}

func encode(t testing.TB, g *Graph) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := EncodeSnapshot(&buf, g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sampleGraph(t testing.TB) *Graph {
	return build(t, "Barack_Obama born_in Honolulu", "Barack_Obama born_in Hawaii", "Honolulu located_in Hawaii",
		"Barack_Obama spouse Michelle_Obama", "Barack_Obama born_in Honolulu", "Michelle_Obama spouse Barack_Obama",
		"Café_Müller located_in Wuppertal")
}

func TestSnapshotRoundTrip(t *testing.T) {
	g := sampleGraph(t)
	path := filepath.Join(t.TempDir(), "g.kg")
	if err := WriteSnapshot(path, g); err != nil {
		t.Fatal(err)
	}
	h, err := ReadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	graphsEqual(t, g, h)
	if h.Duplicates() != 1 {
		t.Errorf("Duplicates = %d, want 1 (kept across the snapshot)", h.Duplicates())
	}
	checkInvariants(t, h)
	// The encoding is canonical: re-encoding the loaded graph gives the same bytes.
	data, _ := os.ReadFile(path)
	if !bytes.Equal(encode(t, h), data) {
		t.Error("re-encoded snapshot differs from the file")
	}
	// No temporary file is left beside it.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the snapshot", len(ents))
	}
}

// patch returns a copy of data with f applied and the CRC recomputed, so a
// test can reach the structural checks behind the checksum.
func patch(data []byte, f func(d []byte)) []byte {
	d := slices.Clone(data)
	f(d)
	binary.LittleEndian.PutUint32(d[len(d)-4:], crc32.Checksum(d[:len(d)-4], castagnoli))
	return d
}

// Section numbers of a version 2 snapshot, in file order (see the layout
// comment in snapshot.go).
const (
	secEntOff = iota
	secEntBlob
	secEntSlots
	secRelOff
	secRelBlob
	secRelSlots
	secHeads
	secRels
	secTails
	secOutOff
	secOutIdx
	secInOff
	secInIdx
	secNormSlots
	secNormOff
	secNormIDs
	secAliasOff
	secAliasBlob
	secAliasEnt
	secAliasSlots
	secAliasNormOff
	secAliasNormIDs
	numSections
)

// sections returns the byte offset and unpadded length of every section
// of the snapshot d, computed from its header (independently of
// snapHeader.sectionSizes).
func sections(d []byte) (at, size [numSections]int) {
	le := binary.LittleEndian
	h := func(k int) int { return int(le.Uint64(d[16+8*k:])) }
	nE, nR, nT := h(0), h(1), h(2)
	size = [numSections]int{4 * (nE + 1), h(4), 4 * h(6), 4 * (nR + 1), h(5), 4 * h(7),
		4 * nT, 4 * nT, 4 * nT, 4 * (nE + 1), 4 * nT, 4 * (nE + 1), 4 * nT, 4 * h(10), 4 * (h(8) + 1), 4 * h(9),
		4 * (h(11) + 1), h(12), 4 * h(11), 4 * h(15), 4 * (h(13) + 1), 4 * h(14)}
	off := headerSize
	for i, n := range size {
		at[i] = off
		off += (n + 7) &^ 7
	}
	return at, size
}

// u32At reads the k-th uint32 of section sec; putU32 writes it.
func u32At(d []byte, sec, k int) uint32 {
	at, _ := sections(d)
	return binary.LittleEndian.Uint32(d[at[sec]+4*k:])
}

func putU32(d []byte, sec, k int, v uint32) {
	at, _ := sections(d)
	binary.LittleEndian.PutUint32(d[at[sec]+4*k:], v)
}

// aliasGraph is a graph with aliases: a namesake's plain name and a
// machine id.
func aliasGraph(t testing.TB) *Graph {
	g := build(t, "Paris_(m.1) in France", "Paris_(m.2) in Texas")
	g.alias = newAliasIndex([]aliasEntry{{0, "Paris"}, {0, "m.1"}, {2, "Paris"}, {2, "m.2"}})
	return g
}

func TestSnapshotErrors(t *testing.T) {
	good := encode(t, sampleGraph(t))
	le := binary.LittleEndian
	nEnt := int(le.Uint64(good[16:]))
	nTri := int(le.Uint64(good[32:]))
	tests := []struct {
		name    string
		data    []byte
		wantErr error
		errMsg  string
	}{
		{"empty", nil, ErrCorrupt, "truncated"},
		{"magic prefix only", good[:4], ErrCorrupt, "truncated"},
		{"not a snapshot", []byte("a\tr\tb\n"), ErrCorrupt, `not a KG snapshot (no "STEMKG" magic)`},
		{"header cut", good[:20], ErrCorrupt, "truncated: 20 bytes, shorter than the header"},
		{"body cut", good[:len(good)-10], ErrCorrupt, "truncated"},
		{"trailing bytes", append(slices.Clone(good), 0), ErrCorrupt, "1 trailing bytes"},
		{"flipped bit", func() []byte { d := slices.Clone(good); d[len(d)-20] ^= 1; return d }(), ErrCorrupt, "checksum mismatch"},
		{"newer version", patch(good, func(d []byte) { le.PutUint32(d[6:], SnapshotVersion+1) }), ErrNewerVersion, "format version 4, this build reads up to 3"},
		{"version 1", patch(good, func(d []byte) { le.PutUint32(d[6:], 1) }), ErrOldVersion, "the snapshot is version 1, this stem reads version 3: rebuild it with 'stem kg build'"},
		{"version 2", patch(good, func(d []byte) { le.PutUint32(d[6:], 2) }), ErrOldVersion, "the snapshot is version 2, this stem reads version 3: rebuild it with 'stem kg build'"},
		{"flipped version byte", func() []byte { d := slices.Clone(good); d[7] ^= 0x40; return d }(), ErrCorrupt, "the file is damaged (its version field reads"},
		{"version 0", patch(good, func(d []byte) { le.PutUint32(d[6:], 0) }), ErrCorrupt, "format version 0"},
		{"huge count", patch(good, func(d []byte) { le.PutUint64(d[16:], 1<<31) }), ErrCorrupt, "counts out of range"},
		{"huge blob", patch(good, func(d []byte) { le.PutUint64(d[48:], 1<<40) }), ErrCorrupt, "exceed the file size"},
		{"count mismatch", patch(good, func(d []byte) { le.PutUint64(d[16:], uint64(nEnt+2)); le.PutUint64(d[64:], 16) }), ErrCorrupt, "the header promises"},
		{"slots past the range and keys", patch(good, func(d []byte) { le.PutUint64(d[64:], 15) }), ErrCorrupt, "entity hash index of 15 slots for 6 keys (want 8 to 14)"},
		{"too few slots", patch(good, func(d []byte) { le.PutUint64(d[64:], 4) }), ErrCorrupt, "entity hash index of 4 slots"},
		{"too many norm groups", patch(good, func(d []byte) { le.PutUint64(d[80:], uint64(nEnt+1)) }), ErrCorrupt, "normalised index of"},
		{"reserved header bytes", patch(good, func(d []byte) { d[150] = 1 }), ErrCorrupt, "reserved header bytes are not zero"},
		{"alias of no entity", patch(encode(t, aliasGraph(t)), func(d []byte) { putU32(d, secAliasEnt, 0, 99) }), ErrCorrupt, "alias 0 names entity 99"},
		{"alias group out of range", patch(encode(t, aliasGraph(t)), func(d []byte) { putU32(d, secAliasNormIDs, 0, 99) }), ErrCorrupt, "normalised-name group 0: id 99"},
		{"padding", patch(good, func(d []byte) {
			at, size := sections(d)
			for i := range size {
				if size[i]%8 != 0 {
					d[at[i]+size[i]] = 1
					return
				}
			}
			panic("no padded section in the sample")
		}), ErrCorrupt, "non-zero padding"},
		{"head out of range", patch(good, func(d []byte) { putU32(d, secHeads, 0, uint32(nEnt)) }), ErrCorrupt, "head id 6 out of range [0, 6)"},
		{"negative relation", patch(good, func(d []byte) { putU32(d, secRels, 0, 1<<31) }), ErrCorrupt, "relation id 2147483648 out of range"},
		{"duplicate triple", patch(good, func(d []byte) {
			for _, c := range []int{secHeads, secRels, secTails} { // triple 1 := triple 0
				putU32(d, c, 1, u32At(d, c, 0))
			}
		}), ErrCorrupt, "or a triple appears twice"},
		{"out-adjacency order", patch(good, func(d []byte) {
			a, b := u32At(d, secOutIdx, 0), u32At(d, secOutIdx, 1) // Barack_Obama's row starts the out order
			putU32(d, secOutIdx, 0, b)
			putU32(d, secOutIdx, 1, a)
		}), ErrCorrupt, "out-adjacency does not match"},
		{"out offsets backwards", patch(good, func(d []byte) { putU32(d, secOutOff, 1, uint32(nTri+5)) }), ErrCorrupt, "out-adjacency does not match"},
		{"out offsets do not start at 0", patch(good, func(d []byte) { putU32(d, secOutOff, 0, 1) }), ErrCorrupt, "out-adjacency does not match"},
		{"in-adjacency id out of range", patch(good, func(d []byte) { putU32(d, secInIdx, 0, uint32(nTri)) }), ErrCorrupt, "in-adjacency does not match"},
		{"in-adjacency wrong row", patch(good, func(d []byte) {
			putU32(d, secInIdx, 0, u32At(d, secInIdx, nTri-1)) // last id (in the last row) put first
		}), ErrCorrupt, "in-adjacency does not match"},
		{"empty name", patch(good, func(d []byte) { putU32(d, secEntOff, 1, 0) }), ErrCorrupt, "entity 0 has an empty name"},
		{"name offsets overrun", patch(good, func(d []byte) { putU32(d, secEntOff, nEnt, 1<<30) }), ErrCorrupt, "entity name offsets do not span their blob"},
		{"name offsets backwards", patch(good, func(d []byte) { putU32(d, secEntOff, 2, 1) }), ErrCorrupt, "entity 1 has an empty name (or offsets go backwards)"},
		{"duplicate name", patch(good, func(d []byte) {
			// Split the bytes of entities 0 and 1 evenly and fill them with
			// 'x', so both names become the same string; then rebuild the
			// hash index so that only the duplicate is wrong.
			at, size := sections(d)
			l0, l1 := int(u32At(d, secEntOff, 1)), int(u32At(d, secEntOff, 2))-int(u32At(d, secEntOff, 1))
			tot := l0 + l1
			putU32(d, secEntOff, 1, uint32(tot/2))
			for i := 0; i < tot; i++ {
				d[at[secEntBlob]+i] = 'x'
			}
			t := nameTable{blob: d[at[secEntBlob] : at[secEntBlob]+size[secEntBlob]]}
			for k := 0; k <= nEnt; k++ {
				t.off = append(t.off, u32At(d, secEntOff, k))
			}
			t.canonicalize()
			if len(t.slots) != size[secEntSlots]/4 {
				panic("the duplicate changed the hash index's length")
			}
			for k, v := range t.slots {
				putU32(d, secEntSlots, k, uint32(v))
			}
		}), ErrCorrupt, "appears twice"},
		{"hash slot out of range", patch(good, func(d []byte) {
			for k := 0; ; k++ {
				if int32(u32At(d, secEntSlots, k)) >= 0 {
					putU32(d, secEntSlots, k, uint32(nEnt+5))
					return
				}
			}
		}), ErrCorrupt, "out of range [0, 6)"},
		{"hash slot -2", patch(good, func(d []byte) {
			for k := 0; ; k++ {
				if int32(u32At(d, secEntSlots, k)) < 0 {
					putU32(d, secEntSlots, k, ^uint32(1))
					return
				}
			}
		}), ErrCorrupt, "holds -2"},
		{"name missing from the hash index", patch(good, func(d []byte) {
			for k := 0; ; k++ {
				if int32(u32At(d, secRelSlots, k)) >= 0 {
					putU32(d, secRelSlots, k, ^uint32(0))
					return
				}
			}
		}), ErrCorrupt, "relation hash index holds 2 of 3 keys"},
		{"name in the wrong slot", patch(good, func(d []byte) {
			for k := 1; ; k++ { // move an entry one slot back, before its home
				if v := u32At(d, secEntSlots, k); int32(v) >= 0 && int32(u32At(d, secEntSlots, k-1)) < 0 {
					putU32(d, secEntSlots, k, ^uint32(0))
					putU32(d, secEntSlots, k-1, v)
					return
				}
			}
		}), ErrCorrupt, "is not reachable from its hash slot"},
		{"name past an empty slot", patch(good, func(d []byte) {
			for k := 0; ; k++ { // move an entry one slot on, leaving its own slot empty
				if v := u32At(d, secEntSlots, k); int32(v) >= 0 && int32(u32At(d, secEntSlots, k+1)) < 0 {
					putU32(d, secEntSlots, k, ^uint32(0))
					putU32(d, secEntSlots, k+1, v)
					return
				}
			}
		}), ErrCorrupt, "is not reachable from its hash slot"},
		{"empty norm group", patch(good, func(d []byte) { putU32(d, secNormOff, 1, 0) }), ErrCorrupt, "normalised-name group 0 is empty"},
		{"norm id out of range", patch(good, func(d []byte) { putU32(d, secNormIDs, 0, uint32(nEnt)) }), ErrCorrupt, "normalised-name group 0: id 6"},
		{"norm id twice", patch(good, func(d []byte) { putU32(d, secNormIDs, 1, u32At(d, secNormIDs, 0)) }), ErrCorrupt, "is in two normalised-name groups"},
		{"norm group missing from its index", patch(good, func(d []byte) {
			_, size := sections(d)
			for k := 0; k < size[secNormSlots]/4; k++ {
				putU32(d, secNormSlots, k, ^uint32(0))
			}
		}), ErrCorrupt, "normalised-name hash index holds 0 of"},
		{"empty graph", encode(t, &Graph{outOff: []int32{0}, inOff: []int32{0}}), ErrEmpty, "has no triples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := DecodeSnapshot(tt.data, "g.kg")
			if g != nil || !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.errMsg) || !strings.HasPrefix(err.Error(), "g.kg: ") {
				t.Fatalf("err = %v, want %v containing %q and starting with the file name", err, tt.wantErr, tt.errMsg)
			}
		})
	}
}

// TestSnapshotV1 feeds a version 1 file (as the previous stem wrote it) to
// ReadSnapshot: it must be refused with a message to rebuild, naming it.
func TestSnapshotV1(t *testing.T) {
	v1 := []byte("STEMKG\x01\x00\x00\x00")
	v1 = append(v1, make([]byte, 3*4+3*8)...) // an empty v1 body is enough: the version is read first
	v1 = binary.LittleEndian.AppendUint32(v1, crc32.Checksum(v1, castagnoli))
	path := filepath.Join(t.TempDir(), "old.kg")
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadSnapshot(path)
	if !errors.Is(err, ErrOldVersion) || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), "rebuild it with 'stem kg build'") {
		t.Fatalf("err = %v, want ErrOldVersion naming %s", err, path)
	}
}

// TestSnapshotUnaligned decodes from a misaligned buffer, which must be
// copied rather than viewed in place.
func TestSnapshotUnaligned(t *testing.T) {
	g := sampleGraph(t)
	good := encode(t, g)
	buf := make([]byte, len(good)+1)
	copy(buf[1:], good)
	h, err := DecodeSnapshot(buf[1:], "odd.kg")
	if err != nil {
		t.Fatal(err)
	}
	graphsEqual(t, g, h)
	checkInvariants(t, h)
}

// TestSnapshotZeroCopy checks that a loaded graph answers name lookups
// (exact and normalised, from the stored indexes) without allocating.
func TestSnapshotZeroCopy(t *testing.T) {
	g := sampleGraph(t)
	path := filepath.Join(t.TempDir(), "g.kg")
	if err := WriteSnapshot(path, g); err != nil {
		t.Fatal(err)
	}
	h, err := ReadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = h.EntityName(1) }); n != 0 {
		t.Errorf("EntityName allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = h.Entity("Honolulu") }); n != 0 {
		t.Errorf("Entity allocates %v times", n)
	}
	if ids := h.EntitiesByNorm("barack obama"); len(ids) != 1 || h.EntityName(ids[0]) != "Barack_Obama" {
		t.Errorf("EntitiesByNorm(barack obama) = %v", ids)
	}
	if ids := h.EntitiesByNorm("CAFÉ müller"); len(ids) != 1 {
		t.Errorf("EntitiesByNorm(CAFÉ müller) = %v", ids)
	}
}

// TestSnapshotEveryTruncation cuts a snapshot at every length.
func TestSnapshotEveryTruncation(t *testing.T) {
	good := encode(t, sampleGraph(t))
	for n := 0; n < len(good); n++ {
		if _, err := DecodeSnapshot(good[:n], "g.kg"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d of %d: err = %v, want ErrCorrupt", n, len(good), err)
		}
	}
}

func TestReadSnapshotMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.kg")
	_, err := ReadSnapshot(path)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want not-exist naming %s", err, path)
	}
}

func TestWriteSnapshotEmpty(t *testing.T) {
	err := WriteSnapshot(filepath.Join(t.TempDir(), "e.kg"), &Graph{outOff: []int32{0}, inOff: []int32{0}})
	if !errors.Is(err, ErrEmpty) {
		t.Errorf("err = %v, want ErrEmpty", err)
	}
}

// Above fullChecks, a hash index's ids are checked by their count and
// sums, without a bitmap: a permutation passes, a repeated id does not.
func TestCheckPermutation(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 100, fullChecks + 5} {
		slots := emptySlots(n + n/4 + 1)
		for i := 0; i < n; i++ {
			slots[i] = int32(n - 1 - i)
		}
		if err := checkPermutation(slots, n); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if n >= 2 {
			slots[0] = slots[1]
			if err := checkPermutation(slots, n); err == nil {
				t.Fatalf("n=%d: a repeated id passed", n)
			}
		}
	}
}
