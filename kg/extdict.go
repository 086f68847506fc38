package kg

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"unsafe"
)

// stringBytes views s as bytes without copying; they must not be modified.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// partSet spills records (a key string, an extra string and two words)
// to hash partitions of the key on disk, so that all records of one key
// meet in one partition, which is then read back whole. A partition larger than the memory given to
// each is split by the next 4 bits of the string's hash (splitDepth times
// at most), keeping the records' order.
type partSet struct {
	dir, prefix string
	bits        int // log2 of the number of partitions
	files       []*tempFile
}

// splitDepth bounds how often an oversized partition is split: strings
// that still share all those hash bits are one string or a collision, and
// are read together whatever the memory.
const splitDepth = 6

// newPartSet creates 2^bits partitions whose write buffers share about
// mem bytes (4 KiB to 64 KiB each).
func newPartSet(dir, prefix string, bits int, mem int64) (*partSet, error) {
	ps := &partSet{dir: dir, prefix: prefix, bits: bits, files: make([]*tempFile, 1<<bits)}
	buf := int(min(max(mem>>bits, 4<<10), 64<<10))
	for p := range ps.files {
		f, err := createTempSize(dir, fmt.Sprintf("%s-part-%d", prefix, p), buf)
		if err != nil {
			return nil, err
		}
		ps.files[p] = f
	}
	return ps, nil
}

// add spills one record; h must be internHash(key).
func (ps *partSet) add(h uint64, key, extra []byte, a, b uint32) error {
	return writeRec(ps.files[h&(1<<ps.bits-1)], key, extra, a, b)
}

func writeRec(f *tempFile, key, extra []byte, a, b uint32) error {
	if err := f.str(key); err != nil {
		return err
	}
	if err := f.str(extra); err != nil {
		return err
	}
	if err := f.u32(a); err != nil {
		return err
	}
	return f.u32(b)
}

func (ps *partSet) finish() error {
	for _, f := range ps.files {
		if err := f.finish(); err != nil {
			return err
		}
	}
	return nil
}

// each reads the partitions back one at a time, calling visit with each
// one's records in memory (recReader format: key, extra, a, b), and
// removes them. enter, when not nil, is called before the (pieces of the)
// partition p are visited.
func (ps *partSet) each(mem int64, enter func(p int) error, visit func(data []byte) error, progress func(done, total int64)) error {
	for p, f := range ps.files {
		if enter != nil {
			if err := enter(p); err != nil {
				return err
			}
		}
		if err := ps.part(f.name, ps.bits, 0, mem, visit); err != nil {
			return err
		}
		if progress != nil {
			progress(int64(p+1), int64(len(ps.files)))
		}
	}
	ps.files = nil
	return nil
}

func (ps *partSet) part(name string, shift, depth int, mem int64, visit func([]byte) error) error {
	defer os.Remove(name)
	st, err := os.Stat(name)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if st.Size() > mem && depth < splitDepth {
		return ps.split(name, shift, depth, mem, visit)
	}
	data, err := readAll(name)
	if err != nil {
		return err
	}
	return visit(data)
}

func (ps *partSet) split(name string, shift, depth int, mem int64, visit func([]byte) error) error {
	const ways = 16
	subs := make([]*tempFile, ways)
	for i := range subs {
		f, err := createTempSize(ps.dir, fmt.Sprintf("%s-split-%d-%d", ps.prefix, depth, i), 64<<10)
		if err != nil {
			return err
		}
		subs[i] = f
	}
	err := readRecs(name, func(key, extra []byte, a, b uint32) error {
		return writeRec(subs[(internHash(bytesView(key))>>shift)%ways], key, extra, a, b)
	})
	if err != nil {
		return err
	}
	for _, f := range subs {
		if err := f.finish(); err != nil {
			return err
		}
	}
	for _, f := range subs {
		if err := ps.part(f.name, shift+4, depth+1, mem, visit); err != nil {
			return err
		}
	}
	return nil
}

