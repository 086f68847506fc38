package kg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/stem-kgqa/stem/atomicfile"
)

// Snapshot layout (all integers little-endian):
//
//	magic      "STEMKG" (6 bytes)
//	version    uint32 (SnapshotVersion)
//	nEnt, nRel, nTri uint32
//	dups       uint64   duplicate lines dropped when the graph was built
//	entBytes, relBytes uint64   lengths of the two name blobs
//	entLens    nEnt x uint32, then the entity name blob (entBytes)
//	relLens    nRel x uint32, then the relation name blob (relBytes)
//	heads, rels, tails   nTri x uint32 each
//	outIdx, inIdx        nTri x uint32 each: triple ids by head and by tail
//	crc        uint32   CRC-32C (Castagnoli) of every byte before it
//
// The CSR row offsets are recounted from the columns on load, and the
// stored orders are checked in one pass each (every row holds triples of
// its own entity in strictly increasing (relation, other end) order), which
// is about half the cost of sorting them again. The strict order also rules
// out duplicate triples.
const (
	snapshotMagic = "STEMKG"
	// SnapshotVersion is the snapshot layout this build writes; it reads
	// this version and older ones.
	SnapshotVersion = 1
	headerSize      = 6 + 4 + 3*4 + 3*8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteSnapshot writes g to path in the binary snapshot format, atomically
// (see package atomicfile), so a crash never leaves a torn snapshot.
func WriteSnapshot(path string, g *Graph) error {
	if g.NumTriples() == 0 {
		return fmt.Errorf("write snapshot %s: %w", path, ErrEmpty)
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return EncodeSnapshot(w, g) })
}

// EncodeSnapshot writes g's snapshot to w. It streams, so the graph is not
// duplicated in memory.
func EncodeSnapshot(w io.Writer, g *Graph) error {
	cw := &crcWriter{w: w, buf: make([]byte, 0, 64<<10)}
	var entBytes, relBytes uint64
	for _, s := range g.entNames {
		entBytes += uint64(len(s))
	}
	for _, s := range g.relNames {
		relBytes += uint64(len(s))
	}
	cw.bytes([]byte(snapshotMagic))
	cw.u32(SnapshotVersion)
	cw.u32(uint32(len(g.entNames)))
	cw.u32(uint32(len(g.relNames)))
	cw.u32(uint32(len(g.heads)))
	cw.u64(uint64(g.dups))
	cw.u64(entBytes)
	cw.u64(relBytes)
	for _, names := range [][]string{g.entNames, g.relNames} {
		for _, s := range names {
			if uint64(len(s)) > math.MaxUint32 {
				return fmt.Errorf("encode snapshot: name of %d bytes: %w", len(s), ErrTooLarge)
			}
			cw.u32(uint32(len(s)))
		}
		for _, s := range names {
			cw.str(s)
		}
	}
	for _, col := range [][]int32{g.heads, g.rels, g.tails, g.outIdx, g.inIdx} {
		for _, v := range col {
			cw.u32(uint32(v))
		}
	}
	sum := cw.crc
	cw.u32Raw(sum)
	return cw.flush()
}

// crcWriter buffers output and keeps a running CRC of it.
type crcWriter struct {
	w   io.Writer
	buf []byte
	crc uint32
	err error
}

func (c *crcWriter) room(n int) {
	if len(c.buf)+n > cap(c.buf) {
		c.flush()
	}
}

func (c *crcWriter) flush() error {
	if c.err == nil && len(c.buf) > 0 {
		_, c.err = c.w.Write(c.buf)
	}
	c.buf = c.buf[:0]
	return c.err
}

func (c *crcWriter) u32(v uint32) {
	c.room(4)
	c.buf = binary.LittleEndian.AppendUint32(c.buf, v)
	c.crc = crc32.Update(c.crc, castagnoli, c.buf[len(c.buf)-4:])
}

// u32Raw appends v without adding it to the CRC (the checksum itself).
func (c *crcWriter) u32Raw(v uint32) {
	c.room(4)
	c.buf = binary.LittleEndian.AppendUint32(c.buf, v)
}

