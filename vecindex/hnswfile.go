package vecindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/stem-kgqa/stem/atomicfile"
)

// HNSW file layout, all integers little-endian:
//
//	magic     [6]byte "STEMHN"
//	version   uint16  (1)
//	dim       uint32
//	m         uint32  (2..4096; layer 0 holds 2*m)
//	efC       uint32  (efConstruction, >= 1)
//	efSearch  uint32  (>= 1)
//	maxLevel  uint32  (levels[entry]; 0 when count is 0)
//	entry     uint32  (< count; 0 when count is 0)
//	count     uint64  (number of vectors)
//	uppers    uint64  (sum of levels: number of upper-layer lists)
//	levels    [count]uint8           0 for every non-first row of a group of identical vectors
//	same      [count]int32           next larger ID with the identical vector, or -1
//	l0        [count*(2m+1)]uint32   per node: neighbour count, 2m slots
//	upper     [uppers*(m+1)]uint32   per node and layer 1..level: count, m slots
//	data      [count*dim]float32     unit (or zero) vectors in ID order
//	crc       uint32  CRC-32C of every byte before it
//
// As for the other index files, the exact size follows from the header, so
// a truncated or padded file is caught before anything is allocated.
const (
	hnswMagic      = "STEMHN"
	hnswVersion    = 1
	hnswHeaderSize = 6 + 2 + 4*6 + 8 + 8
)

// Save writes the index to path atomically: readers see the old file or the
// complete new one, never a torn mix.
func (x *HNSW) Save(path string) error {
	if x.dim <= 0 || x.dim > MaxDim {
		return fmt.Errorf("vecindex: save %s: dimension %d out of range 1..%d", path, x.dim, MaxDim)
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return encodeHNSW(w, x) })
}

// encodeHNSW writes x in the HNSW file layout.
func encodeHNSW(w io.Writer, x *HNSW) error {
	var hdr [hnswHeaderSize]byte
	copy(hdr[:], hnswMagic)
	binary.LittleEndian.PutUint16(hdr[6:], hnswVersion)
	binary.LittleEndian.PutUint32(hdr[8:], uint32(x.dim))
	binary.LittleEndian.PutUint32(hdr[12:], uint32(x.m))
	binary.LittleEndian.PutUint32(hdr[16:], uint32(x.efC))
	binary.LittleEndian.PutUint32(hdr[20:], uint32(x.efSearch))
	binary.LittleEndian.PutUint32(hdr[24:], uint32(x.maxLevel))
	binary.LittleEndian.PutUint32(hdr[28:], uint32(x.entry))
	binary.LittleEndian.PutUint64(hdr[32:], uint64(len(x.levels)))
	binary.LittleEndian.PutUint64(hdr[40:], uint64(len(x.upper)/(x.m+1)))
	ww := newWordWriter(w)
	ww.bytes(hdr[:])
	ww.bytes(x.levels)
	ww.i32s(x.same)
	ww.i32s(x.l0)
	ww.i32s(x.upper)
	ww.f32s(x.data)
	return ww.close()
}

// LoadHNSW reads an index written by HNSW.Save without rebuilding the graph.
// A file that is truncated, padded, corrupt, of another version or not an
// HNSW index at all (a Flat or IVF file included) gives an error naming the
// file.
func LoadHNSW(path string) (*HNSW, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vecindex: load hnsw: %w", err)
	}
	x, err := decodeHNSW(b)
	if err != nil {
		return nil, fmt.Errorf("vecindex: load hnsw %s: %w", path, err)
	}
	return x, nil
}

