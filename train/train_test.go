package train

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tripgnn"
)

func demoData(t testing.TB) (*kg.Graph, []benchmark.Question) {
	t.Helper()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := benchmark.ReadPathQuestion(context.Background(), bytes.NewReader(demo.Questions()), demo.QuestionsName)
	if err != nil {
		t.Fatal(err)
	}
	return g, qs
}

func testBuilder() *tripgnn.Builder {
	return tripgnn.NewBuilder(wordvec.New(nil, wordvec.Options{}), tripgnn.SubgraphOptions{})
}

func names(g *kg.Graph, ids []int32) []string {
	var out []string
	for _, id := range ids {
		out = append(out, g.EntityName(id))
	}
	slices.Sort(out)
	return out
}

func TestLabeledDemo(t *testing.T) {
	g, qs := demoData(t)
	b := testBuilder()
	ctx := context.Background()
	for _, tc := range []struct {
		question string
		gold     []string
		numST    int
	}{
		{"who directed inception ?", []string{"Christopher_Nolan", "Inception"}, 1},
		{"in which country was the director of inception born ?", []string{"Christopher_Nolan", "Inception", "London", "United_Kingdom"}, 3},
	} {
		var q *benchmark.Question
		for i := range qs {
			if qs[i].Text == tc.question {
				q = &qs[i]
			}
		}
		if q == nil {
			if tc.numST == 3 {
				// find the 3-hop Inception question whatever its wording
				for i := range qs {
					if len(qs[i].Gold) > 0 && len(qs[i].Gold[0].Steps) == 3 && qs[i].Entities[0] == "Inception" {
						q = &qs[i]
					}
				}
			}
			if q == nil {
				t.Fatalf("demo has no question %q", tc.question)
			}
		}
		it, err := Labeled(ctx, b, g, *q)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(g, it.Gold); !slices.Equal(got, tc.gold) {
			t.Errorf("%q: gold %v, want %v", q.Text, got, tc.gold)
		}
		if it.NumSchema != tc.numST {
			t.Errorf("%q: %d schema triples, want %d", q.Text, it.NumSchema, tc.numST)
		}
		ex := it.Example
		var pos []int32
		for i, y := range ex.Labels {
			if y == 1 {
				pos = append(pos, it.Entities[i])
			}
		}
		if got := names(g, pos); !slices.Equal(got, tc.gold) {
			t.Errorf("%q: labelled %v, want %v", q.Text, got, tc.gold)
		}
		if want := g.EntityName(it.Entities[ex.Question[0]]); want != "Inception" {
			t.Errorf("question entity %s, want Inception", want)
		}
		d := b.Enc.Dim()
		if len(ex.SchemaVecs) != 3*d*tc.numST || len(ex.RelVecs)%(2*d) != 0 {
			t.Errorf("vector sizes %d, %d for dim %d", len(ex.SchemaVecs), len(ex.RelVecs), d)
		}
		// Every edge is a KG triple between its mapped ends.
		for j, tr := range it.Triples {
			kt := g.Triple(tr)
			if it.Entities[ex.Heads[j]] != kt.Head || it.Entities[ex.Tails[j]] != kt.Tail {
				t.Fatalf("edge %d does not map to KG triple %d", j, tr)
			}
		}
	}
}

