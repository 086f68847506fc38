package kg

import (
	"fmt"

	"github.com/stem-kgqa/stem/internal/extsort"
)

// The Freebase path of BuildSnapshot (FormatFreebase in bounded memory).
// Name literals are spilled by literal (labels), which counts the
// entities carrying each; the counted names are spilled again by machine
// id (labelsByMid) into as many partitions as the entity dictionary, so
// that resolving a dictionary partition can give its ids their names from
// one label partition in memory. Terms whose names coincide are then
// merged (mergeNamesakes) before ids are final.

// addLabel takes one name line of the dump.
func (b *extBuild) addLabel(mid, lit []byte, tagged, alias bool) error {
	if alias {
		return nil
	}
	b.key = append(append(b.key[:0], tagByte(tagged)), lit...)
	return b.labels.add(hashName(bytesView(b.key)), b.key, mid, 0, 0)
}

func tagByte(tagged bool) byte {
	if tagged {
		return 'e'
	}
	return 'p'
}

// countLabels counts the distinct entities carrying each name literal and
// spills (machine id, literal, count) by machine id.
func (b *extBuild) countLabels() error {
	byMid, err := newPartSet(b.dir, "labels-by-id", dictPartBits)
	if err != nil {
		return err
	}
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
				if err := byMid.add(hashName(bytesView(mid)), mid, stringBytes(lits.name(int32(sorted[k]))), n, 0); err != nil {
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
	if err := byMid.finish(); err != nil {
		return err
	}
	b.labelsByMid = byMid
	return nil
}

// partLabels is one partition of labelsByMid in memory: each machine id's
// chosen name and its carrier count (freebaseLabels).
type partLabels struct {
	data  []byte
	mids  nameTable
	best  [][]byte // per mid: tag byte + literal
	count []uint32
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
	l.data, l.best, l.count = data, l.best[:0], l.count[:0]
	rr := recReader{data: data}
	for rr.more() {
		mid, lit := rr.str(), rr.str()
		n := rr.u32()
		rr.u32()
		if rr.bad || len(lit) == 0 {
			return fmt.Errorf("build: %s: %w", name, errScratch)
		}
		n0 := l.mids.len()
		id := l.mids.intern(bytesView(mid))
		if l.mids.len() > n0 {
			l.best = append(l.best, lit)
			l.count = append(l.count, n)
			continue
		}
		if b := l.best[id]; betterLabel(lit[1:], lit[0] == 'e', b[1:], b[0] == 'e') {
			l.best[id], l.count[id] = lit, n
		}
	}
	return nil
}

func (l *partLabels) label(mid []byte) ([]byte, uint32, bool) {
	id, ok := l.mids.lookup(bytesView(mid))
	if !ok {
		return nil, 0, false
	}
	return l.best[id][1:], l.count[id], true
}

// freebaseNames sets the entity dictionary up to name machine ids by
// their labels as it resolves.
func (b *extBuild) freebaseNames() {
	var labels partLabels
	b.ents.enter = func(p int) error { return labels.load(b.labelsByMid.files[p].name) }
	b.ents.display = func(dst, key []byte) []byte { return freebaseDisplay(dst, key, &labels) }
}

// mergeNamesakes finds the terms whose names coincide (a literal spelled
// as an entity's label): the first keeps its id, the others become it.
func (b *extBuild) mergeNamesakes() error {
	bits := 0
	for est := float64(b.ents.n) * 40; est > partShare*float64(b.mem)*float64(int(1)<<bits) && bits < 12; {
		bits++
	}
	ps, err := newPartSet(b.dir, "display", bits)
	if err != nil {
		return err
	}
	if err := b.ents.eachName(func(id int32, name []byte) error {
		return ps.add(hashName(bytesView(name)), name, nil, uint32(id), 0)
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
