package embedcache

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/models"
)

// fakeEncoder gives each text a deterministic vector and records every call.
type fakeEncoder struct {
	name string
	dim  int
	err  error

	mu    sync.Mutex
	calls [][]string
}

func (f *fakeEncoder) Name() string { return f.name }
func (f *fakeEncoder) Dim() int     { return f.dim }

func (f *fakeEncoder) Encode(ctx context.Context, texts []string, dst []float32) error {
	f.mu.Lock()
	f.calls = append(f.calls, slices.Clone(texts))
	f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	for i, t := range texts {
		copy(dst[i*f.dim:], vecOf(t, f.dim))
	}
	return nil
}

func (f *fakeEncoder) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fakeEncoder) lastCall() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[len(f.calls)-1]
}

// vecOf is the vector fakeEncoder returns for text.
func vecOf(text string, dim int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	s := h.Sum64()
	v := make([]float32, dim)
	for i := range v {
		s = s*6364136223846793005 + 1442695040888963407
		v[i] = float32(int64(s>>11)%1000) / 1000
	}
	models.Normalize(v)
	return v
}

func encode(t *testing.T, c *Cache, texts ...string) []float32 {
	t.Helper()
	dst := make([]float32, len(texts)*c.Dim())
	if err := c.Encode(context.Background(), texts, dst); err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if want := vecOf(text, c.Dim()); !slices.Equal(dst[i*c.Dim():(i+1)*c.Dim()], want) {
			t.Fatalf("vector of %q = %v, want %v", text, dst[i*c.Dim():(i+1)*c.Dim()], want)
		}
	}
	return dst
}

func open(t *testing.T, dir string, enc models.Encoder) *Cache {
	t.Helper()
	c, err := Open(dir, enc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestHitsSkipInnerEncoder(t *testing.T) {
	dir := t.TempDir()
	enc := &fakeEncoder{name: "fake:v1", dim: 4}
	c := open(t, dir, enc)
	if c.Name() != "fake:v1" || c.Dim() != 4 {
		t.Fatalf("Name/Dim = %q/%d", c.Name(), c.Dim())
	}

	encode(t, c, "a", "b", "a", "")
	if got, want := enc.lastCall(), []string{"a", "b", ""}; !slices.Equal(got, want) {
		t.Errorf("inner got %q, want %q (misses once each, in order)", got, want)
	}
	if c.Len() != 3 {
		t.Errorf("Len = %d, want 3", c.Len())
	}

	encode(t, c, "b", "a", "")
	if n := enc.callCount(); n != 1 {
		t.Errorf("all-hit Encode called inner: %d calls", n)
	}

	encode(t, c, "c", "a", "d", "c")
	if n := enc.callCount(); n != 2 {
		t.Fatalf("inner calls = %d, want 2", n)
	}
	if got, want := enc.lastCall(), []string{"c", "d"}; !slices.Equal(got, want) {
		t.Errorf("inner got %q, want only the misses %q", got, want)
	}

	if err := c.Encode(context.Background(), nil, nil); err != nil {
		t.Errorf("empty Encode: %v", err)
	}
	if err := c.Encode(context.Background(), []string{"a"}, make([]float32, 3)); err == nil {
		t.Error("wrong dst length: no error")
	}
}

func TestSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	enc := &fakeEncoder{name: "fake:v1", dim: 3}
	c := open(t, dir, enc)
	encode(t, c, "alpha", "beta", "gamma")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := c.Encode(context.Background(), []string{"alpha"}, make([]float32, 3)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Encode after Close: err = %v", err)
	}

	enc2 := &fakeEncoder{name: "fake:v1", dim: 3}
	c2 := open(t, dir, enc2)
	if c2.Len() != 3 || c2.Dropped() != 0 {
		t.Fatalf("reopened Len = %d, Dropped = %d; want 3, 0", c2.Len(), c2.Dropped())
	}
	encode(t, c2, "gamma", "alpha", "beta")
	if n := enc2.callCount(); n != 0 {
		t.Errorf("reopened cache called inner %d times", n)
	}

	// A different encoder identity uses a different file.
	enc3 := &fakeEncoder{name: "fake:v2", dim: 3}
	c3 := open(t, dir, enc3)
	if c3.Len() != 0 || c3.Path() == c2.Path() {
		t.Errorf("other encoder: Len %d, path %s (same as v1: %v)", c3.Len(), c3.Path(), c3.Path() == c2.Path())
	}
}

// recordSize is the on-disk size of one record for a text of n < 128 bytes.
func recordSize(n, dim int) int64 { return int64(1 + n + 4*dim + 4) }

func TestTornAndCorruptTail(t *testing.T) {
	const dim = 3
	texts := []string{"one", "two", "three"}
	hdrLen := int64(len(header("fake:v1", dim)))
	full := hdrLen
	for _, s := range texts {
		full += recordSize(len(s), dim)
	}
	lastStart := full - recordSize(len("three"), dim)
	tests := []struct {
		name     string
		damage   func(b []byte) []byte
		wantLen  int
		wantSize int64
	}{
		{"chop 1 byte", func(b []byte) []byte { return b[:len(b)-1] }, 2, lastStart},
		{"chop 9 bytes", func(b []byte) []byte { return b[:len(b)-9] }, 2, lastStart},
		{"only length byte of last", func(b []byte) []byte { return b[:lastStart+1] }, 2, lastStart},
		{"chop into second", func(b []byte) []byte { return b[:lastStart-2] }, 1, hdrLen + recordSize(3, dim)},
		{"flip byte in last vector", func(b []byte) []byte { b[len(b)-6] ^= 0x40; return b }, 2, lastStart},
		{"flip byte in last checksum", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, 2, lastStart},
		{"flip text of second", func(b []byte) []byte { b[hdrLen+recordSize(3, dim)+1] ^= 1; return b }, 1, hdrLen + recordSize(3, dim)},
		{"huge length varint", func(b []byte) []byte { return append(b, 0xff, 0xff, 0xff, 0xff, 0x0f) }, 3, full},
		{"garbage appended", func(b []byte) []byte { return append(b, "garbage!"...) }, 3, full},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			enc := &fakeEncoder{name: "fake:v1", dim: dim}
			c := open(t, dir, enc)
			for _, s := range texts { // one record per call, in order
				encode(t, c, s)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(c.Path())
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(b)) != full {
				t.Fatalf("file size %d, want %d", len(b), full)
			}
			damaged := tc.damage(b)
			if err := os.WriteFile(c.Path(), damaged, 0o644); err != nil {
				t.Fatal(err)
			}

			c2 := open(t, dir, enc)
			if c2.Len() != tc.wantLen {
				t.Errorf("Len = %d, want %d", c2.Len(), tc.wantLen)
			}
			if want := int64(len(damaged)) - tc.wantSize; c2.Dropped() != want {
				t.Errorf("Dropped = %d, want %d", c2.Dropped(), want)
			}
			st, err := os.Stat(c2.Path())
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() != tc.wantSize {
				t.Errorf("file truncated to %d bytes, want %d", st.Size(), tc.wantSize)
			}
			// The kept records answer without the inner encoder; the lost
			// ones are encoded again and appended after the good prefix.
			before := enc.callCount()
			encode(t, c2, texts[:tc.wantLen]...)
			if enc.callCount() != before {
				t.Errorf("kept records went to the inner encoder")
			}
			encode(t, c2, texts...)
			if err := c2.Close(); err != nil {
				t.Fatal(err)
			}
			c3 := open(t, dir, enc)
			if c3.Len() != 3 || c3.Dropped() != 0 {
				t.Errorf("after repair: Len %d, Dropped %d; want 3, 0", c3.Len(), c3.Dropped())
			}
		})
	}
}

