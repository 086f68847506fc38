package synth

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
)

const testTriples = 40000

func synthesize(t *testing.T, cfg Config) (kgb, qb []byte, st Stats) {
	t.Helper()
	var k, q bytes.Buffer
	var last int64
	st, err := Write(context.Background(), cfg, &k, &q, func(done, total int64) {
		if done < last || total != int64(cfg.Triples) {
			t.Fatalf("progress %d/%d after %d", done, total, last)
		}
		last = done
	})
	if err != nil {
		t.Fatal(err)
	}
	if last != int64(cfg.Triples) {
		t.Errorf("progress ended at %d, want %d", last, cfg.Triples)
	}
	return k.Bytes(), q.Bytes(), st
}

func TestDeterministic(t *testing.T) {
	k1, q1, _ := synthesize(t, Config{Triples: 20000, Seed: 7})
	k2, q2, _ := synthesize(t, Config{Triples: 20000, Seed: 7})
	if !bytes.Equal(k1, k2) || !bytes.Equal(q1, q2) {
		t.Error("same seed, different bytes")
	}
	k3, q3, _ := synthesize(t, Config{Triples: 20000, Seed: 8})
	if bytes.Equal(k1, k3) || bytes.Equal(q1, q3) {
		t.Error("different seeds, same bytes")
	}
}

