// Package stembin builds the stem binary for tests that must run the real
// program: shell completion (the shell calls the binary), the version a
// build records, and clients in other languages that talk to `stem
// serve`. It is for tests only.
package stembin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Build compiles ./cmd/stem of the module the test runs in into a
// temporary directory of tb, and returns the binary's path. It builds with
// the environment of the test (GOEXPERIMENT included, so the go command
// reuses what `go test` compiled) and -buildvcs=auto, so that a build in a
// git clone records its revision whatever GOFLAGS says. In -short mode
// (the race run) it skips tb: a second build there adds time, not
// coverage.
func Build(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: no build of the stem binary")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		tb.Fatalf("no go command on PATH to build stem with: %v", err)
	}
	bin := filepath.Join(tb.TempDir(), "stem")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command(goCmd, "build", "-buildvcs=auto", "-o", bin, "./cmd/stem")
	cmd.Dir = Root(tb)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build ./cmd/stem: %v\n%s", err, out)
	}
	return bin
}

// Root is the module's root folder (where go.mod is), for tests that run
// files of the repository outside Go's package layout.
func Root(tb testing.TB) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			tb.Fatalf("no go.mod above %s", wd)
		}
	}
}
