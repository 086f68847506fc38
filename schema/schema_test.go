package schema

import (
	"strings"
	"testing"
)

func TestIsPlaceholder(t *testing.T) {
	tests := []struct {
		in    string
		want  bool
		canon string
	}{
		{"[ENT1]", true, "[ENT1]"},
		{"[ent12]", true, "[ENT12]"},
		{" [ ENT3 ] ", true, "[ENT3]"},
		{"[ENT]", false, "[ENT]"},
		{"ENT1", false, "ENT1"},
		{"[ENTX]", false, "[ENTX]"},
		{"Inception", false, "Inception"},
		{"[ENT1", false, "[ENT1"},
	}
	for _, tc := range tests {
		if got := IsPlaceholder(tc.in); got != tc.want {
			t.Errorf("IsPlaceholder(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if got := CanonicalPlaceholder(tc.in); got != tc.canon {
			t.Errorf("CanonicalPlaceholder(%q) = %q, want %q", tc.in, got, tc.canon)
		}
	}
}

func TestGraph(t *testing.T) {
	g := Path("Inception", "directed_by", "place_of_birth")
	if got := g.String(); got != "(Inception, directed_by, [ENT1]); ([ENT1], place_of_birth, [ENT2])" {
		t.Errorf("Path = %s", got)
	}
	if got := g.AnswerSlot(); got != "[ENT2]" {
		t.Errorf("AnswerSlot = %s", got)
	}
	if got := strings.Join(g.Placeholders(), ","); got != "[ENT1],[ENT2]" {
		t.Errorf("Placeholders = %s", got)
	}
	if got := strings.Join(g.Mentions(), ","); got != "Inception" {
		t.Errorf("Mentions = %s", got)
	}
	if err := g.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	g.Answer = "[ent1]"
	if got := g.AnswerSlot(); got != "[ENT1]" {
		t.Errorf("AnswerSlot with Answer = %s", got)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		g    Graph
		want string
	}{
		{"empty", Graph{}, "no triples"},
		{"no mention", Graph{Triples: []Triple{{"[ENT1]", "r", "[ENT2]"}}}, "no question entity"},
		{"no placeholder", Graph{Triples: []Triple{{"a", "r", "b"}}}, "no placeholder"},
		{"empty field", Graph{Triples: []Triple{{"a", " ", "[ENT1]"}}}, "empty field"},
		{"answer not used", Graph{Triples: []Triple{{"a", "r", "[ENT1]"}}, Answer: "[ENT2]"}, "does not occur"},
	}
	for _, tc := range tests {
		err := tc.g.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestStrategy(t *testing.T) {
	for _, s := range []Strategy{Precision, Breadth} {
		got, err := ParseStrategy(strings.ToUpper(s.String()))
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%s) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseStrategy("auto"); err == nil {
		t.Error("ParseStrategy(auto) should fail")
	}
}
