package wordvec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeWink reads the JSON file of the wink-embeddings npm packages:
//
//	{"precision":8,"l2NormIndex":100,"wordIndex":101,"size":341479,
//	 "dimensions":100,"words":[...],
//	 "vectors":{"the":[v1,...,v100,l2norm,row],...},"unkVector":[...]}
//
// It streams: the 300 MB text is scanned once through a small window, and
// only the words and the float32 matrix are kept. encoding/json's Decoder
// would allocate a token per number (34 million of them) and take minutes on
// two cores; this scanner takes seconds. progress, when not nil, is called
// now and then with the number of bytes consumed.
func decodeWink(ctx context.Context, r io.Reader, progress func(int64)) (*Vectors, error) {
	s := &jsonScanner{r: r, buf: make([]byte, 0, 1<<20)}
	var (
		size, dim          = -1, -1
		normIndex, wordIdx = -1, -1
		listed             []string // the "words" array, when present
		words              []string
		matrix             []float32
		filled             []bool
	)
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	for first := true; ; first = false {
		c, err := s.peekNonSpace()
		if err != nil {
			return nil, err
		}
		if c == '}' {
			s.pos++
			break
		}
		if !first {
			if err := s.expect(','); err != nil {
				return nil, err
			}
		}
		key, err := s.readString(nil)
		if err != nil {
			return nil, err
		}
		if err := s.expect(':'); err != nil {
			return nil, err
		}
		switch string(key) {
		case "size", "dimensions", "l2NormIndex", "wordIndex":
			n, err := s.readInt()
			if err != nil {
				return nil, fmt.Errorf("%q: %w", key, err)
			}
			switch string(key) {
			case "size":
				size = n
			case "dimensions":
				dim = n
			case "l2NormIndex":
				normIndex = n
			case "wordIndex":
				wordIdx = n
			}
		case "words":
			if listed, err = s.readStringArray(); err != nil {
				return nil, fmt.Errorf("\"words\": %w", err)
			}
		case "vectors":
			if size < 0 || size > maxCount || dim <= 0 || dim > maxDim {
				return nil, fmt.Errorf("\"vectors\" before a valid \"size\" (%d) and \"dimensions\" (%d)", size, dim)
			}
			if normIndex < 0 {
				normIndex = dim
			}
			if wordIdx < 0 {
				wordIdx = dim + 1
			}
			if normIndex != dim || wordIdx != dim+1 {
				return nil, fmt.Errorf("unexpected layout: l2NormIndex %d, wordIndex %d, want %d and %d", normIndex, wordIdx, dim, dim+1)
			}
			words = make([]string, size)
			matrix = make([]float32, size*dim)
			filled = make([]bool, size)
			if err := s.readVectors(ctx, dim, words, matrix, filled, progress); err != nil {
				return nil, fmt.Errorf("\"vectors\": %w", err)
			}
		default:
			if err := s.skipValue(0); err != nil {
				return nil, fmt.Errorf("%q: %w", key, err)
			}
		}
	}
	if words == nil {
		return nil, errors.New("no \"vectors\" object")
	}
	for i, ok := range filled {
		if !ok {
			return nil, fmt.Errorf("row %d of %d has no vector", i, size)
		}
		if listed != nil && (i >= len(listed) || listed[i] != words[i]) {
			return nil, fmt.Errorf("row %d is %q in \"vectors\" but not in \"words\"", i, words[i])
		}
	}
	if listed != nil && len(listed) != size {
		return nil, fmt.Errorf("\"words\" lists %d words, \"size\" is %d", len(listed), size)
	}
	return NewVectors(words, dim, matrix)
}

