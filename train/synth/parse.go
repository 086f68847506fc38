package synth

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Limits past which a P6 reply is taken for a runaway generation.
const (
	MaxReplyBytes = 64 << 10
	MaxSentences  = 32
)

// P6Reply is what a P6 reply says: one sentence per triple and the
// question, or that no question fits.
type P6Reply struct {
	Sentences  []string
	Question   string
	NoSolution bool
}

// ParseError says why a reply could not be read, quoting its start.
type ParseError struct {
	Reason  string
	Snippet string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("unreadable P6 reply: %s: %q", e.Reason, e.Snippet)
}

func parseErr(reason, text string) *ParseError {
	s := strings.Join(strings.Fields(text), " ")
	if len(s) > 80 {
		i := 80
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "..."
	}
	return &ParseError{Reason: reason, Snippet: s}
}

// ParseP6 reads a P6 reply. It accepts the prompt's format
// [("s1", "s2"), "question"] with either kind of quotes (typographic ones
// too) or none, without the outer brackets, as a JSON array or object
// ({"sentences": [...], "question": "..."}), or as labelled lines
// ("1. s1" ... "Question: ..."), wrapped in prose, code fences or a
// <think> block. "No Solution", alone or as the question, sets NoSolution.
// A reply with no sentence or no question, or more than MaxSentences, is a
// *ParseError.
func ParseP6(reply string) (P6Reply, error) {
	s := cleanReply(reply)
	if s == "" {
		return P6Reply{}, parseErr("empty reply", reply)
	}
	if len(s) > MaxReplyBytes {
		return P6Reply{}, parseErr(fmt.Sprintf("longer than %d bytes", MaxReplyBytes), s)
	}
	if isNoSolution(s) {
		return P6Reply{NoSolution: true}, nil
	}
	r, ok := parseJSON(s)
	if !ok {
		r, ok = parseTuple(s)
	}
	if !ok {
		r, ok = parseLines(s)
	}
	if !ok {
		if strings.Contains(strings.ToLower(s), "no solution") {
			return P6Reply{NoSolution: true}, nil
		}
		return P6Reply{}, parseErr("no sentence list and question", s)
	}
	r.Question = strings.TrimSpace(r.Question)
	if isNoSolution(r.Question) {
		return P6Reply{NoSolution: true}, nil
	}
	kept := r.Sentences[:0]
	for _, x := range r.Sentences {
		if x = strings.TrimSpace(x); x != "" {
			kept = append(kept, x)
		}
	}
	r.Sentences = kept
	switch {
	case len(r.Sentences) == 0:
		return P6Reply{}, parseErr("no sentence", s)
	case r.Question == "":
		return P6Reply{}, parseErr("no question", s)
	case len(r.Sentences) > MaxSentences:
		return P6Reply{}, parseErr(fmt.Sprintf("more than %d sentences", MaxSentences), s)
	}
	return r, nil
}

// cleanReply drops a reasoning model's <think> block, code fences and an
// "Output:" label.
func cleanReply(s string) string {
	if i := strings.LastIndex(s, "</think>"); i >= 0 {
		s = s[i+len("</think>"):]
	} else if strings.HasPrefix(strings.TrimSpace(s), "<think>") {
		return "" // thinking never ended: no answer
	}
	if strings.Contains(s, "```") {
		var b strings.Builder
		for line := range strings.SplitSeq(s, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "```") {
				b.WriteString(line)
				b.WriteByte('\n')
			}
		}
		s = b.String()
	}
	s = strings.TrimSpace(s)
	for _, label := range []string{"output:", "answer:", "result:"} {
		if len(s) >= len(label) && strings.EqualFold(s[:len(label)], label) {
			s = strings.TrimSpace(s[len(label):])
		}
	}
	return s
}

// isNoSolution reports whether s says only "No Solution".
func isNoSolution(s string) bool {
	t := strings.ToLower(strings.Trim(s, " \t\r\n[](){}\"'“”‘’.,:;*`!"))
	return strings.Join(strings.Fields(t), " ") == "no solution"
}

