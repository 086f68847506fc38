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
	if !slices.Equal(a.entNames, b.entNames) || !slices.Equal(a.relNames, b.relNames) {
		t.Fatal("name tables differ")
	}
	for _, p := range [][2][]int32{{a.heads, b.heads}, {a.rels, b.rels}, {a.tails, b.tails},
		{a.outOff, b.outOff}, {a.outIdx, b.outIdx}, {a.inOff, b.inOff}, {a.inIdx, b.inIdx}} {
		if !slices.Equal(p[0], p[1]) {
			t.Fatal("columns or adjacency differ")
		}
	}
	for i, n := range a.entNames {
		if id, ok := b.Entity(n); !ok || id != int32(i) {
			t.Fatalf("Entity(%q) = %d, %v", n, id, ok)
		}
	}
	for i, n := range a.relNames {
		if id, ok := b.Relation(n); !ok || id != int32(i) {
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

func TestSnapshotErrors(t *testing.T) {
	good := encode(t, sampleGraph(t))
	le := binary.LittleEndian
	nEnt := int(le.Uint32(good[10:]))
	entLens := headerSize
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
		{"newer version", patch(good, func(d []byte) { le.PutUint32(d[6:], SnapshotVersion+1) }), ErrNewerVersion, "format version 2, this build reads up to 1"},
		{"flipped version byte", func() []byte { d := slices.Clone(good); d[7] ^= 0x40; return d }(), ErrCorrupt, "the file is damaged (its version field reads"},
		{"version 0", patch(good, func(d []byte) { le.PutUint32(d[6:], 0) }), ErrCorrupt, "format version 0"},
		{"huge count", patch(good, func(d []byte) { le.PutUint32(d[10:], 1<<31) }), ErrCorrupt, "counts out of range"},
		{"huge blob", patch(good, func(d []byte) { le.PutUint64(d[30:], 1<<40) }), ErrCorrupt, "exceed the file size"},
		{"count mismatch", patch(good, func(d []byte) { le.PutUint32(d[10:], uint32(nEnt+1)) }), ErrCorrupt, "truncated"},
		{"head out of range", patch(good, func(d []byte) {
			heads := len(d) - 4 - 5*4*int(le.Uint32(d[18:]))
			le.PutUint32(d[heads:], uint32(nEnt))
		}), ErrCorrupt, "head id 6 out of range [0, 6)"},
		{"duplicate triple", patch(good, func(d []byte) {
			nT := int(le.Uint32(d[18:]))
			base := len(d) - 4 - 5*4*nT
			for c := 0; c < 3; c++ { // triple 1 := triple 0
				col := base + c*4*nT
				copy(d[col+4:col+8], d[col:col+4])
			}
		}), ErrCorrupt, "or a triple appears twice"},
		{"out-adjacency order", patch(good, func(d []byte) {
			nT := int(le.Uint32(d[18:]))
			out := len(d) - 4 - 2*4*nT // Barack_Obama's row starts the out order
			a, b := slices.Clone(d[out:out+4]), slices.Clone(d[out+4:out+8])
			copy(d[out:], b)
			copy(d[out+4:], a)
		}), ErrCorrupt, "out-adjacency does not match"},
		{"in-adjacency id out of range", patch(good, func(d []byte) {
			nT := int(le.Uint32(d[18:]))
			le.PutUint32(d[len(d)-4-4*nT:], uint32(nT))
		}), ErrCorrupt, "in-adjacency does not match"},
		{"in-adjacency wrong row", patch(good, func(d []byte) {
			nT := int(le.Uint32(d[18:]))
			in := len(d) - 4 - 4*nT
			copy(d[in:in+4], d[in+4*(nT-1):]) // last id (in the last row) put first
		}), ErrCorrupt, "in-adjacency does not match"},
		{"empty name", patch(good, func(d []byte) {
			// move entity 0's bytes to entity 1: lengths stay consistent in total
			l0, l1 := le.Uint32(d[entLens:]), le.Uint32(d[entLens+4:])
			le.PutUint32(d[entLens:], 0)
			le.PutUint32(d[entLens+4:], l0+l1)
		}), ErrCorrupt, "entity 0 has an empty name"},
		{"duplicate name", patch(good, func(d []byte) {
			// Split the bytes of entities 0 and 1 evenly and fill them with 'x',
			// so both names become the same string.
			blob := entLens + 4*nEnt
			l0 := int(le.Uint32(d[entLens:]))
			l1 := int(le.Uint32(d[entLens+4:]))
			tot := l0 + l1
			le.PutUint32(d[entLens:], uint32(tot/2))
			le.PutUint32(d[entLens+4:], uint32(tot-tot/2))
			for i := 0; i < tot; i++ {
				d[blob+i] = 'x'
			}
		}), ErrCorrupt, "appears twice"},
		{"name lengths overrun", patch(good, func(d []byte) { le.PutUint32(d[entLens:], 1<<30) }), ErrCorrupt, "overrun"},
		{"name lengths short", patch(good, func(d []byte) { le.PutUint32(d[entLens:], le.Uint32(d[entLens:])-1) }), ErrCorrupt, "blob bytes"},
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
