package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "kb.tsv")
	if err := os.WriteFile(in, []byte("a\tr\tb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.tsv")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "old.kg")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		out     string
		replace bool
		want    string
	}{
		{"new file", filepath.Join(dir, "new.kg"), false, ""},
		{"the input itself", in, true, "is also an input"},
		{"the input through a link", link, true, "is also an input"},
		{"the input by another spelling", filepath.Join(dir, ".", "kb.tsv"), true, "is also an input"},
		{"an existing output", other, false, "--force"},
		{"an existing output, replaced", other, true, ""},
	} {
		err := CheckOutput("--out", tc.out, tc.replace, in, "")
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := CheckOutput("--out", other, false); !errors.Is(err, ErrExists) {
		t.Errorf("err = %v, want ErrExists", err)
	}
}
