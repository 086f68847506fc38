// Package version says which stem a binary is: the module version, the
// VCS revision and whether its tree was modified, the Go toolchain and the
// GOEXPERIMENT it was built with, all read from the build information the
// Go linker embeds (runtime/debug.ReadBuildInfo). It holds no state: the
// same binary always reports the same Info.
//
// What a build records depends on how it was made. `go install
// module/cmd/stem@v1.2.3` records the version v1.2.3 and no revision (a
// module zip has no VCS metadata; the tag names the commit). `go build` in
// a git clone records a pseudo-version (v0.0.0-DATE-REVISION, "+dirty" when
// modified) and the revision; built with -buildvcs=false, in a git worktree
// (whose .git is a file the go command does not follow) or outside any
// checkout, only "(devel)" is known, and String says so.
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"
)

// Devel is the version Go records for a main module built from a checkout
// without VCS information.
const Devel = "(devel)"

// Info is what a binary knows about its own build.
type Info struct {
	// Module is the main module's path (github.com/stem-kgqa/stem).
	Module string `json:"module"`
	// Version is the module version: a release tag (v1.2.3), a
	// pseudo-version (v0.0.0-20260101120000-abcdef123456+dirty), or Devel.
	Version string `json:"version"`
	// Revision is the VCS commit, Time its commit time (RFC 3339); both
	// empty when the build recorded no VCS information.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	// Modified is true when the tree had changes not committed; it is
	// meaningful only when Revision is set.
	Modified bool `json:"modified"`
	// GoVersion is the toolchain (go1.26.8), GOEXPERIMENT the experiments
	// on beyond the toolchain's defaults ("" for none).
	GoVersion    string `json:"go"`
	GOEXPERIMENT string `json:"goexperiment"`
	// OS and Arch are the target the binary was built for; CGO whether cgo
	// was enabled ("0" for a static build).
	OS   string `json:"os"`
	Arch string `json:"arch"`
	CGO  string `json:"cgo_enabled,omitempty"`
}

// Read returns the running binary's Info. A binary without build
// information (not built by the go command) reports Devel and the
// runtime's Go version.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: Devel, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo extracts Info from bi.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion, OS: runtime.GOOS, Arch: runtime.GOARCH}
	if in.Version == "" {
		// A test binary's main module has no version at all.
		in.Version = Devel
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		case "GOEXPERIMENT":
			in.GOEXPERIMENT = s.Value
		case "GOOS":
			in.OS = s.Value
		case "GOARCH":
			in.Arch = s.Value
		case "CGO_ENABLED":
			in.CGO = s.Value
		}
	}
	// The toolchain writes experiments into its version too
	// (go1.26.8-X:simd); the GOEXPERIMENT setting says the same, once.
	if v, _, ok := strings.Cut(in.GoVersion, "-X:"); ok {
		in.GoVersion = v
	}
	return in
}

// String is the one-word version a server reports (/healthz, MCP): the
// module version, or, for a build from a checkout whose module version is
// Devel, Devel with the short revision and "+dirty" when it is known.
func (in Info) String() string {
	if in.Version != Devel || in.Revision == "" {
		return in.Version
	}
	s := Devel + "-" + short(in.Revision)
	if in.Modified {
		s += "+dirty"
	}
	return s
}

// short is a revision's first 12 characters, as Go's pseudo-versions
// write it.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// WriteText prints in for a person: the name and version on the first
// line, then one aligned line per fact, every fact present even when it
// is unknown, so that a bug report always shows what was not recorded.
func (in Info) WriteText(w io.Writer, name string) error {
	if _, err := fmt.Fprintf(w, "%s %s\n", name, in); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "  %s\t%s\n", k, v) }
	module := in.Module
	if module == "" {
		module = "unknown (no build information)"
	}
	row("module", module)
	row("version", in.Version)
	switch {
	case in.Revision != "":
		rev := in.Revision
		if in.Time != "" {
			rev += " (" + in.Time + ")"
		}
		row("revision", rev)
		row("modified", fmt.Sprint(in.Modified))
	case in.Version != Devel:
		row("revision", "not recorded (built from the module at "+in.Version+", which names the commit)")
		row("modified", "false")
	default:
		row("revision", "not recorded (built with -buildvcs=false, from a git worktree, or outside a checkout)")
		row("modified", "unknown")
	}
	row("go", in.GoVersion)
	exp := in.GOEXPERIMENT
	if exp == "" {
		exp = "none"
	}
	row("GOEXPERIMENT", exp)
	platform := in.OS + "/" + in.Arch
	if in.CGO == "0" {
		platform += " (static, CGO_ENABLED=0)"
	}
	row("platform", platform)
	return tw.Flush()
}