func (c *crcWriter) u64(v uint64) {
	c.room(8)
	c.buf = binary.LittleEndian.AppendUint64(c.buf, v)
	c.crc = crc32.Update(c.crc, castagnoli, c.buf[len(c.buf)-8:])
}

func (c *crcWriter) bytes(b []byte) {
	for len(b) > 0 {
		c.room(1)
		n := min(len(b), cap(c.buf)-len(c.buf))
		c.buf = append(c.buf, b[:n]...)
		c.crc = crc32.Update(c.crc, castagnoli, b[:n])
		b = b[n:]
	}
}

func (c *crcWriter) str(s string) {
	for len(s) > 0 {
		c.room(1)
		n := min(len(s), cap(c.buf)-len(c.buf))
		c.buf = append(c.buf, s[:n]...)
		c.crc = crc32.Update(c.crc, castagnoli, c.buf[len(c.buf)-n:])
		s = s[n:]
	}
}

// ReadSnapshot loads a snapshot written by WriteSnapshot. The file is read
// in one call and checked (magic, version, section lengths, CRC-32C, id
// ranges, unique names, no duplicate triples) before any of it is trusted.
func ReadSnapshot(path string) (*Graph, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	return DecodeSnapshot(data, path)
}

// DecodeSnapshot builds a graph from snapshot bytes; name labels errors.
// It never panics, whatever the bytes, and does not retain data.
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
	if len(data) < headerSize+4 {
		return nil, corrupt("truncated: %d bytes, shorter than the header", len(data))
	}
	le := binary.LittleEndian
	d := data[len(snapshotMagic):]
	version := le.Uint32(d)
	switch {
	case version > SnapshotVersion && crc32.Checksum(data[:len(data)-4], castagnoli) != le.Uint32(data[len(data)-4:]):
		// A newer writer keeps the trailing checksum; a version field that
		// fails it is a damaged file, not a reason to upgrade.
		return nil, corrupt("checksum mismatch: the file is damaged (its version field reads %d)", version)
	case version > SnapshotVersion:
		return nil, fmt.Errorf("%s: %w: format version %d, this build reads up to %d (upgrade stem, or rebuild the snapshot with `stem kg build`)",
			name, ErrNewerVersion, version, SnapshotVersion)
	case version == 0:
		return nil, corrupt("format version 0")
	}
	nEnt, nRel, nTri := uint64(le.Uint32(d[4:])), uint64(le.Uint32(d[8:])), uint64(le.Uint32(d[12:]))
	dups, entBytes, relBytes := le.Uint64(d[16:]), le.Uint64(d[24:]), le.Uint64(d[32:])
	if nEnt > maxID || nRel > maxID || nTri > maxID || dups > maxID {
		return nil, corrupt("counts out of range (%d entities, %d relations, %d triples, %d duplicates)", nEnt, nRel, nTri, dups)
	}
	if entBytes > uint64(len(data)) || relBytes > uint64(len(data)) {
		return nil, corrupt("name blob lengths (%d, %d) exceed the file size %d", entBytes, relBytes, len(data))
	}
	want := uint64(headerSize) + 4*nEnt + entBytes + 4*nRel + relBytes + 20*nTri + 4
	if uint64(len(data)) < want {
		return nil, corrupt("truncated: %d bytes, the header promises %d", len(data), want)
	}
	if uint64(len(data)) > want {
		return nil, corrupt("%d trailing bytes after the checksum", uint64(len(data))-want)
	}
	body := data[:len(data)-4]
	if got, stored := crc32.Checksum(body, castagnoli), le.Uint32(data[len(data)-4:]); got != stored {
		return nil, corrupt("checksum mismatch (stored %08x, computed %08x)", stored, got)
	}
	if nTri == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrEmpty)
	}

	// Section offsets; the size check above guarantees they are in bounds.
	entLensAt := headerSize
	entBlobAt := entLensAt + 4*int(nEnt)
	relLensAt := entBlobAt + int(entBytes)
	relBlobAt := relLensAt + 4*int(nRel)
	colsAt := relBlobAt + int(relBytes)

	readNames := func(lensAt, blobAt int, n, blobLen uint64, what string) ([]string, map[string]int32, error) {
		lens := data[lensAt : lensAt+4*int(n)]
		blob := string(data[blobAt : blobAt+int(blobLen)]) // one allocation; names are substrings of it
		names := make([]string, n)
		index := make(map[string]int32, n)
		at := uint64(0)
		for i := range names {
			l := uint64(le.Uint32(lens[4*i:]))
			if l == 0 {
				return nil, nil, corrupt("%s %d has an empty name", what, i)
			}
			if at+l > blobLen {
				return nil, nil, corrupt("%s names overrun their blob", what)
			}
			s := blob[at : at+l]
			at += l
			index[s] = int32(i)
			if len(index) != i+1 { // one hash operation instead of a lookup and an insert
				return nil, nil, corrupt("%s name %q appears twice", what, s)
			}
			names[i] = s
		}
		if at != blobLen {
			return nil, nil, corrupt("%s names use %d of %d blob bytes", what, at, blobLen)
		}
		return names, index, nil
	}
	g := &Graph{dups: int(dups)}
	// The entity name map is the largest single cost of a load; build it
	// on another core while the columns are decoded and indexed.
	var entErr error
	waitEnt := goIfLarge(int(nEnt+nTri), func() {
		g.entNames, g.entIndex, entErr = readNames(entLensAt, entBlobAt, nEnt, entBytes, "entity")
	})
	relNames, relIndex, relErr := readNames(relLensAt, relBlobAt, nRel, relBytes, "relation")
	readCol := func(c int, bound uint64, what string) ([]int32, error) {
		col := make([]int32, nTri)
		src := data[colsAt+c*4*int(nTri):]
		for i := range col {
			v := le.Uint32(src[4*i:])
			if uint64(v) >= bound {
				return nil, corrupt("triple %d: %s id %d out of range [0, %d)", i, what, v, bound)
			}
			col[i] = int32(v)
		}
		return col, nil
	}
	heads, err := readCol(0, nEnt, "head")
	var rels, tails []int32
	if err == nil {
		rels, err = readCol(1, nRel, "relation")
	}
	if err == nil {
		tails, err = readCol(2, nEnt, "tail")
	}
	if err == nil && relErr == nil {
		g.heads, g.rels, g.tails = heads, rels, tails
		adj := data[colsAt+3*4*int(nTri):]
		var inOK, outOK bool
		waitIn := goIfLarge(int(nTri), func() {
			g.inOff, g.inIdx, inOK = loadCSR(adj[4*int(nTri):], tails, rels, heads, int(nEnt))
		})
		g.outOff, g.outIdx, outOK = loadCSR(adj, heads, rels, tails, int(nEnt))
		waitIn()
		if !outOK {
			err = corrupt("out-adjacency does not match the triples (or a triple appears twice)")
		} else if !inOK {
			err = corrupt("in-adjacency does not match the triples")
		}
	}
	waitEnt()
	switch {
	case entErr != nil:
		return nil, entErr
	case relErr != nil:
		return nil, relErr
	case err != nil:
		return nil, err
	}
	g.relNames, g.relIndex = relNames, relIndex
	return g, nil
}

// loadCSR decodes a stored adjacency order and checks it: row e (counted
// from key1) must hold exactly the triples whose key1 is e, in strictly
// increasing (key2, key3) order. That is the order sortCSR produces for a
// graph without duplicate triples, so a valid file decodes to exactly what
// a fresh build would give.
func loadCSR(src []byte, key1, key2, key3 []int32, nE int) (off, idx []int32, ok bool) {
	n := len(key1)
	off = make([]int32, nE+1)
	for _, k := range key1 {
		off[k+1]++
	}
	for e := 0; e < nE; e++ {
		off[e+1] += off[e]
	}
	idx = make([]int32, n)
	for e := int32(0); int(e) < nE; e++ {
		start, end := int(off[e]), int(off[e+1])
		for k := start; k < end; k++ {
			v := binary.LittleEndian.Uint32(src[4*k:])
			if uint64(v) >= uint64(n) || key1[v] != e {
				return nil, nil, false
			}
			if k > start {
				prev := idx[k-1]
				if cmp2(key2[prev], key3[prev], key2[v], key3[v]) >= 0 {
					return nil, nil, false
				}
			}
			idx[k] = int32(v)
		}
	}
	return off, idx, true
}