func TestHeaderErrors(t *testing.T) {
	dir := t.TempDir()
	a := &fakeEncoder{name: "fake:a", dim: 3}
	c := open(t, dir, a)
	encode(t, c, "x")
	c.Close()
	good, err := os.ReadFile(c.Path())
	if err != nil {
		t.Fatal(err)
	}

	b := &fakeEncoder{name: "fake:b", dim: 3}
	bPath := filepath.Join(dir, fileName(b.name, b.dim))
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"other encoder's file", good, `encoder "fake:a" (dim 3), not "fake:b" (dim 3)`},
		{"bad magic", append([]byte("NOTEMB01"), good[8:]...), "bad magic"},
		{"empty file", []byte{}, "bad magic"},
		{"flipped name byte", func() []byte { d := slices.Clone(good); d[10] ^= 1; return d }(), "checksum mismatch"},
		{"torn header", good[:12], "corrupt header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(bPath, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(dir, b)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), bPath) {
				t.Fatalf("err = %v, want it to name %s and contain %q", err, bPath, tc.want)
			}
			if got, _ := os.ReadFile(bPath); !slices.Equal(got, tc.data) {
				t.Error("refused file was modified")
			}
		})
	}

	if _, err := Open(dir, &fakeEncoder{name: "zero", dim: 0}); err == nil {
		t.Error("dim 0 encoder: no error")
	}
}

func TestInnerErrorStoresNothing(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("server down")
	enc := &fakeEncoder{name: "fake:v1", dim: 2, err: boom}
	c := open(t, dir, enc)
	err := c.Encode(context.Background(), []string{"a"}, make([]float32, 2))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want wrapped %v", err, boom)
	}
	if c.Len() != 0 {
		t.Errorf("Len = %d after failed encode", c.Len())
	}
}

func TestConcurrentEncode(t *testing.T) {
	dir := t.TempDir()
	const dim = 5
	enc := &fakeEncoder{name: "fake:v1", dim: dim}
	c := open(t, dir, enc)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 30 {
				// Overlapping texts across goroutines.
				texts := []string{fmt.Sprint("t", i), fmt.Sprint("t", (i+g)%40), fmt.Sprint("g", g, "-", i)}
				dst := make([]float32, len(texts)*dim)
				if err := c.Encode(context.Background(), texts, dst); err != nil {
					t.Error(err)
					return
				}
				for j, s := range texts {
					if !slices.Equal(dst[j*dim:(j+1)*dim], vecOf(s, dim)) {
						t.Errorf("wrong vector for %q", s)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	want := 37 + 8*30 // t0..t36 plus each goroutine's own texts
	if c.Len() != want {
		t.Fatalf("Len = %d, want %d", c.Len(), want)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// Each text was stored exactly once: the file holds want records.
	st, _ := os.Stat(c.Path())
	size := int64(len(header(enc.name, dim)))
	for i := range 37 {
		size += recordSize(len(fmt.Sprint("t", i)), dim)
	}
	for g := range 8 {
		for i := range 30 {
			size += recordSize(len(fmt.Sprint("g", g, "-", i)), dim)
		}
	}
	if st.Size() != size {
		t.Errorf("file size %d, want %d (duplicate or missing records)", st.Size(), size)
	}
	c2 := open(t, dir, enc)
	if c2.Len() != want || c2.Dropped() != 0 {
		t.Errorf("reopen: Len %d Dropped %d", c2.Len(), c2.Dropped())
	}
}
