package kg

import (
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	b := NewBuilder()
	for _, tr := range [][3]string{{"Nolan", "directed", "Inception"}, {"Nolan", "directed", "Tenet"}, {"Nolan", "directed", "Memento"},
		{"Nolan", "born_in", "London"}, {"Caine", "knows", "Nolan"}, {"Caine", "knows", "Caine"}} {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	var s strings.Builder
	g.Stats(1).WriteText(&s, "g.tsv")
	flat := strings.Join(strings.Fields(s.String()), " ")
	for _, want := range []string{"g.tsv entities 6 relations 3 triples 6", "degree max / p50 / p99 5 / 1 / 5", "top relations: 3 directed"} {
		if !strings.Contains(flat, want) {
			t.Errorf("stats lack %q:\n%s", want, s.String())
		}
	}
	s.Reset()
	nolan, _ := g.Entity("Nolan")
	WriteNeighbourhood(&s, g, nolan, 2)
	want := "Nolan  (4 out, 1 in)\n" +
		"  -> born_in -> London\n" +
		"  -> directed -> Inception, Memento, ... (1 more)\n" +
		"  <- knows <- Caine\n"
	if s.String() != want {
		t.Errorf("neighbourhood:\n%s\nwant:\n%s", s.String(), want)
	}
}
