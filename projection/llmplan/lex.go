package llmplan

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/stem-kgqa/stem/schema"
)

// This file holds the tolerant lexer both reply parsers share. Models wrap
// their answer in prose, code fences and <think> blocks, quote with either
// kind of quote (or typographic ones), and mix Python and JSON syntax; the
// lexer turns all of that into quoted strings, bare text, commas and a tree
// of bracket groups, and the parsers read plans off the tree.

type tokKind uint8

const (
	tokStr   tokKind = iota // a quoted string; text is its unescaped content
	tokText                 // bare text between structural characters, trimmed
	tokComma                // ','
	tokNode                 // a bracket group; see node
)

// token is one lexical item; a tokNode token carries its group in node.
type token struct {
	kind tokKind
	text string
	// key reports that a string or text is followed by ':' (a JSON or
	// Python dict key).
	key        bool
	start, end int // byte offsets in the cleaned reply
	node       *node
}

// node is a bracket group: '(', '[' or '{' up to its matching close (or the
// end of the reply when a truncated reply leaves it open).
type node struct {
	open       byte
	items      []token
	start, end int
}

// clean strips what wraps an answer rather than belonging to it: <think>
// blocks of reasoning models (an unclosed one swallows the rest, since the
// answer never came) and code-fence lines.
func clean(s string) string {
	if indexFold(s, "<think>") >= 0 {
		var b strings.Builder
		for {
			i := indexFold(s, "<think>")
			if i < 0 {
				b.WriteString(s)
				break
			}
			b.WriteString(s[:i])
			j := indexFold(s[i:], "</think>")
			if j < 0 {
				break
			}
			s = s[i+j+len("</think>"):]
		}
		s = b.String()
	}
	if !strings.Contains(s, "```") {
		return s
	}
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// indexFold is strings.Index ignoring ASCII case. (Lower-casing the reply
// first would shift offsets wherever it holds invalid UTF-8.)
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// placeholderAt returns the length of a placeholder such as "[ENT1]" that
// starts at s[i], or 0, so that placeholders written without quotes are read
// as text rather than as list brackets.
func placeholderAt(s string, i int) int {
	w := s[i:min(len(s), i+17)]
	j := strings.IndexByte(w, ']')
	if j < 0 || j > 16 {
		return 0
	}
	if schema.IsPlaceholder(s[i : i+j+1]) {
		return j + 1
	}
	return 0
}

// closingQuote finds the end of a string whose opening quote ends at i,
// returning the unescaped content and the offset just past the closing
// quote, or ok false when the string never closes (then the opening quote
// was just a character, such as an apostrophe).
func closingQuote(s string, i int, open rune) (content string, next int, ok bool) {
	var b strings.Builder
	for j := i; j < len(s); {
		r, w := utf8.DecodeRuneInString(s[j:])
		if r == '\\' && open != '“' && open != '‘' && j+1 < len(s) {
			// Python and JSON escapes; an unknown one keeps its backslash.
			c := s[j+1]
			switch c {
			case '"', '\'', '\\', '/':
				b.WriteByte(c)
				j += 2
			case 'n', 't', 'r':
				b.WriteByte(' ')
				j += 2
			case 'u':
				if j+6 <= len(s) {
					if v, ok := hex4(s[j+2 : j+6]); ok {
						b.WriteRune(v)
						j += 6
						continue
					}
				}
				b.WriteByte('\\')
				j++
			default:
				b.WriteByte('\\')
				j++
			}
			continue
		}
		switch open {
		case '"':
			if r == '"' {
				return b.String(), j + w, true
			}
		case '“':
			if r == '”' || r == '"' {
				return b.String(), j + w, true
			}
		case '\'', '‘':
			// An apostrophe inside the text ("Rome's") is not a closing
			// quote: one is followed by a delimiter.
			if (r == '\'' || r == '’') && closesHere(s, j+w) {
				return b.String(), j + w, true
			}
		}
		b.WriteString(s[j : j+w])
		j += w
	}
	return "", 0, false
}

// closesHere reports whether a single quote ending at i is followed (after
// spaces) by a delimiter, the end of a line or the end of the reply.
func closesHere(s string, i int) bool {
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r':
			continue
		case ',', ')', ']', '}', ':', '\n', ';':
			return true
		}
		return false
	}
	return true
}

func hex4(s string) (rune, bool) {
	var v rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	if !utf8.ValidRune(v) {
		return 0, false
	}
	return v, true
}

// quoteClass groups opening quotes by their closing rule.
func quoteClass(open rune) int {
	switch open {
	case '"':
		return 0
	case '“':
		return 1
	}
	return 2
}

