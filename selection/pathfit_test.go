package selection

import (
	"math"
	"testing"

	"github.com/stem-kgqa/stem/schema"
)

func TestPathFit(t *testing.T) {
	// Three training questions: two that "study" walked education, one
	// "born" walked place_of_birth.
	exs := []struct {
		text string
		rels []string
	}{
		{"where did [MASK] study", []string{"people.person.education", "education.education.institution"}},
		{"what college did [MASK] study at", []string{"people.person.education", "education.education.institution"}},
		{"where was [MASK] born", []string{"people.person.place_of_birth"}},
		{"who is [MASK]", nil}, // no gold path: not counted
	}
	fit := NewPathFit(func(fn func(string, []string)) {
		for _, e := range exs {
			fn(e.text, e.rels)
		}
	})
	g := func(rels ...string) schema.Graph {
		var out schema.Graph
		for _, r := range rels {
			out.Triples = append(out.Triples, schema.Triple{Head: "a", Rel: r, Tail: "b"})
		}
		return out
	}
	for _, c := range []struct {
		name     string
		question string
		graph    schema.Graph
		want     float64
	}{
		// "study" is in 2 examples, both walking education: 2 / (2 + 5).
		{"named by a word", "where did obama study", g("people.person.education"), 2.0 / 7},
		// The least-named relation decides: place_of_birth is not named by study.
		{"one relation unnamed", "where did obama study", g("people.person.education", "people.person.place_of_birth"), 0},
		{"born", "where was obama born", g("people.person.place_of_birth"), 1.0 / 6},
		{"no relation", "where was obama born", schema.Graph{}, 0},
		{"unseen relation", "where was obama born", g("film.film.directed_by"), 0},
	} {
		if got := fit.Fit(fitWords(c.question), c.graph); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: Fit(%q) = %v, want %v", c.name, c.question, got, c.want)
		}
	}
	var none *PathFit
	if got := none.Fit(fitWords("where did obama study"), g("people.person.education")); got != 0 {
		t.Errorf("nil PathFit: %v, want 0", got)
	}
}