// decodeHNSW parses the bytes of an HNSW file. It validates the claimed size
// against len(b) before allocating, and every invariant search relies on
// (neighbour counts within capacity, neighbour IDs in range and present on
// the layer, the entry point on the top layer), so no file can make a search
// panic.
func decodeHNSW(b []byte) (*HNSW, error) {
	switch {
	case len(b) >= len(fileMagic) && string(b[:len(fileMagic)]) == fileMagic:
		return nil, errors.New("an exact (flat) vecindex file, not an HNSW index")
	case len(b) >= len(ivfMagic) && string(b[:len(ivfMagic)]) == ivfMagic:
		return nil, errors.New("an IVF vecindex file, not an HNSW index")
	case len(b) < len(hnswMagic) || string(b[:len(hnswMagic)]) != hnswMagic:
		return nil, errors.New("not an HNSW vecindex file (bad magic)")
	}
	if len(b) < hnswHeaderSize+trailerSize {
		return nil, fmt.Errorf("truncated: %d bytes, header and checksum need %d", len(b), hnswHeaderSize+trailerSize)
	}
	if v := binary.LittleEndian.Uint16(b[6:]); v != hnswVersion {
		return nil, fmt.Errorf("unsupported HNSW version %d (this build reads %d)", v, hnswVersion)
	}
	le := binary.LittleEndian
	dim := uint64(le.Uint32(b[8:]))
	m := uint64(le.Uint32(b[12:]))
	efC := uint64(le.Uint32(b[16:]))
	efS := uint64(le.Uint32(b[20:]))
	maxLevel := uint64(le.Uint32(b[24:]))
	entry := uint64(le.Uint32(b[28:]))
	count := le.Uint64(b[32:])
	uppers := le.Uint64(b[40:])
	if err := checkDimCount(dim, count); err != nil {
		return nil, err
	}
	if m < 2 || m > 1<<12 {
		return nil, fmt.Errorf("M = %d out of range 2..%d", m, 1<<12)
	}
	if efC == 0 || efS == 0 || efC > math.MaxInt32 || efS > math.MaxInt32 {
		return nil, fmt.Errorf("efConstruction %d or efSearch %d out of range", efC, efS)
	}
	if uppers > count*maxHNSWLevel || maxLevel > maxHNSWLevel {
		return nil, fmt.Errorf("%d upper-layer lists (max level %d) for %d vectors", uppers, maxLevel, count)
	}
	if count == 0 && (entry != 0 || maxLevel != 0) || count > 0 && entry >= count {
		return nil, fmt.Errorf("entry point %d out of range for %d vectors", entry, count)
	}
	// Every term is below 2^31 * 2^16 * 4, so the sum cannot overflow.
	want := uint64(hnswHeaderSize) + count + count*4 + count*(2*m+1)*4 + uppers*(m+1)*4 + count*dim*4 + trailerSize
	raw, err := checkedBody(b, hnswHeaderSize, want, fmt.Sprintf("%d vectors x %d dims, M %d, %d upper lists", count, dim, m, uppers))
	if err != nil {
		return nil, err
	}
	x := &HNSW{dim: int(dim), m: int(m), m0: int(2 * m), efC: int(efC), efSearch: int(efS),
		entry: int32(entry), maxLevel: int(maxLevel)}
	x.levels = make([]uint8, count)
	copy(x.levels, raw[:count])
	raw = raw[count:]
	var sum, top uint64
	for i, l := range x.levels {
		if l > maxHNSWLevel {
			return nil, fmt.Errorf("node %d has level %d, above %d", i, l, maxHNSWLevel)
		}
		sum += uint64(l)
		top = max(top, uint64(l))
	}
	if sum != uppers {
		return nil, fmt.Errorf("levels sum to %d, header says %d upper lists", sum, uppers)
	}
	if count > 0 && (top != maxLevel || uint64(x.levels[entry]) != maxLevel) {
		return nil, fmt.Errorf("entry point %d at level %d, want the top level %d (header %d)", entry, x.levels[entry], top, maxLevel)
	}
	ints := func(n uint64) []int32 {
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(le.Uint32(raw))
			raw = raw[4:]
		}
		return out
	}
	x.same = ints(count)
	for i, nx := range x.same {
		// Strictly increasing chains always end, so search cannot loop.
		if nx != -1 && (nx <= int32(i) || uint64(nx) >= count) {
			return nil, fmt.Errorf("node %d: next identical vector %d out of range", i, nx)
		}
	}
	x.l0 = ints(count * (2*m + 1))
	x.upper = ints(uppers * (m + 1))
	if err := x.layout(); err != nil {
		return nil, err
	}
	for id := range int32(count) {
		for layer := 0; layer <= int(x.levels[id]); layer++ {
			bl := x.links(id, layer)
			if bl[0] < 0 || int(bl[0]) > len(bl)-1 {
				return nil, fmt.Errorf("node %d layer %d: %d neighbours, capacity %d", id, layer, bl[0], len(bl)-1)
			}
			for _, e := range bl[1 : 1+bl[0]] {
				if e < 0 || uint64(e) >= count || int(x.levels[e]) < layer {
					return nil, fmt.Errorf("node %d layer %d: neighbour %d is not a node of that layer", id, layer, e)
				}
			}
		}
	}
	if x.data, _, err = readFloats(raw, count*dim, dim, "vector"); err != nil {
		return nil, err
	}
	return x, nil
}
