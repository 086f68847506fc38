package llmplan

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/stem-kgqa/stem/schema"
)

// Limits past which a reply is taken for a runaway generation, not a plan.
const (
	MaxAssertions = 16
	MaxTriples    = 32
	// MaxReplyBytes bounds a reply once <think> blocks and fences are
	// stripped; a plan takes a few hundred bytes.
	MaxReplyBytes = 64 << 10
)

// ParseError says why a model's reply is not a plan, quoting the part of it
// that is at fault (or its start), so that a log shows what the model said.
type ParseError struct {
	// What was being read: "decomposition", "triples" or "strategy".
	What string
	// Reason says what is missing or wrong.
	Reason string
	// Snippet is the offending text, shortened to one line.
	Snippet string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("unreadable %s: %s: %q", e.What, e.Reason, e.Snippet)
}

func parseErr(what, reason, text string) *ParseError {
	return &ParseError{What: what, Reason: reason, Snippet: snippet(text)}
}

// Decomposition is one SGDA answer: atomic assertions with [ENTn]
// placeholders, and the answer strategy when the reply named one.
type Decomposition struct {
	Assertions []string
	Strategy   schema.Strategy
	// HasStrategy reports whether the reply named a strategy unambiguously;
	// when false, Strategy is Precision only by default.
	HasStrategy bool
}

var (
	strategyWordRE = regexp.MustCompile(`(?i)\b(precision|breadth)\b`)
	// strategyLineRE matches a line that states the strategy outright:
	// "Strategy: Breadth", "**Answer strategy** - precision".
	strategyLineRE = regexp.MustCompile(`(?im)^[^\w\n]*(?:(?:answer(?:ing)?|retrieval|response)[ _])?strategy[^\w\n]*(?:is[^\w\n]*)?(precision|breadth)\b`)
	// listItemRE matches a numbered or bulleted line, or "Assertion 2: ...".
	listItemRE = regexp.MustCompile(`^\s*(?:\d{1,2}\s*[.):]|[-*•]|(?i:assertion)[ _]?\d{0,2}\s*[.):-])\s*(.+)$`)
)

// strategy priorities: a stated "Strategy: X" beats a strategy inside the
// plan's tuple, which beats a word in the surrounding prose.
const (
	prioProse = iota + 1
	prioPlan
	prioExplicit
)

type mention struct {
	s    schema.Strategy
	prio int
}

// strategyOf reads a string that is nothing but a strategy name.
func strategyOf(s string) (schema.Strategy, bool) {
	t := strings.Trim(strings.TrimSpace(s), "*`'\"“”‘’.!:;()[]{} ")
	st, err := schema.ParseStrategy(t)
	return st, err == nil && t != ""
}

func wordMentions(text string, prio int, ms *[]mention) {
	for _, m := range strategyWordRE.FindAllString(text, -1) {
		st, _ := schema.ParseStrategy(m)
		*ms = append(*ms, mention{st, prio})
	}
}

// resolve picks the strategy from the highest-priority mentions, or reports
// none when there are none or they disagree.
func resolve(ms []mention) (schema.Strategy, bool) {
	best := 0
	for _, m := range ms {
		best = max(best, m.prio)
	}
	var st schema.Strategy
	found := false
	for _, m := range ms {
		if m.prio != best {
			continue
		}
		if found && m.s != st {
			return schema.Precision, false
		}
		st, found = m.s, true
	}
	return st, found
}