// parseJSON reads [["s1", "s2"], "q"] or {"sentences": [...], "question": "..."}.
func parseJSON(s string) (P6Reply, bool) {
	if s[0] != '[' && s[0] != '{' {
		return P6Reply{}, false
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return P6Reply{}, false
	}
	strs := func(x any) ([]string, bool) {
		xs, ok := x.([]any)
		if !ok {
			return nil, false
		}
		out := make([]string, 0, len(xs))
		for _, e := range xs {
			str, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, str)
		}
		return out, true
	}
	switch v := v.(type) {
	case []any:
		if len(v) != 2 {
			return P6Reply{}, false
		}
		ss, ok1 := strs(v[0])
		q, ok2 := v[1].(string)
		return P6Reply{Sentences: ss, Question: q}, ok1 && ok2
	case map[string]any:
		var r P6Reply
		var okS, okQ bool
		for k, x := range v {
			switch strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(k)) {
			case "sentences", "statements", "assertions", "declarativesentences":
				r.Sentences, okS = strs(x)
			case "question", "multihopquestion", "query":
				r.Question, okQ = x.(string)
			}
		}
		return r, okS && okQ
	}
	return P6Reply{}, false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// quoteClosers returns the runes that may close a string opened by r, or
// nil when r opens none.
func quoteClosers(r rune) []rune {
	switch r {
	case '"':
		return []rune{'"'}
	case '“', '”':
		return []rune{'”', '"', '“'}
	case '\'':
		return []rune{'\''}
	case '‘', '’':
		return []rune{'’', '\''}
	}
	return nil
}

// scanQuoted reads the quoted string at s[i]. A closing quote counts only
// where an element may end (before ',', ')', ']', a line break or the end),
// so apostrophes inside ("Obama's") do not cut the string.
func scanQuoted(s string, i int) (content string, next int, ok bool) {
	open, size := utf8.DecodeRuneInString(s[i:])
	closers := quoteClosers(open)
	if closers == nil {
		return "", i, false
	}
	var b strings.Builder
	for j := i + size; j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		if r == '\\' && j+1 < len(s) {
			switch s[j+1] {
			case '"', '\\', '\'':
				b.WriteByte(s[j+1])
				j += 2
				continue
			case 'n':
				b.WriteByte('\n')
				j += 2
				continue
			case 't':
				b.WriteByte('\t')
				j += 2
				continue
			}
		}
		if isCloser(r, closers) {
			k := j + n
			for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r') {
				k++
			}
			if k == len(s) || strings.IndexByte(",)]}\n", s[k]) >= 0 {
				return b.String(), j + n, true
			}
		}
		b.WriteString(s[j : j+n]) // bytes as they are, valid UTF-8 or not
		j += n
	}
	return "", i, false
}

func isCloser(r rune, closers []rune) bool {
	for _, c := range closers {
		if r == c {
			return true
		}
	}
	return false
}

// scanElem reads one element of a group ending at closer: a quoted
// string, or bare text up to the next ',' or closer outside brackets.
func scanElem(s string, i int, closer byte) (elem string, next int) {
	r, _ := utf8.DecodeRuneInString(s[i:])
	if quoteClosers(r) != nil {
		if c, j, ok := scanQuoted(s, i); ok {
			return c, j
		}
	}
	depth := 0
	j := i
	for ; j < len(s); j++ {
		c := s[j]
		if depth == 0 && (c == ',' || c == closer) {
			break
		}
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return unquote(strings.TrimSpace(s[i:j])), j
}

// unquote strips one pair of matching quotes around bare text.
func unquote(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	closers := quoteClosers(r)
	if closers == nil || len(s) <= n {
		return s
	}
	last, m := utf8.DecodeLastRuneInString(s)
	if isCloser(last, closers) && len(s) >= n+m {
		return strings.TrimSpace(s[n : len(s)-m])
	}
	return s
}

// groupStart finds where the sentence group opens: the inner bracket of
// "[(" or "[[" or "((", or a bracket directly followed by a quote.
func groupStart(s string) (open int, outer byte, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != '[' && s[i] != '(' {
			continue
		}
		j := skipSpace(s, i+1)
		if j < len(s) && (s[j] == '(' || s[j] == '[') && !isPlaceholderAt(s, j) {
			return j, s[i], true
		}
		if j < len(s) {
			if r, _ := utf8.DecodeRuneInString(s[j:]); quoteClosers(r) != nil {
				return i, 0, true
			}
		}
	}
	if strings.HasPrefix(s, "(") {
		return 0, 0, true // bare sentences in a tuple without outer brackets
	}
	return 0, 0, false
}

