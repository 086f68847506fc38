package wordvec

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadGloVeText(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		words  []string
		matrix []float32
		err    string
	}{
		{name: "glove", in: "a 1 2\nb 3 4\n", words: []string{"a", "b"}, matrix: []float32{1, 2, 3, 4}},
		{name: "no final newline, CRLF, tabs, blank lines", in: "a 1 2\r\n\n  \nb\t3  4 ", words: []string{"a", "b"}, matrix: []float32{1, 2, 3, 4}},
		{name: "word2vec text header", in: "2 3\nx 1 2 3 \ny -1 -2 -3 \n", words: []string{"x", "y"}, matrix: []float32{1, 2, 3, -1, -2, -3}},
		{name: "duplicate keeps first", in: "a 1\nb 2\na 3\n", words: []string{"a", "b"}, matrix: []float32{1, 2}},
		{name: "exponents", in: "é 1e-3 -2.5E+2\n", words: []string{"é"}, matrix: []float32{0.001, -250}},
		{name: "wrong dimension", in: "a 1 2\nb 3 4\nc 5\n", err: "in.txt:3: word \"c\" has 1 values, want 2"},
		{name: "wrong dimension after blank", in: "a 1 2\n\nb 3 4 5\n", err: "in.txt:3:"},
		{name: "not a number", in: "a 1 2\nb 3 x\n", err: `in.txt:2: word "b": value 2 is "x"`},
		{name: "NaN", in: "a NaN 2\n", err: "in.txt:1: word \"a\": value 1"},
		{name: "Inf", in: "a 1 +Inf\n", err: "in.txt:1: word \"a\": value 2"},
		{name: "overflow", in: "a 1 1e40\n", err: "in.txt:1:"},
		{name: "word only", in: "a\n", err: "in.txt:1: line holds a word but no values"},
		{name: "empty", in: "", err: "in.txt: no vectors"},
		{name: "header only", in: "0 5\n", err: "in.txt: no vectors"},
		{name: "header count too small", in: "1 1\na 1\nb 2\n", err: "in.txt:3: more vectors than the 1"},
		{name: "header count too large", in: "3 1\na 1\nb 2\n", err: "header announces 3 vectors, file holds 2"},
		{name: "header dim mismatch", in: "1 2\na 1\n", err: "in.txt:2: word \"a\" has 1 values, want 2"},
	}
	for _, tt := range tests {
		v, err := ReadGloVeText(strings.NewReader(tt.in), "in.txt")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err = %v, want it to contain %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !slices.Equal(v.words, tt.words) || !slices.Equal(v.matrix, tt.matrix) {
			t.Errorf("%s: got %q %v, want %q %v", tt.name, v.words, v.matrix, tt.words, tt.matrix)
		}
	}
}

func TestReadGloVeTextLongLine(t *testing.T) {
	// Lines longer than the reader's 64 KiB buffer must still parse.
	vals := strings.Repeat(" 0.123456789", 10000)
	v, err := ReadGloVeText(strings.NewReader("w"+vals+"\nv"+vals+"\n"), "long")
	if err != nil {
		t.Fatal(err)
	}
	if v.Dim() != 10000 || v.Len() != 2 || v.Row(1)[9999] != 0.123456789 {
		t.Errorf("Dim %d Len %d", v.Dim(), v.Len())
	}
}