// assertionKey reports whether a dict key names the plan's assertions.
func assertionKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"assert", "decomp", "step", "hop", "plan", "sentence", "statement", "claim", "sub"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// collect gathers the assertion strings of a group in order, and the
// strategy mentions in it at priority prio.
func collect(n *node, prio int, ms *[]mention) []string {
	var out []string
	for _, el := range n.elements() {
		toks := el
		if el[0].key {
			k := el[0].text
			toks = el[1:]
			switch {
			case strings.Contains(strings.ToLower(k), "strateg"):
				for _, t := range toks {
					if t.kind == tokStr || t.kind == tokText {
						wordMentions(t.text, prioExplicit, ms)
					}
				}
				continue
			case !assertionKey(k):
				// "question", "reasoning" and the like: not the plan.
				continue
			}
		}
		for _, t := range toks {
			switch t.kind {
			case tokStr:
				if st, ok := strategyOf(t.text); ok {
					*ms = append(*ms, mention{st, prio})
				} else if !t.key && strings.TrimSpace(t.text) != "" {
					out = append(out, t.text)
				}
			case tokText:
				wordMentions(t.text, prio, ms)
			case tokNode:
				out = append(out, collect(t.node, prio, ms)...)
			}
		}
	}
	return out
}

// ParseDecomposition reads an SGDA reply: atomic assertions and, when given,
// the answer strategy. It accepts P1's format "((a1, a2), Strategy)" with
// either kind of quotes (typographic ones too), its unbalanced form "(a1,
// a2), Strategy)", Python tuples and lists, JSON arrays and objects
// ({"assertions": [...], "strategy": "Breadth"}), numbered or bulleted
// lists, and unquoted tuples, wrapped in prose, code fences or <think>
// blocks, with trailing commas. The strategy may also stand on its own line
// ("Strategy: Breadth"). A reply with no assertion, none with an [ENTn]
// placeholder, or more than MaxAssertions is rejected with a *ParseError.
func ParseDecomposition(reply string) (Decomposition, error) {
	s := clean(reply)
	if len(s) > MaxReplyBytes {
		return Decomposition{}, parseErr("decomposition", fmt.Sprintf("reply of %d bytes, more than %d", len(s), MaxReplyBytes), s)
	}
	var ms []mention
	for _, m := range strategyLineRE.FindAllStringSubmatch(s, -1) {
		st, _ := schema.ParseStrategy(m[1])
		ms = append(ms, mention{st, prioExplicit})
	}
	root := lex(s)
	as := planFromGroups(root, &ms)
	if len(as) == 0 {
		as = planFromList(s, &ms)
	}
	if len(as) == 0 {
		as = planFromStrings(root, &ms)
	}
	if len(as) == 0 {
		as = planFromBareGroup(s, root, &ms)
	}
	if len(as) == 0 {
		as = planFromLines(s, &ms)
	}
	var d Decomposition
	seen := map[string]bool{}
	hasPlaceholder := false
	for _, a := range as {
		a = tidy(a)
		if a == "" || seen[a] {
			continue
		}
		seen[a] = true
		d.Assertions = append(d.Assertions, a)
		hasPlaceholder = hasPlaceholder || placeholderRE.MatchString(a)
	}
	switch {
	case len(d.Assertions) == 0:
		return Decomposition{}, parseErr("decomposition", "no assertion found", s)
	case len(d.Assertions) > MaxAssertions:
		return Decomposition{}, parseErr("decomposition", fmt.Sprintf("%d assertions, more than %d", len(d.Assertions), MaxAssertions), s)
	case !hasPlaceholder:
		return Decomposition{}, parseErr("decomposition", "no assertion has an [ENTn] placeholder for the answer", strings.Join(d.Assertions, " | "))
	}
	d.Strategy, d.HasStrategy = resolve(ms)
	return d, nil
}

// planFromGroups takes the first top-level bracket group holding quoted
// assertions; strategy words inside it, or in the text right after it (the
// unbalanced "..., Strategy)"), belong to the plan, others to prose.
func planFromGroups(root *node, ms *[]mention) []string {
	chosen := -1
	var as []string
	var local []mention
	for i, t := range root.items {
		if t.kind != tokNode {
			continue
		}
		var m []mention
		if a := collect(t.node, prioPlan, &m); len(a) > 0 {
			chosen, as, local = i, a, m
			break
		}
	}
	if chosen < 0 {
		return nil
	}
	*ms = append(*ms, local...)
	after := true
	for i, t := range root.items {
		switch {
		case i == chosen:
			continue
		case i > chosen && t.kind == tokNode:
			after = false
		case t.kind == tokText:
			p := prioProse
			if i > chosen && after {
				p = prioPlan
			}
			wordMentions(t.text, p, ms)
		case t.kind == tokStr:
			if st, ok := strategyOf(t.text); ok {
				p := prioProse
				if i > chosen && after {
					p = prioPlan
				}
				*ms = append(*ms, mention{st, p})
			}
		}
	}
	return as
}

