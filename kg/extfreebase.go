package kg

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/stem-kgqa/stem/internal/extsort"
)

// The Freebase path of BuildSnapshot (FormatFreebase in bounded memory).
// Name literals are spilled by literal (labels), which counts the
// entities carrying each; the counted names are spilled again by machine
// id (labelsByMid) into as many partitions as the entity dictionary, so
// that resolving a dictionary partition can give its ids their names from
// one label partition in memory. Terms whose names coincide are then
// merged (mergeNamesakes) before ids are final.

// addLabel takes one name line of the dump: a name goes to be counted,
// an alias straight to its machine id's partition.
func (b *extBuild) addLabel(mid, lit []byte, tagged, alias bool) error {
	b.key = append(append(b.key[:0], tagByte(tagged)), lit...)
	if alias {
		return b.labelsByMid.add(internHash(bytesView(mid)), mid, b.key, 0, labelAlias)
	}
	return b.labels.add(internHash(bytesView(b.key)), b.key, mid, 0, 0)
}

// The kinds of labelsByMid's records (their second word).
const (
	labelName  = 0
	labelAlias = 1
)

func tagByte(tagged bool) byte {
	if tagged {
		return 'e'
	}
	return 'p'
}

// countLabels counts the distinct entities carrying each name literal and
// spills (machine id, literal, count) by machine id.
func (b *extBuild) countLabels() error {
	byMid := b.labelsByMid
	var lits, mids nameTable
	var pairs, tmp []uint32
	visit := func(data []byte) error {
		if lits.off == nil {
			lits, mids = newNameTable(), newNameTable()
		} else {
			lits.reset()
			mids.reset()
		}
		pairs = pairs[:0]
		rr := recReader{data: data}
		for rr.more() {
			k, m := rr.str(), rr.str()
			rr.u32()
			rr.u32()
			if rr.bad || len(k) == 0 {
				return fmt.Errorf("build: names: %w", errScratch)
			}
			pairs = append(pairs, uint32(lits.intern(bytesView(k))), uint32(mids.intern(bytesView(m))))
		}
		if cap(tmp) < len(pairs) {
			tmp = make([]uint32, len(pairs))
		}
		sorted := extsort.Sort(pairs, tmp[:len(pairs)], 2, 2)
		for i := 0; i < len(sorted); {
			j := i
			n := uint32(0)
			for ; j < len(sorted) && sorted[j] == sorted[i]; j += 2 {
				if j == i || sorted[j+1] != sorted[j-1] {
					n++
				}
			}
			for k := i; k < j; k += 2 {
				if k > i && sorted[k+1] == sorted[k-1] {
					continue // the same entity twice
				}
				mid := stringBytes(mids.name(int32(sorted[k+1])))
				if err := byMid.add(internHash(bytesView(mid)), mid, stringBytes(lits.name(int32(sorted[k]))), n, 0); err != nil {
					return err
				}
			}
			i = j
		}
		return nil
	}
	if err := b.labels.finish(); err != nil {
		return err
	}
	if err := b.labels.each(int64(partShare*float64(b.mem)), nil, visit, func(p, n int64) { b.progress("labels", p, n) }); err != nil {
		return err
	}
	b.labels = nil
	return byMid.finish()
}

// partLabels is one partition of labelsByMid in memory: each machine id's
// chosen name and its carrier count (freebaseLabels), and all its names
// and aliases.
type partLabels struct {
	data  []byte
	mids  nameTable
	best  [][]byte // per mid: tag byte + literal, nil for none
	count []uint32
	first []int32 // per mid: its first record in lits, -1 for none
	lits  [][]byte
	next  []int32 // per record: the mid's next one, -1 at the end
}

