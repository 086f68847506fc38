package zeroshot

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

func TestPlanDemo(t *testing.T) {
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ctx, g, wordvec.New(nil, wordvec.Options{}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	// The spelling-only test encoder favours long paths; one hop isolates
	// the direction and strategy logic.
	p1, err := New(ctx, g, wordvec.New(nil, wordvec.Options{}), Config{MaxHops: 1})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p      *Planner
		q, ent string
		want   string
		strat  schema.Strategy
	}{
		{p, "who directed inception ?", "Inception", "directed_by >", schema.Precision},
		{p1, "who starred in inception ?", "Inception", "starred_actors >", schema.Breadth},
		{p1, "which films did christopher nolan direct ?", "Christopher_Nolan", "directed_by <", schema.Breadth},
	}
	for _, tt := range tests {
		pr, err := tt.p.Predict(ctx, tt.q, []string{tt.ent}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range pr.Paths {
			s := ""
			for _, st := range c.Steps {
				s += st.Rel + " " + map[bool]string{true: "<", false: ">"}[st.Dir == 1]
			}
			got = append(got, s)
		}
		if len(got) == 0 || got[0] != tt.want || pr.Strategy != tt.strat {
			t.Errorf("%q: paths %v strategy %v; want first %q, %v", tt.q, got, pr.Strategy, tt.want, tt.strat)
		}
	}
	// The hub is capped, not slow, and still planned.
	pr, err := p.Predict(ctx, "which films were made in the united states ?", []string{demo.Hub}, nil)
	if err != nil || len(pr.Paths) == 0 {
		t.Errorf("hub: %v, %d paths", err, len(pr.Paths))
	}
	for _, in := range []projection.Input{
		{Question: "", Entities: []string{"Inception"}},
		{Question: "who directed it"},
		{Question: "who directed Nowhere", Entities: []string{"Nowhere_Film"}},
	} {
		if _, err := p.Plan(ctx, in); err == nil {
			t.Errorf("Plan(%+v): no error", in)
		}
	}
}

// The paths planned do not depend on how the KG is numbered: the KG
// numbered in reverse, and the question's neighbourhood as deep as the
// planner reaches (what a SPARQL endpoint serves, numbered by name), plan
// what the KG read from its file plans. Ties (r1 r2 and r2 r1 have the
// same text, so the same score) and the frontier cap (a hub with more
// than FrontierCap neighbours) were decided by ids.
func TestPlanIndependentOfNumbering(t *testing.T) {
	ctx := context.Background()
	ts := [][3]string{
		{"q", "genre", "hub"}, {"q", "rated", "hub"}, {"q", "genre", "q"},
		{"x", "rated", "q"}, {"x", "genre", "y"},
	}
	for i := range 260 {
		f := string(rune('a'+i%26)) + string(rune('a'+i/26))
		ts = append(ts, [3]string{f, "genre", "hub"})
		if i%2 == 0 {
			ts = append(ts, [3]string{f, "rated", f + "_r"})
		} else {
			ts = append(ts, [3]string{f + "_w", "written_by", f})
		}
	}
	b, rb := kg.NewBuilder(), kg.NewBuilder()
	for i := range ts {
		b.Add(ts[i][0], ts[i][1], ts[i][2])
		r := ts[len(ts)-1-i]
		rb.Add(r[0], r[1], r[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	rev, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	near, err := kg.Neighbourhood(ctx, g, []string{"q"}, DefaultMaxHops)
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	plan := func(g kg.Reader) string {
		p, err := New(ctx, g, enc, Config{Beam: 20, FrontierCap: 100})
		if err != nil {
			t.Fatal(err)
		}
		pred, err := p.Predict(ctx, "what genre is rated like q", []string{"q"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := pred.Strategy.String()
		for _, c := range pred.Paths {
			out += fmt.Sprintf("\n%.4f %d %v", c.Score, c.Reach, c.Steps)
		}
		return out
	}
	want := plan(g)
	for name, other := range map[string]kg.Reader{"numbered in reverse": rev, "neighbourhood": near} {
		if got := plan(other); got != want {
			t.Errorf("%s: %s\nfrom the file: %s", name, got, want)
		}
	}
}

// TestWalksCached checks that a Cache changes nothing Walks returns, when
// it is cold, warm, and too small to hold a hub's expansion for long.
func TestWalksCached(t *testing.T) {
	ctx := context.Background()
	b := kg.NewBuilder()
	b.Add("q", "genre", "hub")
	b.Add("p", "genre", "hub")
	for i := range 300 {
		f := fmt.Sprintf("f%03d", 299-i)
		b.Add(f, "genre", "hub")
		b.Add(f, "rated", f+"_r")
		if i%3 == 0 {
			b.Add(f+"_w", "written_by", f)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	show := func(ws []Walk) string {
		var sb strings.Builder
		for _, w := range ws {
			fmt.Fprintf(&sb, "%v %d %v\n", w.Steps, w.Reach, w.Front)
		}
		return sb.String()
	}
	q, _ := g.Entity("q")
	p, _ := g.Entity("p")
	cfg := Config{MaxHops: 3, FrontierCap: 100, MaxPaths: 50}
	var want [2]string
	for i, e := range []int32{q, p} {
		ws, _, err := Walks(ctx, g, []int32{e}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = show(ws)
	}
	for _, tc := range []struct {
		name    string
		limit   int64
		holding bool
	}{
		{"roomy", 0, true},
		{"starting over at every hub", 300, false},
	} {
		c := NewCache(tc.limit)
		cached := cfg
		cached.Cache = c
		for round := range 2 {
			for i, e := range []int32{q, p} {
				ws, _, err := Walks(ctx, g, []int32{e}, cached)
				if err != nil {
					t.Fatal(err)
				}
				if got := show(ws); got != want[i] {
					t.Errorf("%s, round %d, from %s:\n%s\nwant (no cache):\n%s", tc.name, round, g.EntityName(e), got, want[i])
				}
			}
		}
		if held := len(c.byHash) > 1; held != tc.holding {
			t.Errorf("%s: the cache holds %d frontiers", tc.name, len(c.byHash))
		}
	}
}

// TestFirstByName keeps a hub front's first names in name order, however
// they compare: in their first 8 bytes, past them, or as a prefix.
func TestFirstByName(t *testing.T) {
	names := []string{"Maria Gagorima", "Maria Gagorim", "Maria Ga", "Maria G", "Anna Kabituzo", "maria", "Maria Gagorimb", "Zed"}
	var tsv strings.Builder
	for i, n := range names {
		fmt.Fprintf(&tsv, "%s\tr\tx%d\n", n, i)
	}
	g, err := kg.ReadTSV(strings.NewReader(tsv.String()), "names.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var front []int32
	for e := range int32(g.NumEntities()) {
		if !strings.HasPrefix(g.EntityName(e), "x") {
			front = append(front, e)
		}
	}
	for _, tt := range []struct {
		k    int
		want string
	}{
		{1, "[Anna Kabituzo]"},
		{4, "[Anna Kabituzo Maria G Maria Ga Maria Gagorim]"},
		{6, "[Anna Kabituzo Maria G Maria Ga Maria Gagorim Maria Gagorima Maria Gagorimb]"},
	} {
		var got []string
		for _, e := range firstByName(g, front, tt.k) {
			got = append(got, g.EntityName(e))
		}
		if fmt.Sprint(got) != tt.want {
			t.Errorf("firstByName(k=%d) = %v, want %s", tt.k, got, tt.want)
		}
	}
}
