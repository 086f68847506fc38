package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/internal/virtuoso"
)

func TestBadArguments(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"start"}, "bad arguments"},
		{[]string{"start", "a", "b"}, "bad arguments"},
		{[]string{"load", "dir"}, "bad arguments"},
		{[]string{"stop", "a", "b"}, "bad arguments"},
		{[]string{"restart", "dir"}, "bad arguments"},
		{[]string{"start", "dir", "--port", "x"}, "invalid value"},
		{[]string{"start", "dir", "--verbose"}, "not defined"},
		{[]string{"stop", filepath.Join(t.TempDir(), "none")}, "is a server started in"},
	}
	for _, tc := range tests {
		err := run(context.Background(), tc.args, new(bytes.Buffer), new(bytes.Buffer))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) error = %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

// TestStartLoadStop is what scripts/virtuoso does, in one process: the
// detached server is found again by its folder.
func TestStartLoadStop(t *testing.T) {
	virtuoso.SkipUnavailable(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "db")
	nt := filepath.Join(t.TempDir(), "kb.nt")
	if err := os.WriteFile(nt, []byte("<http://x/a> <http://x/p> <http://x/b> .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"start", dir, "--max-rows", "50"}, &out, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run(ctx, []string{"stop", dir}, new(bytes.Buffer), new(bytes.Buffer)) })
	if !strings.HasPrefix(out.String(), "http://127.0.0.1:") || !strings.HasSuffix(out.String(), "/sparql\n") {
		t.Errorf("start printed %q, want the SPARQL URL", out.String())
	}
	for _, args := range [][]string{{"load", dir, nt}, {"load", dir, nt, "http://x/g"}, {"stop", dir}} {
		out.Reset()
		if err := run(ctx, args, &out, new(bytes.Buffer)); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		t.Logf("%q: %s", args, strings.TrimSpace(out.String()))
	}
	if _, err := os.Stat(filepath.Join(dir, virtuoso.PidFile)); !os.IsNotExist(err) {
		t.Errorf("pid file left after stop (stat: %v)", err)
	}
}
