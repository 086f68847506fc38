package paraphrase

import (
	"slices"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	kept := func(w string) bool { return w == "grandparents" }
	tests := []struct {
		in, want string
	}{
		{"is x s spouse a man or a woman", "is x s spouse a gender"},
		{"is x a female or male", "is x a gender"},
		{"the grandmother of x", "the mother of mother of x"},
		{"x s grandchildren s nationality", "x s children s children s nationality"},
		// A relation named for the word keeps it; a word "grand" does
		// not double is left alone.
		{"the grandparents of x", "the grandparents of x"},
		{"the grandstand of x", "the grandstand of x"},
		{"a man or a dog", "a man or a dog"},
		{"man or", "man or"},
	}
	for _, tt := range tests {
		if got := strings.Join(Rewrite(strings.Fields(tt.in), kept), " "); got != tt.want {
			t.Errorf("Rewrite(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Rewrite([]string{"grandparents"}, nil); !slices.Equal(got, []string{"parents", "of", "parents"}) {
		t.Errorf("Rewrite with no kept = %v, want parents twice", got)
	}
}
