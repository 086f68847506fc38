package eval

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/stem-kgqa/stem/benchmark"
)

// ThetaPoint is one Breadth threshold of a sweep and what it scored.
type ThetaPoint struct {
	Theta float32 `json:"theta"`
	Scores
}

// DefaultThetas is the grid SweepTheta is run over by default: 0.30 to
// 0.95 in steps of 0.05.
func DefaultThetas() []float32 {
	var out []float32
	for t := 30; t <= 95; t += 5 {
		out = append(out, float32(t)/100)
	}
	return out
}

// SweepTheta answers qs once per threshold, each time through the
// Answerer open builds for it, and returns the points in the order of
// thetas and the index of the best: the highest F1, ties to the higher
// Hits@1, then to the higher threshold (fewer edges kept). θ decides only
// where relation similarity does, so the Answerers should be built so
// that it does (tracing.Config.SoftSymbols): the best θ is then the one a
// plan whose relations are not KG symbols (an LLM's) should be traced
// with, under this encoder.
func SweepTheta(ctx context.Context, qs []benchmark.Question, thetas []float32, open func(ctx context.Context, theta float32) (Answerer, func() error, error), opts Options) ([]ThetaPoint, int, error) {
	if len(thetas) == 0 {
		return nil, -1, fmt.Errorf("sweep theta: no threshold to try")
	}
	progress := opts.Progress
	opts.Progress = nil // one line per threshold instead of a bar each
	out := make([]ThetaPoint, 0, len(thetas))
	best := -1
	for _, th := range thetas {
		if math.IsNaN(float64(th)) {
			return nil, -1, fmt.Errorf("sweep theta: threshold NaN")
		}
		a, closeA, err := open(ctx, th)
		if err != nil {
			return nil, -1, fmt.Errorf("sweep theta %.2f: %w", th, err)
		}
		rep, err := Run(ctx, qs, a, opts)
		closeA()
		if err != nil {
			return nil, -1, fmt.Errorf("sweep theta %.2f: %w", th, err)
		}
		p := ThetaPoint{Theta: th, Scores: rep.Scores}
		out = append(out, p)
		if progress != nil {
			fmt.Fprintf(progress, "theta %.2f: Hits@1 %.2f  F1 %.2f  precision %.2f  recall %.2f\n", th, p.Hits1, p.F1, p.Precision, p.Recall)
		}
		if b := best; b < 0 || p.F1 > out[b].F1 || p.F1 == out[b].F1 && (p.Hits1 > out[b].Hits1 || p.Hits1 == out[b].Hits1 && th > out[b].Theta) {
			best = len(out) - 1
		}
	}
	return out, best, nil
}

// WriteThetaTable prints a sweep's curve, the best threshold marked.
func WriteThetaTable(w io.Writer, points []ThetaPoint, best int) error {
	if _, err := fmt.Fprintf(w, "%6s %7s %7s %7s %9s %7s\n", "theta", "hits@1", "hit", "f1", "precision", "recall"); err != nil {
		return err
	}
	for i, p := range points {
		mark := ""
		if i == best {
			mark = "  <- best"
		}
		if _, err := fmt.Fprintf(w, "%6.2f %7.2f %7.2f %7.2f %9.2f %7.2f%s\n", p.Theta, p.Hits1, p.Hit, p.F1, p.Precision, p.Recall, mark); err != nil {
			return err
		}
	}
	return nil
}
