package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bin")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		fill    func(io.Writer) error
		want    string
		wantErr bool
	}{
		{"replaces", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, "new", false},
		{"failure keeps old", func(w io.Writer) error {
			io.WriteString(w, "partial")
			return errors.New("boom")
		}, "new", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Write(path, 0o644, tc.fill)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tc.want {
				t.Errorf("content = %q, want %q", got, tc.want)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only the target (temp file left behind?)", len(entries))
			}
		})
	}
}

func TestWriteMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "f")
	err := Write(path, 0o644, func(w io.Writer) error { return nil })
	if err == nil {
		t.Fatal("want error for missing directory")
	}
	if want := fmt.Sprintf("write %s", path); len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("error %q does not name the path", err)
	}
}
