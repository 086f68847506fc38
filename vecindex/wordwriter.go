package vecindex

import (
	"encoding/binary"
	"hash"
	"hash/crc32"
	"io"
	"math"
)

// wordWriter writes an index file body: raw bytes and little-endian 32-bit
// words, buffered, every byte fed to the CRC-32C that close appends as the
// trailer. Flat, IVF and HNSW files share this framing; a write error is
// kept and returned by close, so encoders need not check every call.
type wordWriter struct {
	w   io.Writer
	crc hash.Hash32
	buf []byte
	err error
}

func newWordWriter(w io.Writer) *wordWriter {
	return &wordWriter{w: w, crc: crc32.New(castagnoli), buf: make([]byte, 0, 64<<10)}
}

// flush writes the buffered bytes through to w and the checksum.
func (ww *wordWriter) flush() {
	if ww.err == nil && len(ww.buf) > 0 {
		ww.crc.Write(ww.buf)
		_, ww.err = ww.w.Write(ww.buf)
	}
	ww.buf = ww.buf[:0]
}

// bytes writes b as it is (a header, a level table).
func (ww *wordWriter) bytes(b []byte) {
	ww.flush()
	if ww.err == nil {
		ww.crc.Write(b)
		_, ww.err = ww.w.Write(b)
	}
}

func (ww *wordWriter) u32(v uint32) {
	ww.buf = binary.LittleEndian.AppendUint32(ww.buf, v)
	if len(ww.buf) == cap(ww.buf) {
		ww.flush()
	}
}

func (ww *wordWriter) i32s(vs []int32) {
	for _, v := range vs {
		ww.u32(uint32(v))
	}
}

func (ww *wordWriter) f32s(vs []float32) {
	for _, v := range vs {
		ww.u32(math.Float32bits(v))
	}
}

// close flushes and appends the CRC-32C of everything written.
func (ww *wordWriter) close() error {
	ww.flush()
	if ww.err != nil {
		return ww.err
	}
	_, err := ww.w.Write(binary.LittleEndian.AppendUint32(nil, ww.crc.Sum32()))
	return err
}
