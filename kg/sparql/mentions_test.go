package sparql_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/sparql"
	"github.com/stem-kgqa/stem/projection/linking"
)

// TestMentionsAgree lists every mention (linking.MentionsOf) of a sample
// of WebQSP-mini's questions over the shared WebQSP KG in memory and over
// each engine, with the questions' given entities as their topics, and
// wants the same mentions: spans, entities, candidates, their hops and
// degrees, and why one won. Over an endpoint every n-gram is looked up in
// one batch of exact spellings (LookupNames), so Oxigraph, with no text
// index, finds what Virtuoso finds.
func TestMentionsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the WebQSP KG is served by an engine")
	}
	ctx := context.Background()
	var set benchmarkSet
	for _, s := range benchmarkSets(ctx) {
		if s.name == "WebQSP-mini" {
			set = s
		}
	}
	all := set.test(t)
	var qs []benchmark.Question
	for i := 0; i < len(all); i += 8 {
		qs = append(qs, all[i])
	}
	path := filepath.Join(t.TempDir(), "webqsp-union.tsv")
	writeTSV(t, path, union(t, all))
	file, err := kg.Load(ctx, path, kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	linksOf := func(q benchmark.Question) []linking.Link {
		var links []linking.Link
		for _, e := range q.Entities {
			l := linking.Link{Entity: e, Mention: e, Score: 1, Method: "given"}
			if sp, ok := linking.Find(q.Text, e); ok {
				l.Start, l.End, l.Mention = sp.Start, sp.End, q.Text[sp.Start:sp.End]
			}
			links = append(links, l)
		}
		return links
	}
	want := make([]string, len(qs))
	extra := 0
	for i, q := range qs {
		ms, err := linking.MentionsOf(ctx, file, q.Text, linksOf(q))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = describeMentions(ms)
		for _, m := range ms {
			if !m.Topic {
				extra++
			}
		}
	}
	if extra == 0 {
		t.Fatalf("%d questions: no mention beside the topics in memory, so nothing is compared", len(qs))
	}
	eachEngine(t, func(t *testing.T, e *engine) {
		endpoint, graph := e.serve(t, file)
		remote, err := sparql.Open(sparql.Config{Endpoint: endpoint, Graph: graph})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		differ := 0
		for i, q := range qs {
			ms, err := linking.MentionsOf(ctx, remote, q.Text, linksOf(q))
			if err != nil {
				t.Fatal(err)
			}
			if got := describeMentions(ms); got != want[i] {
				differ++
				// With no text index, names are asked in their common
				// spellings only: "henry viii" does not find "Henry
				// VIII". Counted, and bounded.
				if e.textIndex {
					t.Errorf("%s %q:\n got %s\nwant %s", q.ID, q.Text, got, want[i])
				} else {
					t.Logf("%s %q (no text index):\n got %s\nwant %s", q.ID, q.Text, got, want[i])
				}
			}
		}
		if differ > len(qs)/20 {
			t.Errorf("%d of %d questions' mentions differ from the KG in memory's", differ, len(qs))
		}
		t.Logf("%d questions, %d mentions beside the topics in memory, %d differ, in %v (%d queries)", len(qs), extra, differ, time.Since(start).Round(time.Millisecond), remote.Stats().Queries)
	})
}

// describeMentions is ms in one line: each mention's span, entity,
// candidates with their hops and degrees, and why it won.
func describeMentions(ms []linking.Mention) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "[%q %d-%d %s topic=%v why=%q", m.Text, m.Start, m.End, m.Entity, m.Topic, m.Why)
		for _, c := range m.Candidates {
			fmt.Fprintf(&b, " %s/%d/%d", c.Entity, c.Hops, c.Degree)
		}
		b.WriteString("] ")
	}
	return b.String()
}