func (l *partLabels) load(name string) error {
	data, err := readAll(name)
	if err != nil {
		return err
	}
	if l.mids.off == nil {
		l.mids = newNameTable()
	} else {
		l.mids.reset()
	}
	l.data, l.best, l.count, l.first, l.lits, l.next = data, l.best[:0], l.count[:0], l.first[:0], l.lits[:0], l.next[:0]
	rr := recReader{data: data}
	for rr.more() {
		mid, lit := rr.str(), rr.str()
		n, kind := rr.u32(), rr.u32()
		if rr.bad || len(lit) == 0 || kind > labelAlias {
			return fmt.Errorf("build: %s: %w", name, errScratch)
		}
		n0 := l.mids.len()
		id := l.mids.intern(bytesView(mid))
		if l.mids.len() > n0 {
			l.best = append(l.best, nil)
			l.count = append(l.count, 0)
			l.first = append(l.first, -1)
		}
		l.lits = append(l.lits, lit[1:])
		l.next = append(l.next, l.first[id])
		l.first[id] = int32(len(l.lits) - 1)
		if kind != labelName {
			continue
		}
		if b := l.best[id]; b == nil || betterLabel(lit[1:], lit[0] == 'e', b[1:], b[0] == 'e') {
			l.best[id], l.count[id] = lit, n
		}
	}
	return nil
}

func (l *partLabels) label(mid []byte) ([]byte, uint32, bool) {
	id, ok := l.mids.find(bytesView(mid))
	if !ok || l.best[id] == nil {
		return nil, 0, false
	}
	return l.best[id][1:], l.count[id], true
}

// each yields the names and aliases of mid.
func (l *partLabels) each(mid []byte, yield func(lit []byte) error) error {
	id, ok := l.mids.find(bytesView(mid))
	if !ok {
		return nil
	}
	for r := l.first[id]; r >= 0; r = l.next[r] {
		if err := yield(l.lits[r]); err != nil {
			return err
		}
	}
	return nil
}

// freebaseNames sets the entity dictionary up to name machine ids by
// their labels as it resolves, and to record their aliases (by run and
// local id, until ids are final) in the aliases scratch file.
func (b *extBuild) freebaseNames() error {
	var labels partLabels
	raw, err := createTemp(b.dir, "aliases-raw")
	if err != nil {
		return err
	}
	b.aliasRaw = raw
	b.ents.enter = func(p int) error { return labels.load(b.labelsByMid.files[p].name) }
	b.ents.display = func(dst, key []byte) []byte { return b.dialect.display(dst, key, &labels) }
	b.ents.defined = func(run, l uint32, key, shown []byte) error {
		return b.dialect.aliases(key, shown, func(yield func([]byte) error) error { return labels.each(key, yield) }, func(alias []byte) error {
			if err := raw.u32(run); err != nil {
				return err
			}
			if err := raw.u32(l); err != nil {
				return err
			}
			b.nAliasRaw++
			return raw.str(alias)
		})
	}
	return nil
}

