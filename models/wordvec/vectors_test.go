package wordvec

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNewVectorsErrors(t *testing.T) {
	tests := []struct {
		name   string
		words  []string
		dim    int
		matrix []float32
		want   string
	}{
		{"zero dim", []string{"a"}, 0, nil, "dimension 0"},
		{"short matrix", []string{"a", "b"}, 2, []float32{1, 2, 3}, "matrix holds 3 values, want 2 words x 2 dims"},
		{"duplicate", []string{"a", "a"}, 1, []float32{1, 2}, `word "a" appears twice`},
		{"NaN", []string{"a", "b"}, 1, []float32{1, float32(math.NaN())}, `word "b" has a non-finite value`},
		{"Inf", []string{"a"}, 2, []float32{1, float32(math.Inf(-1))}, "non-finite value -Inf at dimension 1"},
	}
	for _, tt := range tests {
		_, err := NewVectors(tt.words, tt.dim, tt.matrix)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestVectorsLookup(t *testing.T) {
	v, err := NewVectors([]string{"zoo", "ljubljana", "日本"}, 2, []float32{1, 2, 3, 4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 3 || v.Dim() != 2 {
		t.Fatalf("Len %d Dim %d, want 3 2", v.Len(), v.Dim())
	}
	for _, tt := range []struct {
		w    string
		want []float32
	}{{"zoo", []float32{1, 2}}, {"ljubljana", []float32{3, 4}}, {"日本", []float32{5, 6}}, {"Zoo", nil}} {
		got, ok := v.Lookup(tt.w)
		if ok != (tt.want != nil) || !slices.Equal(got, tt.want) {
			t.Errorf("Lookup(%q) = %v, %v; want %v", tt.w, got, ok, tt.want)
		}
	}
	if v.Word(1) != "ljubljana" {
		t.Errorf("Word(1) = %q", v.Word(1))
	}
}

func saveTestVectors(t *testing.T) (*Vectors, string) {
	t.Helper()
	v, err := NewVectors([]string{"the", "zoo", "", "日本", "m.0abc"}, 3, []float32{
		0.1, 0.2, 0.3,
		-1, 0, 1e-30,
		7, 8, 9,
		1.5, -2.5, 3.25,
		0, 0, 0,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "v.stemwv")
	if err := v.Save(p); err != nil {
		t.Fatal(err)
	}
	return v, p
}

func TestSaveLoadRoundTrip(t *testing.T) {
	v, p := saveTestVectors(t)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// 24 header + 6 offsets x 4 + words + 15 floats x 4 + 32 checksum.
	if want := int64(24 + 24 + len("thezoo日本m.0abc") + 60 + 32); st.Size() != want {
		t.Errorf("file size %d, want %d", st.Size(), want)
	}
	for _, load := range []func(string) (*Vectors, error){Load, Open} {
		w, err := load(p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(w.words, v.words) || !slices.Equal(w.matrix, v.matrix) || w.Dim() != 3 || w.Checksum() != v.Checksum() {
			t.Errorf("loaded vectors differ: %q %v", w.words, w.matrix)
		}
		if got, _ := w.Lookup("日本"); !slices.Equal(got, []float32{1.5, -2.5, 3.25}) {
			t.Errorf("Lookup after load = %v", got)
		}
	}
	if err := Verify(p); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestLoadDamaged covers truncation and corruption at every region of the
// file: each must be an ErrCorrupt error, never a panic or wrong vectors.
func TestLoadDamaged(t *testing.T) {
	_, p := saveTestVectors(t)
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	n := len(good)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "reading header"},
		{"truncated header", good[:10], "reading header"},
		{"truncated words", good[:30], "truncated or damaged"},
		{"truncated vectors", good[:n-40], "truncated or damaged"},
		{"truncated checksum", good[:n-1], "truncated or damaged"},
		{"extra byte", append(slices.Clone(good), 0), "truncated or damaged"},
		{"bad magic", flip(good, 0), "bad magic"},
		{"bad version", flip(good, 6), "format version"},
		{"flipped word byte", flip(good, 50), "checksum mismatch"},
		{"flipped vector byte", flip(good, n-40), "checksum mismatch"},
		{"flipped checksum byte", flip(good, n-1), "checksum mismatch"},
		{"huge count", setU32(good, 8, 1<<31), "implausible header"},
		{"offsets out of order", setU32(good, 28, 1000), "checksum mismatch"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		q := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
		if err := os.WriteFile(q, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(q)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%s): err = %v, want ErrCorrupt mentioning %q", tt.name, err, tt.want)
		}
		if !strings.Contains(err.Error(), q) {
			t.Errorf("Load(%s): error %q does not name the file", tt.name, err)
		}
		if err := Verify(q); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Verify(%s): err = %v, want ErrCorrupt", tt.name, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil || errors.Is(err, ErrCorrupt) {
		t.Errorf("Load(missing) = %v, want a not-found error", err)
	}
}

func flip(b []byte, i int) []byte {
	c := slices.Clone(b)
	c[i] ^= 0x55
	return c
}

func setU32(b []byte, i int, x uint32) []byte {
	c := slices.Clone(b)
	c[i], c[i+1], c[i+2], c[i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	return c
}
