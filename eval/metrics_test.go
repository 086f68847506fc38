package eval

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/internal/shareddata"
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"The Beatles", "beatles"},
		{"  A  Tale of Two   Cities!", "tale of two cities"},
		{"united_kingdom", "unitedkingdom"},
		{"Anne-Marie", "annemarie"},
		{"theatre and an ant", "theatre and ant"},
		{"Jamaican English\nJamaican Creole", "jamaican english jamaican creole"},
		{"the’s café", "’s café"}, // Unicode word boundary: ’ is not a word char
		{"Ça Ira, the end.", "ça ira end"},
		{"", ""},
		{"a an the", ""},
	} {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestScoreAnswers(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	for _, c := range []struct {
		name             string
		pred, gold       []string
		hit, hits1       float64
		matched          int
		prec, recall, f1 float64
	}{
		// The worked check of the metric: matched 2, P 2/3, R 1, F1 0.8.
		{"notes", []string{"Playwright", "Poet", "Actor"}, []string{"playwright", "poet"}, 1, 1, 2, 2.0 / 3, 1, 0.8},
		{"none", nil, []string{"x"}, 0, 0, 0, 0, 0, 0},
		{"empty line is a prediction", SplitLines(""), []string{"x"}, 0, 0, 0, 0, 0, 0},
		{"second only", []string{"Paris", "Lyon"}, []string{"lyon"}, 1, 0, 1, 0.5, 1, 2.0 / 3},
		{"substring", []string{"The city of Paris, France"}, []string{"Paris", "Berlin"}, 1, 1, 1, 1, 0.5, 2.0 / 3},
		// Joined matching spans lines: "new" + "york" joined is "new york".
		{"across lines", []string{"new", "york"}, []string{"New York"}, 1, 0, 1, 0.5, 1, 2.0 / 3},
	} {
		s := ScoreAnswers(c.pred, c.gold)
		if s.Hit != c.hit || s.Hits1 != c.hits1 || s.Matched != c.matched || !near(s.Precision, c.prec) || !near(s.Recall, c.recall) || !near(s.F1, c.f1) {
			t.Errorf("%s: got %+v, want hit %v hits1 %v matched %d P %v R %v F1 %v", c.name, s, c.hit, c.hits1, c.matched, c.prec, c.recall, c.f1)
		}
	}
	if got := len(SplitLines("a\nb\n")); got != 3 {
		t.Errorf("SplitLines keeps Python's trailing empty line: got %d parts, want 3", got)
	}
}

// TestGoldenGNNRAG scores GNN-RAG's released predictions and must
// reproduce its eval_result.txt.
func TestGoldenGNNRAG(t *testing.T) {
	path := shareddata.Path(t, "webqsp/gnnrag_lmsr_test.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var scores []Score
	err = benchmark.ReadGNNRAG(context.Background(), f, "gnnrag_lmsr_test.jsonl", func(r benchmark.GNNRAGRow) error {
		scores = append(scores, ScoreAnswers(SplitLines(r.Prediction), r.GroundTruth))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := AverageScores(scores)
	want := Scores{N: 1628, Hit: 85.01, Hits1: 80.28, F1: 71.54, Precision: 78.35, Recall: 72.63}
	if got.N != want.N {
		t.Fatalf("n = %d, want %d", got.N, want.N)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"hit", got.Hit, want.Hit}, {"hits1", got.Hits1, want.Hits1}, {"f1", got.F1, want.F1}, {"precision", got.Precision, want.Precision}, {"recall", got.Recall, want.Recall}} {
		if math.Abs(c.got-c.want) > 0.005 {
			t.Errorf("%s = %.4f, want %.2f", c.name, c.got, c.want)
		}
	}
	t.Logf("golden: %+v", got)
}

func TestRankMetrics(t *testing.T) {
	for _, c := range []struct {
		name       string
		pred, gold []string
		rr, hitK   float64
	}{
		{"first", []string{"Poet", "Actor"}, []string{"poet"}, 1, 1},
		{"third", []string{"x", "y", "The Playwright", "Poet"}, []string{"poet", "playwright"}, 1.0 / 3, 1},
		{"sixth, beyond k=5", []string{"a1", "a2", "a3", "a4", "a5", "Poet"}, []string{"poet"}, 1.0 / 6, 0},
		{"none", []string{"x"}, []string{"poet"}, 0, 0},
		{"no predictions", nil, []string{"poet"}, 0, 0},
	} {
		s := ScoreAnswers(c.pred, c.gold)
		if math.Abs(s.RR-c.rr) > 1e-12 || s.HitK != c.hitK || (s.RR == 1) != (s.Hits1 == 1) {
			t.Errorf("%s: rr %v hit@%d %v hits@1 %v, want rr %v hit@k %v", c.name, s.RR, HitAtK, s.HitK, s.Hits1, c.rr, c.hitK)
		}
	}
	got := AverageScores([]Score{ScoreAnswers([]string{"x", "poet"}, []string{"poet"}), ScoreAnswers([]string{"poet"}, []string{"poet"})})
	if got.MRR != 75 || got.HitK != 100 || got.Answers != 1.5 {
		t.Errorf("averaged: mrr %v hit@k %v answers %v, want 75 100 1.5", got.MRR, got.HitK, got.Answers)
	}
}
