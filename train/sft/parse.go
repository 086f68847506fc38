package sft

import (
	"fmt"
	"strings"

	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/schema"
)

// ParseAssertions reads a P4 reply: the list of assertions. A P4 reply has
// the shape of an SGDA reply without the strategy, so llmplan's tolerant
// reader does the work: a bracketed list of quoted strings (either kind of
// quotes), a JSON object with an "assertions" array, numbered or bulleted
// lines, bare quoted strings, an unquoted list, wrapped in prose, code
// fences or <think> blocks. Whitespace is collapsed and placeholders are
// written canonically ("[ENT1]"); a repeated assertion is kept once. A
// reply with no assertion, none with a placeholder, or more than
// llmplan.MaxAssertions is an error. A model that imitates P4's examples
// may echo the triple list before its answer; when a line starts with
// "Output:", only the text after the last such mark is read.
func ParseAssertions(reply string) ([]string, error) {
	if i := outputMark(reply); i >= 0 {
		reply = reply[i:]
	}
	d, err := llmplan.ParseDecomposition(reply)
	if err != nil {
		return nil, err
	}
	return d.Assertions, nil
}

// placeholders returns the canonical placeholders among the ends of t.
func placeholders(t [3]string) []string {
	var out []string
	for _, e := range [2]string{t[0], t[2]} {
		if schema.IsPlaceholder(e) {
			out = append(out, schema.CanonicalPlaceholder(e))
		}
	}
	return out
}

// placeholdersIn returns the canonical placeholders written in text.
func placeholdersIn(text string) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < len(text); i++ {
		if text[i] != '[' {
			continue
		}
		j := strings.IndexByte(text[i:], ']')
		if j < 0 {
			break
		}
		if ph := text[i : i+j+1]; schema.IsPlaceholder(ph) {
			out[schema.CanonicalPlaceholder(ph)] = true
			i += j
		}
	}
	return out
}

// CheckAssertions reports whether as can stand for masked: one assertion
// per triple, each naming every placeholder of its triple and no other.
// The error is a *ReplyError whose Reason is short enough to count.
func CheckAssertions(as []string, masked [][3]string) error {
	if len(as) != len(masked) {
		return &ReplyError{Reason: fmt.Sprintf("llm: %d assertions for %d triples", len(as), len(masked))}
	}
	for i, a := range as {
		in := placeholdersIn(a)
		own := map[string]bool{}
		for _, ph := range placeholders(masked[i]) {
			own[ph] = true
			if !in[ph] {
				return &ReplyError{Reason: "llm: an assertion lacks a placeholder of its triple",
					Detail: fmt.Sprintf("assertion %d %q lacks %s of triple %s", i+1, a, ph, tripleString(masked[i]))}
			}
		}
		for ph := range in {
			if !own[ph] {
				return &ReplyError{Reason: "llm: an assertion names a placeholder its triple lacks",
					Detail: fmt.Sprintf("assertion %d %q names %s, not in triple %s", i+1, a, ph, tripleString(masked[i]))}
			}
		}
	}
	return nil
}

func tripleString(t [3]string) string { return fmt.Sprintf("(%q, %q, %q)", t[0], t[1], t[2]) }

// outputMark returns the offset just past the last "Output:" that starts a
// line (case-insensitively), or -1.
func outputMark(s string) int {
	at := -1
	for off := 0; off < len(s); {
		line := s[off:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		t := strings.TrimLeft(line, " \t*#>")
		if len(t) >= 7 && strings.EqualFold(t[:7], "output:") {
			at = off + (len(line) - len(t)) + 7
		}
		off += len(line) + 1
	}
	return at
}
