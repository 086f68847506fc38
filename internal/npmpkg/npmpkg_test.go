package npmpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadMembersAndVerify(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range map[string]string{"package/a.txt": "alpha", "package/b.txt": "a longer member"} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))})
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	path := filepath.Join(t.TempDir(), "p.tgz")
	os.WriteFile(path, buf.Bytes(), 0o644)

	m, err := ReadMembers(path, 100, "package/a.txt", "package/b.txt")
	if err != nil || string(m["package/a.txt"]) != "alpha" || string(m["package/b.txt"]) != "a longer member" {
		t.Errorf("ReadMembers = %q, %v", m, err)
	}
	for _, tt := range []struct {
		limit int64
		names []string
		want  string
	}{
		{100, []string{"package/c.txt"}, "no member package/c.txt"},
		{8, []string{"package/b.txt"}, "member package/b.txt is 15 bytes, more than the 8 expected"},
	} {
		if _, err := ReadMembers(path, tt.limit, tt.names...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadMembers(%d, %v): err = %v, want %q", tt.limit, tt.names, err, tt.want)
		}
	}
	if _, err := ReadMembers(filepath.Join(t.TempDir(), "none.tgz"), 100, "x"); err == nil {
		t.Error("missing tarball: no error")
	}

	p := Package{Spec: "x@1", Integrity: "sha512-wrong", SHA256: "wrong"}
	if err := p.Verify(path); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "x@1") {
		t.Errorf("Verify: err = %v, want ErrChecksum naming the package", err)
	}
	if _, err := p.Pack(t.Context(), filepath.Join(t.TempDir(), "no-npm"), t.TempDir()); !errors.Is(err, ErrNoNPM) {
		t.Errorf("Pack without npm: err = %v, want ErrNoNPM", err)
	}
}