// aliasSections gives the recorded aliases their entity ids and writes
// the alias sections: entries sorted by (entity, alias) and deduplicated,
// one range of entities at a time, then their normalised-name index.
func (b *extBuild) aliasSections() error {
	if err := b.aliasRaw.finish(); err != nil {
		return err
	}
	// Ranges of entities holding about a partition's share of memory each.
	raw, err := os.Stat(b.aliasRaw.name)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	parts := int(min(max(raw.Size()*3/int64(partShare*float64(b.mem)), 1), 4096))
	ranges := make([]*tempFile, parts)
	for p := range ranges {
		if ranges[p], err = createTempSize(b.dir, fmt.Sprintf("aliases-%d", p), 64<<10); err != nil {
			return err
		}
	}
	t, err := openTemp(b.aliasRaw.name)
	if err != nil {
		return err
	}
	var buf []byte
	for {
		run, err := t.u32()
		if err == io.EOF {
			break
		}
		l, err2 := t.u32()
		ln, err3 := binary.ReadUvarint(t.r)
		if err != nil || err2 != nil || err3 != nil || int(run) >= len(b.ents.runs) || int(l) >= b.ents.runs[run] || !b.ents.news[run].has(l) || ln > MaxLineBytes {
			t.close()
			return fmt.Errorf("build: %s: %w", b.aliasRaw.name, errScratch)
		}
		buf = slices.Grow(buf[:0], int(ln))[:ln]
		if _, err := io.ReadFull(t.r, buf); err != nil {
			t.close()
			return fmt.Errorf("build: %s: %w", b.aliasRaw.name, errScratch)
		}
		eid := b.entID(uint32(b.ents.id(int(run), l)))
		if err := writeRec(ranges[int(uint64(eid)*uint64(parts)/uint64(b.nE))], nil, buf, eid, 0); err != nil {
			t.close()
			return err
		}
	}
	t.close()
	os.Remove(b.aliasRaw.name)
	off, err := createTemp(b.dir, "alias-off")
	if err != nil {
		return err
	}
	blob, err := createTemp(b.dir, "alias-blob")
	if err != nil {
		return err
	}
	ents, err := createTemp(b.dir, "alias-ent")
	if err != nil {
		return err
	}
	if err := off.u32(0); err != nil {
		return err
	}
	norm, err := newPartSet(b.dir, "alias-norm", 0, 1<<20)
	if err != nil {
		return err
	}
	type entry struct {
		ent  uint32
		name []byte
	}
	var (
		entries []entry
		n       uint32
		nbuf    []byte
	)
	for _, f := range ranges {
		if err := f.finish(); err != nil {
			return err
		}
		data, err := readAll(f.name)
		if err != nil {
			return err
		}
		os.Remove(f.name)
		entries = entries[:0]
		rr := recReader{data: data}
		for rr.more() {
			rr.str()
			name := rr.str()
			e := rr.u32()
			rr.u32()
			if rr.bad || int(e) >= b.nE {
				return fmt.Errorf("build: aliases: %w", errScratch)
			}
			entries = append(entries, entry{e, name})
		}
		slices.SortFunc(entries, func(x, y entry) int {
			if c := cmp.Compare(x.ent, y.ent); c != 0 {
				return c
			}
			return bytes.Compare(x.name, y.name)
		})
		entries = slices.CompactFunc(entries, func(x, y entry) bool { return x.ent == y.ent && bytes.Equal(x.name, y.name) })
		for _, e := range entries {
			if err := blob.write(e.name); err != nil {
				return err
			}
			if blob.n > math.MaxUint32 {
				return fmt.Errorf("build %s: %w: aliases take more than 4 GiB", b.in, ErrTooLarge)
			}
			if err := off.u32(uint32(blob.n)); err != nil {
				return err
			}
			if err := ents.u32(e.ent); err != nil {
				return err
			}
			nbuf = appendNormalize(nbuf[:0], bytesView(e.name))
			if len(nbuf) > 0 {
				if err := norm.add(internHash(bytesView(nbuf)), nbuf, nil, n, 0); err != nil {
					return err
				}
			}
			n++
		}
	}
	for _, f := range []*tempFile{off, blob, ents} {
		if err := f.finish(); err != nil {
			return err
		}
	}
	if err := norm.finish(); err != nil {
		return err
	}
	nf, err := b.groupNorm(norm, int(n), "alias-norm")
	if err != nil {
		return err
	}
	b.aliases = extAliases{files: []string{off.name, blob.name, ents.name, nf.slots, nf.off, nf.ids},
		nAlias: int(n), bytes: int(blob.n), groups: nf.groups, ids: nf.nIDs, slotsLen: nf.slotsLen}
	return nil
}

// mergeNamesakes finds the terms whose names coincide (a literal spelled
// as an entity's label): the first keeps its id, the others become it.
func (b *extBuild) mergeNamesakes() error {
	bits := 0
	for est := float64(b.ents.n) * 40; est > partShare*float64(b.mem)*float64(int(1)<<bits) && bits < 12; {
		bits++
	}
	ps, err := newPartSet(b.dir, "display", bits, int64(0.05*float64(b.mem)))
	if err != nil {
		return err
	}
	if err := b.ents.eachName(func(id int32, name []byte) error {
		return ps.add(internHash(bytesView(name)), name, nil, uint32(id), 0)
	}); err != nil {
		return err
	}
	if err := ps.finish(); err != nil {
		return err
	}
	b.removed = newRankBits(b.ents.n)
	b.rep = map[uint32]uint32{}
	var groups keyGroups
	visit := func(data []byte) error {
		return groups.each(data, b.ents.n, "names", nil, func(id, first uint32) error {
			if id != first {
				b.removed.set(id)
				b.rep[id] = first
			}
			return nil
		})
	}
	if err := ps.each(int64(partShare*float64(b.mem)), nil, visit, nil); err != nil {
		return err
	}
	b.merged = b.removed.index()
	return nil
}

// entID is the entity id of term id (its own, or its namesake's, less the
// terms merged before it).
func (b *extBuild) entID(term uint32) uint32 {
	if b.merged == 0 {
		return term
	}
	if r, ok := b.rep[term]; ok {
		term = r
	}
	return term - b.removed.rank(term)
}