func TestRecallAndBaselines(t *testing.T) {
	// A path 0 - 1 - 2 - 3 with a hub 4 hanging off 0 by 5 leaves.
	bl := kg.NewBuilder()
	for _, tr := range [][3]string{
		{"a", "r", "b"}, {"b", "r", "c"}, {"c", "r", "d"},
		{"a", "s", "hub"}, {"hub", "s", "x1"}, {"hub", "s", "x2"}, {"hub", "s", "x3"},
	} {
		bl.Add(tr[0], tr[1], tr[2])
	}
	g, err := bl.Build()
	if err != nil {
		t.Fatal(err)
	}
	b := testBuilder()
	it, err := b.Build(context.Background(), g, []string{"a"}, schema.Path("a", "r", "r"), "which b of a ?")
	if err != nil {
		t.Fatal(err)
	}
	// 2 hops from a: a, b, hub, c, x1..x3 (not d).
	if len(it.Entities) != 7 {
		t.Fatalf("%d entities, want 7: %v", len(it.Entities), names(g, it.Entities))
	}
	id := func(n string) int32 { v, _ := g.Entity(n); return v }
	it.Gold = []int32{id("a"), id("b"), id("c"), id("d")}
	hops := RankHops(it)
	// a first (distance 0), then hub (degree 4) before b (degree 2), then c and the leaves.
	got := names(g, []int32{it.Entities[hops[0]]})[0] + "," + g.EntityName(it.Entities[hops[1]]) + "," + g.EntityName(it.Entities[hops[2]])
	if got != "a,hub,b" {
		t.Errorf("hop ranking starts %s, want a,hub,b", got)
	}
	if r := Recall(hops[:3], it.Entities, it.Gold); r != 0.5 {
		t.Errorf("recall@3 of the hop ranking %v, want 0.5 (a, b of a,b,c,d)", r)
	}
	all := make([]int32, len(it.Entities))
	for i := range all {
		all[i] = int32(i)
	}
	if r := Recall(all, it.Entities, it.Gold); r != 0.75 {
		t.Errorf("recall of the whole subgraph %v, want 0.75 (d is 3 hops away)", r)
	}
	if r := Recall(nil, it.Entities, nil); r != 0 {
		t.Errorf("empty gold: %v", r)
	}
	sim, err := RankSimilarity(context.Background(), b, it)
	if err != nil || len(sim) != 7 {
		t.Fatalf("similarity ranking %v, %v", sim, err)
	}
}

// trainOnDemo builds the demo's examples and a small model.
func trainOnDemo(t *testing.T) (*tripgnn.Model, []*tripgnn.Input, *tripgnn.Builder) {
	g, qs := demoData(t)
	b := testBuilder()
	items, skipped, err := LabeledAll(context.Background(), b, g, qs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) < 30 || skipped > 0 {
		t.Fatalf("%d demo examples, %d skipped", len(items), skipped)
	}
	m, err := tripgnn.New(tripgnn.Config{EncoderName: b.Enc.Name(), EncoderDim: b.Enc.Dim(), Layers: 2, Width: 16, Seed: 3, LR: 3e-3})
	if err != nil {
		t.Fatal(err)
	}
	return m, items, b
}

func TestFitWritesBestModelAndCurve(t *testing.T) {
	m, items, b := trainOnDemo(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "m.gnn")
	var log bytes.Buffer
	h, err := Fit(ctx, m, items, items, Options{Epochs: 6, Batch: 8, Patience: 6, Seed: 1, Out: out, Progress: &log})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.TrainLoss) != 6 || !(h.TrainLoss[5] < h.TrainLoss[0]) {
		t.Errorf("loss per epoch %v: want 6 epochs, falling", h.TrainLoss)
	}
	best, err := tripgnn.Load(out, b.Enc.Name(), b.Enc.Dim())
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := DevScore(ctx, best, items)
	if err != nil || math.Abs(rec-h.BestRecall) > 1e-9 {
		t.Errorf("saved model's recall %v (%v), history says %v", rec, err, h.BestRecall)
	}
	svg, err := os.ReadFile(out + ".loss.svg")
	if err != nil || !bytes.HasPrefix(svg, []byte("<svg")) || bytes.Count(svg, []byte("<polyline")) != 2 {
		t.Errorf("loss curve: %v\n%.200s", err, svg)
	}
	if !strings.Contains(log.String(), "train gnn") {
		t.Errorf("no progress bar in %q", log.String())
	}
	// Deterministic for a seed: a second run gives the same losses.
	m2, _, _ := trainOnDemo(t)
	h2, err := Fit(ctx, m2, items, items, Options{Epochs: 6, Batch: 8, Patience: 6, Seed: 1})
	if err != nil || !slices.Equal(h.TrainLoss, h2.TrainLoss) {
		t.Errorf("second run: %v, %v vs %v", err, h2.TrainLoss, h.TrainLoss)
	}
}