// readVectors reads the "vectors" object: word -> [dim values, norm, row].
func (s *jsonScanner) readVectors(ctx context.Context, dim int, words []string, matrix []float32, filled []bool, progress func(int64)) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	var key []byte
	vals := make([]float32, dim)
	for n := 0; ; n++ {
		c, err := s.peekNonSpace()
		if err != nil {
			return err
		}
		if c == '}' {
			s.pos++
			return nil
		}
		if n > 0 {
			if err := s.expect(','); err != nil {
				return err
			}
		}
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if progress != nil {
				progress(s.consumed + int64(s.pos))
			}
		}
		if key, err = s.readString(key[:0]); err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return fmt.Errorf("word %q: %w", key, err)
		}
		if err := s.expect('['); err != nil {
			return fmt.Errorf("word %q: %w", key, err)
		}
		for k := range dim + 2 {
			if k > 0 {
				if err := s.expect(','); err != nil {
					return fmt.Errorf("word %q: value %d: %w", key, k+1, err)
				}
			}
			num, err := s.readNumber()
			if err != nil {
				return fmt.Errorf("word %q: value %d: %w", key, k+1, err)
			}
			switch {
			case k < dim:
				x, err := strconv.ParseFloat(string(num), 32)
				if err != nil || !finite(float32(x)) {
					return fmt.Errorf("word %q: value %d is %q, not a finite number", key, k+1, num)
				}
				vals[k] = float32(x)
			case k == dim+1:
				i, err := strconv.Atoi(string(num))
				if err != nil || i < 0 || i >= len(words) {
					return fmt.Errorf("word %q: row index %q outside 0..%d", key, num, len(words)-1)
				}
				if filled[i] {
					return fmt.Errorf("word %q: row %d already holds %q", key, i, words[i])
				}
				filled[i] = true
				words[i] = string(key)
				copy(matrix[i*dim:(i+1)*dim], vals)
			}
		}
		if err := s.expect(']'); err != nil {
			return fmt.Errorf("word %q: %d values expected: %w", key, dim+2, err)
		}
	}
}

// jsonScanner is a minimal pull scanner over a sliding window of r, enough
// for the fixed shape of the wink file: no value is ever materialised beyond
// the current token.
type jsonScanner struct {
	r        io.Reader
	buf      []byte
	pos      int
	consumed int64 // bytes dropped from the front of buf so far
	eof      bool
}

// fill makes at least n unread bytes available unless the input ends first;
// it reports whether it could.
func (s *jsonScanner) fill(n int) (bool, error) {
	for len(s.buf)-s.pos < n {
		if s.eof {
			return false, nil
		}
		if s.pos > 0 {
			s.consumed += int64(s.pos)
			s.buf = s.buf[:copy(s.buf, s.buf[s.pos:])]
			s.pos = 0
		}
		if len(s.buf) == cap(s.buf) {
			nb := make([]byte, len(s.buf), 2*cap(s.buf))
			copy(nb, s.buf)
			s.buf = nb
		}
		m, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+m]
		if errors.Is(err, io.EOF) {
			s.eof = true
		} else if err != nil {
			return false, err
		}
	}
	return true, nil
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", s.consumed+int64(s.pos), fmt.Sprintf(format, args...))
}

func (s *jsonScanner) peekNonSpace() (byte, error) {
	for {
		if s.pos == len(s.buf) {
			ok, err := s.fill(1)
			if err != nil {
				return 0, err
			}
			if !ok {
				return 0, s.errorf("unexpected end of JSON")
			}
		}
		c := s.buf[s.pos]
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return c, nil
		}
		s.pos++
	}
}

func (s *jsonScanner) expect(want byte) error {
	c, err := s.peekNonSpace()
	if err != nil {
		return err
	}
	if c != want {
		return s.errorf("found %q, want %q", c, want)
	}
	s.pos++
	return nil
}

// readNumber returns the bytes of a JSON number; they stay valid until the
// next call on s.
func (s *jsonScanner) readNumber() ([]byte, error) {
	if _, err := s.peekNonSpace(); err != nil {
		return nil, err
	}
	for i := s.pos; ; i++ {
		if i == len(s.buf) {
			off := i - s.pos
			ok, err := s.fill(off + 1)
			if err != nil {
				return nil, err
			}
			i = s.pos + off
			if !ok {
				break
			}
		}
		c := s.buf[i]
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			if i == s.pos {
				return nil, s.errorf("found %q, want a number", c)
			}
			num := s.buf[s.pos:i]
			s.pos = i
			return num, nil
		}
	}
	if len(s.buf) == s.pos {
		return nil, s.errorf("unexpected end of JSON, want a number")
	}
	num := s.buf[s.pos:]
	s.pos = len(s.buf)
	return num, nil
}

