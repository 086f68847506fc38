package vecindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/stem-kgqa/stem/atomicfile"
)

// IVF file layout, all integers little-endian:
//
//	magic     [6]byte "STEMIV"
//	version   uint16  (1)
//	dim       uint32
//	nlist     uint32  (0 only when count is 0; else 1..count)
//	nprobe    uint32  (1..nlist; 0 when nlist is 0)
//	count     uint64  (number of vectors)
//	sizes     [nlist]uint32          vectors in each list, summing to count
//	centroids [nlist*dim]float32
//	ids       [count]uint32          a permutation of 0..count-1, list by list
//	data      [count*dim]float32     the vectors in the order of ids
//	crc       uint32  CRC-32C of every byte before it
//
// As for Flat's files, the exact size follows from the header, so a
// truncated or padded file is caught before anything is allocated.
const (
	ivfMagic      = "STEMIV"
	ivfVersion    = 1
	ivfHeaderSize = 6 + 2 + 4 + 4 + 4 + 8
)

// Save writes the index to path atomically: readers see the old file or the
// complete new one, never a torn mix.
func (x *IVF) Save(path string) error {
	if x.dim <= 0 || x.dim > MaxDim {
		return fmt.Errorf("vecindex: save %s: dimension %d out of range 1..%d", path, x.dim, MaxDim)
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return encodeIVF(w, x) })
}

// encodeIVF writes x in the IVF file layout.
func encodeIVF(w io.Writer, x *IVF) error {
	var hdr [ivfHeaderSize]byte
	copy(hdr[:], ivfMagic)
	binary.LittleEndian.PutUint16(hdr[6:], ivfVersion)
	binary.LittleEndian.PutUint32(hdr[8:], uint32(x.dim))
	binary.LittleEndian.PutUint32(hdr[12:], uint32(x.nlist))
	binary.LittleEndian.PutUint32(hdr[16:], uint32(x.nprobe))
	binary.LittleEndian.PutUint64(hdr[20:], uint64(len(x.ids)))
	ww := newWordWriter(w)
	ww.bytes(hdr[:])
	for l := range x.nlist {
		ww.u32(uint32(x.start[l+1] - x.start[l]))
	}
	ww.f32s(x.centroids)
	ww.i32s(x.ids)
	ww.f32s(x.data)
	return ww.close()
}

// LoadIVF reads an index written by IVF.Save. A file that is truncated,
// padded, corrupt, of another version or not an IVF index at all (a Flat
// index file included) gives an error naming the file.
func LoadIVF(path string) (*IVF, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vecindex: load ivf: %w", err)
	}
	x, err := decodeIVF(b)
	if err != nil {
		return nil, fmt.Errorf("vecindex: load ivf %s: %w", path, err)
	}
	return x, nil
}

// decodeIVF parses the bytes of an IVF file. It validates the claimed size
// against len(b) before allocating, and every structural invariant search
// relies on, so no file can make a search panic.
func decodeIVF(b []byte) (*IVF, error) {
	if len(b) >= len(fileMagic) && string(b[:len(fileMagic)]) == fileMagic {
		return nil, errors.New("an exact (flat) vecindex file, not an IVF index")
	}
	if len(b) < len(ivfMagic) || string(b[:len(ivfMagic)]) != ivfMagic {
		return nil, errors.New("not an IVF vecindex file (bad magic)")
	}
	if len(b) < ivfHeaderSize+trailerSize {
		return nil, fmt.Errorf("truncated: %d bytes, header and checksum need %d", len(b), ivfHeaderSize+trailerSize)
	}
	if v := binary.LittleEndian.Uint16(b[6:]); v != ivfVersion {
		return nil, fmt.Errorf("unsupported IVF version %d (this build reads %d)", v, ivfVersion)
	}
	dim := uint64(binary.LittleEndian.Uint32(b[8:]))
	nlist := uint64(binary.LittleEndian.Uint32(b[12:]))
	nprobe := uint64(binary.LittleEndian.Uint32(b[16:]))
	count := binary.LittleEndian.Uint64(b[20:])
	if err := checkDimCount(dim, count); err != nil {
		return nil, err
	}
	if nlist > count || (count > 0 && nlist == 0) {
		return nil, fmt.Errorf("%d lists for %d vectors", nlist, count)
	}
	if nprobe > nlist || (nlist > 0 && nprobe == 0) {
		return nil, fmt.Errorf("nprobe %d out of range 1..%d", nprobe, nlist)
	}
	// Every term is < 2^31 * 2^16 * 4, so the sum cannot overflow.
	want := uint64(ivfHeaderSize) + nlist*4 + nlist*dim*4 + count*4 + count*dim*4 + trailerSize
	raw, err := checkedBody(b, ivfHeaderSize, want, fmt.Sprintf("%d vectors x %d dims in %d lists", count, dim, nlist))
	if err != nil {
		return nil, err
	}
	u32 := func() uint32 {
		v := binary.LittleEndian.Uint32(raw)
		raw = raw[4:]
		return v
	}
	x := &IVF{dim: int(dim), nlist: int(nlist), nprobe: int(nprobe)}
	if nlist > 0 {
		x.start = make([]int, nlist+1)
	}
	var total uint64
	for l := range nlist {
		total += uint64(u32())
		if total > count {
			return nil, fmt.Errorf("list sizes exceed the %d vectors", count)
		}
		x.start[l+1] = int(total)
	}
	if total != count {
		return nil, fmt.Errorf("list sizes sum to %d, not %d vectors", total, count)
	}
	if x.centroids, raw, err = readFloats(raw, nlist*dim, dim, "centroid"); err != nil {
		return nil, err
	}
	x.ids = make([]int32, count)
	seen := make([]bool, count)
	for i := range x.ids {
		id := u32()
		if uint64(id) >= count || seen[id] {
			return nil, fmt.Errorf("ids are not a permutation of 0..%d (row %d holds %d)", count-1, i, id)
		}
		seen[id] = true
		x.ids[i] = int32(id)
	}
	if x.data, _, err = readFloats(raw, count*dim, dim, "vector"); err != nil {
		return nil, err
	}
	return x, nil
}
