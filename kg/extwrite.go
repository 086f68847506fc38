package kg

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/stem-kgqa/stem/atomicfile"
)

// write assembles the snapshot from the scratch files, in the layout's
// order (see snapshot.go), atomically.
func (b *extBuild) write(out string) (int64, error) {
	nT := int(b.n) - b.ndrop
	h := snapHeader{nEnt: uint64(b.nE), nRel: uint64(b.nR), nTri: uint64(nT), dups: uint64(b.ndrop),
		entBytes: uint64(b.entBytes), relBytes: uint64(b.relBytes), entSlots: uint64(b.entSlotsLen), relSlots: uint64(b.relSlotsLen),
		normGroups: uint64(b.normGroups), normIDs: uint64(b.normN), normSlots: uint64(b.normSlotsLen),
		nAlias: uint64(b.aliases.nAlias), aliasBytes: uint64(b.aliases.bytes), aliasGroups: uint64(b.aliases.groups),
		aliasIDs: uint64(b.aliases.ids), aliasSlots: uint64(b.aliases.slotsLen)}
	counts := []uint64{h.nEnt, h.nRel, h.nTri, h.dups, h.entBytes, h.relBytes, h.entSlots, h.relSlots,
		h.normGroups, h.normIDs, h.normSlots, h.nAlias, h.aliasBytes, h.aliasGroups, h.aliasIDs, h.aliasSlots}
	sizes, total := h.sectionSizes()
	err := atomicfile.Write(out, 0o644, func(w io.Writer) error {
		cw := &crcWriter{w: w, buf: make([]byte, 0, 1<<20)}
		tick := func() error {
			if err := b.ctx.Err(); err != nil {
				return err
			}
			b.progress("write", cw.n, int64(total))
			return nil
		}
		var hb [headerSize]byte
		copy(hb[:], snapshotMagic)
		le := binary.LittleEndian
		le.PutUint32(hb[6:], SnapshotVersion)
		for i, v := range counts {
			le.PutUint64(hb[16+8*i:], v)
		}
		cw.bytes(hb[:])
		files := [][]string{
			{b.entOff, b.entBlob, b.entSlots, b.relOff, b.relBlob, b.relSlots},
			{b.outOff},
			append([]string{b.inOff, b.inIdx, b.normSlots, b.normOff, b.normIDs}, b.aliases.files...),
		}
		section := 0
		copyFiles := func(names []string) error {
			for _, name := range names {
				n, err := b.copySection(cw, name, tick)
				if err != nil {
					return err
				}
				if uint64(n) != sizes[section] {
					return fmt.Errorf("build: section %d (%s) has %d bytes, want %d: %w", section, name, n, sizes[section], errScratch)
				}
				section++
			}
			return nil
		}
		if err := copyFiles(files[0]); err != nil {
			return err
		}
		for col := 0; col < 3; col++ {
			if err := b.column(cw, col, tick); err != nil {
				return err
			}
			section++
		}
		if err := copyFiles(files[1]); err != nil {
			return err
		}
		if err := b.outIdx(cw, tick); err != nil {
			return err
		}
		section++
		if err := copyFiles(files[2]); err != nil {
			return err
		}
		if uint64(cw.n)+4 != total || section != len(sizes) {
			return fmt.Errorf("build: wrote %d bytes, the header promises %d: %w", cw.n+4, total, errScratch)
		}
		cw.u32Raw(cw.crc)
		if err := cw.flush(); err != nil {
			return err
		}
		b.progress("write", int64(total), int64(total))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("build %s: %w", out, err)
	}
	dropCached(out)
	return int64(total), nil
}

// copySection appends a scratch file to the snapshot, padded, and
// returns its length, removing it.
func (b *extBuild) copySection(cw *crcWriter, name string, tick func() error) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, fmt.Errorf("build: %w", err)
	}
	defer func() {
		f.Close()
		os.Remove(name)
	}()
	buf := make([]byte, 1<<20)
	var n int64
	for {
		k, err := f.Read(buf)
		if k > 0 {
			cw.bytes(buf[:k])
			n += int64(k)
			if cw.err != nil {
				return n, cw.err
			}
			if err := tick(); err != nil {
				return n, err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, fmt.Errorf("build: read %s: %w", name, err)
		}
	}
	cw.pad()
	return n, cw.err
}

// column writes one of the triple columns (0 heads, 1 relations, 2 tails)
// in triple-id order, duplicates left out.
func (b *extBuild) column(cw *crcWriter, col int, tick func() error) error {
	out := make([]uint32, 0, 1<<14)
	seq := uint32(0)
	n := 0
	err := readTriples(b.tg, func(block []uint32) error {
		out = out[:0]
		for i := 0; i < len(block); i += 3 {
			if b.ndrop == 0 || !b.dropped.has(seq) {
				out = append(out, block[i+col])
			}
			seq++
		}
		cw.words(out)
		n += len(out)
		if cw.err != nil {
			return cw.err
		}
		return tick()
	})
	if err != nil {
		return err
	}
	if n != int(b.n)-b.ndrop {
		return fmt.Errorf("build: column %d has %d triples, want %d: %w", col, n, int(b.n)-b.ndrop, errScratch)
	}
	cw.pad()
	if col == 2 {
		os.Remove(b.tg)
	}
	return cw.err
}

// outIdx writes the out-adjacency's triple ids: the sorted input
// positions, renumbered without the duplicates.
func (b *extBuild) outIdx(cw *crcWriter, tick func() error) error {
	t, err := openTemp(b.outSeq)
	if err != nil {
		return err
	}
	defer func() {
		t.close()
		os.Remove(b.outSeq)
	}()
	out := make([]uint32, 0, 1<<14)
	n := 0
	for {
		seq, err := t.u32()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		out = append(out, b.newID(seq))
		if len(out) == cap(out) {
			cw.words(out)
			n += len(out)
			out = out[:0]
			if err := tick(); err != nil {
				return err
			}
		}
	}
	cw.words(out)
	n += len(out)
	if n != int(b.n)-b.ndrop {
		return fmt.Errorf("build: out-adjacency has %d triples, want %d: %w", n, int(b.n)-b.ndrop, errScratch)
	}
	cw.pad()
	return cw.err
}

// words appends uint32s as little-endian bytes, without padding.
func (c *crcWriter) words(w []uint32) { writeWords(c, w) }

// Write makes a crcWriter an io.Writer; errors stay in c.err.
func (c *crcWriter) Write(p []byte) (int, error) {
	c.bytes(p)
	return len(p), c.err
}
