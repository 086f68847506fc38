package kg

import (
	"context"
	"slices"
	"testing"
)

// plain is a Reader with no optional capability: the helpers' fallbacks.
type plain struct{ Reader }

// fetcher is a remote KG without OutFetcher: FetchOut falls back to the
// one-hop neighbourhood, computed by walking the graph.
type fetcher struct{ plain }

func (f fetcher) Neighbourhood(ctx context.Context, seeds []string, hops int) (*Graph, error) {
	return Neighbourhood(ctx, f.Reader, seeds, hops)
}

func TestOptional(t *testing.T) {
	ctx := context.Background()
	g, err := GraphOf([][3]string{{"a", "r", "b"}, {"b", "r", "c"}, {"c", "s", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := g.Entity("a")
	b, _ := g.Entity("b")
	for _, tc := range []struct {
		name     string
		r        Reader
		remote   bool
		columns  bool
		labelled bool
	}{
		{"graph", g, false, true, true},
		{"plain", plain{g}, false, false, false},
		{"remote", fetcher{plain{g}}, true, false, false},
		{"nil", nil, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Remote(tc.r) != nil; got != tc.remote {
				t.Errorf("Remote != nil is %v, want %v", got, tc.remote)
			}
			if h, _, _ := ColumnsOf(tc.r); (h != nil) != tc.columns {
				t.Errorf("ColumnsOf gave heads %v, want some: %v", h, tc.columns)
			}
			if got := Labelled(tc.r); got != tc.labelled {
				t.Errorf("Labelled = %v, want %v", got, tc.labelled)
			}
			if Searcher(tc.r) != nil {
				t.Error("Searcher of a KG without a name search is not nil")
			}
			if got := Report(tc.r, 3); got != "" {
				t.Errorf("Report = %q, want none", got)
			}
			if tc.r == nil {
				return
			}
			deg, err := Degrees(ctx, tc.r, []int32{a, b})
			if err != nil || !slices.Equal(deg, []int{2, 2}) {
				t.Errorf("Degrees = %v, %v, want [2 2]", deg, err)
			}
		})
	}
	sub, err := FetchOut(ctx, fetcher{plain{g}}, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if sub.NumTriples() != 2 {
		t.Errorf("FetchOut over a Neighbourhooder alone: %d triples, want a's 2 (one hop, both ways)", sub.NumTriples())
	}
}

func TestDir(t *testing.T) {
	g, err := GraphOf([][3]string{{"a", "r", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := g.Entity("a")
	b, _ := g.Entity("b")
	tr := g.Triple(0)
	for _, tc := range []struct {
		d        Dir
		name     string
		far      int32
		from, to int32 // Edges(from, d) holds the triple; Edges(to, d) does not
	}{
		{Outgoing, "out", b, a, b},
		{Incoming, "in", a, b, a},
	} {
		if tc.d.String() != tc.name || tc.d.Reverse().Reverse() != tc.d || tc.d.Reverse() == tc.d {
			t.Errorf("%v: String %q, Reverse %v", tc.d, tc.d.String(), tc.d.Reverse())
		}
		if got := tr.Far(tc.d); got != tc.far {
			t.Errorf("Far(%v) = %d, want %d", tc.d, got, tc.far)
		}
		if len(Edges(g, tc.from, tc.d)) != 1 || len(Edges(g, tc.to, tc.d)) != 0 {
			t.Errorf("Edges(%v): from %v, to %v", tc.d, Edges(g, tc.from, tc.d), Edges(g, tc.to, tc.d))
		}
	}
}
