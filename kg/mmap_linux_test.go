//go:build linux

package kg

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cachedPages counts the pages of path the page cache holds.
func cachedPages(t *testing.T, path string) (cached, pages int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(data)
	vec := make([]byte, (len(data)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	for _, v := range vec {
		cached += int(v & 1)
	}
	return cached, len(vec)
}

// A snapshot just written is not left in the page cache (dropCached), so
// that its first load reads it in huge pages; read again, it is all
// cached, and loads as it was.
func TestSnapshotWriteDropsCache(t *testing.T) {
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		t.Skip("the temporary folder is a tmpfs, whose pages are the files themselves")
	}
	g := sampleGraph(t)
	path := filepath.Join(dir, "g.kg")
	if err := WriteSnapshot(path, g); err != nil {
		t.Fatal(err)
	}
	if cached, pages := cachedPages(t, path); cached != 0 {
		t.Errorf("after WriteSnapshot %d of its %d pages are cached, want 0", cached, pages)
	}
	h, err := ReadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	graphsEqual(t, g, h)
	if cached, pages := cachedPages(t, path); cached != pages {
		t.Errorf("after ReadSnapshot %d of its %d pages are cached, want all", cached, pages)
	}
}
