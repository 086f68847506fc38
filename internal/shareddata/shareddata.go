// Package shareddata finds the benchmark data that sits beside the checkout
// (../shared/data) so that tests and benchmarks can use it when present and
// skip with a clear message when it is not. The data is never copied into the
// repository.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar overrides where the shared data folder is looked for.
const EnvVar = "STEM_SHARED_DATA"

// Dir returns the shared data folder: $STEM_SHARED_DATA when set, otherwise
// ../shared/data next to the module root found by walking up from the
// working directory. ok is false when no such folder exists.
func Dir() (dir string, ok bool) {
	if d := os.Getenv(EnvVar); d != "" {
		st, err := os.Stat(d)
		return d, err == nil && st.IsDir()
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			cand := filepath.Join(filepath.Dir(d), "shared", "data")
			st, err := os.Stat(cand)
			return cand, err == nil && st.IsDir()
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// Path returns the path of rel inside the shared data folder, or skips tb
// with a message saying what is missing and where it was looked for.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	dir, ok := Dir()
	if !ok {
		tb.Skipf("shared benchmark data not found (looked for ../shared/data beside the module, or $%s): skipping", EnvVar)
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("shared benchmark file %s not found: skipping", p)
	}
	return p
}
