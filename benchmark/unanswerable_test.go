package benchmark

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// pickIDs returns an id UnanswerableSampled picks at fraction and one it
// does not, with the prefix given.
func pickIDs(t *testing.T, prefix string, fraction float64) (in, out string) {
	t.Helper()
	for i := 0; in == "" || out == ""; i++ {
		id := fmt.Sprintf("%s%d", prefix, i)
		if UnanswerableSampled(id, fraction) {
			in = cmpOr(in, id)
		} else {
			out = cmpOr(out, id)
		}
	}
	return in, out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestUnanswerableSampled(t *testing.T) {
	n, both := 0, 0
	for i := range 20000 {
		id := fmt.Sprint("WebQTest-", i)
		if UnanswerableSampled(id, 0.2) {
			n++
			if HalfOf(id) == Test {
				both++
			}
		}
		if UnanswerableSampled(id, 0.2) != UnanswerableSampled(id, 0.2) {
			t.Fatal("not deterministic")
		}
	}
	// One in five, and about half of those on each side of HalfOf.
	if n < 3800 || n > 4200 || both < n*45/100 || both > n*55/100 {
		t.Errorf("sampled %d of 20000 (want about 4000), %d of them in the test half", n, both)
	}
}

func TestRemoveAnswers(t *testing.T) {
	//   a -r1-> b -r2-> c      qRemoved: a, r1 r2, answer c (sampled)
	//   x -r1-> b -r2-> d      qShared:  x, r1 r2, answer c (shares b r2 c)
	//   e -r3-> f              qKept:    e, r3, answer f
	//   g -r4-> h              qNoPath:  no gold path
	//   b <-r5- c              the walk back from c is not the answer edge
	g, err := kg.GraphOf([][3]string{{"a", "r1", "b"}, {"b", "r2", "c"}, {"b", "r2", "d"}, {"x", "r1", "b"}, {"e", "r3", "f"}, {"g", "r4", "h"}, {"c", "r5", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	removed, kept := pickIDs(t, "q", 0.5)
	_, shared := pickIDs(t, "s", 0.5)
	_, noPath := pickIDs(t, "n", 0.5)
	removedIn, _ := pickIDs(t, "n", 0.5)
	fwd := func(rels ...string) []schema.GoldPath {
		var steps []schema.Step
		for _, r := range rels {
			steps = append(steps, schema.Step{Rel: r, Dir: schema.Forward})
		}
		return []schema.GoldPath{{Steps: steps}}
	}
	qs := []Question{
		{ID: removed, Entities: []string{"a"}, Answers: []string{"c"}, Gold: fwd("r1", "r2")},
		{ID: shared, Entities: []string{"x"}, Answers: []string{"c"}, Gold: fwd("r1", "r2")},
		{ID: kept, Entities: []string{"e"}, Answers: []string{"f"}, Gold: fwd("r3")},
		{ID: noPath, Entities: []string{"g"}, Answers: []string{"h"}},
		// Sampled but its gold path reaches no answer: nothing to remove.
		{ID: removedIn, Entities: []string{"e"}, Answers: []string{"h"}, Gold: fwd("r3")},
	}
	out, u, err := RemoveAnswers(context.Background(), g, qs, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	want := &Unanswerable{Fraction: 0.5, Questions: 5, Removed: []string{removed}, Unreachable: []string{shared}, NoGoldPath: 2,
		Triples: [][3]string{{"b", "r2", "c"}}}
	if !reflect.DeepEqual(u, want) {
		t.Errorf("manifest = %+v, want %+v", u, want)
	}
	if out.NumTriples() != g.NumTriples()-1 || hasTriple(out, "b", "r2", "c") || !hasTriple(out, "c", "r5", "b") {
		t.Errorf("variant holds %d triples, want %d without b r2 c", out.NumTriples(), g.NumTriples()-1)
	}
	if lost := u.Lost(); len(lost) != 2 || !lost[removed] || !lost[shared] {
		t.Errorf("lost = %v", lost)
	}

	path := filepath.Join(t.TempDir(), "unanswerable.json")
	var buf bytes.Buffer
	if err := u.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := ReadUnanswerable(path)
	if err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("read back %+v, %v", back, err)
	}
	if err := os.WriteFile(path, []byte(`{"fraction": 0.2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadUnanswerable(path); err == nil {
		t.Error("a manifest without a removed list was read")
	}
	for _, f := range []float64{0, 1, -0.5} {
		if _, _, err := RemoveAnswers(context.Background(), g, qs, f); err == nil {
			t.Errorf("fraction %v accepted", f)
		}
	}
}

// hasTriple reports whether g holds (h, r, t) by name.
func hasTriple(g *kg.Graph, h, r, t string) bool {
	hi, ok1 := g.Entity(h)
	ri, ok2 := g.Relation(r)
	ti, ok3 := g.Entity(t)
	return ok1 && ok2 && ok3 && g.HasTriple(hi, ri, ti)
}

// TestNegativesSample: stem train selector's negatives (NegativesSalt)
// are as many as asked and independent of the test variants' sample:
// about a fifth of the variant's questions are among them, as of all.
func TestNegativesSample(t *testing.T) {
	neg := Sample{Fraction: 0.2, Salt: NegativesSalt}
	test := Sample{Fraction: 0.2, Salt: "unanswerable"}
	n, both, sampled := 0, 0, 0
	for i := range 20000 {
		id := fmt.Sprint("q", i)
		if test.Sampled(id) != UnanswerableSampled(id, 0.2) {
			t.Fatalf("%s: Sample with the variants' salt differs from UnanswerableSampled", id)
		}
		if test.Sampled(id) {
			sampled++
		}
		if neg.Sampled(id) {
			n++
			if test.Sampled(id) {
				both++
			}
		}
	}
	if n < 3800 || n > 4200 || both < sampled*17/100 || both > sampled*23/100 {
		t.Errorf("negatives %d of 20000 (want about 4000), %d of the variant's %d (want about a fifth)", n, both, sampled)
	}
}