var placeholderRe = regexp.MustCompile(`^\[ENT\d+\]`)

func isPlaceholderAt(s string, i int) bool { return placeholderRe.MatchString(s[i:]) }

// parseTuple reads [(s1, s2, ...), question] and its variants.
func parseTuple(s string) (P6Reply, bool) {
	open, outer, ok := groupStart(s)
	if !ok {
		return P6Reply{}, false
	}
	closer := byte(')')
	if s[open] == '[' {
		closer = ']'
	}
	var elems []string
	i := open + 1
	for {
		i = skipSpace(s, i)
		if i >= len(s) {
			break
		}
		if s[i] == closer {
			i++
			break
		}
		var e string
		e, i = scanElem(s, i, closer)
		elems = append(elems, e)
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		if i < len(s) && s[i] == closer {
			i++
			break
		}
		// Stray text after a quoted element: skip to the next separator.
		for i < len(s) && s[i] != ',' && s[i] != closer {
			i++
		}
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
	rest := strings.TrimSpace(s[min(i, len(s)):])
	rest = strings.TrimSpace(strings.TrimPrefix(rest, ","))
	rest = trimLabel(rest)
	var q string
	if r, _ := utf8.DecodeRuneInString(rest); rest != "" && quoteClosers(r) != nil {
		if c, _, ok := scanQuoted(rest, 0); ok {
			q = c
		}
	}
	if q == "" {
		q = rest
		if outer == '[' {
			q = strings.TrimSpace(strings.TrimSuffix(q, "]"))
		} else if outer == '(' {
			q = strings.TrimSpace(strings.TrimSuffix(q, ")"))
		}
		q = unquote(q)
	}
	if q == "" && outer == 0 && len(elems) >= 2 {
		// A flat tuple: the question is its last element.
		q, elems = elems[len(elems)-1], elems[:len(elems)-1]
	}
	return P6Reply{Sentences: elems, Question: q}, len(elems) > 0 && q != ""
}

var (
	questionLine = regexp.MustCompile(`(?i)^(?:\*\*)?(?:multi[- ]?hop\s+)?question(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*(.+)$`)
	sentenceLine = regexp.MustCompile(`(?i)^(?:\d+\s*[.):]|[-*•]|sentence[ _]?\d*\s*[:.])\s*(.+)$`)
)

// trimLabel drops a leading "Multi-Hop Question:" label.
func trimLabel(s string) string {
	if m := questionLine.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	return s
}

// parseLines reads numbered or bulleted sentence lines and a
// "Question:" line.
func parseLines(s string) (P6Reply, bool) {
	var r P6Reply
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		if m := questionLine.FindStringSubmatch(line); m != nil {
			r.Question = unquote(strings.TrimSpace(m[1]))
			continue
		}
		if m := sentenceLine.FindStringSubmatch(line); m != nil {
			x := strings.TrimSpace(m[1])
			x = strings.TrimSuffix(strings.TrimSuffix(x, ","), ",")
			r.Sentences = append(r.Sentences, unquote(x))
		}
	}
	return r, len(r.Sentences) > 0 && r.Question != ""
}
