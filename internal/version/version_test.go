package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	const rev = "bd09462d326f1eba4b4d6d67844f878e8d9f3bf5"
	tests := []struct {
		name       string
		bi         debug.BuildInfo
		wantString string
		wantLines  []string
	}{
		{"go install at a tag",
			debug.BuildInfo{GoVersion: "go1.26.8-X:simd", Main: debug.Module{Path: "github.com/stem-kgqa/stem", Version: "v0.3.0"},
				Settings: settings("GOEXPERIMENT", "simd", "CGO_ENABLED", "0", "GOOS", "darwin", "GOARCH", "arm64")},
			"v0.3.0",
			[]string{"stem v0.3.0", "module        github.com/stem-kgqa/stem", "version       v0.3.0",
				"revision      not recorded (built from the module at v0.3.0, which names the commit)",
				"go            go1.26.8", "GOEXPERIMENT  simd", "platform      darwin/arm64 (static, CGO_ENABLED=0)"}},
		{"go build in a clone with changes",
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/stem-kgqa/stem", Version: "v0.0.0-20261126235923-bd09462d326f+dirty"},
				Settings: settings("vcs", "git", "vcs.revision", rev, "vcs.time", "2026-11-26T23:59:23Z", "vcs.modified", "true", "GOOS", "linux", "GOARCH", "amd64")},
			"v0.0.0-20261126235923-bd09462d326f+dirty",
			[]string{"revision      " + rev + " (2026-11-26T23:59:23Z)", "modified      true", "GOEXPERIMENT  none", "platform      linux/amd64"}},
		{"devel with a revision",
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/stem-kgqa/stem", Version: Devel},
				Settings: settings("vcs.revision", rev, "vcs.modified", "false")},
			"(devel)-bd09462d326f",
			[]string{"modified      false"}},
		{"devel without VCS information",
			debug.BuildInfo{GoVersion: "go1.26.8-X:simd", Main: debug.Module{Path: "github.com/stem-kgqa/stem", Version: Devel},
				Settings: settings("GOEXPERIMENT", "simd")},
			"(devel)",
			[]string{"stem (devel)", "revision      not recorded (built with -buildvcs=false, from a git worktree, or outside a checkout)", "modified      unknown", "go            go1.26.8"}},
		{"test binary", debug.BuildInfo{GoVersion: "go1.26.8"}, "(devel)", []string{"module        unknown (no build information)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := FromBuildInfo(&tc.bi)
			if got := in.String(); got != tc.wantString {
				t.Errorf("String() = %q, want %q", got, tc.wantString)
			}
			var b strings.Builder
			if err := in.WriteText(&b, "stem"); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.wantLines {
				if !strings.Contains(b.String(), want) {
					t.Errorf("text lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}

func TestDevelWithDirtyRevision(t *testing.T) {
	in := Info{Version: Devel, Revision: "0123456789abcdef", Modified: true}
	if got, want := in.String(), "(devel)-0123456789ab+dirty"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