func TestFitEarlyStop(t *testing.T) {
	m, items, _ := trainOnDemo(t)
	// A dev set the model cannot improve on: its only question's subgraph
	// is the gold chain itself, so recall@K is 1 from the start, and its
	// R-precision is 1 too (every entity is gold).
	dev := []*tripgnn.Input{items[0]}
	one := *items[0]
	ex := *one.Example
	ex.NumEntities = 1
	ex.Heads, ex.Rels, ex.Tails, ex.RelVecs = nil, nil, nil, nil
	ex.Question = []int32{0}
	ex.Labels = []float32{1}
	one.Example, one.Entities, one.Gold = &ex, one.Entities[ex.Question[0]:ex.Question[0]+1], one.Entities[:1]
	dev[0] = &one
	h, err := Fit(context.Background(), m, items, dev, Options{Epochs: 10, Patience: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.TrainLoss) != 3 || h.BestEpoch != 1 || !strings.HasPrefix(h.Stopped, "early stop") {
		t.Errorf("ran %d epochs, best %d, %q; want 3, 1, early stop", len(h.TrainLoss), h.BestEpoch, h.Stopped)
	}
}

func TestFitKeepsGoodCheckpoint(t *testing.T) {
	m, items, b := trainOnDemo(t)
	out := filepath.Join(t.TempDir(), "m.gnn")
	if err := m.Save(out); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(out)
	bad := *items[0]
	ex := *bad.Example
	ex.Labels = slices.Clone(ex.Labels)
	ex.Labels[0] = float32(math.NaN())
	bad.Example = &ex
	if _, err := Fit(context.Background(), m, []*tripgnn.Input{&bad}, items, Options{Epochs: 1, Out: out}); err == nil {
		t.Fatal("NaN label: no error")
	}
	after, _ := os.ReadFile(out)
	if !bytes.Equal(before, after) {
		t.Error("a failed run changed the checkpoint")
	}
	if _, err := tripgnn.Load(out, b.Enc.Name(), b.Enc.Dim()+1); err == nil {
		t.Error("checkpoint loaded for an encoder of another dimension")
	}
	if err := os.WriteFile(out, before[:len(before)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tripgnn.Load(out, b.Enc.Name(), b.Enc.Dim()); err == nil {
		t.Error("truncated checkpoint loaded")
	}
}

func TestEvaluateToy(t *testing.T) {
	m, items, b := trainOnDemo(t)
	met, err := Evaluate(context.Background(), m, b, items[:5])
	if err != nil {
		t.Fatal(err)
	}
	if met.N != 5 || met.GoldInSubgraph != 1 {
		t.Errorf("n %d, gold in subgraph %v; want 5, 1", met.N, met.GoldInSubgraph)
	}
	for _, r := range []float64{met.RecallGNN, met.RecallSimilarity, met.RecallHops} {
		if r < 0 || r > 1 {
			t.Errorf("recall %v outside [0, 1]", r)
		}
	}
}

func TestSplit(t *testing.T) {
	items := make([]*tripgnn.Input, 20)
	for i := range items {
		items[i] = &tripgnn.Input{ID: string(rune('a' + i))}
	}
	tr, dev := Split(items, 0.1, 7)
	tr2, dev2 := Split(items, 0.1, 7)
	if len(tr) != 18 || len(dev) != 2 || !slices.Equal(dev, dev2) || !slices.Equal(tr, tr2) {
		t.Errorf("split %d/%d, repeatable %v", len(tr), len(dev), slices.Equal(dev, dev2))
	}
}

func TestPredictPaddingKeepsScores(t *testing.T) {
	m, items, _ := trainOnDemo(t)
	ctx := context.Background()
	for _, it := range items[:5] {
		want, err := m.Predict(ctx, it.Example)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.PredictPadded(ctx, it.Example)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d scores, want %d", len(got), len(want))
		}
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-5 {
				t.Fatalf("%s: entity %d scored %v padded, %v unpadded", it.ID, i, got[i], want[i])
			}
		}
	}
}

func TestSiblingOrder(t *testing.T) {
	// Subgraph entities 10..13 (KG ids); the gold path ends at 11, 12 and
	// 13, of which 11 is the answer; 10 is the question entity.
	it := &tripgnn.Input{Entities: []int32{10, 11, 12, 13}, Answers: []int32{11}, Ends: []int32{11, 12, 13}}
	tests := []struct {
		name                string
		probs               []float32
		first, tied, counts bool
	}{
		{"answer above its siblings", []float32{0.99, 0.8, 0.5, 0.7}, true, false, true},
		{"a sibling above the answer", []float32{0.1, 0.6, 0.9, 0.2}, false, false, true},
		{"answer tied with a sibling", []float32{0.5, 0.7, 0.7, 0.1}, false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, tied, ok := siblingOrder(it, tc.probs)
			if first != tc.first || tied != tc.tied || ok != tc.counts {
				t.Errorf("siblingOrder = %v, %v, %v; want %v, %v, %v", first, tied, ok, tc.first, tc.tied, tc.counts)
			}
		})
	}
	lone := &tripgnn.Input{Entities: []int32{10, 11}, Answers: []int32{11}, Ends: []int32{11}}
	if _, _, ok := siblingOrder(lone, []float32{0.5, 0.5}); ok {
		t.Error("a question without siblings counted")
	}
}