func (s *jsonScanner) readInt() (int, error) {
	num, err := s.readNumber()
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(string(num))
	if err != nil {
		return 0, s.errorf("%q is not an integer", num)
	}
	return n, nil
}

// readString reads a JSON string, appending its decoded bytes to dst.
func (s *jsonScanner) readString(dst []byte) ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	for {
		if s.pos == len(s.buf) {
			if ok, err := s.fill(1); err != nil {
				return nil, err
			} else if !ok {
				return nil, s.errorf("unterminated string")
			}
		}
		// Copy the run of plain bytes in one go.
		i := s.pos
		for i < len(s.buf) && s.buf[i] != '"' && s.buf[i] != '\\' && s.buf[i] >= 0x20 {
			i++
		}
		dst = append(dst, s.buf[s.pos:i]...)
		s.pos = i
		if i == len(s.buf) {
			continue
		}
		switch c := s.buf[i]; {
		case c == '"':
			s.pos++
			return dst, nil
		case c < 0x20:
			return nil, s.errorf("control character %#x in string", c)
		}
		// A backslash escape: make the longest one (\uXXXX\uXXXX) available.
		if _, err := s.fill(12); err != nil {
			return nil, err
		}
		if s.pos+1 >= len(s.buf) {
			return nil, s.errorf("unterminated escape")
		}
		e := s.buf[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if s.pos+1 < len(s.buf) && s.buf[s.pos] == '\\' && s.buf[s.pos+1] == 'u' {
					s.pos += 2
					if lo, ok := s.hex4(); ok {
						r2 = lo
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return nil, s.errorf("bad escape \\%c", e)
		}
	}
}

func (s *jsonScanner) hex4() (rune, bool) {
	if s.pos+4 > len(s.buf) {
		return 0, false
	}
	var r rune
	for _, c := range s.buf[s.pos : s.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.pos += 4
	return r, true
}

func (s *jsonScanner) readStringArray() ([]string, error) {
	if err := s.expect('['); err != nil {
		return nil, err
	}
	var (
		out []string
		tmp []byte
	)
	for n := 0; ; n++ {
		c, err := s.peekNonSpace()
		if err != nil {
			return nil, err
		}
		if c == ']' {
			s.pos++
			return out, nil
		}
		if n > 0 {
			if err := s.expect(','); err != nil {
				return nil, err
			}
		}
		if tmp, err = s.readString(tmp[:0]); err != nil {
			return nil, err
		}
		out = append(out, string(tmp))
	}
}

// skipValue skips any JSON value (used for keys the converter does not need).
func (s *jsonScanner) skipValue(depth int) error {
	if depth > 64 {
		return s.errorf("JSON nested too deeply")
	}
	c, err := s.peekNonSpace()
	if err != nil {
		return err
	}
	switch c {
	case '"':
		_, err := s.readString(nil)
		return err
	case '[', '{':
		close := byte(']')
		if c == '{' {
			close = '}'
		}
		s.pos++
		for n := 0; ; n++ {
			c, err := s.peekNonSpace()
			if err != nil {
				return err
			}
			if c == close {
				s.pos++
				return nil
			}
			if n > 0 {
				if err := s.expect(','); err != nil {
					return err
				}
			}
			if close == '}' {
				if _, err := s.readString(nil); err != nil {
					return err
				}
				if err := s.expect(':'); err != nil {
					return err
				}
			}
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
		}
	case 't', 'f', 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if lit[0] == c {
				if ok, err := s.fill(len(lit)); err != nil {
					return err
				} else if !ok || string(s.buf[s.pos:s.pos+len(lit)]) != lit {
					return s.errorf("bad literal, want %s", lit)
				}
				s.pos += len(lit)
				return nil
			}
		}
	}
	_, err = s.readNumber()
	return err
}