func TestBadConfig(t *testing.T) {
	for _, cfg := range []Config{{}, {Triples: -1}, {Triples: 10, Relations: -1}, {Triples: 10, Questions: -3}, {Triples: MaxTriples + 1}} {
		if _, err := Write(context.Background(), cfg, &bytes.Buffer{}, nil, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err = %v, want ErrConfig", cfg, err)
		}
	}
	if _, err := Write(context.Background(), Config{Triples: 10}, nil, nil, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("nil writer: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Write(ctx, Config{Triples: 200000}, &bytes.Buffer{}, nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestTiny: the smallest graphs are exact too.
func TestTiny(t *testing.T) {
	for _, n := range []int{1, 2, 5, 50} {
		k, _, st := synthesize(t, Config{Triples: n, Seed: 1, Questions: 5})
		if got := bytes.Count(k, []byte{'\n'}); got != n || st.Triples != int64(n) {
			t.Errorf("n=%d: %d lines, stats %d", n, got, st.Triples)
		}
		if _, err := kg.ReadTSV(bytes.NewReader(k), "tiny"); err != nil {
			t.Errorf("n=%d: %v", n, err)
		}
	}
}

// TestGraph loads the KG with kg's reader and checks the shape: exact
// triple count, no duplicates, heavy tail, hubs, CVTs, the relation
// schema and namesakes.
func TestGraph(t *testing.T) {
	k, _, st := synthesize(t, Config{Triples: testTriples, Seed: 3})
	g, err := kg.ReadTSV(bytes.NewReader(k), "synth")
	if err != nil {
		t.Fatal(err)
	}
	if g.NumTriples() != testTriples || g.Duplicates() != 0 || st.Duplicates != 0 {
		t.Fatalf("%d triples, %d duplicates; want %d, 0", g.NumTriples(), g.Duplicates(), testTriples)
	}
	if int64(g.NumEntities()) != st.Entities || g.NumRelations() != st.Relations {
		t.Errorf("graph has %d entities %d relations, stats say %d %d", g.NumEntities(), g.NumRelations(), st.Entities, st.Relations)
	}
	var degs []int
	cvts, maxDeg := 0, 0
	for id := range int32(g.NumEntities()) {
		d := g.Degree(id)
		degs = append(degs, d)
		maxDeg = max(maxDeg, d)
		if strings.HasPrefix(g.EntityName(id), "m.0") {
			cvts++
			if name := g.EntityName(id); kg.EntityText(name) != name || strings.ContainsAny(name, " ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
				t.Errorf("CVT %q reads like a name", name)
			}
			if len(g.Out(id)) < 2 {
				t.Errorf("CVT %q has %d out-edges, want 2+", g.EntityName(id), len(g.Out(id)))
			}
		}
	}
	slices.Sort(degs)
	median := degs[len(degs)/2]
	t.Logf("entities %d, relations %d, CVTs %d, namesakes %d, degree max %d (%s) median %d",
		g.NumEntities(), g.NumRelations(), cvts, st.Namesakes, maxDeg, st.MaxDegreeEntity, median)
	if median > 3 || maxDeg < 100*median || maxDeg < testTriples/50 {
		t.Errorf("degree median %d max %d: want a heavy tail (max >= 100x median, >= 2%% of triples)", median, maxDeg)
	}
	if int64(maxDeg) != st.MaxDegree || int64(median) != st.MedianDegree {
		t.Errorf("stats say max %d median %d", st.MaxDegree, st.MedianDegree)
	}
	if cvts == 0 || int64(cvts) != st.CVTs || cvts < testTriples/50 {
		t.Errorf("%d CVTs (stats %d)", cvts, st.CVTs)
	}
	if g.NumRelations() < 500 || st.Schema != DefaultRelations {
		t.Errorf("%d relations used of %d", g.NumRelations(), st.Schema)
	}
	domains := map[string]bool{}
	for r := range int32(g.NumRelations()) {
		parts := strings.Split(g.RelationName(r), ".")
		if len(parts) != 3 || slices.Contains(parts, "") {
			t.Fatalf("relation %q is not domain.type.property", g.RelationName(r))
		}
		domains[parts[0]] = true
	}
	if len(domains) < 20 {
		t.Errorf("%d domains", len(domains))
	}
	// Namesakes: distinct entities, the same normalised name.
	byNorm := map[string]int{}
	for id := range int32(g.NumEntities()) {
		if n := g.EntityName(id); !strings.HasPrefix(n, "m.0") {
			byNorm[kg.Normalize(n)]++
		}
	}
	shared := 0
	for _, c := range byNorm {
		if c > 1 {
			shared += c
		}
	}
	if shared == 0 || int64(shared) != st.Namesakes {
		t.Errorf("%d entities share a normalised name; stats say %d", shared, st.Namesakes)
	}
}

// TestQuestions: every question parses, its gold path is in the KG triple
// by triple, and its answers are exactly what the path's relations reach.
func TestQuestions(t *testing.T) {
	k, q, st := synthesize(t, Config{Triples: testTriples, Seed: 5, Questions: 300})
	g, err := kg.ReadTSV(bytes.NewReader(k), "synth")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := benchmark.ReadPathQuestion(context.Background(), bytes.NewReader(q), "q.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 300 || st.Questions != 300 {
		t.Fatalf("%d questions (stats %d), want 300", len(qs), st.Questions)
	}
	if st.QuestionsViaCVT < 30 || st.QuestionsByHops[1] == 0 || st.QuestionsByHops[2] == 0 || st.QuestionsByHops[3] == 0 {
		t.Errorf("hops %v, via CVT %d", st.QuestionsByHops, st.QuestionsViaCVT)
	}
	id := func(name string) int32 {
		t.Helper()
		e, ok := g.Entity(name)
		if !ok {
			t.Fatalf("entity %q not in the KG", name)
		}
		return e
	}
	for _, qu := range qs {
		gp := qu.Gold[0]
		cur := id(gp.Start)
		front := []int32{cur}
		for i, s := range gp.Steps {
			r, ok := g.Relation(s.Rel)
			if !ok {
				t.Fatalf("%s: relation %q not in the KG", qu.ID, s.Rel)
			}
			next := id(gp.Entities[i])
			if !g.HasTriple(cur, r, next) {
				t.Fatalf("%s: no triple %s %s %s", qu.ID, g.EntityName(cur), s.Rel, gp.Entities[i])
			}
			cur = next
			var nf []int32
			_, _, tails := g.Columns()
			for _, e := range front {
				for _, tr := range g.OutRel(e, r) {
					nf = append(nf, tails[tr])
				}
			}
			slices.Sort(nf)
			front = slices.Compact(nf)
		}
		var want []string
		for _, e := range front {
			want = append(want, g.EntityName(e))
		}
		got := slices.Clone(qu.Answers)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s %q: answers %v, the path reaches %v", qu.ID, qu.Text, got, want)
		}
	}
}

// The training split is another draw: none of its questions asks a test
// question's (topic, path), and writing it leaves the test split as it was.
func TestTrainSplit(t *testing.T) {
	cfg := Config{Triples: 200000, Seed: 3, Questions: 200, TrainQuestions: 300}
	_, qOnly, _ := synthesize(t, cfg)
	var k, q, tr bytes.Buffer
	st, err := WriteSplits(context.Background(), cfg, &k, &q, &tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(q.Bytes(), qOnly) {
		t.Fatal("writing a training split changed the test questions")
	}
	if st.TrainQuestions != 300 || st.Questions != 200 {
		t.Fatalf("%d training and %d test questions, want 300 and 200", st.TrainQuestions, st.Questions)
	}
	// A question's key is its topic and relation path: the third column
	// without the entities reached.
	key := func(line string) string {
		cols := strings.Split(line, "\t")
		parts := strings.Split(cols[2], "#")
		k := parts[0]
		for i := 1; i+1 < len(parts); i += 2 {
			k += "#" + parts[i]
		}
		return k
	}
	test := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(q.String()), "\n") {
		test[key(line)] = true
	}
	lines := strings.Split(strings.TrimSpace(tr.String()), "\n")
	if len(lines) != 300 {
		t.Fatalf("%d training lines", len(lines))
	}
	for _, line := range lines {
		if test[key(line)] {
			t.Fatalf("training question %q is a test question", line)
		}
	}
}
