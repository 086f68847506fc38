// Package embedcache keeps the vectors an encoder has produced on disk so
// that a text is encoded once per encoder, however many runs ask for it.
// Re-encoding a knowledge graph's entity names through a transformer or a
// remote server takes minutes to hours; reading them back takes a second.
//
// Each encoder identity (Name and Dim) has its own append-only file in the
// cache folder. New vectors are appended as whole, checksummed records, so a
// crash mid-append loses at most the record being written: Open detects the
// torn tail and cuts it off, keeping everything before it.
package embedcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/models"
)

// File layout, integers little-endian, uvarints as in encoding/binary:
//
//	header: magic "STEMEMB1" | uvarint len(name) | name | uvarint dim | crc32c
//	record: uvarint len(text) | text | dim x float32 | crc32c
//
// Each crc32c covers the bytes of its own header or record before it, so a
// record is valid only if it was written completely and not altered since.
const magic = "STEMEMB1"

// maxNameLen bounds the encoder name a header may claim, so a corrupt length
// cannot trigger a huge allocation.
const maxNameLen = 1 << 16

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Cache is an Encoder that answers from its file when it can and asks the
// inner encoder only for texts it has not seen. It is safe for concurrent
// use; two Caches (or two processes) must not append to the same file at
// once.
type Cache struct {
	inner   models.Encoder
	name    string
	dim     int
	path    string
	dropped int64

	mu    sync.Mutex
	file  *os.File // nil once closed
	index map[string]int
	vecs  []float32 // row i is the vector of the text index maps to i
	size  int64     // bytes of valid data in the file
	werr  error     // first failed append; the file tail is then unknown
}

// Compile-time check that Cache satisfies models.Encoder.
var _ models.Encoder = (*Cache)(nil)

// Open loads (or creates) the cache file for enc in dir. A torn or corrupt
// tail left by a crash is truncated away, keeping the valid records before
// it; Dropped reports how many bytes went. A file whose header names a
// different encoder or dimension is an error, never silently reused.
func Open(dir string, enc models.Encoder) (*Cache, error) {
	name, dim := enc.Name(), enc.Dim()
	if dim <= 0 {
		return nil, fmt.Errorf("embedcache: encoder %s reports dimension %d", name, dim)
	}
	if len(name) > maxNameLen {
		return nil, fmt.Errorf("embedcache: encoder name is %d bytes, limit %d", len(name), maxNameLen)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("embedcache: %w", err)
	}
	path := filepath.Join(dir, fileName(name, dim))
	hdr := header(name, dim)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		// Written atomically so a crash never leaves a half header, which
		// Open would have to refuse.
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
			_, err := w.Write(hdr)
			return err
		}); err != nil {
			return nil, fmt.Errorf("embedcache: create: %w", err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("embedcache: %w", err)
	}
	if err := checkHeader(b, name, dim); err != nil {
		return nil, fmt.Errorf("embedcache: %s: %w", path, err)
	}
	c := &Cache{inner: enc, name: name, dim: dim, path: path, index: map[string]int{}}
	good := c.load(b, len(hdr))
	if good < int64(len(b)) {
		if err := os.Truncate(path, good); err != nil {
			return nil, fmt.Errorf("embedcache: cut corrupt tail of %s at byte %d: %w", path, good, err)
		}
		c.dropped = int64(len(b)) - good
	}
	c.size = good
	c.file, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("embedcache: %w", err)
	}
	return c, nil
}

// fileName derives the cache file's name from the encoder identity, so each
// encoder gets its own file and a changed encoder never reads stale vectors.
func fileName(name string, dim int) string {
	sum := sha256.Sum256([]byte(name + "\x00" + strconv.Itoa(dim)))
	return hex.EncodeToString(sum[:16]) + ".embcache"
}

func header(name string, dim int) []byte {
	b := []byte(magic)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = binary.AppendUvarint(b, uint64(dim))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// checkHeader verifies that b starts with the header for name and dim.
func checkHeader(b []byte, name string, dim int) error {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return errors.New("not an embedding cache file (bad magic)")
	}
	p := len(magic)
	n, w := binary.Uvarint(b[p:])
	if w <= 0 || n > maxNameLen || uint64(len(b)-p-w) < n {
		return errors.New("corrupt header (bad name length); delete the file to rebuild the cache")
	}
	p += w
	hdrName := string(b[p : p+int(n)])
	p += int(n)
	fileDim, w := binary.Uvarint(b[p:])
	if w <= 0 || len(b)-p-w < 4 {
		return errors.New("corrupt header (bad dimension); delete the file to rebuild the cache")
	}
	p += w
	if crc32.Checksum(b[:p], castagnoli) != binary.LittleEndian.Uint32(b[p:]) {
		return errors.New("corrupt header (checksum mismatch); delete the file to rebuild the cache")
	}
	if hdrName != name || fileDim != uint64(dim) {
		return fmt.Errorf("file holds vectors of encoder %q (dim %d), not %q (dim %d)", hdrName, fileDim, name, dim)
	}
	return nil
}