// readRecs streams the records of a partition file without holding it.
func readRecs(name string, visit func(key, extra []byte, a, b uint32) error) error {
	t, err := openTemp(name)
	if err != nil {
		return err
	}
	defer t.close()
	var kbuf, ebuf []byte
	str := func(buf []byte) ([]byte, error) {
		ln, err := binary.ReadUvarint(t.r)
		if err != nil {
			return nil, err
		}
		if ln > MaxLineBytes {
			return nil, errScratch
		}
		if cap(buf) < int(ln) {
			buf = make([]byte, ln)
		}
		buf = buf[:ln]
		if _, err := io.ReadFull(t.r, buf); err != nil {
			return nil, errScratch
		}
		return buf, nil
	}
	for {
		kbuf, err = str(kbuf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("build: %s: %w", name, errScratch)
		}
		if ebuf, err = str(ebuf); err != nil {
			return fmt.Errorf("build: %s: %w", name, errScratch)
		}
		a, err1 := t.u32()
		b, err2 := t.u32()
		if err1 != nil || err2 != nil {
			return fmt.Errorf("build: %s: %w", name, errScratch)
		}
		if err := visit(kbuf, ebuf, a, b); err != nil {
			return err
		}
	}
}

// extDict interns the names of one table (entities or relations) for
// BuildSnapshot in bounded memory, giving them the ids an in-memory
// Builder gives: first-seen order over the whole input.
//
// The input is cut into runs (the triples read between two flushes, see
// extBuild). Within a run, names are interned in memory (a nameTable: the
// run's local ids are first-seen order within the run). When the tables
// fill their share of memory, every local name is spilled, with its run
// and local id, to hash partitions (partSet), and the table starts over.
// After the input, each partition (every occurrence of a name is in the
// same one) is interned again in memory, in spill order: the first
// occurrence of a name, which is in the earliest run holding it, defines
// it (it is new there, and goes to that run's new-names file); the others
// point to it (that run's ptr file). A name's global id is then the number
// of new names in earlier runs plus its rank among its run's new names by
// local id: exactly first-seen order. Names in id order are each run's
// new names in local-id order.
//
// When the whole input fits in one run, nothing is spilled: local ids are
// the global ids.
type extDict struct {
	what  string // "entity" or "relation"
	dir   string
	tab   nameTable
	runs  []int // names per flushed run
	parts *partSet
	// After resolve:
	news    []rankBits // per run: which local ids are new there
	base    []uint32   // per run: new names in earlier runs
	n       int        // distinct names
	ptrName []string   // per run: the ptr file
	newName []string   // per run: the new-names file
	// enter and display, when set, give names their final form as they
	// are defined (Freebase's machine ids their labels): enter is called
	// before partition p, display appends a key's name to dst.
	enter   func(p int) error
	display func(dst, key []byte) []byte
	// defined, when set, is told of every name as it is defined: its run
	// and local id, its key and the name display gave it.
	defined func(run, l uint32, key, shown []byte) error
}

// dictPartBits is log2 of the partitions names are spilled to.
const dictPartBits = 6

func newExtDict(what, dir string) *extDict {
	return &extDict{what: what, dir: dir, tab: newNameTable()}
}

// bytes estimates the memory the run's table holds, counting the growth
// its next appends and rehash may need.
func (d *extDict) bytes() int64 {
	t := &d.tab
	// A rehash holds the old slots and the new, twice as many, at once.
	return int64(len(t.blob))*5/4 + int64(len(t.off))*5 + int64(len(t.slots))*12
}

// spilled reports whether any run was written to disk.
func (d *extDict) spilled() bool { return len(d.runs) > 0 }