func TestLoadGloVeFixture(t *testing.T) {
	v, err := LoadGloVeText(filepath.Join("testdata", "tiny.glove.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 6 || v.Dim() != 4 {
		t.Fatalf("Len %d Dim %d, want 6 4", v.Len(), v.Dim())
	}
	if row, ok := v.Lookup("zoo"); !ok || !slices.Equal(row, []float32{0.31205, -0.23114, 0.42121, 0.0077}) {
		t.Errorf("zoo = %v", row)
	}
	if _, err := LoadGloVeText(filepath.Join("testdata", "missing.txt")); err == nil {
		t.Error("missing file: no error")
	}
}

// word2vecBinary encodes words and rows in the C word2vec -binary 1 layout.
func word2vecBinary(words []string, dim int, m []float32, header string) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for i, w := range words {
		b.WriteString(w + " ")
		for _, x := range m[i*dim : (i+1)*dim] {
			binary.Write(&b, binary.LittleEndian, math.Float32bits(x))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestReadWord2VecBinary(t *testing.T) {
	words := []string{"</s>", "the", "zoo"}
	m := []float32{0, 0, 1, 2, 0.5, -0.25}
	good := word2vecBinary(words, 2, m, "3 2\n")
	v, err := ReadWord2VecBinary(bytes.NewReader(good), "w.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.words, words) || !slices.Equal(v.matrix, m) {
		t.Errorf("got %q %v", v.words, v.matrix)
	}
	// Without the optional newlines.
	nonl := bytes.ReplaceAll(good, []byte("\nthe"), []byte("the"))
	if v, err := ReadWord2VecBinary(bytes.NewReader(nonl), "w.bin"); err != nil || v.Len() != 3 {
		t.Errorf("without newlines: %v", err)
	}
	nan := word2vecBinary([]string{"a"}, 1, []float32{float32(math.NaN())}, "1 1\n")
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"truncated in vector", good[:len(good)-3], "w.bin: vector 3 of 3 (word \"zoo\"): reading 2 values"},
		{"truncated in word", good[:len(good)-10], "w.bin: vector 3 of 3"},
		{"no header", []byte("the 1 2\n"), "not a \"count dim\" header"},
		{"empty", nil, "reading the \"count dim\" header"},
		{"count too large", word2vecBinary(words, 2, m, "4 2\n"), "vector 4 of 4"},
		{"trailing data", append(slices.Clone(good), "extra 1"...), "data after the 3 vectors"},
		{"NaN", nan, "value 1 is not finite"},
		{"huge dim", []byte("1 99999999\n"), "exceeds the supported"},
		{"long word", append([]byte("1 1\n"), bytes.Repeat([]byte("x"), maxWordLen+1)...), "word longer than"},
	}
	for _, tt := range tests {
		_, err := ReadWord2VecBinary(bytes.NewReader(tt.in), "w.bin")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestOpenDetectsFormat(t *testing.T) {
	dir := t.TempDir()
	words := []string{"film", "zoo"}
	m := []float32{0.5, 1, -2, 3}
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		zw.Write(b)
		zw.Close()
		return out.Bytes()
	}
	v, err := NewVectors(words, 2, m)
	if err != nil {
		t.Fatal(err)
	}
	stemwv := filepath.Join(dir, "v.stemwv")
	if err := v.Save(stemwv); err != nil {
		t.Fatal(err)
	}
	// A binary file whose first vector happens to start with text bytes.
	textish := word2vecBinary([]string{"a", "b"}, 1, []float32{math.Float32frombits(0x31323334), 1}, "2 1\n")
	files := map[string][]byte{
		"glove.txt":     []byte("film 0.5 1\nzoo -2 3\n"),
		"w2v.txt":       []byte("2 2\nfilm 0.5 1\nzoo -2 3\n"),
		"w2v.bin":       word2vecBinary(words, 2, m, "2 2\n"),
		"glove.txt.gz":  gz([]byte("film 0.5 1\nzoo -2 3\n")),
		"w2v.bin.gz":    gz(word2vecBinary(words, 2, m, "2 2\n")),
		"textish.bin":   textish,
		"bad-vectors.x": []byte("film 0.5 1\nzoo -2\n"),
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files[name] = []byte(p)
	}
	for _, name := range []string{"glove.txt", "w2v.txt", "w2v.bin", "glove.txt.gz", "w2v.bin.gz"} {
		got, err := Open(string(files[name]))
		if err != nil {
			t.Errorf("Open(%s): %v", name, err)
			continue
		}
		if got.Checksum() != v.Checksum() {
			t.Errorf("Open(%s): got %q %v, want %q %v", name, got.words, got.matrix, words, m)
		}
	}
	if got, err := Open(stemwv); err != nil || got.Checksum() != v.Checksum() {
		t.Errorf("Open(stemwv): %v", err)
	}
	if got, err := Open(string(files["textish.bin"])); err != nil || got.Len() != 2 {
		t.Errorf("Open(textish.bin): %v", err)
	}
	if _, err := Open(string(files["bad-vectors.x"])); err == nil || !strings.Contains(err.Error(), "bad-vectors.x:2:") {
		t.Errorf("Open(bad-vectors.x): err = %v, want file:line", err)
	}
}

// checkVectors asserts the invariants every successfully read table keeps.
func checkVectors(t *testing.T, v *Vectors) {
	t.Helper()
	if v.Len() == 0 || v.Dim() <= 0 || len(v.matrix) != v.Len()*v.Dim() || len(v.index) != v.Len() {
		t.Fatalf("inconsistent table: Len %d Dim %d matrix %d index %d", v.Len(), v.Dim(), len(v.matrix), len(v.index))
	}
	for i, w := range v.words {
		if j, ok := v.index[w]; !ok || int(j) != i {
			t.Fatalf("word %q at row %d indexed as %d", w, i, j)
		}
	}
	for _, x := range v.matrix {
		if !finite(x) {
			t.Fatalf("non-finite value %v", x)
		}
	}
	// What was read must survive the binary format unchanged.
	p := filepath.Join(t.TempDir(), "f.stemwv")
	if err := v.Save(p); err != nil {
		t.Fatal(err)
	}
	w, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.words, v.words) || !slices.Equal(w.matrix, v.matrix) {
		t.Fatal("Save/Load changed the table")
	}
}

func FuzzReadGloVeText(f *testing.F) {
	for _, s := range []string{
		"a 1 2\nb 3 4\n",
		"2 3\nx 1 2 3 \ny -1 -2 -3 \n",
		"a 1 2\r\n\n  \nb\t3  4 ",
		"a 1e-3 -2.5E+2\nb NaN 1\n",
		"3 1\na 1\nb 2\n",
		"a 1\na 2\n",
		"\xff\xfe 0.5\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadGloVeText(bytes.NewReader(data), "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") {
				t.Errorf("error %q does not start with the file name", err)
			}
			return
		}
		checkVectors(t, v)
	})
}

func FuzzReadWord2VecBinary(f *testing.F) {
	f.Add(word2vecBinary([]string{"</s>", "the"}, 2, []float32{0, 0, 1, 2}, "2 2\n"))
	f.Add(word2vecBinary([]string{"a"}, 1, []float32{float32(math.NaN())}, "1 1\n"))
	f.Add([]byte("1 3\nabc 123456789012"))
	f.Add([]byte("2 1\na \x00\x00\x80?b \x00\x00\x80?"))
	f.Add([]byte("0 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadWord2VecBinary(bytes.NewReader(data), "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") {
				t.Errorf("error %q does not start with the file name", err)
			}
			return
		}
		checkVectors(t, v)
	})
}
