package kg

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/stem-kgqa/stem/internal/extsort"
)

// normFiles are the scratch files of a normalised-name index (slots,
// group offsets, grouped ids) and its counts.
type normFiles struct {
	slots, off, ids        string
	slotsLen, groups, nIDs int
}

// groupNorm groups the spilled (Normalize(name), id) records of n keys:
// per partition, in id order, the first id of a group names it; then the
// groups' hash index (canonical, by the group's key hash and its number,
// the rank of its first id) and its groups (the (first, id) pairs sorted)
// are written to scratch files named after prefix.
func (b *extBuild) groupNorm(ps *partSet, n int, prefix string) (normFiles, error) {
	var nf normFiles
	firsts := newRankBits(n)
	pairs := extsort.New(b.dir, 2, 2, int64(sortShare*float64(b.mem)))
	defer pairs.Close()
	hashes, err := createTemp(b.dir, prefix+"-hash")
	if err != nil {
		return nf, err
	}
	var groups keyGroups
	visit := func(data []byte) error {
		return groups.each(data, n, "normalised names", func(key []byte, id uint32) error {
			firsts.set(id)
			h := hashName(bytesView(key))
			if err := hashes.u32(uint32(h ^ h>>32)); err != nil {
				return err
			}
			nf.groups++
			return hashes.u32(id)
		}, func(id, first uint32) error {
			nf.nIDs++
			return pairs.Add(first, id)
		})
	}
	if err := ps.each(int64(partShare*float64(b.mem)), nil, visit, nil); err != nil {
		return nf, err
	}
	groups = keyGroups{}
	if err := hashes.finish(); err != nil {
		return nf, err
	}
	firsts.index()
	// The groups: offsets, then ids, in (first, id) order.
	it, err := pairs.Iter()
	if err != nil {
		return nf, err
	}
	defer it.Close()
	offs, err := createTemp(b.dir, prefix+"-off")
	if err != nil {
		return nf, err
	}
	ids, err := createTemp(b.dir, prefix+"-ids")
	if err != nil {
		return nf, err
	}
	if err := offs.u32(0); err != nil {
		return nf, err
	}
	k, prev := uint32(0), ^uint32(0)
	for {
		rec, ok := it.Next()
		if !ok {
			break
		}
		if rec[0] != prev && prev != ^uint32(0) {
			if err := offs.u32(k); err != nil {
				return nf, err
			}
		}
		prev = rec[0]
		if err := ids.u32(rec[1]); err != nil {
			return nf, err
		}
		k++
	}
	if err := it.Err(); err != nil {
		return nf, err
	}
	if k > 0 {
		if err := offs.u32(k); err != nil {
			return nf, err
		}
	}
	if err := offs.finish(); err != nil {
		return nf, err
	}
	if err := ids.finish(); err != nil {
		return nf, err
	}
	nf.off, nf.ids = offs.name, ids.name
	// The hash index of the groups.
	size := tableSize(nf.groups)
	slots := extsort.New(b.dir, 2, 2, int64(sortShare*float64(b.mem)))
	defer slots.Close()
	hr, err := openTemp(hashes.name)
	if err != nil {
		return nf, err
	}
	for {
		fold, err := hr.u32()
		if err == io.EOF {
			break
		}
		first, err2 := hr.u32()
		if err != nil || err2 != nil {
			hr.close()
			return nf, fmt.Errorf("build: %s: %w", hashes.name, errScratch)
		}
		if err := slots.Add(uint32((uint64(fold)*uint64(size))>>32), first); err != nil {
			hr.close()
			return nf, err
		}
	}
	hr.close()
	os.Remove(hashes.name)
	nf.slots, nf.slotsLen, err = b.sweep(prefix+"-slots", size, slots, firsts.rank)
	return nf, err
}

// normIndex groups the entities by their spilled normalised names.
func (b *extBuild) normIndex() error {
	nf, err := b.groupNorm(b.norm, b.nE, "norm")
	b.norm = nil
	b.normSlots, b.normOff, b.normIDs = nf.slots, nf.off, nf.ids
	b.normSlotsLen, b.normGroups, b.normN = nf.slotsLen, nf.groups, nf.nIDs
	return err
}

