package kg

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"unsafe"
)

// wordView views words as their machine-order bytes.
func wordView(w []uint32) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), 4*len(w))
}

// Scratch files of BuildSnapshot: buffered writers and readers of
// little-endian words and length-prefixed byte strings, and bitmaps with
// rank. Every scratch file lives in the build's own temporary folder and
// is removed as soon as the build no longer needs it.

// tempFile is a scratch file being written.
type tempFile struct {
	f    *os.File
	w    *bufio.Writer
	n    int64 // bytes written
	name string
	b    [binary.MaxVarintLen64 + 4]byte
}

func createTemp(dir, name string) (*tempFile, error) { return createTempSize(dir, name, 256<<10) }

// createTempSize is createTemp with a write buffer of size bytes, for the
// files a build keeps open by the hundred.
func createTempSize(dir, name string, size int) (*tempFile, error) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("build: scratch file: %w", err)
	}
	return &tempFile{f: f, w: bufio.NewWriterSize(f, size), name: f.Name()}, nil
}

func (t *tempFile) write(p []byte) error {
	t.n += int64(len(p))
	if _, err := t.w.Write(p); err != nil {
		return fmt.Errorf("build: write %s: %w", t.name, err)
	}
	return nil
}

func (t *tempFile) u32(v uint32) error {
	binary.LittleEndian.PutUint32(t.b[:4], v)
	return t.write(t.b[:4])
}

// str writes a uvarint length and the bytes of s.
func (t *tempFile) str(s []byte) error {
	n := binary.PutUvarint(t.b[:], uint64(len(s)))
	if err := t.write(t.b[:n]); err != nil {
		return err
	}
	return t.write(s)
}

// finish flushes and closes the file, keeping it on disk.
func (t *tempFile) finish() error {
	err := t.w.Flush()
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("build: write %s: %w", t.name, err)
	}
	return nil
}

// tempReader reads a scratch file sequentially.
type tempReader struct {
	f    *os.File
	r    *bufio.Reader
	name string
	b    [4]byte
}

func openTemp(name string) (*tempReader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("build: scratch file: %w", err)
	}
	return &tempReader{f: f, r: bufio.NewReaderSize(f, 256<<10), name: name}, nil
}

// u32 reads one word; io.EOF at the end of the file.
func (t *tempReader) u32() (uint32, error) {
	if _, err := io.ReadFull(t.r, t.b[:]); err != nil {
		if err == io.EOF {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("build: read %s: %w", t.name, err)
	}
	return binary.LittleEndian.Uint32(t.b[:]), nil
}

func (t *tempReader) close() { t.f.Close() }

// readAll returns a scratch file's bytes.
func readAll(name string) ([]byte, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("build: read scratch file: %w", err)
	}
	return data, nil
}

// recReader walks length-prefixed records in memory.
type recReader struct {
	data []byte
	pos  int
	bad  bool
}

func (r *recReader) more() bool { return r.pos < len(r.data) && !r.bad }

func (r *recReader) str() []byte {
	n, k := binary.Uvarint(r.data[r.pos:])
	if k <= 0 || uint64(len(r.data)-r.pos-k) < n {
		r.bad = true
		r.pos = len(r.data)
		return nil
	}
	r.pos += k
	s := r.data[r.pos : r.pos+int(n) : r.pos+int(n)]
	r.pos += int(n)
	return s
}

func (r *recReader) u32() uint32 {
	if len(r.data)-r.pos < 4 {
		r.bad = true
		r.pos = len(r.data)
		return 0
	}
	v := binary.LittleEndian.Uint32(r.data[r.pos:])
	r.pos += 4
	return v
}

// rankBits is a bitmap with the count of set bits before each word, so
// rank (set bits below i) costs one popcount.
type rankBits struct {
	words  []uint64
	before []uint32
}

func newRankBits(n int) rankBits { return rankBits{words: make([]uint64, (n+63)/64)} }

func (b *rankBits) set(i uint32)      { b.words[i/64] |= 1 << (i % 64) }
func (b *rankBits) has(i uint32) bool { return b.words[i/64]&(1<<(i%64)) != 0 }

// index computes the counts rank needs; call it once all bits are set.
// It returns the number of set bits.
func (b *rankBits) index() int {
	b.before = make([]uint32, len(b.words))
	c := 0
	for i, w := range b.words {
		b.before[i] = uint32(c)
		c += bits.OnesCount64(w)
	}
	return c
}

// rank returns the number of set bits below i.
func (b *rankBits) rank(i uint32) uint32 {
	return b.before[i/64] + uint32(bits.OnesCount64(b.words[i/64]&(1<<(i%64)-1)))
}
