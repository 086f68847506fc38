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
	if err := checkDimCount(dim, count); err != nil {
		return nil, err
	}
	want := uint64(headerSize) + count*dim*4 + trailerSize // < 2^50: no overflow
	raw, err := checkedBody(b, headerSize, want, fmt.Sprintf("%d vectors x %d dims", count, dim))
	if err != nil {
		return nil, err
	}
	data, _, err := readFloats(raw, count*dim, dim, "vector")
	if err != nil {
		return nil, err
	}
	return &Flat{dim: int(dim), data: data}, nil
}

// checkDimCount checks the dimension and vector count every index file's
// header gives.
func checkDimCount(dim, count uint64) error {
	if dim == 0 || dim > MaxDim {
		return fmt.Errorf("dimension %d out of range 1..%d", dim, MaxDim)
	}
	if count > math.MaxInt32 {
		return fmt.Errorf("vector count %d exceeds the int32 ID space", count)
	}
	return nil
}

// checkedBody checks that an index file b is exactly the want bytes its
// header (described by layout) implies and that its checksum holds, and
// returns the bytes between the header and the checksum.
func checkedBody(b []byte, header int, want uint64, layout string) ([]byte, error) {
	if uint64(len(b)) != want {
		kind := "truncated"
		if uint64(len(b)) > want {
			kind = "trailing bytes"
		}
		return nil, fmt.Errorf("%s: %d bytes, header (%s) needs %d", kind, len(b), layout, want)
	}
	body := b[:len(b)-trailerSize]
	if got, stored := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(b[len(body):]); got != stored {
		return nil, fmt.Errorf("checksum mismatch (stored %08x, computed %08x): file is corrupt", stored, got)
	}
	return body[header:], nil
}

// readFloats decodes n little-endian float32s from the start of raw,
// refusing a NaN or an infinity (what names the rows of dim values in the
// error), and returns them with the rest of raw.
func readFloats(raw []byte, n, dim uint64, what string) ([]float32, []byte, error) {
	out := make([]float32, n)
	for i := range out {
		v := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, nil, fmt.Errorf("%s %d holds non-finite value %v", what, uint64(i)/dim, v)
		}
		out[i] = v
	}
	return out, raw[4*n:], nil
}