// canOpenSingle reports whether a single quote at i can open a string: it
// must follow the start, a space or a delimiter, so that apostrophes inside
// words ("team's") stay text.
func canOpenSingle(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	switch r {
	case ' ', '\t', '\n', '\r', '(', '[', '{', ',', ':', '=':
		return true
	}
	return false
}

// lex reads s into a tree of bracket groups. The root's open is 0.
func lex(s string) *node {
	root := &node{end: len(s)}
	stack := []*node{root}
	top := func() *node { return stack[len(stack)-1] }
	textStart := -1
	// noClose[c] >= 0 records that a quote of class c found no closing
	// quote, which keeps a reply full of unmatched quotes linear.
	noClose := [3]int{-1, -1, -1}
	flush := func(end int) {
		if textStart < 0 {
			return
		}
		if t := strings.TrimSpace(s[textStart:end]); t != "" {
			top().items = append(top().items, token{kind: tokText, text: t, start: textStart, end: end})
		}
		textStart = -1
	}
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '“' || ((r == '\'' || r == '‘') && canOpenSingle(s, i)):
			c := quoteClass(r)
			if noClose[c] >= 0 {
				// A string opened earlier of this kind found no closing
				// quote up to the end, so neither will this one.
				break
			}
			content, next, ok := closingQuote(s, i+w, r)
			if !ok {
				noClose[c] = i
				break
			}
			flush(i)
			top().items = append(top().items, token{kind: tokStr, text: content, start: i, end: next})
			i = next
			continue
		case r == '[' && placeholderAt(s, i) > 0:
			if textStart < 0 {
				textStart = i
			}
			i += placeholderAt(s, i)
			continue
		case r == '(' || r == '[' || r == '{':
			flush(i)
			n := &node{open: byte(r), start: i}
			top().items = append(top().items, token{kind: tokNode, start: i, node: n})
			stack = append(stack, n)
			i += w
			continue
		case r == ')' || r == ']' || r == '}':
			want := byte('(')
			if r == ']' {
				want = '['
			} else if r == '}' {
				want = '{'
			}
			// Close up to the matching open; a close with no matching open
			// (the stray ')' of "(a, b), Strategy)") is dropped.
			k := len(stack) - 1
			for k > 0 && stack[k].open != want {
				k--
			}
			if k == 0 {
				break
			}
			flush(i)
			for len(stack)-1 >= k {
				n := top()
				n.end = i + w
				stack = stack[:len(stack)-1]
				setEnd(top(), n)
			}
			i += w
			continue
		case r == ',':
			flush(i)
			top().items = append(top().items, token{kind: tokComma, start: i, end: i + 1})
			i += w
			continue
		case r == ':':
			// A key is the string or text just before ':'; the colon
			// itself is kept in text only when it is inside text.
			blank := textStart < 0 || strings.TrimSpace(s[textStart:i]) == ""
			if it := top().items; blank && len(it) > 0 && it[len(it)-1].kind == tokStr {
				it[len(it)-1].key = true
				textStart = -1
				i += w
				continue
			}
		}
		if textStart < 0 {
			textStart = i
		}
		i += w
	}
	flush(len(s))
	for len(stack) > 1 {
		n := top()
		n.end = len(s)
		stack = stack[:len(stack)-1]
		setEnd(top(), n)
	}
	return root
}

// setEnd records a closed child's end on its token in parent.
func setEnd(parent, child *node) {
	for k := len(parent.items) - 1; k >= 0; k-- {
		if parent.items[k].node == child {
			parent.items[k].end = child.end
			return
		}
	}
}

// elements splits a group's items at commas; empty elements (trailing
// commas) are dropped.
func (n *node) elements() [][]token {
	var out [][]token
	var cur []token
	for _, t := range n.items {
		if t.kind == tokComma {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// hasNode reports whether the group contains a nested group.
func (n *node) hasNode() bool {
	for _, t := range n.items {
		if t.kind == tokNode {
			return true
		}
	}
	return false
}

var (
	spaceRE       = regexp.MustCompile(`\s+`)
	placeholderRE = regexp.MustCompile(`\[\s*(?i:ent)(\d+)\s*\]`)
)

// tidy collapses whitespace and writes placeholders canonically, so that
// "[ent1]" and "[ ENT1 ]" in different replies compare equal.
func tidy(s string) string {
	s = strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
	return placeholderRE.ReplaceAllString(s, "[ENT$1]")
}

// snippet shortens s to one line of at most 160 bytes for error messages.
func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		cut := 160
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}