// load reads the records of b from offset off into the cache and returns the
// offset where the valid records end.
func (c *Cache) load(b []byte, off int) int64 {
	vecBytes := 4 * c.dim
	for off < len(b) {
		n, w := binary.Uvarint(b[off:])
		if w <= 0 || n > uint64(len(b)-off-w) || uint64(len(b)-off-w)-n < uint64(vecBytes+4) {
			break
		}
		end := off + w + int(n) + vecBytes
		if crc32.Checksum(b[off:end], castagnoli) != binary.LittleEndian.Uint32(b[end:]) {
			break
		}
		text := string(b[off+w : off+w+int(n)])
		if _, dup := c.index[text]; !dup {
			c.index[text] = len(c.vecs) / c.dim
			for p := off + w + int(n); p < end; p += 4 {
				c.vecs = append(c.vecs, math.Float32frombits(binary.LittleEndian.Uint32(b[p:])))
			}
		}
		off = end + 4
	}
	return int64(off)
}

// Name returns the inner encoder's name: the cache gives the same vectors.
func (c *Cache) Name() string { return c.name }

// Dim returns the inner encoder's dimension.
func (c *Cache) Dim() int { return c.dim }

// Path returns the cache file.
func (c *Cache) Path() string { return c.path }

// Dropped returns how many bytes of torn or corrupt tail Open cut off.
func (c *Cache) Dropped() int64 { return c.dropped }

// Len returns the number of cached texts.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.index)
}

// Encode writes the vectors of texts into dst, encoding the texts not yet in
// the cache in one batch through the inner encoder and appending them to the
// file. The inner encoder runs without the lock held, so concurrent calls
// overlap; a text two calls miss at once is stored once.
func (c *Cache) Encode(ctx context.Context, texts []string, dst []float32) error {
	if err := models.CheckDst(c.name, len(texts), c.dim, dst); err != nil {
		return err
	}
	var misses []string
	missAt := map[string][]int{}
	c.mu.Lock()
	if err := c.usable(); err != nil {
		c.mu.Unlock()
		return err
	}
	for i, t := range texts {
		if r, ok := c.index[t]; ok {
			copy(dst[i*c.dim:(i+1)*c.dim], c.vecs[r*c.dim:])
			continue
		}
		if _, seen := missAt[t]; !seen {
			misses = append(misses, t)
		}
		missAt[t] = append(missAt[t], i)
	}
	c.mu.Unlock()
	if len(misses) == 0 {
		return nil
	}

	fresh := make([]float32, len(misses)*c.dim)
	if err := c.inner.Encode(ctx, misses, fresh); err != nil {
		return fmt.Errorf("embedcache: encode %d new texts: %w", len(misses), err)
	}
	for j, t := range misses {
		v := fresh[j*c.dim : (j+1)*c.dim]
		for _, i := range missAt[t] {
			copy(dst[i*c.dim:(i+1)*c.dim], v)
		}
	}
	return c.store(misses, fresh)
}

// store appends the texts not already cached (another call may have stored
// some meanwhile) with one write of whole records.
func (c *Cache) store(texts []string, vecs []float32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return err
	}
	var rec []byte
	var added []string
	var addedVecs []float32
	for j, t := range texts {
		if _, ok := c.index[t]; ok {
			continue
		}
		v := vecs[j*c.dim : (j+1)*c.dim]
		start := len(rec)
		rec = binary.AppendUvarint(rec, uint64(len(t)))
		rec = append(rec, t...)
		for _, x := range v {
			rec = binary.LittleEndian.AppendUint32(rec, math.Float32bits(x))
		}
		rec = binary.LittleEndian.AppendUint32(rec, crc32.Checksum(rec[start:], castagnoli))
		added = append(added, t)
		addedVecs = append(addedVecs, v...)
	}
	if len(rec) == 0 {
		return nil
	}
	if _, err := c.file.Write(rec); err != nil {
		// Try to cut a partial record off so later appends stay readable;
		// if even that fails, refuse further appends (Open will repair).
		if terr := c.file.Truncate(c.size); terr != nil {
			c.werr = fmt.Errorf("embedcache: append to %s: %w", c.path, err)
			return c.werr
		}
		return fmt.Errorf("embedcache: append to %s: %w", c.path, err)
	}
	c.size += int64(len(rec))
	for i, t := range added {
		c.index[t] = len(c.vecs) / c.dim
		c.vecs = append(c.vecs, addedVecs[i*c.dim:(i+1)*c.dim]...)
	}
	return nil
}

// usable reports why the cache cannot be used, if it cannot; c.mu is held.
func (c *Cache) usable() error {
	if c.file == nil {
		return fmt.Errorf("embedcache: %s is closed", c.path)
	}
	return c.werr
}

// Flush forces appended records to stable storage.
func (c *Cache) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return err
	}
	if err := c.file.Sync(); err != nil {
		return fmt.Errorf("embedcache: sync %s: %w", c.path, err)
	}
	return nil
}

// Close syncs and closes the file. Later Encode calls fail; closing twice is
// a no-op.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == nil {
		return nil
	}
	serr := c.file.Sync()
	cerr := c.file.Close()
	c.file = nil
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("embedcache: close %s: %w", c.path, err)
	}
	return nil
}
