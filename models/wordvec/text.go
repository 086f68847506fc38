package wordvec

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
)

// builder accumulates vectors read from a foreign format. A word seen a second
// time is dropped (the first vector wins), as GloVe and word2vec loaders
// commonly do, so that a stray duplicate does not make a whole file unusable.
type builder struct {
	name   string
	dim    int
	words  []string
	matrix []float32
	index  map[string]int32
}

func newBuilder(name string, dim, sizeHint int) *builder {
	// Cap the preallocation: a header may claim more than the file holds.
	sizeHint = min(sizeHint, (1<<22)/dim)
	return &builder{
		name:   name,
		dim:    dim,
		words:  make([]string, 0, sizeHint),
		matrix: make([]float32, 0, sizeHint*dim),
		index:  make(map[string]int32, sizeHint),
	}
}

// has reports whether word was already added.
func (b *builder) has(word []byte) bool {
	_, ok := b.index[string(word)]
	return ok
}

// add appends word; its dim values must have been appended to b.matrix.
func (b *builder) add(word string) {
	b.index[word] = int32(len(b.words))
	b.words = append(b.words, word)
}

func (b *builder) finish() (*Vectors, error) {
	if len(b.words) == 0 {
		return nil, fmt.Errorf("%s: no vectors in file", b.name)
	}
	v := &Vectors{words: b.words, dim: b.dim, matrix: b.matrix, index: b.index}
	if _, err := v.encode(io.Discard); err != nil {
		return nil, fmt.Errorf("%s: %w", b.name, err)
	}
	return v, nil
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float32) bool {
	return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
}

// LoadGloVeText reads a GloVe text file (one "word v1 ... vd" line per word)
// or a word2vec text file (the same after a "count dim" header line).
func LoadGloVeText(path string) (*Vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	defer f.Close()
	return ReadGloVeText(f, path)
}

// ReadGloVeText reads GloVe or word2vec text vectors from r; name (usually
// the file path) prefixes error messages as name:line.
//
// The dimension is taken from the first line, and every later line must have
// the same number of values. A first line of exactly two integers is read as
// a word2vec "count dim" header, and then the file must hold count vectors.
// Fields are separated by spaces or tabs; blank lines are skipped; a word
// repeated later in the file keeps its first vector.
func ReadGloVeText(r io.Reader, name string) (*Vectors, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	p := textParser{name: name, want: -1}
	var (
		long   []byte
		fields [][]byte
	)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:%d: %w", name, p.line+1, err)
		}
		if len(line) == 0 && err != nil {
			break
		}
		p.line++
		fields = splitFields(fields[:0], line)
		if len(fields) > 0 {
			if perr := p.row(fields); perr != nil {
				return nil, perr
			}
		}
		if err != nil {
			break
		}
	}
	if p.b == nil {
		return nil, fmt.Errorf("%s: no vectors in file", name)
	}
	if p.want >= 0 && p.rows != p.want {
		return nil, fmt.Errorf("%s: header announces %d vectors, file holds %d", name, p.want, p.rows)
	}
	return p.b.finish()
}

// textParser holds the state of ReadGloVeText between lines.
type textParser struct {
	name string
	b    *builder // nil until the first non-blank line
	line int      // current line number, from 1
	want int      // vectors promised by a word2vec header, -1 when none
	rows int      // vector lines seen, duplicates included
}

// row handles the fields of one non-blank line.
func (p *textParser) row(fields [][]byte) error {
	if p.b == nil {
		if n, d, ok := countDimHeader(fields); ok {
			if d > maxDim {
				return fmt.Errorf("%s:%d: dimension %d in header exceeds %d", p.name, p.line, d, maxDim)
			}
			p.want = n
			p.b = newBuilder(p.name, d, n)
			return nil
		}
		if len(fields) < 2 {
			return fmt.Errorf("%s:%d: line holds a word but no values", p.name, p.line)
		}
		if len(fields)-1 > maxDim {
			return fmt.Errorf("%s:%d: %d values exceed the supported dimension %d", p.name, p.line, len(fields)-1, maxDim)
		}
		p.b = newBuilder(p.name, len(fields)-1, 1<<12)
	}
	b := p.b
	if got := len(fields) - 1; got != b.dim {
		return fmt.Errorf("%s:%d: word %q has %d values, want %d (the dimension of the first vector)", p.name, p.line, truncate(fields[0]), got, b.dim)
	}
	p.rows++
	if p.want >= 0 && p.rows > p.want {
		return fmt.Errorf("%s:%d: more vectors than the %d the header announces", p.name, p.line, p.want)
	}
	if b.has(fields[0]) {
		return nil
	}
	for k, fv := range fields[1:] {
		x, err := strconv.ParseFloat(string(fv), 32)
		if err != nil || !finite(float32(x)) {
			return fmt.Errorf("%s:%d: word %q: value %d is %q, not a finite number", p.name, p.line, truncate(fields[0]), k+1, truncate(fv))
		}
		b.matrix = append(b.matrix, float32(x))
	}
	b.add(string(fields[0]))
	return nil
}

