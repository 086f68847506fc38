package wordvec

import (
	"unicode"
	"unicode/utf8"
)

// span is one token: buf[start:end] of the scratch buffer it was cut into.
type span struct{ start, end int32 }

// Character classes for tokenisation.
const (
	clSep   = iota // anything that is not part of a word: dropped
	clLower        // lowercase and caseless letters, combining marks
	clUpper        // uppercase and titlecase letters
	clDigit
)

// asciiClass classifies the ASCII bytes once, so the common case costs a
// table lookup instead of a unicode call.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case c >= 'a' && c <= 'z':
			t[c] = clLower
		case c >= 'A' && c <= 'Z':
			t[c] = clUpper
		case c >= '0' && c <= '9':
			t[c] = clDigit
		default:
			t[c] = clSep
		}
	}
	return t
}()

func classOf(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return clUpper
	case unicode.IsLetter(r) || unicode.IsMark(r):
		return clLower
	case unicode.IsDigit(r):
		return clDigit
	}
	return clSep
}

// decodeAt returns the rune at text[i] and its width, with an ASCII fast path.
func decodeAt(text string, i int) (rune, int) {
	if c := text[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(text[i:])
}

// tokenize splits a KG symbol or a sentence into lowercase words, appending
// their bytes to buf and their spans to toks. Words are runs of letters and
// digits; everything else (. _ / - spaces, punctuation, symbols) separates
// them, and so do camelCase humps: "birthPlace" gives "birth place",
// "HTMLParser" gives "html parser" and "mp3Player" gives "mp3 player". Digits stay inside their word ("mp3",
// "0abc"), since ids and years must keep their spelling.
func tokenize(text string, buf []byte, toks []span) ([]byte, []span) {
	start := -1          // start in buf of the current token, -1 when none
	prev := uint8(clSep) // class of the previous rune
	for i := 0; i < len(text); {
		r, w := decodeAt(text, i)
		cl := classOf(r)
		if cl == clSep {
			if start >= 0 {
				toks = append(toks, span{int32(start), int32(len(buf))})
				start = -1
			}
			prev = cl
			i += w
			continue
		}
		if start >= 0 && cl == clUpper {
			split := prev == clLower
			if !split && i+w < len(text) {
				// A capitalised word after an acronym or a number:
				// "HTMLParser", "mp3Player" (but "3D" stays whole).
				next, _ := decodeAt(text, i+w)
				split = classOf(next) == clLower
			}
			if split {
				toks = append(toks, span{int32(start), int32(len(buf))})
				start = len(buf)
			}
		}
		if start < 0 {
			start = len(buf)
		}
		if r < utf8.RuneSelf {
			if cl == clUpper {
				r += 'a' - 'A'
			}
			buf = append(buf, byte(r))
		} else {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
		prev = cl
		i += w
	}
	if start >= 0 {
		toks = append(toks, span{int32(start), int32(len(buf))})
	}
	return buf, toks
}

// Tokens returns the words the encoder sees in text, for inspection and
// tests; the encoder itself tokenises into reused buffers.
func Tokens(text string) []string {
	buf, toks := tokenize(text, nil, nil)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = string(buf[t.start:t.end])
	}
	return out
}
