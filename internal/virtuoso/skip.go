package virtuoso

import (
	"os"
	"testing"
)

// RequireEnv, set to 1, turns the skip of a test that needs Virtuoso into
// a failure. CI sets it, so the integration tests cannot stop running
// unnoticed when the package is missing.
const RequireEnv = "STEM_REQUIRE_VIRTUOSO"

// SkipUnavailable skips tb with the reason when virtuoso-t or isql-vt is
// missing, or fails it when $STEM_REQUIRE_VIRTUOSO is 1.
func SkipUnavailable(tb testing.TB) {
	tb.Helper()
	if err := Available(); err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("%v (and $%s=1 requires the Virtuoso tests to run)", err, RequireEnv)
		}
		tb.Skipf("skipping the Virtuoso tests: %v", err)
	}
}
