package projection_test

import (
	"fmt"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// TestJoinMention joins a second named thing to the node of a path it
// links to: the film to an actor's performance (a CVT), a place to the
// answer, and nothing through a hub or where every answer links alike.
func TestJoinMention(t *testing.T) {
	b := kg.NewBuilder()
	for _, tr := range [][3]string{
		// kate's performances: a CVT each, to a character and a film.
		{"kate", "actor.film", "p1"}, {"p1", "performance.character", "paul"}, {"p1", "performance.film", "dune"},
		{"kate", "actor.film", "p2"}, {"p2", "performance.character", "leto"}, {"p2", "performance.film", "arrival"},
		{"kate", "actor.film", "p3"}, {"p3", "performance.character", "jess"}, {"p3", "performance.film", "dune"},
		// bob works for three companies, one in lyon.
		{"bob", "works_for", "acme"}, {"bob", "works_for", "globex"}, {"bob", "works_for", "initech"},
		{"acme", "located_in", "lyon"},
		// everyone in films is female: the gender is a hub.
		{"ann", "works_for", "acme"}, {"zoe", "works_for", "globex"},
		{"tess", "works_for", "initech"},
		// three countries border the alps; an airport in each of two
		// serves a city, and a busy one (a hub) in the third.
		{"fr", "borders", "alps"}, {"ch", "borders", "alps"}, {"it", "borders", "alps"},
		{"cdg", "containedby", "fr"}, {"cdg", "serves", "paris"},
		{"zrh", "containedby", "ch"}, {"zrh", "serves", "zurich"},
		{"mxp", "containedby", "it"}, {"mxp", "serves", "milan"},
		{"fr", "member_of", "alpine club"}, {"ch", "member_of", "alpine club"},
	} {
		b.Add(tr[0], tr[1], tr[2])
	}
	for i := range 120 {
		b.Add(fmt.Sprintf("w%d", i), "gender", "female")
		b.Add(fmt.Sprintf("w%d", i), "works_for", []string{"acme", "globex"}[i%2])
	}
	for i := range 120 {
		b.Add("mxp", "flight", fmt.Sprintf("f%d", i))
	}
	b.Add("kate", "gender", "female")
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	borders := []schema.Step{{Rel: "borders", Dir: schema.Inverse}}
	perf := []schema.Step{{Rel: "actor.film", Dir: schema.Forward}, {Rel: "performance.character", Dir: schema.Forward}}
	for _, tt := range []struct {
		name, anchor, other string
		steps               []schema.Step
		ok                  bool
		want                string // the graph's triples
		answers             int
	}{
		{"CVT", "kate", "dune", perf, true,
			"(kate, actor.film, [ENT1]); ([ENT1], performance.character, [ENT2]); ([ENT1], performance.film, dune)", 2},
		{"either way", "kate", "arrival", []schema.Step{{Rel: "actor.film", Dir: schema.Either}, {Rel: "performance.character", Dir: schema.Either}}, true,
			"(kate, actor.film, [ENT1]); ([ENT1], performance.character, [ENT2]); ([ENT1], performance.film, arrival)", 1},
		{"answer", "bob", "lyon", []schema.Step{{Rel: "works_for", Dir: schema.Forward}}, true,
			"(bob, works_for, [ENT1]); ([ENT1], located_in, lyon)", 1},
		{"through a hub", "kate", "ann", []schema.Step{{Rel: "gender", Dir: schema.Forward}, {Rel: "gender", Dir: schema.Inverse}, {Rel: "works_for", Dir: schema.Forward}}, false, "", 0},
		{"links to nothing", "bob", "dune", []schema.Step{{Rel: "works_for", Dir: schema.Forward}}, false, "", 0},
		{"the anchor itself", "bob", "bob", []schema.Step{{Rel: "works_for", Dir: schema.Forward}}, false, "", 0},
		// "which country bordering the alps contains an airport that
		// serves paris": two hops, through the airport.
		{"through an entity", "alps", "paris", borders, true,
			"([ENT1], borders, alps); ([ENT2], containedby, [ENT1]); ([ENT2], serves, paris)", 1},
		{"one hop first", "alps", "alpine club", borders, true,
			"([ENT1], borders, alps); ([ENT1], member_of, alpine club)", 2},
		{"through a hub entity", "alps", "milan", borders, false, "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if hub := projection.ThroughHub(g, tt.anchor, tt.steps); hub != (tt.name == "through a hub") {
				t.Errorf("ThroughHub = %v", hub)
			}
			j, ok := projection.JoinMention(g, tt.anchor, tt.steps, tt.other)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tt.ok, j)
			}
			if !ok {
				return
			}
			if b, found := projection.BestJoin(g, tt.anchor, tt.steps, []string{tt.anchor, "bob", tt.other}, projection.JoinOptions{}); !found || b != j {
				t.Errorf("BestJoin = %+v, %v; want %+v", b, found, j)
			}
			if got := j.Attach(schema.PathGraph(tt.anchor, tt.steps)).String(); got != tt.want || j.Answers != tt.answers {
				t.Errorf("graph %s, %d answers; want %s, %d", got, j.Answers, tt.want, tt.answers)
			}
		})
	}
}

