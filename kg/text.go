package kg

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Normalize folds a name for loose matching: lower case, every run of
// whitespace, punctuation, symbols and '_' becomes one space, and the
// ends are trimmed. It works on Unicode letters and digits ("Café_Müller" ->
// "café müller"), so question mentions and KG names that differ only in
// case or separators compare equal. Names made only of separators (MetaQA
// has a film called "$") normalise to "".
func Normalize(s string) string {
	if isNormalASCII(s) {
		return s
	}
	return string(appendNormalize(make([]byte, 0, len(s)), s))
}

// appendNormalize appends Normalize(s) to b, so that index builds can reuse
// one buffer instead of allocating a string per name.
func appendNormalize(b []byte, s string) []byte {
	if isNormalASCII(s) {
		return append(b, s...)
	}
	start := len(b)
	space := false
	for _, r := range s {
		if isSep(r) {
			space = len(b) > start
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b = append(b, byte(r))
			continue
		}
		b = utf8.AppendRune(b, unicode.ToLower(r))
	}
	return b
}

// isNormalASCII reports whether s is already in Normalize's output form and
// pure ASCII, so the common case returns without allocating.
func isNormalASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == ' ':
			if i == 0 || i == len(s)-1 || s[i-1] == ' ' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isSep reports whether r separates words: anything in ASCII that is not a
// letter or digit, and Unicode spaces, punctuation, symbols and controls.
// utf8.RuneError (from invalid UTF-8) is a symbol, so bad bytes split words
// instead of leaking into keys.
func isSep(r rune) bool {
	if r < utf8.RuneSelf {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}
	return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.IsControl(r)
}

// EntityText turns an entity name into words an encoder can read:
// "Barack_Obama" -> "barack obama", "<http://dbpedia.org/resource/Barack_Obama>"
// -> "barack obama". Freebase machine ids ("m.0abc12", "g.11b6x") carry no
// words and are kept as they are, so distinct ids stay distinct. A name with
// no letters or digits (MetaQA's film "$") is returned trimmed rather than
// as an empty string.
func EntityText(name string) string {
	s := name
	if isIRI(s) {
		s = localName(s)
	}
	if isFreebaseID(s) {
		return s
	}
	if t := Normalize(s); t != "" {
		return t
	}
	if t := strings.TrimSpace(s); t != "" {
		return t
	}
	return strings.TrimSpace(name)
}

// RelationText turns a relation name into words: Freebase dotted paths
// ("location.location.nearby_airports" -> "location location nearby
// airports"), PathQuestion's "__people__person__gender" -> "people person
// gender", camelCase ("birthPlace" -> "birth place") and IRIs, which are
// reduced to their local name first
// ("http://dbpedia.org/ontology/birthPlace" -> "birth place").
func RelationText(name string) string {
	s := name
	if isIRI(s) {
		s = localName(s)
	}
	if t := Normalize(splitCamel(s)); t != "" {
		return t
	}
	return strings.TrimSpace(name)
}

// isIRI reports whether s looks like an absolute IRI rather than a plain name.
func isIRI(s string) bool {
	return strings.Contains(s, "://") || strings.HasPrefix(s, "urn:")
}

// localName returns the part of an IRI after its last '#', '/' or (for URNs)
// ':', percent-decoded: the human-chosen name in most vocabularies.
func localName(iri string) string {
	s := strings.TrimRight(iri, "/#")
	i := strings.LastIndexByte(s, '#')
	if i < 0 {
		i = strings.LastIndexByte(s, '/')
	}
	if i < 0 && strings.HasPrefix(s, "urn:") {
		i = strings.LastIndexByte(s, ':')
	}
	if i >= 0 && i+1 < len(s) {
		s = s[i+1:]
	}
	if u, err := url.PathUnescape(s); err == nil {
		s = u
	}
	return s
}

// isFreebaseID matches Freebase MIDs and GUIDs such as "m.0abc12" or
// "g.11bc_x": a one-letter namespace, a dot, then lower-case alphanumerics.
func isFreebaseID(s string) bool {
	if len(s) < 3 || (s[0] != 'm' && s[0] != 'g') || s[1] != '.' {
		return false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// splitCamel inserts a space at camelCase word boundaries: before an upper
// case letter that follows a lower case letter or digit ("birthPlace"), and
// before the last capital of an acronym that starts a word ("HTMLParser" ->
// "HTML Parser").
func splitCamel(s string) string {
	hasUpper := false
	for _, r := range s {
		if unicode.IsUpper(r) {
			hasUpper = true
			break
		}
	}
	if !hasUpper {
		return s
	}
	rs := []rune(s)
	b := make([]rune, 0, len(rs)+4)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) {
			p := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(p) || unicode.IsDigit(p) || (unicode.IsUpper(p) && nextLower) {
				b = append(b, ' ')
			}
		}
		b = append(b, r)
	}
	return string(b)
}
