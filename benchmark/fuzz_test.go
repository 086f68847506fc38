package benchmark

import (
	"strings"
	"testing"
)

// The fuzz targets check that the parsers never panic and that what they
// accept is well formed.

func FuzzParsePathQuestion(f *testing.F) {
	for _, s := range []string{pq2Line, pq3Line, pqlPG, pqlSolst, "q\t((a)/)\ts#r#a", "q\ta(\ts#r#a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		q, err := ParsePathQuestion(line)
		if err != nil {
			return
		}
		if len(q.Answers) == 0 || len(q.Gold) != 1 || len(q.Gold[0].Steps) == 0 ||
			len(q.Gold[0].Steps) != len(q.Gold[0].Entities) || q.Hops != len(q.Gold[0].Steps) {
			t.Fatalf("accepted %q as %+v", line, q)
		}
		if len(q.Gold[0].Triples()) != q.Hops {
			t.Fatalf("gold triples of %q: %v", line, q.Gold[0].Triples())
		}
	})
}

func FuzzParseMetaQA(f *testing.F) {
	for _, s := range []string{metaLine1, metaLine2, "q [[x]]\ta||b", "q ]x[\ta"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		q, err := ParseMetaQA(line)
		if err != nil {
			return
		}
		if len(q.Entities) != 1 || q.Entities[0] == "" || len(q.Answers) == 0 {
			t.Fatalf("accepted %q as %+v", line, q)
		}
		for _, a := range q.Answers {
			if a == "" || strings.Contains(a, "|") {
				t.Fatalf("bad answer %q from %q", a, line)
			}
		}
	})
}

func FuzzParseReasoningPath(f *testing.F) {
	for _, s := range []string{webqPath, "A -> r -> B", "A -> r -> B -> s -> C -> t -> D", " -> -> ", "A->r->B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		ts, err := ParseReasoningPath(line)
		if err != nil {
			return
		}
		if len(ts) == 0 {
			t.Fatalf("accepted %q with no triples", line)
		}
		for i, tr := range ts {
			if tr[0] == "" || tr[1] == "" || tr[2] == "" {
				t.Fatalf("empty field in %v from %q", tr, line)
			}
			if i > 0 && ts[i-1][2] != tr[0] {
				t.Fatalf("path %q does not chain: %v", line, ts)
			}
		}
	})
}