// readTriples streams a file of 3-word triples in blocks.
func readTriples(name string, visit func(block []uint32) error) error {
	t, err := openTemp(name)
	if err != nil {
		return err
	}
	defer t.close()
	buf := make([]byte, 12*(1<<14))
	words := make([]uint32, 3*(1<<14))
	for {
		n, err := io.ReadFull(t.r, buf)
		if n%12 != 0 {
			return fmt.Errorf("build: %s: %w", name, errScratch)
		}
		if n > 0 {
			w := words[:n/4]
			for i := range w {
				w[i] = binary.LittleEndian.Uint32(buf[4*i:])
			}
			if verr := visit(w); verr != nil {
				return verr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("build: read %s: %w", name, err)
		}
	}
}

// translate gives every triple its global ids, run by run, writing them
// to a scratch file and to the sorter of the out-adjacency.
func (b *extBuild) translate() error {
	tl := b.tl.name
	tg, err := createTemp(b.dir, "triples")
	if err != nil {
		return err
	}
	b.outSort = extsort.New(b.dir, 4, 3, int64(sortShare*float64(b.mem)))
	var (
		entMap, relMap []int32
		run            int
		left           = b.runTri[0]
		seq            uint32
		le             = binary.LittleEndian
		rec            [12]byte
	)
	load := func() error {
		if !b.ents.spilled() {
			return nil
		}
		var err error
		if entMap, err = b.ents.runMap(run, entMap); err != nil {
			return err
		}
		if b.merged > 0 {
			for i, t := range entMap {
				entMap[i] = int32(b.entID(uint32(t)))
			}
		}
		relMap, err = b.rels.runMap(run, relMap)
		return err
	}
	if err := load(); err != nil {
		return err
	}
	err = readTriples(tl, func(block []uint32) error {
		for i := 0; i < len(block); i += 3 {
			for left == 0 {
				run++
				if run >= len(b.runTri) {
					return fmt.Errorf("build: %s: %w", tl, errScratch)
				}
				left = b.runTri[run]
				if err := load(); err != nil {
					return err
				}
			}
			h, r, t := block[i], block[i+1], block[i+2]
			if entMap != nil {
				if int(h) >= len(entMap) || int(t) >= len(entMap) || int(r) >= len(relMap) {
					return fmt.Errorf("build: %s: %w", tl, errScratch)
				}
				h, r, t = uint32(entMap[h]), uint32(relMap[r]), uint32(entMap[t])
			}
			le.PutUint32(rec[0:], h)
			le.PutUint32(rec[4:], r)
			le.PutUint32(rec[8:], t)
			if err := tg.write(rec[:]); err != nil {
				return err
			}
			if err := b.outSort.Add(h, r, t, seq); err != nil {
				return err
			}
			seq++
			left--
		}
		if err := b.ctx.Err(); err != nil {
			return err
		}
		b.progress("ids", int64(seq), b.n)
		return nil
	})
	if err != nil {
		return err
	}
	if int64(seq) != b.n {
		return fmt.Errorf("build: %s holds %d of %d triples: %w", tl, seq, b.n, errScratch)
	}
	os.Remove(tl)
	b.tg = tg.name
	entMap, relMap = nil, nil
	return tg.finish()
}

// adjacency sorts the triples by (head, relation, tail), which drops the
// duplicates and gives the out-adjacency, then by (tail, relation, head)
// for the in-adjacency.
func (b *extBuild) adjacency() error {
	b.dropped = newRankBits(int(b.n))
	offs, err := createTemp(b.dir, "out-off")
	if err != nil {
		return err
	}
	seqs, err := createTemp(b.dir, "out-seq")
	if err != nil {
		return err
	}
	if err := b.csr(b.outSort, "sort out", offs, func(rec []uint32, prev []uint32, first bool) (bool, error) {
		if !first && rec[0] == prev[0] && rec[1] == prev[1] && rec[2] == prev[2] {
			b.dropped.set(rec[3])
			b.ndrop++
			return false, nil
		}
		return true, seqs.u32(rec[3])
	}); err != nil {
		return err
	}
	b.outSort = nil
	if err := seqs.finish(); err != nil {
		return err
	}
	b.dropped.index()
	b.outOff, b.outSeq = offs.name, seqs.name
	free()

	in := extsort.New(b.dir, 4, 3, int64(sortShare*float64(b.mem)))
	seq := uint32(0)
	err = readTriples(b.tg, func(block []uint32) error {
		for i := 0; i < len(block); i += 3 {
			if b.ndrop == 0 || !b.dropped.has(seq) {
				if err := in.Add(block[i+2], block[i+1], block[i], seq); err != nil {
					return err
				}
			}
			seq++
		}
		return b.ctx.Err()
	})
	if err != nil {
		in.Close()
		return err
	}
	if offs, err = createTemp(b.dir, "in-off"); err != nil {
		return err
	}
	ids, err := createTemp(b.dir, "in-idx")
	if err != nil {
		return err
	}
	if err := b.csr(in, "sort in", offs, func(rec []uint32, _ []uint32, _ bool) (bool, error) {
		return true, ids.u32(b.newID(rec[3]))
	}); err != nil {
		return err
	}
	b.inOff, b.inIdx = offs.name, ids.name
	free()
	return ids.finish()
}

// newID is the triple id of input triple seq once duplicates are gone.
func (b *extBuild) newID(seq uint32) uint32 {
	if b.ndrop == 0 {
		return seq
	}
	return seq - b.dropped.rank(seq)
}

// csr reads a sorter of (row, key2, key3, seq) records, calling keep for
// each (with the previous record); it writes the rows' offsets (nE+1,
// counting the records keep keeps) to offs.
func (b *extBuild) csr(s *extsort.Sorter, phase string, offs *tempFile, keep func(rec, prev []uint32, first bool) (bool, error)) error {
	it, err := s.Iter()
	if err != nil {
		s.Close()
		return err
	}
	defer it.Close()
	var (
		prev    = make([]uint32, 4)
		first   = true
		written = uint32(0) // offsets written
		kept    = uint32(0)
		seen    int64
	)
	for {
		rec, ok := it.Next()
		if !ok {
			break
		}
		if seen++; seen%(1<<20) == 0 {
			if err := b.ctx.Err(); err != nil {
				return err
			}
			b.progress(phase, seen, s.Len())
		}
		k, err := keep(rec, prev, first)
		if err != nil {
			return err
		}
		copy(prev, rec)
		first = false
		if !k {
			continue
		}
		for ; written <= rec[0]; written++ {
			if err := offs.u32(kept); err != nil {
				return err
			}
		}
		kept++
	}
	if err := it.Err(); err != nil {
		return err
	}
	for ; int(written) <= b.nE; written++ {
		if err := offs.u32(kept); err != nil {
			return err
		}
	}
	b.progress(phase, s.Len(), s.Len())
	return offs.finish()
}
