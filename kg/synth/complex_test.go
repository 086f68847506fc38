package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
)

// complexSplits writes a graph with cfg.Complex and its complex splits.
func complexSplits(t *testing.T, cfg Config) (kgb, test, train []byte, st Stats) {
	t.Helper()
	var k, c, ct bytes.Buffer
	st, err := writeSplits(context.Background(), cfg, &k, [4]io.Writer{nil, nil, &c, &ct}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k.Bytes(), c.Bytes(), ct.Bytes(), st
}

func readComplex(t *testing.T, b []byte) []ComplexQuestion {
	t.Helper()
	var out []ComplexQuestion
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var q ComplexQuestion
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, q)
	}
	return out
}

// TestComplex: every kind is written, deterministically, with date
// literals in the KG; the training split repeats no test question; and
// each question's gold graph holds in the KG for each gold answer, and
// does not for an entity the graph's path alone reaches.
func TestComplex(t *testing.T) {
	cfg := Config{Triples: 150000, Seed: 11, Complex: 40}
	k, test, train, st := complexSplits(t, cfg)
	k2, test2, _, _ := complexSplits(t, cfg)
	if !bytes.Equal(k, k2) || !bytes.Equal(test, test2) {
		t.Fatal("the same config gave other bytes")
	}
	if !bytes.Contains(k, []byte("government.government_position_held.from\t19")) || !bytes.Contains(k, []byte(areaRel+"\t")) {
		t.Error("no date or numeric literals in the KG")
	}
	plain, _, _ := synthesize(t, Config{Triples: 150000, Seed: 11})
	if bytes.Contains(plain, []byte(".from\t")) {
		t.Error("a graph without Complex has date literals")
	}
	for _, kind := range ComplexKinds {
		if st.Complex[kind] != 40 {
			t.Errorf("%s: %d test questions, want 40", kind, st.Complex[kind])
		}
		if st.ComplexTrain[kind] < 40 {
			t.Errorf("%s: %d training questions", kind, st.ComplexTrain[kind])
		}
	}
	g, err := kg.ReadTSV(bytes.NewReader(k), "synth.tsv")
	if err != nil {
		t.Fatal(err)
	}
	has := func(h, r, tl string) bool {
		hi, ok1 := g.Entity(h)
		ti, ok2 := g.Entity(tl)
		ri, ok3 := g.Relation(r)
		if !ok1 || !ok2 || !ok3 {
			return false
		}
		return slices.ContainsFunc(g.OutRel(hi, ri), func(tid int32) bool { return g.Triple(tid).Tail == ti })
	}
	texts := map[string]bool{}
	qs := readComplex(t, test)
	for _, q := range qs {
		texts[q.Question] = true
		tr := q.Graph.Triples
		if q.Kind == KindCount {
			// The answer is the number of tails the one relation gives.
			p, _ := g.Entity(tr[0].Head)
			r0, _ := g.Relation(tr[0].Rel)
			tails := map[int32]bool{}
			for _, tid := range g.OutRel(p, r0) {
				tails[g.Triple(tid).Tail] = true
			}
			if want := strconv.Itoa(len(tails)); len(q.Answers) != 1 || q.Answers[0] != want {
				t.Errorf("%s: answers %v, want [%s]", q.ID, q.Answers, want)
			}
			continue
		}
		for _, a := range q.Answers {
			switch q.Kind {
			case KindConjunction:
				if !has(a, tr[0].Rel, tr[0].Tail) || !has(a, tr[1].Rel, tr[1].Tail) {
					t.Errorf("%s: answer %s misses a branch of %v", q.ID, a, tr)
				}
			case KindRelative:
				// Some neighbour of the answer by the second triple's
				// relation meets the second anchor.
				e, _ := g.Entity(a)
				r2, _ := g.Relation(tr[1].Rel)
				if !has(a, tr[0].Rel, tr[0].Tail) || !slices.ContainsFunc(g.OutRel(e, r2), func(tid int32) bool {
					return has(g.EntityName(g.Triple(tid).Tail), tr[2].Rel, tr[2].Tail)
				}) {
					t.Errorf("%s: answer %s misses a branch of %v", q.ID, a, tr)
				}
			case KindLargest:
				e, _ := g.Entity(a)
				ar, _ := g.Relation(areaRel)
				if !has(a, tr[0].Rel, tr[0].Tail) || len(g.OutRel(e, ar)) == 0 {
					t.Errorf("%s: answer %s lacks %v or an area", q.ID, a, tr[0])
				}
			default:
				// Some CVT of the topic reaches the answer (and, at a
				// CVT conjunction, the second anchor).
				p, _ := g.Entity(tr[0].Head)
				r0, _ := g.Relation(tr[0].Rel)
				ok := false
				for _, tid := range g.OutRel(p, r0) {
					c := g.EntityName(g.Triple(tid).Tail)
					if has(c, tr[1].Rel, a) && (q.Kind != KindConjunctionCVT || has(c, tr[2].Rel, tr[2].Tail)) {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s: no CVT of %s reaches answer %s", q.ID, tr[0].Head, a)
				}
			}
		}
		if (q.Kind == KindSuperlative || q.Kind == KindComparative || q.Kind == KindLargest) && len(q.Graph.Constraints) != 1 {
			t.Errorf("%s: constraints %v", q.ID, q.Graph.Constraints)
		}
	}
	for _, q := range readComplex(t, train) {
		if texts[q.Question] {
			t.Errorf("training question %q is a test question", q.Question)
		}
	}
}