// splitFields splits line on runs of spaces, tabs and line ends.
func splitFields(dst [][]byte, line []byte) [][]byte {
	i := 0
	for i < len(line) {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		if j > i {
			dst = append(dst, line[i:j])
		}
		i = j
	}
	return dst
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// countDimHeader recognises a word2vec "count dim" header line.
func countDimHeader(fields [][]byte) (count, dim int, ok bool) {
	if len(fields) != 2 {
		return 0, 0, false
	}
	n, err1 := strconv.Atoi(string(fields[0]))
	d, err2 := strconv.Atoi(string(fields[1]))
	if err1 != nil || err2 != nil || n < 0 || d <= 0 {
		return 0, 0, false
	}
	return n, d, true
}

// truncate shortens a field quoted in an error message.
func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// LoadWord2VecBinary reads a word2vec binary file, the format of the original
// C tool's -binary 1 output.
func LoadWord2VecBinary(path string) (*Vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	defer f.Close()
	return ReadWord2VecBinary(f, path)
}

// maxWordLen bounds a word in a binary file, so that a file that is not
// word2vec binary fails fast instead of being read as one giant word.
const maxWordLen = 1 << 12

// ReadWord2VecBinary reads word2vec binary vectors from r: a "count dim\n"
// header, then per word its bytes, a space and dim little-endian float32
// values, optionally followed by a newline. name prefixes error messages.
func ReadWord2VecBinary(r io.Reader, name string) (*Vectors, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("%s: reading the \"count dim\" header: %w", name, err)
	}
	count, dim, ok := countDimHeader(splitFields(nil, head))
	if !ok {
		return nil, fmt.Errorf("%s: first line %q is not a \"count dim\" header", name, truncate(bytes.TrimSpace(head)))
	}
	if dim > maxDim || count > maxCount {
		return nil, fmt.Errorf("%s: header %d x %d exceeds the supported %d x %d", name, count, dim, maxCount, maxDim)
	}
	b := newBuilder(name, dim, count)
	raw := make([]byte, 4*dim)
	var word []byte
	for i := range count {
		// Skip the separator left by the previous vector.
		c, err := br.ReadByte()
		for err == nil && isSpace(c) {
			c, err = br.ReadByte()
		}
		word = word[:0]
		for err == nil && c != ' ' {
			if len(word) == maxWordLen {
				return nil, fmt.Errorf("%s: vector %d: word longer than %d bytes: not word2vec binary?", name, i+1, maxWordLen)
			}
			word = append(word, c)
			c, err = br.ReadByte()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: vector %d of %d (word %q): unexpected end of file: truncated?", name, i+1, count, truncate(word))
		}
		if len(word) == 0 {
			return nil, fmt.Errorf("%s: vector %d: empty word", name, i+1)
		}
		if _, err := io.ReadFull(br, raw); err != nil {
			return nil, fmt.Errorf("%s: vector %d of %d (word %q): reading %d values: %v: truncated?", name, i+1, count, truncate(word), dim, err)
		}
		if b.has(word) {
			continue
		}
		for k := range dim {
			x := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
			if !finite(x) {
				return nil, fmt.Errorf("%s: vector %d (word %q): value %d is not finite", name, i+1, truncate(word), k+1)
			}
			b.matrix = append(b.matrix, x)
		}
		b.add(string(word))
	}
	for {
		c, err := br.ReadByte()
		if err != nil {
			break
		}
		if !isSpace(c) {
			return nil, fmt.Errorf("%s: data after the %d vectors the header announces", name, count)
		}
	}
	return b.finish()
}

// Open loads vectors from path in whichever format it holds: STEMWV (see
// Save), word2vec binary, or GloVe / word2vec text, each optionally gzipped.
func Open(path string) (*Vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open vectors: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	br := bufio.NewReaderSize(r, 1<<16)
	if m, _ := br.Peek(len(magic)); string(m) == magic {
		f.Close()
		return Load(path)
	}
	if m, _ := br.Peek(2); len(m) == 2 && m[0] == 0x1f && m[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<16)
	}
	if isWord2VecBinary(br) {
		return ReadWord2VecBinary(br, path)
	}
	return ReadGloVeText(br, path)
}

// isWord2VecBinary looks at the start of the stream: after a "count dim"
// header, a text file continues with lines of a word and dim numbers, while
// binary float bytes soon break that pattern (a NUL, a byte that is no part
// of a number, or a line of the wrong length).
func isWord2VecBinary(br *bufio.Reader) bool {
	p, err := br.Peek(br.Size())
	atEOF := err != nil
	nl := bytes.IndexByte(p, '\n')
	if nl < 0 {
		return false
	}
	_, dim, ok := countDimHeader(splitFields(nil, p[:nl]))
	if !ok {
		return false
	}
	rest := p[nl+1:]
	var fields [][]byte
	for len(rest) > 0 {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			if !atEOF {
				break // an incomplete line at the window's end proves nothing
			}
			end = len(rest)
		}
		line := rest[:end]
		rest = rest[min(end+1, len(rest)):]
		fields = splitFields(fields[:0], line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != dim+1 {
			return true
		}
		for _, f := range fields[1:] {
			if _, err := strconv.ParseFloat(string(f), 32); err != nil {
				return true
			}
		}
	}
	return false
}
