package linking

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
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
