package linking

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
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

// searcher serves a KG as an endpoint does (kg.NameSearcher): names found
// only as spelled, many in one call, and a text index of their words.
type searcher struct {
	*kg.Graph
	lookups, searches int
	noIndex           bool
	fail              error
}

func (s *searcher) EntitiesByNorm(string) []int32 { panic("linking asked one name at a time") }

func (s *searcher) LookupNames(_ context.Context, names []string) (map[string][]int32, error) {
	s.lookups++
	out := map[string][]int32{}
	for _, n := range names {
		if id, ok := s.Entity(n); ok {
			out[n] = []int32{id}
		}
	}
	return out, nil
}

func (s *searcher) Degrees(_ context.Context, ids []int32) ([]int, error) {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = s.Degree(id)
	}
	return out, nil
}

func (s *searcher) SearchNames(_ context.Context, phrases []string, limit int) ([]kg.NameHit, error) {
	s.searches++
	if s.noIndex {
		return nil, kg.ErrNoTextIndex
	}
	if s.fail != nil {
		return nil, s.fail
	}
	var hits []kg.NameHit
	for id := range s.NumEntities() {
		name := " " + kg.Normalize(s.EntityName(int32(id))) + " "
		for _, p := range phrases {
			if strings.Contains(name, " "+kg.Normalize(p)+" ") && len(hits) < limit {
				hits = append(hits, kg.NameHit{ID: int32(id), Label: s.EntityName(int32(id)), Score: 1})
				break
			}
		}
	}
	return hits, nil
}

// trigrams is an encoder of character trigrams, enough to tell a
// misspelt name from others.
type trigrams struct{}

func (trigrams) Name() string { return "trigrams" }
func (trigrams) Dim() int     { return 64 }
func (trigrams) Encode(_ context.Context, texts []string, dst []float32) error {
	for i, t := range texts {
		v := dst[i*64 : (i+1)*64]
		clear(v)
		s := " " + kg.Normalize(t) + " "
		for j := 0; j+3 <= len(s); j++ {
			h := 0
			for _, c := range []byte(s[j : j+3]) {
				h = h*31 + int(c)
			}
			v[h%64]++
		}
		models.Normalize(v)
	}
	return nil
}

func TestLinkByEndpoint(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("endpoint down")
	for _, tc := range []struct {
		q       string
		noIndex bool
		fail    error
		want    string // entity, mention, method; "" for ErrNoEntity
		wantErr error
	}{
		{"who directed Inception ?", false, nil, "Inception/Inception/name", nil},
		// Not as spelled: the text index finds it by its words.
		{"who directed INCEPTION ?", false, nil, "Inception/INCEPTION/name", nil},
		{"where was christopher nolan born ?", false, nil, "Christopher_Nolan/christopher nolan/name", nil},
		// Misspelt: the encoder ranks what the index found.
		{"where was christopher nolen born ?", false, nil, "Christopher_Nolan/christopher nolen/text", nil},
		{"who directed INCEPTION ?", true, nil, "", ErrNoEntity},
		{"who directed INCEPTION ?", false, boom, "", boom},
		{"what is a zyxwv ?", false, nil, "", ErrNoEntity},
	} {
		s := &searcher{Graph: demoKG(t), noIndex: tc.noIndex, fail: tc.fail}
		l := New(s, nil)
		l.Encoder = trigrams{}
		links, err := l.Link(ctx, tc.q)
		got := ""
		if err == nil && len(links) == 1 {
			got = links[0].Entity + "/" + links[0].Mention + "/" + links[0].Method
		} else if err == nil {
			t.Errorf("%q: %d links %+v, want one", tc.q, len(links), links)
			continue
		}
		if got != tc.want || (tc.wantErr != nil) != (err != nil) || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
			t.Errorf("%q (no index %v, fail %v): %q, %v; want %q, %v", tc.q, tc.noIndex, tc.fail, got, err, tc.want, tc.wantErr)
		}
		if s.lookups != 1 {
			t.Errorf("%q: %d LookupNames calls, want every n-gram in one", tc.q, s.lookups)
		}
		if err == nil && links[0].Mention != tc.q[links[0].Start:links[0].End] {
			t.Errorf("%q: mention %q is not the span [%d,%d)", tc.q, links[0].Mention, links[0].Start, links[0].End)
		}
	}
}