// TestAnswerLabels checks that answer labels keep the gold answers alone
// (the topic entity and the entities between lose their 1), that the
// chain-labelled example is left as it was, and that a question whose
// answer is not in its subgraph is dropped and counted.
func TestAnswerLabels(t *testing.T) {
	g, qs := demoData(t)
	b := testBuilder()
	ctx := context.Background()
	for _, tc := range []struct {
		question string
		chain    []string
		answers  []string
	}{
		{"who directed inception ?", []string{"Christopher_Nolan", "Inception"}, []string{"Christopher_Nolan"}},
		{"in which country was the director of inception born ?", []string{"Christopher_Nolan", "Inception", "London", "United_Kingdom"}, []string{"United_Kingdom"}},
	} {
		i := slices.IndexFunc(qs, func(q benchmark.Question) bool { return q.Text == tc.question })
		if i < 0 {
			t.Fatalf("demo has no question %q", tc.question)
		}
		it, err := Labeled(ctx, b, g, qs[i])
		if err != nil {
			t.Fatal(err)
		}
		// A copy the subgraph does not reach: its answer ids name no
		// subgraph entity.
		far := *it
		far.Answers = []int32{-1}
		got, dropped := AnswerLabels([]*tripgnn.Input{it, &far})
		if len(got) != 1 || dropped != 1 {
			t.Fatalf("%q: kept %d, dropped %d; want 1 and 1", tc.question, len(got), dropped)
		}
		labelled := func(in *tripgnn.Input) []int32 {
			var pos []int32
			for j, y := range in.Example.Labels {
				if y == 1 {
					pos = append(pos, in.Entities[j])
				}
			}
			return pos
		}
		if l := names(g, labelled(got[0])); !slices.Equal(l, tc.answers) || !slices.Equal(names(g, got[0].Gold), tc.answers) {
			t.Errorf("%q: labelled %v, gold %v; want %v", tc.question, l, names(g, got[0].Gold), tc.answers)
		}
		if l := names(g, labelled(it)); !slices.Equal(l, tc.chain) {
			t.Errorf("%q: the chain-labelled example changed to %v, want %v", tc.question, l, tc.chain)
		}
	}
}
