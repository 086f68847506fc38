// Package python holds no Go code: it runs the Python client's pytest
// suite (clients/python/tests) from `go test ./...`, so that the README's
// test command covers the client too.
package python

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stem-kgqa/stem/internal/stembin"
)

// RequireEnv, set to 1 (as CI does), turns the skip for a missing Python
// or pytest into a failure, so the client's tests cannot stop running
// unnoticed.
const RequireEnv = "STEM_REQUIRE_PYTHON"

// TestPythonClient runs the client's tests with Debian's Python and pytest
// against a real stem serve, built here from this checkout.
func TestPythonClient(t *testing.T) {
	pytest := ""
	for _, name := range []string{"/usr/bin/pytest-3", "pytest-3"} {
		if p, err := exec.LookPath(name); err == nil {
			pytest = p
			break
		}
	}
	if pytest == "" {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("$%s=1 but no pytest-3 on this machine (apt-get install python3-pytest)", RequireEnv)
		}
		t.Skipf("the Python client's tests need Debian's python3-pytest (pytest-3; apt-get install python3-pytest); set %s=1 to fail instead", RequireEnv)
	}
	bin := stembin.Build(t)
	cmd := exec.Command(pytest, "-q", "-p", "no:cacheprovider", "tests")
	cmd.Env = append(os.Environ(),
		"STEM_BINARY="+bin,
		"STEM_TEST_VECTORS="+filepath.Join(stembin.Root(t), "cmd", "stem", "testdata", "tiny.glove"),
		// The checkout stays clean: no __pycache__ beside the sources.
		"PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("pytest-3 -q tests:\n%s", out)
	if err != nil {
		t.Fatalf("the Python client's tests failed: %v", err)
	}
}