// flush spills the run's names and empties the table, keeping its memory
// for the next run.
func (d *extDict) flush(run int) error {
	if d.parts == nil {
		var err error
		if d.parts, err = newPartSet(d.dir, d.what, dictPartBits, 4<<20); err != nil {
			return err
		}
	}
	n := d.tab.len()
	for l := 0; l < n; l++ {
		name := d.tab.name(int32(l))
		if err := d.parts.add(internHash(name), stringBytes(name), nil, uint32(run), uint32(l)); err != nil {
			return err
		}
	}
	d.runs = append(d.runs, n)
	d.tab.reset()
	return nil
}

// reset empties a table, keeping its allocations.
func (t *nameTable) reset() {
	t.blob = t.blob[:0]
	t.off = t.off[:1]
	for i := range t.slots {
		t.slots[i] = -1
	}
}

// resolve reads the partitions back and defines every name (see
// extDict), holding at most about partMem bytes of a partition at once.
func (d *extDict) resolve(partMem int64, progress func(done, total int64)) error {
	runs := len(d.runs)
	d.news = make([]rankBits, runs)
	ptrs := make([]*tempFile, runs)
	news := make([]*tempFile, runs)
	bufSize := int(min(max(partMem/int64(4*runs), 4<<10), 256<<10))
	for j, n := range d.runs {
		d.news[j] = newRankBits(n)
		var err error
		if ptrs[j], err = createTempSize(d.dir, fmt.Sprintf("%s-ptr-%d", d.what, j), bufSize); err != nil {
			return err
		}
		if news[j], err = createTempSize(d.dir, fmt.Sprintf("%s-new-%d", d.what, j), bufSize); err != nil {
			return err
		}
		d.ptrName = append(d.ptrName, ptrs[j].name)
		d.newName = append(d.newName, news[j].name)
	}
	if err := d.parts.finish(); err != nil {
		return err
	}
	var (
		tab              nameTable
		defRun, defLocal []uint32
		shown            []byte
	)
	visit := func(data []byte) error {
		if tab.off == nil {
			tab = newNameTable()
		} else {
			tab.reset()
		}
		defRun, defLocal = defRun[:0], defLocal[:0]
		rr := recReader{data: data}
		for rr.more() {
			s := rr.str()
			rr.str()
			run, l := rr.u32(), rr.u32()
			if rr.bad || int(run) >= runs || int(l) >= d.runs[run] {
				return fmt.Errorf("build: %s partition: %w", d.what, errScratch)
			}
			n0 := tab.len()
			id := tab.intern(bytesView(s))
			if tab.len() > n0 {
				defRun = append(defRun, run)
				defLocal = append(defLocal, l)
				d.news[run].set(l)
				if err := news[run].u32(l); err != nil {
					return err
				}
				name := s
				if d.display != nil {
					shown = d.display(shown[:0], s)
					name = shown
				}
				if d.defined != nil {
					if err := d.defined(run, l, s, name); err != nil {
						return err
					}
				}
				if err := news[run].str(name); err != nil {
					return err
				}
				continue
			}
			f := ptrs[run]
			if err := f.u32(l); err != nil {
				return err
			}
			if err := f.u32(defRun[id]); err != nil {
				return err
			}
			if err := f.u32(defLocal[id]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := d.parts.each(partMem, d.enter, visit, progress); err != nil {
		return err
	}
	d.parts = nil
	for j := range d.runs {
		if err := ptrs[j].finish(); err != nil {
			return err
		}
		if err := news[j].finish(); err != nil {
			return err
		}
	}
	d.base = make([]uint32, runs)
	total := 0
	for j := range d.news {
		d.base[j] = uint32(total)
		total += d.news[j].index()
	}
	d.n = total
	return nil
}

// id returns the global id of local name l of run j, which is new there.
func (d *extDict) id(j int, l uint32) int32 {
	return int32(d.base[j] + d.news[j].rank(l))
}

// runMap returns the global ids of run j's local names, in buf when it is
// large enough.
func (d *extDict) runMap(j int, buf []int32) ([]int32, error) {
	n := d.runs[j]
	if cap(buf) < n {
		buf = make([]int32, n)
	}
	m := buf[:n]
	news := &d.news[j]
	for l := uint32(0); int(l) < n; l++ {
		if news.has(l) {
			m[l] = d.id(j, l)
		} else {
			m[l] = -1
		}
	}
	t, err := openTemp(d.ptrName[j])
	if err != nil {
		return nil, err
	}
	defer func() {
		t.close()
		os.Remove(d.ptrName[j])
	}()
	for {
		l, err := t.u32()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		dr, err1 := t.u32()
		dl, err2 := t.u32()
		if err1 != nil || err2 != nil || int(l) >= n || int(dr) >= len(d.runs) || int(dl) >= d.runs[dr] || !d.news[dr].has(dl) {
			return nil, fmt.Errorf("build: %s: %w", d.ptrName[j], errScratch)
		}
		m[l] = d.id(int(dr), dl)
	}
	for l, id := range m {
		if id < 0 {
			return nil, fmt.Errorf("build: %s %d of run %d has no id: %w", d.what, l, j, errScratch)
		}
	}
	return m, nil
}

// runBytes returns the most memory eachName holds for one run: its
// new-names file and a position per name.
func (d *extDict) runBytes() int64 {
	var most int64
	for j, n := range d.runs {
		if st, err := os.Stat(d.newName[j]); err == nil {
			most = max(most, st.Size()+8*int64(n))
		}
	}
	return most
}

// eachName calls visit with every name in id order: from the table when
// nothing was spilled, else from the runs' new-names files, one at a
// time.
func (d *extDict) eachName(visit func(id int32, name []byte) error) error {
	if !d.spilled() {
		for id := int32(0); int(id) < d.tab.len(); id++ {
			if err := visit(id, stringBytes(d.tab.name(id))); err != nil {
				return err
			}
		}
		return nil
	}
	var pos []int
	id := int32(0)
	for j, n := range d.runs {
		data, err := readAll(d.newName[j])
		if err != nil {
			return err
		}
		if cap(pos) < n {
			pos = make([]int, n)
		}
		pos = pos[:n]
		for i := range pos {
			pos[i] = -1
		}
		rr := recReader{data: data}
		for rr.more() {
			at := rr.pos
			l := rr.u32()
			rr.str()
			if rr.bad || int(l) >= n {
				return fmt.Errorf("build: %s: %w", d.newName[j], errScratch)
			}
			pos[l] = at
		}
		for l := 0; l < n; l++ {
			if pos[l] < 0 {
				continue
			}
			rr := recReader{data: data, pos: pos[l] + 4}
			if err := visit(id, rr.str()); err != nil {
				return err
			}
			id++
		}
	}
	return nil
}

// dropNames removes the new-names files once the names are written.
func (d *extDict) dropNames() {
	for _, name := range d.newName {
		os.Remove(name)
	}
}

// keyGroups groups the (key, extra, id, _) records of a partition by key,
// in record order: the first record of a key starts its group, later ones
// join it.
type keyGroups struct {
	tab   nameTable
	first []uint32 // per group: its first id
}

// each reads the records of data (ids below limit), calling start for a
// group's first record and join for every record (the first too) with its
// group's first id.
func (k *keyGroups) each(data []byte, limit int, what string, start func(key []byte, id uint32) error, join func(id, first uint32) error) error {
	if k.tab.off == nil {
		k.tab = newNameTable()
	} else {
		k.tab.reset()
	}
	k.first = k.first[:0]
	rr := recReader{data: data}
	for rr.more() {
		key := rr.str()
		rr.str()
		id := rr.u32()
		rr.u32()
		if rr.bad || int(id) >= limit {
			return fmt.Errorf("build: %s: %w", what, errScratch)
		}
		n0 := k.tab.len()
		g := k.tab.intern(bytesView(key))
		if k.tab.len() > n0 {
			k.first = append(k.first, id)
			if start != nil {
				if err := start(key, id); err != nil {
					return err
				}
			}
		}
		if err := join(id, k.first[g]); err != nil {
			return err
		}
	}
	return nil
}
