package eval

import (
	"context"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
)

// thresholdAnswerer answers like a Breadth step that keeps edges above
// theta: below 0.5 a wrong answer joins the right one, above 0.8 the right
// one is lost too.
type thresholdAnswerer struct{ theta float32 }

func (a thresholdAnswerer) Answer(_ context.Context, q benchmark.Question) (Prediction, error) {
	switch {
	case a.theta > 0.8:
		return Prediction{}, nil
	case a.theta < 0.5:
		return Prediction{Answers: []string{"wrong", q.Answers[0]}}, nil
	}
	return Prediction{Answers: []string{q.Answers[0]}}, nil
}

func TestSweepTheta(t *testing.T) {
	qs := []benchmark.Question{{ID: "q1", Text: "q1", Answers: []string{"right"}}, {ID: "q2", Text: "q2", Answers: []string{"also right"}}}
	open := func(_ context.Context, th float32) (Answerer, func() error, error) {
		return thresholdAnswerer{th}, func() error { return nil }, nil
	}
	var log strings.Builder
	points, best, err := SweepTheta(context.Background(), qs, []float32{0.3, 0.6, 0.7, 0.9}, open, Options{Progress: &log})
	if err != nil {
		t.Fatal(err)
	}
	// 0.6 and 0.7 tie on F1 and Hits@1: the higher threshold wins.
	if len(points) != 4 || best != 2 {
		t.Fatalf("best %d of %+v, want 0.7", best, points)
	}
	for i, want := range []float64{66.67, 100, 100, 0} {
		if got := points[i].F1; got < want-0.01 || got > want+0.01 {
			t.Errorf("theta %.1f: F1 %.2f, want %.2f", points[i].Theta, got, want)
		}
	}
	if !strings.Contains(log.String(), "theta 0.90: Hits@1 0.00") {
		t.Errorf("progress log:\n%s", log.String())
	}
	var table strings.Builder
	if err := WriteThetaTable(&table, points, best); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "0.70  100.00  100.00  100.00    100.00  100.00  <- best") {
		t.Errorf("table:\n%s", table.String())
	}
	if _, _, err := SweepTheta(context.Background(), qs, nil, open, Options{}); err == nil {
		t.Error("no thresholds: no error")
	}
}
