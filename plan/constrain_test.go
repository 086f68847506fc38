package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// TestConstraints: the constraints a question states are checked in the
// KG after tracing (a time drops the team of another year, a gender ranks
// the wife first), written on the schema graphs, and reported unchecked
// where the KG holds no such attribute; --no-constraints leaves them.
func TestConstraints(t *testing.T) {
	ctx := context.Background()
	g, err := kg.GraphOf([][3]string{
		{"Beckham", "teams", "m.1"}, {"m.1", "team", "Manchester United"}, {"m.1", "from", "1992"}, {"m.1", "to", "2003"},
		{"Beckham", "teams", "m.2"}, {"m.2", "team", "LA Galaxy"}, {"m.2", "from", "2007"}, {"m.2", "to", "2012"},
		{"Beckham", "spouse", "Victoria"}, {"Beckham", "spouse", "Alex"},
		{"Victoria", "people.person.gender", "Female"}, {"Alex", "people.person.gender", "Male"},
		// The question entity's own dates do not date its marriages: they
		// once dropped both spouses "in 1990".
		{"Beckham", "from", "1975"}, {"Beckham", "to", "1980"},
	})
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	ents, err := kgvec.Build(ctx, g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	ret, err := NewTracing(ctx, Env{Graph: g, Entities: ents, Encoder: enc, Tracing: tracing.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q, want, note string
		rels          []string
		off           bool
	}{
		{"what team did beckham play for in 2011 ?", "LA Galaxy", `time "2011": 1 answers kept, 1 dropped`, []string{"teams", "team"}, false},
		{"what team did beckham play for in 2011 ?", "LA Galaxy,Manchester United", "", []string{"teams", "team"}, true},
		{"who is the wife of beckham ?", "Victoria,Alex", `gender "wife": 1 answers that meet it ranked first`, []string{"spouse"}, false},
		{"who is the husband of beckham ?", "Alex,Victoria", `gender "husband"`, []string{"spouse"}, false},
		{"who was beckham married to in 1990 ?", "Alex,Victoria", `time "1990" not checked: the KG holds no dates`, []string{"spouse"}, false},
	} {
		p := &Pipeline{Graph: g, Linker: linking.New(g, ents), Planner: fixedPlanner{tc.rels}, Retriever: ret, NoConstraints: tc.off}
		res, err := p.Answer(ctx, Query{Question: tc.q, Entities: []string{"Beckham"}})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, a := range res.Answers {
			names = append(names, a.Name)
		}
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("%q (off %v): answers %s, want %s", tc.q, tc.off, got, tc.want)
		}
		var notes []string
		for _, r := range res.Constraints {
			notes = append(notes, r.Note)
		}
		if n := strings.Join(notes, "; "); !strings.Contains(n, tc.note) || tc.off && n != "" {
			t.Errorf("%q (off %v): notes %q, want %q", tc.q, tc.off, n, tc.note)
		}
		if !tc.off && len(res.Projection.Candidates[0].Graph.Constraints) == 0 {
			t.Errorf("%q: the schema graph carries no constraint edge", tc.q)
		}
	}
}

// TestConstraintsAreSTEMs: the constraint check is STEM's stage, so a
// peer system's pipeline leaves it off.
func TestConstraintsAreSTEMs(t *testing.T) {
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	reg := DefaultRetrievers()
	if err := reg.Register("other", "a peer", func(context.Context, Env) (Retriever, error) { return nothing{}, nil }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		retriever string
		off       bool
	}{{DefaultStrategy, false}, {"other", true}} {
		s := DefaultSettings()
		s.Planner, s.Retriever = "oracle", tc.retriever
		p, closeP, err := Open(ctx, s, Assets{Encoder: enc, Retrievers: reg})
		if err != nil {
			t.Fatal(err)
		}
		closeP()
		if p.NoConstraints != tc.off {
			t.Errorf("retriever %s: NoConstraints %v, want %v", tc.retriever, p.NoConstraints, tc.off)
		}
	}
}

// TestSecondMention: a question that names a second thing beside its
// entity keeps, of the answers of a plan that ignores it, those that meet
// it in the KG (directly, or through an entity of few edges: an airport,
// an office held), and an order word then picks among those. The KG is
// testdata/mentions.tsv, written by hand.
func TestSecondMention(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "mentions.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		q, entity string
		rels      []string
		off       bool
		want      string
		note      string
	}{
		{"which school with the mascot eagles did alice attend ?", "Alice", []string{"attended"}, false,
			"South High", `mention "eagles" (Eagles): 1 answers meet it within 2 hops and are kept (South High), 2 dropped`},
		{"which school with the mascot eagles did alice attend ?", "Alice", []string{"attended"}, true,
			"East High,North High,South High", ""},
		{"which school did alice attend ?", "Alice", []string{"attended"}, false, "East High,North High,South High", ""},
		// Lyon meets no school: the answers stay as they were.
		{"which school with a campus in lyon did alice attend ?", "Alice", []string{"attended"}, false,
			"East High,North High,South High", "narrows nothing (no answer meets it)"},
		// A name outside a clause is no second thing to meet.
		{"which eagles school did alice attend ?", "Alice", []string{"attended"}, false,
			"East High,North High,South High", ""},
		// Two hops, through the airport.
		{"which country bordering freedonia contains an airport that serves lyon ?", "Freedonia", []string{"borders"}, false,
			"Sylvania", "1 answers meet it"},
		// The war keeps two presidents; "earliest" then picks the one
		// whose office began first (Zeppo's began earlier, before it).
		{"who was the earliest president of freedonia during the great war ?", "Freedonia", []string{"office_holder", "holder"}, false,
			"Firefly", `order "earliest"`},
		{"who was the earliest president of freedonia ?", "Freedonia", []string{"office_holder", "holder"}, false,
			"Zeppo", `order "earliest"`},
	} {
		if _, err := f.Seek(0, 0); err != nil {
			t.Fatal(err)
		}
		p := readPipeline(t, f, "mentions", fixedPlanner{tc.rels})
		p.NoConstraints = tc.off
		res, err := p.Answer(context.Background(), Query{Question: tc.q, Entities: []string{tc.entity}})
		if err != nil {
			t.Fatal(err)
		}
		var names, notes []string
		for _, a := range res.Answers {
			names = append(names, a.Name)
		}
		for _, r := range res.Constraints {
			notes = append(notes, r.Note)
		}
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("%q (off %v): answers %s, want %s (notes %q)", tc.q, tc.off, got, tc.want, notes)
		}
		if n := strings.Join(notes, "; "); !strings.Contains(n, tc.note) || tc.off && n != "" {
			t.Errorf("%q (off %v): notes %q, want %q", tc.q, tc.off, n, tc.note)
		}
	}
}