// TestBestJoinOneHopFirst: a join in one hop wins over one through an
// intermediate entity, though that leaves fewer answers, so that every
// one-hop join planned before stays; Note says which kind it is.
func TestBestJoinOneHopFirst(t *testing.T) {
	b := kg.NewBuilder()
	for _, tr := range [][3]string{
		{"fr", "borders", "alps"}, {"ch", "borders", "alps"}, {"it", "borders", "alps"},
		{"cdg", "containedby", "fr"}, {"cdg", "serves", "paris"},
		{"fr", "member_of", "club"}, {"ch", "member_of", "club"},
	} {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	steps := []schema.Step{{Rel: "borders", Dir: schema.Inverse}}
	for _, tt := range []struct {
		others []string
		want   string
	}{
		{[]string{"paris", "club"}, `join: "club" links to the answer by member_of and narrows 3 answers to 2`},
		{[]string{"club", "paris"}, `join: "club" links to the answer by member_of and narrows 3 answers to 2`},
		{[]string{"paris"}, `join: "paris" links to the answer by serves then containedby, through an entity, and narrows 3 answers to 1`},
		{[]string{"paris"}, ""}, // one hop only
	} {
		j, ok := projection.BestJoin(g, "alps", steps, tt.others, projection.JoinOptions{OneHop: tt.want == ""})
		if ok != (tt.want != "") || ok && j.Note() != tt.want {
			t.Errorf("%v: %q, %v; want %q", tt.others, j.Note(), ok, tt.want)
		}
	}
}

// TestJoinTieByName: of two joins through an entity leaving as many
// answers, the one whose relations' names come first wins, whatever
// order the graph lists its edges in (a KG and a neighbourhood fetched
// from it list them differently).
func TestJoinTieByName(t *testing.T) {
	triples := [][3]string{
		{"fr", "borders", "alps"}, {"ch", "borders", "alps"},
		{"cdg", "containedby", "fr"}, {"cdg", "serves", "paris"},
		{"louvre", "in_country", "fr"}, {"louvre", "near", "paris"},
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}} {
		b := kg.NewBuilder()
		for _, i := range order {
			b.Add(triples[i][0], triples[i][1], triples[i][2])
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		j, ok := projection.JoinMention(g, "alps", []schema.Step{{Rel: "borders", Dir: schema.Inverse}}, "paris")
		if !ok || j.Via != "near" || j.Rel != "in_country" || j.Answers != 1 {
			t.Errorf("order %v: %+v, %v; want the join by near then in_country", order, j, ok)
		}
	}
}