// unquote returns the content of text that is one quoted string (with an
// optional trailing comma), else the text without trailing commas.
func unquote(text string) string {
	root := lex(text)
	var strs []string
	other := false
	for _, t := range root.items {
		switch t.kind {
		case tokStr:
			strs = append(strs, t.text)
		case tokComma:
		default:
			other = true
		}
	}
	if len(strs) == 1 && !other {
		return strs[0]
	}
	return strings.TrimRight(strings.TrimSpace(text), ", ")
}

// planFromList reads numbered or bulleted lines as assertions.
func planFromList(s string, ms *[]mention) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		m := listItemRE.FindStringSubmatch(line)
		if m == nil {
			wordMentions(line, prioProse, ms)
			continue
		}
		item := unquote(m[1])
		if strategyLineRE.MatchString(item) {
			continue // already counted as explicit
		}
		if st, ok := strategyOf(item); ok {
			*ms = append(*ms, mention{st, prioPlan})
			continue
		}
		out = append(out, item)
	}
	if !anyPlaceholder(out) {
		return nil
	}
	return out
}

// planFromStrings takes quoted strings outside any group.
func planFromStrings(root *node, ms *[]mention) []string {
	var out []string
	var local []mention
	for _, t := range root.items {
		switch t.kind {
		case tokStr:
			if st, ok := strategyOf(t.text); ok {
				local = append(local, mention{st, prioPlan})
			} else if !t.key {
				out = append(out, t.text)
			}
		case tokText:
			wordMentions(t.text, prioProse, &local)
		}
	}
	if !anyPlaceholder(out) {
		return nil
	}
	*ms = append(*ms, local...)
	return out
}

// planFromBareGroup reads an unquoted tuple "(Rome's airport is [ENT1],
// Breadth)": the first group whose own text holds a placeholder, split at
// commas; a piece with no placeholder is taken to continue its neighbour
// ("texarkana, arkansas is in [ENT1]").
func planFromBareGroup(s string, root *node, ms *[]mention) []string {
	n := firstBare(root)
	if n == nil {
		return nil
	}
	end := n.end
	if end > n.start+1 && strings.ContainsRune(")]}", rune(s[end-1])) {
		end--
	}
	var pieces []string
	for _, p := range splitTop(s[n.start+1 : end]) {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if st, ok := strategyOf(p); ok {
			*ms = append(*ms, mention{st, prioPlan})
			continue
		}
		pieces = append(pieces, p)
	}
	var out []string
	pending := ""
	for _, p := range pieces {
		if pending != "" {
			p = pending + ", " + p
			pending = ""
		}
		if !placeholderRE.MatchString(p) {
			if len(out) > 0 {
				out[len(out)-1] += ", " + p
			} else {
				pending = p
			}
			continue
		}
		out = append(out, p)
	}
	wordMentions(s[:n.start], prioProse, ms)
	wordMentions(s[n.end:], prioProse, ms)
	return out
}

// firstBare finds, depth first, the first group with a placeholder in its
// own text.
func firstBare(n *node) *node {
	for _, t := range n.items {
		switch {
		case t.kind == tokText && n.open != 0 && placeholderRE.MatchString(t.text):
			return n
		case t.kind == tokNode:
			if b := firstBare(t.node); b != nil {
				return b
			}
		}
	}
	return nil
}

// splitTop splits s at commas outside brackets (placeholders are not
// brackets).
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '[':
			if k := placeholderAt(s, i); k > 0 {
				i += k - 1
				continue
			}
			depth++
		case '(', '{':
			depth++
		case ')', ']', '}':
			depth = max(depth-1, 0)
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// planFromLines is the last resort: every line with a placeholder that is
// not a strategy line.
func planFromLines(s string, ms *[]mention) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strategyLineRE.MatchString(line) {
			continue
		}
		if placeholderRE.MatchString(line) {
			out = append(out, unquote(line))
			continue
		}
		wordMentions(line, prioProse, ms)
	}
	return out
}

