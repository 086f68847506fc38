//go:build linux

package kg

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mapFile maps path read-only and shared: the graph then lives in the page
// cache, loads without copying, and is shared by every process serving the
// same snapshot. The pages are faulted in up front, since the checksum
// pass reads all of them anyway, and in huge pages where the kernel gives
// them (mapHuge). unmap releases the mapping; it is only called when
// decoding failed, before any slice into it escaped.
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
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	mapHuge(data)
	return data, func() { _ = syscall.Munmap(data) }, nil
}

// mapHuge asks for data, a snapshot's mapping, in huge pages, then faults
// it in as MAP_POPULATE would. Tracing's reads into a snapshot of
// gigabytes are random, and with 4 KiB pages nearly every one also misses
// the TLB: at 100M triples bench serve answered 1.5-1.9 times the
// questions per CPU second with the file's page cache in huge folios. The
// kernel reads a file through a mapping so advised in huge folios (a
// filesystem with large folios, Linux 6.x ext4 or XFS), and maps the
// folios already cached whole; pages cached small (a file just written)
// stay small, hence dropCached. A kernel without the advice, or without
// MADV_POPULATE_READ (before 5.14), maps small pages and faults them in
// as the checksum pass reads them.
func mapHuge(data []byte) {
	_ = unix.Madvise(data, unix.MADV_HUGEPAGE)
	_ = unix.Madvise(data, unix.MADV_POPULATE_READ)
}

// dropCached asks the kernel to drop path's cached pages, once written and
// synced: a snapshot written through the page cache is held there in
// small pages, which its loads would map as they are (mapHuge); dropped,
// the first load reads it back in huge ones. Pages a process maps stay.
func dropCached(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
