// Package extsort sorts more fixed-size records than fit in memory, for
// building KG snapshots of any size in bounded memory (kg.BuildSnapshot).
//
// A record is a fixed number of uint32 words; its first Keys words are the
// sort key, compared word by word, and the sort is stable (records with
// equal keys come out in the order they were added). Records are gathered
// in a buffer whose size the caller bounds; a full buffer is sorted in
// memory (LSD radix sort over the key words, linear in the records) and
// written to a run file, and reading merges the runs with a heap. When
// everything fits in one buffer, nothing touches the disk.
//
// Run files are raw machine-order words: they are scratch files of one
// process, removed by Iter.Close (or Sorter.Close), never an exchange
// format.
package extsort

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"
)

// MaxFanIn is the most runs merged at once; more are merged in passes,
// consecutive runs together, which keeps the sort stable.
const MaxFanIn = 256

// Sorter collects records and hands them back sorted. It is not safe for
// concurrent use.
type Sorter struct {
	dir         string
	words, keys int
	budget      int64
	buf, tmp    []uint32
	cap         int // records per buffer
	runs        []string
	n           int64
	fanIn       int // MaxFanIn; tests lower it
}

// New returns a sorter of records of words uint32s, sorted by their first
// keys words, that keeps at most about memBytes of records in memory
// (twice the buffer: the radix sort needs a scratch copy) and writes its
// runs as files in dir.
func New(dir string, words, keys int, memBytes int64) *Sorter {
	if words < 1 || keys < 1 || keys > words {
		panic(fmt.Sprintf("extsort: %d key words in records of %d words", keys, words))
	}
	capRecs := int(max(memBytes/int64(8*words), 1024))
	return &Sorter{dir: dir, words: words, keys: keys, budget: memBytes, cap: capRecs, fanIn: MaxFanIn}
}

// Len returns the number of records added.
func (s *Sorter) Len() int64 { return s.n }