func anyPlaceholder(as []string) bool {
	for _, a := range as {
		if placeholderRE.MatchString(a) {
			return true
		}
	}
	return false
}

// ParseStrategyReply reads a P5 reply: a strategy stated on its own line
// ("Strategy: Breadth") or the one strategy word the reply contains. A reply
// naming neither or both is rejected.
func ParseStrategyReply(reply string) (schema.Strategy, error) {
	s := clean(reply)
	if len(s) > MaxReplyBytes {
		return schema.Precision, parseErr("strategy", fmt.Sprintf("reply of %d bytes, more than %d", len(s), MaxReplyBytes), s)
	}
	var ms []mention
	for _, m := range strategyLineRE.FindAllStringSubmatch(s, -1) {
		st, _ := schema.ParseStrategy(m[1])
		ms = append(ms, mention{st, prioExplicit})
	}
	wordMentions(s, prioProse, &ms)
	if len(ms) == 0 {
		return schema.Precision, parseErr("strategy", "names neither Precision nor Breadth", s)
	}
	st, ok := resolve(ms)
	if !ok {
		return schema.Precision, parseErr("strategy", "names both Precision and Breadth", s)
	}
	return st, nil
}

// Triple key names models use in JSON objects.
var (
	headKeys = []string{"head", "subject", "subj", "entity1", "entity_1", "source", "h", "s", "from", "e1"}
	relKeys  = []string{"relation", "rel", "predicate", "pred", "r", "p", "relationship", "edge"}
	tailKeys = []string{"tail", "object", "obj", "entity2", "entity_2", "target", "t", "o", "to", "e2"}
)

func keyIn(k string, set []string) bool {
	k = strings.ToLower(strings.TrimSpace(k))
	for _, s := range set {
		if k == s {
			return true
		}
	}
	return false
}

// value returns the text of an element: its first quoted string, else its
// bare text; quoted reports which.
func value(el []token) (v string, quoted bool) {
	var text []string
	for _, t := range el {
		switch t.kind {
		case tokStr:
			if !t.key {
				return t.text, true
			}
		case tokText:
			text = append(text, t.text)
		case tokNode:
			return "", false
		}
	}
	return strings.Join(text, " "), false
}

// ParseTriples reads a SAGB reply: (head, relation, tail) triples as Python
// tuples or lists, JSON arrays, or JSON objects with head/relation/tail
// (subject/predicate/object) keys, quoted with either kind of quotes or not
// at all, inside an outer list or one per line, wrapped in prose, code
// fences or <think> blocks, with trailing commas; also "head -> relation ->
// tail" lines. A tuple that is quoted (or holds a placeholder) but does not
// have three fields, an empty field, no triple at all, or more than
// MaxTriples are rejected with a *ParseError. Placeholders are written
// canonically ("[ENT1]").
func ParseTriples(reply string) ([]schema.Triple, error) {
	s := clean(reply)
	if len(s) > MaxReplyBytes {
		return nil, parseErr("triples", fmt.Sprintf("reply of %d bytes, more than %d", len(s), MaxReplyBytes), s)
	}
	root := lex(s)
	var out []schema.Triple
	if err := triplesIn(s, root, &out); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		out = triplesFromLines(s)
	}
	if len(out) == 0 {
		return nil, parseErr("triples", "no (head, relation, tail) triple found", s)
	}
	if len(out) > MaxTriples {
		return nil, parseErr("triples", fmt.Sprintf("%d triples, more than %d", len(out), MaxTriples), s)
	}
	for i, t := range out {
		t = schema.Triple{Head: tidy(t.Head), Rel: tidy(t.Rel), Tail: tidy(t.Tail)}
		if t.Head == "" || t.Rel == "" || t.Tail == "" {
			return nil, parseErr("triples", fmt.Sprintf("triple %d has an empty field", i+1), fmt.Sprintf("(%q, %q, %q)", out[i].Head, out[i].Rel, out[i].Tail))
		}
		out[i] = t
	}
	return out, nil
}

