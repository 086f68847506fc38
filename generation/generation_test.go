package generation

import (
	"strings"
	"testing"
)

func TestParseAnswerList(t *testing.T) {
	tests := []struct{ in, want string }{
		{`["a", "b"]`, "a|b"},
		{"['a', 'b c']", "a|b c"},
		{"Answer: a, b", "a|b"},
		{"1. a\n2. b\n- c\n", "a|b|c"},
		{"a", "a"},
		{"", ""},
		{"a\na\n", "a"},
	}
	for _, tc := range tests {
		if got := strings.Join(ParseAnswerList(tc.in), "|"); got != tc.want {
			t.Errorf("ParseAnswerList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestChainsWith(t *testing.T) {
	chains := []string{"A -> r -> B -> s -> C", "A -> r -> B <- t <- D", "X -> r -> Y"}
	got := chainsWith(chains, "B")
	if len(got) != 1 || got[0] != "A -> r -> B" {
		t.Errorf("chainsWith(B) = %q", got)
	}
	if got := chainsWith(chains, "D"); len(got) != 1 || got[0] != "A -> r -> B <- t <- D" {
		t.Errorf("chainsWith(D) = %q", got)
	}
	if got := chainsWith(chains, "r"); got != nil {
		t.Errorf("a relation is not an entity: %q", got)
	}
}
