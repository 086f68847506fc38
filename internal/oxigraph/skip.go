package oxigraph

import (
	"os"
	"testing"
)

// SkipUnavailable skips tb with the reason when the endpoint cannot run
// (see Available), or fails it when $STEM_REQUIRE_OXIGRAPH is 1.
func SkipUnavailable(tb testing.TB) {
	tb.Helper()
	if err := Available(Options{}); err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("%v (and $%s=1 requires the Oxigraph tests to run)", err, RequireEnv)
		}
		tb.Skipf("skipping the Oxigraph tests: %v", err)
	}
}