func triplesIn(s string, n *node, out *[]schema.Triple) error {
	for _, t := range n.items {
		if t.kind != tokNode {
			continue
		}
		c := t.node
		text := s[c.start:c.end]
		if c.open == '{' {
			if tr, found, ok := objectTriple(c); found {
				if !ok {
					return parseErr("triples", "object lacks a head, relation or tail", text)
				}
				*out = append(*out, tr)
				continue
			}
		}
		if c.hasNode() {
			if err := triplesIn(s, c, out); err != nil {
				return err
			}
			continue
		}
		els := c.elements()
		vals := make([]string, 0, 3)
		quoted, holder := false, false
		for _, el := range els {
			v, q := value(el)
			vals = append(vals, v)
			quoted = quoted || q
			holder = holder || placeholderRE.MatchString(v)
		}
		switch {
		case len(vals) == 3:
			*out = append(*out, schema.Triple{Head: vals[0], Rel: vals[1], Tail: vals[2]})
		case quoted || holder:
			return parseErr("triples", fmt.Sprintf("tuple has %d fields, want 3 (head, relation, tail)", len(vals)), text)
		}
	}
	return nil
}

// objectTriple reads {"head": ..., "relation": ..., "tail": ...}. found
// reports that the object uses triple keys at all; ok that it has all three.
func objectTriple(n *node) (tr schema.Triple, found, ok bool) {
	var h, r, t bool
	for _, el := range n.elements() {
		if !el[0].key {
			continue
		}
		v, _ := value(el[1:])
		switch k := el[0].text; {
		case keyIn(k, headKeys):
			tr.Head, h = v, true
		case keyIn(k, relKeys):
			tr.Rel, r = v, true
		case keyIn(k, tailKeys):
			tr.Tail, t = v, true
		}
	}
	return tr, h || r || t, h && r && t
}

// triplesFromLines reads lines of three quoted strings, or "a -> r -> b".
func triplesFromLines(s string) []schema.Triple {
	var out []schema.Triple
	for _, line := range strings.Split(s, "\n") {
		root := lex(line)
		var strs []string
		for _, t := range root.items {
			if t.kind == tokStr {
				strs = append(strs, t.text)
			}
		}
		if len(strs) == 3 {
			out = append(out, schema.Triple{Head: strs[0], Rel: strs[1], Tail: strs[2]})
			continue
		}
		if m := listItemRE.FindStringSubmatch(line); m != nil {
			line = m[1]
		}
		if parts := strings.Split(line, "->"); len(parts) == 3 {
			var f [3]string
			for i, p := range parts {
				f[i] = strings.Trim(strings.TrimSpace(p), `"'“”‘’`)
			}
			if f[0] != "" && f[1] != "" && f[2] != "" {
				out = append(out, schema.Triple{Head: f[0], Rel: f[1], Tail: f[2]})
			}
		}
	}
	return out
}

// quote writes s as a double-quoted string the parsers read back exactly.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// FormatDecomposition writes d in P1's output format, as a Python tuple:
// (("a1", "a2"), Precision). ParseDecomposition reads it back unchanged.
func FormatDecomposition(d Decomposition) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, a := range d.Assertions {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(a))
	}
	if len(d.Assertions) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	if !d.HasStrategy {
		return b.String()
	}
	name := "Precision"
	if d.Strategy == schema.Breadth {
		name = "Breadth"
	}
	return "(" + b.String() + ", " + name + ")"
}

// FormatTriples writes triples in P2's output format, one tuple a line
// inside a list with trailing commas. ParseTriples reads it back unchanged.
func FormatTriples(ts []schema.Triple) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, t := range ts {
		fmt.Fprintf(&b, "(%s, %s, %s),\n", quote(t.Head), quote(t.Rel), quote(t.Tail))
	}
	b.WriteString("]")
	return b.String()
}
