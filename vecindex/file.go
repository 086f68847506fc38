package vecindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/stem-kgqa/stem/atomicfile"
)

// File layout, all integers little-endian:
//
//	magic   [6]byte "STEMVX"
//	version uint16  (1)
//	dim     uint32
//	count   uint64  (number of vectors)
//	data    [count*dim]float32
//	crc     uint32  CRC-32C of every byte before it
//
// The exact size follows from the header, so a truncated or padded file is
// caught before anything is allocated, and the checksum catches flipped bits.
const (
	fileMagic   = "STEMVX"
	fileVersion = 1
	headerSize  = 6 + 2 + 4 + 8
	trailerSize = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Save writes the index to path atomically: readers see the old file or the
// complete new one, never a torn mix.
func (f *Flat) Save(path string) error {
	if err := f.checkDim(); err != nil {
		return fmt.Errorf("vecindex: save %s: %w", path, err)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return encodeTo(w, f) })
}

// encodeTo writes f in the file layout; the caller holds f.mu.
func encodeTo(w io.Writer, f *Flat) error {
	var hdr [headerSize]byte
	copy(hdr[:], fileMagic)
	binary.LittleEndian.PutUint16(hdr[6:], fileVersion)
	binary.LittleEndian.PutUint32(hdr[8:], uint32(f.dim))
	binary.LittleEndian.PutUint64(hdr[12:], uint64(f.len()))
	ww := newWordWriter(w)
	ww.bytes(hdr[:])
	ww.f32s(f.data)
	return ww.close()
}

// Load reads an index written by Save. A file that is truncated, padded,
// corrupt or not an index at all gives an error naming the file.
func Load(path string) (*Flat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vecindex: load: %w", err)
	}
	f, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("vecindex: load %s: %w", path, err)
	}
	return f, nil
}

// decode parses the bytes of an index file. It validates the claimed size
// against len(b) before allocating, so hostile headers cannot exhaust memory.
func decode(b []byte) (*Flat, error) {
	if len(b) < len(fileMagic) || string(b[:len(fileMagic)]) != fileMagic {
		return nil, errors.New("not a vecindex file (bad magic)")
	}
	if len(b) < headerSize+trailerSize {
		return nil, fmt.Errorf("truncated: %d bytes, header and checksum need %d", len(b), headerSize+trailerSize)
	}
	if v := binary.LittleEndian.Uint16(b[6:]); v != fileVersion {
		return nil, fmt.Errorf("unsupported version %d (this build reads %d)", v, fileVersion)
	}
	dim := uint64(binary.LittleEndian.Uint32(b[8:]))
	count := binary.LittleEndian.Uint64(b[12:])
	if dim == 0 || dim > MaxDim {
		return nil, fmt.Errorf("dimension %d out of range 1..%d", dim, MaxDim)
	}
	if count > math.MaxInt32 {
		return nil, fmt.Errorf("vector count %d exceeds the int32 ID space", count)
	}
	want := uint64(headerSize) + count*dim*4 + trailerSize // < 2^50: no overflow
	if uint64(len(b)) != want {
		kind := "truncated"
		if uint64(len(b)) > want {
			kind = "trailing bytes"
		}
		return nil, fmt.Errorf("%s: %d bytes, header (%d vectors x %d dims) needs %d", kind, len(b), count, dim, want)
	}
	body := b[:len(b)-trailerSize]
	if got, stored := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(b[len(body):]); got != stored {
		return nil, fmt.Errorf("checksum mismatch (stored %08x, computed %08x): file is corrupt", stored, got)
	}
	data := make([]float32, count*dim)
	raw := body[headerSize:]
	for i := range data {
		x := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("vector %d holds non-finite value %v", uint64(i)/dim, x)
		}
		data[i] = x
	}
	return &Flat{dim: int(dim), data: data}, nil
}
