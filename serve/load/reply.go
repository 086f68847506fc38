package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A reply is read by a small scanner rather than json.Unmarshal: the
// check needs the answer names alone, while a reply is mostly chains and
// timings, and in-process the client shares the CPU with the server it
// measures. json.Unmarshal validated and then skipped every byte, which
// cost the client a sixth of the run's CPU on MetaQA (measured with
// --cpuprofile); the scanner reads each byte once, stops after the
// answers, and allocates only the names.

var (
	keyAnswers = []byte("answers")
	keyAnswer  = []byte("answer")
)

// answerNames appends to dst the "answer" of every element of the
// top-level "answers" array of a plan.View's JSON. It does not validate
// what follows the array.
func answerNames(b []byte, dst []string) ([]string, error) {
	s := scanner{b: b}
	if !s.expect('{') {
		return dst, s.fail("the reply is not a JSON object")
	}
	for first := true; ; first = false {
		if s.expect('}') {
			return dst, s.fail(`the reply has no "answers"`)
		}
		if !first && !s.expect(',') {
			return dst, s.fail("want , between members")
		}
		key, err := s.key()
		if err != nil {
			return dst, err
		}
		if !bytes.Equal(key, keyAnswers) {
			if err := s.skipValue(); err != nil {
				return dst, err
			}
			continue
		}
		return s.answers(dst)
	}
}

// scanner reads JSON from b at i.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) fail(what string) error {
	return fmt.Errorf("reply byte %d: %s", s.i, what)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// expect consumes c after white space, reporting whether it was there.
func (s *scanner) expect(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str consumes a string and returns its raw bytes, quotes included, and
// whether it holds escapes.
func (s *scanner) str() ([]byte, bool, error) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, s.fail("want a string")
	}
	start, escaped := s.i, false
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i++
		case '"':
			s.i++
			return s.b[start:s.i], escaped, nil
		}
	}
	return nil, false, s.fail("unterminated string")
}

// text decodes a string's raw bytes.
func text(raw []byte, escaped bool) (string, error) {
	if !escaped {
		return string(raw[1 : len(raw)-1]), nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("string %s: %w", raw, err)
	}
	return v, nil
}

// key consumes an object key and its colon.
func (s *scanner) key() ([]byte, error) {
	raw, escaped, err := s.str()
	if err != nil {
		return nil, err
	}
	if !s.expect(':') {
		return nil, s.fail("want : after a key")
	}
	if escaped {
		// No key of a View needs escaping; one that has them is compared
		// decoded all the same.
		k, err := text(raw, true)
		return []byte(k), err
	}
	return raw[1 : len(raw)-1], nil
}

// skipValue consumes one value of any kind.
func (s *scanner) skipValue() error {
	s.ws()
	if s.i >= len(s.b) {
		return s.fail("want a value")
	}
	switch s.b[s.i] {
	case '"':
		_, _, err := s.str()
		return err
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, _, err := s.str(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.i++
					return nil
				}
			}
			s.i++
		}
		return s.fail("unterminated object or array")
	}
	// A number, true, false or null runs to the next delimiter.
	start := s.i
	for s.i < len(s.b) && !delimiter(s.b[s.i]) {
		s.i++
	}
	if s.i == start {
		return s.fail("want a value")
	}
	return nil
}

// answers reads the answers array: the "answer" of each object.
func (s *scanner) answers(dst []string) ([]string, error) {
	s.ws()
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		// A View writes [], but null means the same.
		return dst, nil
	}
	if !s.expect('[') {
		return dst, s.fail(`"answers" is not an array`)
	}
	for first := true; ; first = false {
		if s.expect(']') {
			return dst, nil
		}
		if !first && !s.expect(',') {
			return dst, s.fail("want , between answers")
		}
		if !s.expect('{') {
			return dst, s.fail("an answer is not an object")
		}
		found := false
		for firstKey := true; ; firstKey = false {
			if s.expect('}') {
				break
			}
			if !firstKey && !s.expect(',') {
				return dst, s.fail("want , between members")
			}
			key, err := s.key()
			if err != nil {
				return dst, err
			}
			if !bytes.Equal(key, keyAnswer) {
				if err := s.skipValue(); err != nil {
					return dst, err
				}
				continue
			}
			raw, escaped, err := s.str()
			if err != nil {
				return dst, err
			}
			name, err := text(raw, escaped)
			if err != nil {
				return dst, err
			}
			dst, found = append(dst, name), true
		}
		if !found {
			return dst, errors.New(`an answer has no "answer" name`)
		}
	}
}

func delimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