// Add appends one record (len(rec) must be the record size).
func (s *Sorter) Add(rec ...uint32) error {
	if len(rec) != s.words {
		return fmt.Errorf("extsort: record of %d words, want %d", len(rec), s.words)
	}
	if s.buf == nil {
		// Grow as needed up to the cap: small sorts stay small.
		s.buf = make([]uint32, 0, min(s.cap, 1<<16)*s.words)
	}
	if len(s.buf) == s.cap*s.words {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.buf = append(s.buf, rec...)
	s.n++
	return nil
}

// spill sorts the buffer and writes it as a run.
func (s *Sorter) spill() error {
	s.sortBuf()
	f, err := os.CreateTemp(s.dir, "run-*.bin")
	if err != nil {
		return fmt.Errorf("extsort: %w", err)
	}
	s.runs = append(s.runs, f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	_, werr := bw.Write(wordBytes(s.buf))
	if werr == nil {
		werr = bw.Flush()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("extsort: write run %s: %w", f.Name(), werr)
	}
	s.buf = s.buf[:0]
	return nil
}

func (s *Sorter) sortBuf() {
	if cap(s.tmp) < len(s.buf) {
		s.tmp = make([]uint32, len(s.buf))
	}
	out := Sort(s.buf, s.tmp[:len(s.buf)], s.words, s.keys)
	if &out[0] != &s.buf[0] {
		copy(s.buf, out)
	}
}

// Iter finishes adding and returns the records in order. The sorter must
// not be used afterwards except for Close.
func (s *Sorter) Iter() (*Iter, error) {
	if len(s.runs) == 0 {
		if len(s.buf) > 0 {
			s.sortBuf()
		}
		s.tmp = nil
		return &Iter{mem: s.buf, words: s.words, s: s}, nil
	}
	if len(s.buf) > 0 {
		if err := s.spill(); err != nil {
			return nil, err
		}
	}
	s.buf, s.tmp = nil, nil
	for len(s.runs) > s.fanIn {
		var next []string
		for lo := 0; lo < len(s.runs); lo += s.fanIn {
			group := s.runs[lo:min(lo+s.fanIn, len(s.runs))]
			if len(group) == 1 {
				next = append(next, group[0])
				continue
			}
			name, err := s.mergeTo(group)
			if err != nil {
				return nil, err
			}
			next = append(next, name)
		}
		s.runs = next
	}
	m, err := s.open(s.runs)
	if err != nil {
		return nil, err
	}
	return &Iter{m: m, words: s.words, s: s}, nil
}

// mergeTo merges runs into one new run and removes them.
func (s *Sorter) mergeTo(runs []string) (string, error) {
	m, err := s.open(runs)
	if err != nil {
		return "", err
	}
	defer m.close()
	f, err := os.CreateTemp(s.dir, "run-*.bin")
	if err != nil {
		return "", fmt.Errorf("extsort: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	for {
		rec, ok := m.next()
		if !ok {
			break
		}
		if _, err := bw.Write(wordBytes(rec)); err != nil {
			f.Close()
			return "", fmt.Errorf("extsort: write run %s: %w", f.Name(), err)
		}
	}
	werr := m.err
	if werr == nil {
		werr = bw.Flush()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("extsort: merge runs: %w", werr)
	}
	for _, r := range runs {
		os.Remove(r)
	}
	return f.Name(), nil
}

// open starts a heap merge of runs.
func (s *Sorter) open(runs []string) (*merger, error) {
	bufBytes := int(min(max(s.budget/int64(2*len(runs)), 64<<10), 4<<20))
	m := &merger{words: s.words, keys: s.keys}
	for i, name := range runs {
		f, err := os.Open(name)
		if err != nil {
			m.close()
			return nil, fmt.Errorf("extsort: %w", err)
		}
		r := &runReader{f: f, br: bufio.NewReaderSize(f, bufBytes), rec: make([]uint32, s.words), idx: i}
		ok, err := r.read()
		if err != nil {
			f.Close()
			m.close()
			return nil, err
		}
		m.all = append(m.all, r)
		if ok {
			m.h.rs = append(m.h.rs, r)
		}
	}
	m.h.keys = s.keys
	heap.Init(&m.h)
	return m, nil
}

// Close removes the run files. It is safe to call more than once.
func (s *Sorter) Close() error {
	var first error
	for _, r := range s.runs {
		if err := os.Remove(r); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	s.runs = nil
	s.buf, s.tmp = nil, nil
	return first
}

// Iter yields sorted records.
type Iter struct {
	mem   []uint32 // the in-memory case
	pos   int
	m     *merger
	words int
	s     *Sorter
}

// Next returns the next record, valid until the following call, and false
// after the last one (then check Err).
func (it *Iter) Next() ([]uint32, bool) {
	if it.m == nil {
		if it.pos >= len(it.mem) {
			return nil, false
		}
		rec := it.mem[it.pos : it.pos+it.words : it.pos+it.words]
		it.pos += it.words
		return rec, true
	}
	return it.m.next()
}

// Err returns the first read error met.
func (it *Iter) Err() error {
	if it.m != nil {
		return it.m.err
	}
	return nil
}

// Close releases the runs (their files are removed).
func (it *Iter) Close() error {
	if it.m != nil {
		it.m.close()
	}
	it.mem = nil
	return it.s.Close()
}

type runReader struct {
	f   *os.File
	br  *bufio.Reader
	rec []uint32
	idx int
}

// read loads the next record of the run; false at its end.
func (r *runReader) read() (bool, error) {
	_, err := io.ReadFull(r.br, wordBytes(r.rec))
	switch {
	case err == nil:
		return true, nil
	case err == io.EOF:
		return false, nil
	}
	return false, fmt.Errorf("extsort: read run %s: %w", r.f.Name(), err)
}

type merger struct {
	words, keys int
	h           runHeap
	all         []*runReader
	out         []uint32
	pending     *runReader // the reader whose record was returned last
	err         error
}

func (m *merger) next() ([]uint32, bool) {
	if m.pending != nil {
		ok, err := m.pending.read()
		if err != nil {
			m.err = err
			return nil, false
		}
		if ok {
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
		}
		m.pending = nil
	}
	if len(m.h.rs) == 0 {
		return nil, false
	}
	top := m.h.rs[0]
	if m.out == nil {
		m.out = make([]uint32, m.words)
	}
	copy(m.out, top.rec)
	m.pending = top
	return m.out, true
}

func (m *merger) close() {
	for _, r := range m.all {
		r.f.Close()
	}
	m.all = nil
	m.h.rs = nil
}

// runHeap orders run readers by their current record's key, then by run
// index (stability across runs).
type runHeap struct {
	rs   []*runReader
	keys int
}

func (h runHeap) Len() int { return len(h.rs) }
func (h runHeap) Less(i, j int) bool {
	a, b := h.rs[i], h.rs[j]
	for k := 0; k < h.keys; k++ {
		if a.rec[k] != b.rec[k] {
			return a.rec[k] < b.rec[k]
		}
	}
	return a.idx < b.idx
}
func (h runHeap) Swap(i, j int) { h.rs[i], h.rs[j] = h.rs[j], h.rs[i] }
func (h *runHeap) Push(x any)   { h.rs = append(h.rs, x.(*runReader)) }
func (h *runHeap) Pop() any {
	n := len(h.rs) - 1
	r := h.rs[n]
	h.rs = h.rs[:n]
	return r
}

// wordBytes views words as their machine-order bytes.
func wordBytes(w []uint32) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), 4*len(w))
}

// Sort sorts the records in recs (words uint32s each) by their first keys
// words, stably, using tmp (as long as recs) as scratch. It returns the
// slice holding the result, which is recs or tmp. It is a least
// significant digit radix sort: for each key word, last to first, one
// counting pass per digit of up to maxDigit bits, as many digits as the
// word's largest value needs, and a pass is skipped when every record has
// the same digit.
func Sort(recs, tmp []uint32, words, keys int) []uint32 {
	n := len(recs) / words
	if n < 2 {
		return recs
	}
	if n <= 64 {
		insertionSort(recs, words, keys)
		return recs
	}
	src, dst := recs, tmp[:len(recs)]
	var cnt []int
	for k := keys - 1; k >= 0; k-- {
		var maxV uint32
		for i := k; i < len(src); i += words {
			maxV |= src[i]
		}
		bitsNeeded := 0
		for maxV>>bitsNeeded != 0 {
			bitsNeeded++
		}
		if bitsNeeded == 0 {
			continue
		}
		passes := (bitsNeeded + maxDigit - 1) / maxDigit
		width := (bitsNeeded + passes - 1) / passes
		for p := 0; p < passes; p++ {
			shift := uint(p * width)
			mask := uint32(1)<<uint(width) - 1
			buckets := 1 << uint(width)
			if cap(cnt) < buckets+1 {
				cnt = make([]int, buckets+1)
			}
			c := cnt[:buckets+1]
			clear(c)
			for i := k; i < len(src); i += words {
				c[(src[i]>>shift)&mask+1]++
			}
			if c[((src[k]>>shift)&mask)+1] == n {
				continue // one digit value: already in order
			}
			for b := 1; b <= buckets; b++ {
				c[b] += c[b-1]
			}
			scatter(dst, src, c, words, k, shift, mask)
			src, dst = dst, src
		}
	}
	return src
}

// maxDigit is the widest radix digit: 2^11 counters stay in the L1 cache
// and the scatter writes to few enough places at once for the TLB.
const maxDigit = 11

// scatter moves every record of src to its digit's next place in dst.
func scatter(dst, src []uint32, c []int, words, k int, shift uint, mask uint32) {
	switch words {
	case 2:
		for i := 0; i+1 < len(src); i += 2 {
			d := (src[i+k] >> shift) & mask
			at := c[d] * 2
			c[d]++
			dst[at], dst[at+1] = src[i], src[i+1]
		}
	case 4:
		for i := 0; i+3 < len(src); i += 4 {
			d := (src[i+k] >> shift) & mask
			at := c[d] * 4
			c[d]++
			r := dst[at : at+4 : at+4]
			r[0], r[1], r[2], r[3] = src[i], src[i+1], src[i+2], src[i+3]
		}
	default:
		for i := 0; i < len(src); i += words {
			d := (src[i+k] >> shift) & mask
			at := c[d] * words
			c[d]++
			copy(dst[at:at+words], src[i:i+words])
		}
	}
}

func insertionSort(recs []uint32, words, keys int) {
	n := len(recs) / words
	tmp := make([]uint32, words)
	for i := 1; i < n; i++ {
		copy(tmp, recs[i*words:(i+1)*words])
		j := i
		for j > 0 && lessKey(tmp, recs[(j-1)*words:j*words], keys) {
			copy(recs[j*words:(j+1)*words], recs[(j-1)*words:j*words])
			j--
		}
		copy(recs[j*words:(j+1)*words], tmp)
	}
}

func lessKey(a, b []uint32, keys int) bool {
	for k := 0; k < keys; k++ {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return false
}
