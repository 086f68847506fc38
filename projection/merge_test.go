package projection

import (
	"reflect"
	"testing"

	"github.com/stem-kgqa/stem/schema"
)

func TestMerge(t *testing.T) {
	cand := func(score float32, rels ...string) Candidate {
		return Candidate{Graph: schema.Path("X", rels...), Score: score}
	}
	trained := Projection{Strategy: schema.Precision, Candidates: []Candidate{
		cand(0.75, "film.actor.film", "film.performance.character"),
		{Graph: schema.Path("X", "film.actor.films"), Score: 0.5, Variant: true},
		cand(0.25, "people.person.spouse"),
	}}
	zero := Projection{Strategy: schema.Breadth, Candidates: []Candidate{
		cand(3, "people.person.spouse"),
		cand(2, "people.person.children"),
	}}
	type row struct {
		rels     string
		score    float32
		strategy schema.Strategy
		variant  bool
		origin   Origin
	}
	rows := func(p Projection) []row {
		var out []row
		for i, c := range p.Candidates {
			out = append(out, row{c.Graph.String(), c.Score, p.StrategyOf(i), c.Variant, c.Origin})
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		first, second Projection
		want          []row
		per           bool
	}{
		{"trained then zero-shot, shared graph once", trained, zero, []row{
			{trained.Candidates[0].Graph.String(), 1, schema.Precision, false, Origin{Merged: true}},
			{trained.Candidates[1].Graph.String(), 0.5, schema.Precision, true, Origin{Merged: true, Rank: 1}},
			{trained.Candidates[2].Graph.String(), 0, schema.Precision, false, Origin{Merged: true, Both: true, Rank: 2}},
			{zero.Candidates[1].Graph.String(), 0, schema.Breadth, false, Origin{Merged: true, Second: true, Rank: 1}},
		}, true},
		{"no trained candidates: the zero-shot beam first", Projection{Strategy: schema.Precision}, zero, []row{
			{zero.Candidates[0].Graph.String(), 1, schema.Breadth, false, Origin{Merged: true, Second: true}},
			{zero.Candidates[1].Graph.String(), 0, schema.Breadth, false, Origin{Merged: true, Second: true, Rank: 1}},
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Merge(tc.first, tc.second)
			if g := rows(got); !reflect.DeepEqual(g, tc.want) {
				t.Errorf("Merge:\n got %+v\nwant %+v", g, tc.want)
			}
			if got.PerCandidate != tc.per {
				t.Errorf("PerCandidate = %v, want %v", got.PerCandidate, tc.per)
			}
		})
	}
}

func TestMergeDemoted(t *testing.T) {
	one := Projection{Candidates: []Candidate{{Graph: schema.Path("X", "a"), Score: 1}}}
	demoted := func(p Projection, score float32, last bool) Projection {
		p.Demoted, p.DemotedLast = score, last
		return p
	}
	for _, tc := range []struct {
		name          string
		first, second Projection
		score         float32
		last          bool
	}{
		{"neither demoted", one, one, 0, false},
		{"the trained planner demoted, last step missing", demoted(one, 0.6, true), one, 0.6, true},
		{"the zero-shot planner demoted more", demoted(one, 0.3, true), demoted(one, 0.7, false), 0.7, false},
		{"a tie keeps the first planner's", demoted(one, 0.5, true), demoted(one, 0.5, false), 0.5, true},
		{"no trained candidates", demoted(Projection{}, 0.4, true), one, 0.4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Merge(tc.first, tc.second)
			if got.Demoted != tc.score || got.DemotedLast != tc.last {
				t.Errorf("Merge: Demoted %v, DemotedLast %v; want %v, %v", got.Demoted, got.DemotedLast, tc.score, tc.last)
			}
		})
	}
}