// TestConstraintWordsInNames: a constraint word inside the topic entity's
// name ("The Last Kiss") states nothing of the answer; one beside it does.
func TestConstraintWordsInNames(t *testing.T) {
	q := "when was the last kiss released"
	for _, tc := range []struct {
		linked []linking.Mention
		want   string
	}{
		{[]linking.Mention{{Text: "the last kiss", Start: 9, End: 22, Topic: true}}, "when was               released"},
		{[]linking.Mention{{Text: "kiss", Start: 18, End: 22}}, q},
		{nil, q},
	} {
		if got := unnamed(q, tc.linked); got != tc.want {
			t.Errorf("unnamed(%q, %v) = %q, want %q", q, tc.linked, got, tc.want)
		}
	}
}

// TestSeriesMates: a first/last question orders the editions its other
// readings reach too (one fact under two relations), and only those of a
// series the question names.
func TestSeriesMates(t *testing.T) {
	g, err := kg.GraphOf([][3]string{
		{"Giants", "championships", "2010 World Series"}, {"Giants", "champion", "2014 World Series"},
		{"Ravens", "champion", "2013 AFC Championship Game"}, {"Ravens", "champion", "Super Bowl XLVII"},
		{"Ravens", "champion", "Super Bowl XXXV"}, {"Ravens", "champion", "2001 AFC Championship Game"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ans := func(names ...string) []tracing.Answer {
		var out []tracing.Answer
		for _, n := range names {
			e, _ := g.Entity(n)
			out = append(out, tracing.Answer{Entity: e, Name: n})
		}
		return out
	}
	names := func(tr *tracing.Result) string {
		if tr == nil {
			return "<nil>"
		}
		var out []string
		for _, a := range tr.Answers {
			out = append(out, a.Name)
		}
		return strings.Join(out, ", ")
	}
	last := []schema.Constraint{{Kind: constraint.Order, Value: "last", Text: "last"}}
	giants := &tracing.Result{Answers: ans("2010 World Series"),
		Alternatives: []tracing.Alternative{{Answers: ans("2010 World Series")}, {Answers: ans("2014 World Series")}}}
	if got := names(seriesMates(g, "when did the giants last win", last, giants)); got != "2010 World Series, 2014 World Series" {
		t.Errorf("giants: %s", got)
	}
	if got := names(seriesMates(g, "who were the giants' last players", nil, giants)); got != "<nil>" {
		t.Errorf("no order: %s", got)
	}
	all := ans("Super Bowl XLVII", "Super Bowl XXXV", "2001 AFC Championship Game", "2013 AFC Championship Game")
	ravens := &tracing.Result{Answers: all, Alternatives: []tracing.Alternative{{Answers: all}, {}}}
	if got := names(seriesMates(g, "when is the last time the ravens won a superbowl", last, ravens)); got != "Super Bowl XLVII, Super Bowl XXXV" {
		t.Errorf("ravens: %s", got)
	}
}
