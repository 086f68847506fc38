package linking

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
)

func demoKG(t testing.TB) *kg.Graph {
	t.Helper()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestFindAndMask(t *testing.T) {
	tests := []struct {
		q, name, want, masked string
		ok                    bool
	}{
		{"who directed inception ?", "Inception", "inception", "who directed ?", true},
		{"the parent of anna_of_holstein-gottorp 's son ?", "anna_of_holstein-gottorp", "anna_of_holstein-gottorp", "the parent of 's son ?", true},
		{"what movies did [Temuera Morrison] act in", "Temuera Morrison", "[Temuera Morrison]", "what movies did act in", true},
		{"where was Christopher Nolan born", "Christopher_Nolan", "Christopher Nolan", "where was born", true},
		{"where was Nolan born", "Christopher_Nolan", "", "where was Nolan born", false},
		{"", "Inception", "", "", false},
	}
	for _, tt := range tests {
		sp, ok := Find(tt.q, tt.name)
		if ok != tt.ok {
			t.Errorf("Find(%q, %q) ok = %v, want %v", tt.q, tt.name, ok, tt.ok)
			continue
		}
		if ok && tt.q[sp.Start:sp.End] != tt.want {
			t.Errorf("Find(%q, %q) = %q, want %q", tt.q, tt.name, tt.q[sp.Start:sp.End], tt.want)
		}
		if got := Mask(tt.q, []string{tt.name}); got != tt.masked {
			t.Errorf("Mask(%q) = %q, want %q", tt.q, got, tt.masked)
		}
	}
	if got := MaskWith("what movies did [Tom Hanks] act in", nil, "ENT"); got != "what movies did ENT act in" {
		t.Errorf("MaskWith = %q", got)
	}
}

func TestLink(t *testing.T) {
	l := New(demoKG(t), nil)
	tests := []struct {
		q      string
		want   []string
		method string
	}{
		{"In which country was the director of Inception born?", []string{"Inception"}, "name"},
		{"who directed inception ?", []string{"Inception"}, "name"},
		{"Where was Christopher Nolan born and who is Tom Hanks married to?", []string{"Christopher_Nolan", "Tom_Hanks"}, "name"},
		{"what movies did [Christopher Nolan] direct", []string{"Christopher_Nolan"}, "marked"},
	}
	for _, tt := range tests {
		got, err := l.Link(context.Background(), tt.q)
		if err != nil {
			t.Errorf("Link(%q): %v", tt.q, err)
			continue
		}
		var names []string
		for _, g := range got {
			names = append(names, g.Entity)
			if tt.q[g.Start:g.End] != g.Mention {
				t.Errorf("Link(%q): span %d:%d is %q, mention %q", tt.q, g.Start, g.End, tt.q[g.Start:g.End], g.Mention)
			}
			if g.Method != tt.method {
				t.Errorf("Link(%q): method %s, want %s", tt.q, g.Method, tt.method)
			}
		}
		if strings.Join(names, ",") != strings.Join(tt.want, ",") {
			t.Errorf("Link(%q) = %v, want %v", tt.q, names, tt.want)
		}
	}
	for _, tt := range []struct {
		q    string
		want error
	}{{"", ErrEmptyQuestion}, {"  ?! ", ErrEmptyQuestion}, {"who is the tallest person alive", ErrNoEntity}} {
		if _, err := l.Link(context.Background(), tt.q); !errors.Is(err, tt.want) {
			t.Errorf("Link(%q) error = %v, want %v", tt.q, err, tt.want)
		}
	}
}

func TestMarked(t *testing.T) {
	for _, tt := range []struct {
		q, want string
		ok      bool
	}{
		{"what does [Tom Cullen] act in", "Tom Cullen", true},
		{"no mark here", "", false},
		{"placeholder [ENT1] only", "", false},
		{"unclosed [bracket", "", false},
		{"empty [] mark", "", false},
	} {
		got, _, ok := Marked(tt.q)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Marked(%q) = %q, %v; want %q, %v", tt.q, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzMask(f *testing.F) {
	for _, s := range []string{"who directed inception ?", "what movies did [Tom Hanks] act in", "[", "]a[", "é_ü [x", "anna_of_holstein-gottorp 's"} {
		f.Add(s, "Inception")
	}
	f.Fuzz(func(t *testing.T, q, m string) {
		out := MaskWith(q, []string{m}, "ENT")
		if len(out) > len(q)+16 {
			t.Fatalf("MaskWith grew %q to %q", q, out)
		}
		if sp, ok := Find(q, m); ok && (sp.Start < 0 || sp.End > len(q) || sp.Start >= sp.End) {
			t.Fatalf("Find(%q, %q) = bad span %v", q, m, sp)
		}
		for _, w := range Words(q) {
			if w.Start >= w.End || w.End > len(q) {
				t.Fatalf("Words(%q): bad span %v", q, w)
			}
		}
	})
}

func TestLinkDistinctAndCapped(t *testing.T) {
	g := demoKG(t)
	l := New(g, nil)
	links, err := l.Link(context.Background(), strings.Repeat("inception and barbie and canada ", 50))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, lk := range links {
		names = append(names, lk.Entity)
	}
	if strings.Join(names, ",") != "Inception,Barbie,Canada" {
		t.Errorf("links %v, want each entity once in order of first mention", names)
	}
	l.MaxLinks = 2
	if links, _ = l.Link(context.Background(), "inception and barbie and canada"); len(links) != 2 {
		t.Errorf("MaxLinks 2: %d links", len(links))
	}
}
