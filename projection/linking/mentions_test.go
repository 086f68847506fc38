package linking

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
)

// TestMentionsOf lists every mention beside the given entity and resolves
// a name two entities share by proximity to the other mentions: the
// Springfield acme_corp is based in, two hops from bob_martin, not the
// one with more edges.
func TestMentionsOf(t *testing.T) {
	g, err := kg.ReadTSV(strings.NewReader(`bob_martin	works_for	acme_corp
acme_corp	based_in	Springfield
Springfield	located_in	illinois
springfield	located_in	massachusetts
springfield	twinned_with	lyon
springfield	twinned_with	paris
lyon	located_in	france
`), "springfields.tsv")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q := "is the company bob martin works for in springfield ?"
	sp, _ := Find(q, "bob_martin")
	links := []Link{{Entity: "bob_martin", Mention: q[sp.Start:sp.End], Start: sp.Start, End: sp.End, Score: 1, Method: "given"}}
	ms, err := MentionsOf(ctx, g, q, links)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%s->%s topic=%v why=%q cands=%v", m.Text, m.Entity, m.Topic, m.Why, m.Candidates))
	}
	want := []string{
		`bob martin->bob_martin topic=true why="given" cands=[{bob_martin 0 0}]`,
		`springfield->Springfield topic=false why="2 hops from another mention's entity, the nearest" cands=[{Springfield 2 2} {springfield 0 3}]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("MentionsOf =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Beside lyon, the springfield twinned with it is the nearer.
	ms, err = MentionsOf(ctx, g, "which springfield is twinned with lyon ?", nil)
	if err != nil || len(ms) != 2 || ms[0].Entity != "springfield" || ms[0].Candidates[0].Hops != 1 || ms[1].Why != "the only entity so named" {
		t.Errorf("springfield beside lyon: %+v, %v", ms, err)
	}
	// A question that names nothing has no mention.
	ms, err = MentionsOf(ctx, g, "who works for acme ?", nil)
	if err != nil || len(ms) != 0 {
		t.Errorf("nothing named: %+v, %v", ms, err)
	}
}

// TestNearMentions links a span no name matches exactly to the entity the
// index finds when both its vector and its letters are near (one edit in
// seven letters or fewer), and nothing when only one of them is.
func TestNearMentions(t *testing.T) {
	g, err := kg.ReadTSV(strings.NewReader(`bob_martin	works_for	acme_corp
acme_corp	based_in	Springfield
Springfield	located_in	illinois
bob_martin	born_in	massachusetts
Films	genre_of	acme_corp
`), "near.tsv")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ents, err := kgvec.Build(ctx, g, trigrams{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := New(g, ents)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		// Misspelt: one letter dropped from 13.
		{"was bob martin born in massachusets ?", []string{"massachusets~massachusetts"}},
		// The trigram encoder puts "springfeld" at 0.78 of Springfield:
		// near in letters, not in the index.
		{"does bob martin work in springfeld ?", nil},
		// Exact names are not near matches.
		{"was bob martin born in massachusetts ?", []string{"massachusetts=massachusetts"}},
		// "film" is two edits from "Films" in five letters: too short.
		{"which film did bob martin make ?", nil},
		// Nothing like an entity.
		{"what did bob martin eat for breakfast ?", nil},
	} {
		sp, _ := Find(tc.q, "bob_martin")
		links := []Link{{Entity: "bob_martin", Mention: tc.q[sp.Start:sp.End], Start: sp.Start, End: sp.End, Score: 1, Method: "given"}}
		ms, err := l.Mentions(ctx, tc.q, links)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			if m.Topic {
				continue
			}
			sep := "="
			if m.Near {
				sep = "~"
			}
			got = append(got, m.Text+sep+m.Entity)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%q: mentions %v, want %v", tc.q, got, tc.want)
		}
		// MentionsOf has no index: exact names only.
		plain, err := MentionsOf(ctx, g, tc.q, links)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range plain {
			if m.Near {
				t.Errorf("%q: MentionsOf gave a near match %+v", tc.q, m)
			}
		}
	}
}
