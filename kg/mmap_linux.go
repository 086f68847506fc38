//go:build linux

package kg

import (
	"os"
	"syscall"
)

// mapFile maps path read-only and shared: the graph then lives in the page
// cache, loads without copying, and is shared by every process serving the
// same snapshot. MAP_POPULATE faults the pages in up front, since the
// checksum pass reads all of them anyway. unmap releases the mapping; it is
// only called when decoding failed, before any slice into it escaped.
func mapFile(path string) (data []byte, unmap func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size < headerSize || int64(int(size)) != size {
		// Too small to be a snapshot (or to map: mmap refuses length 0):
		// read it, and let the decoder say what is wrong.
		data, err := os.ReadFile(path)
		return data, func() {}, err
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
