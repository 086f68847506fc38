//go:build !gomlx

package tripgnn

import (
	"context"
	"errors"
	"testing"
)

// Without the gomlx build tag the reference engine is absent, and asking
// for it says how to get it instead of failing obscurely.
func TestGoMLXEngineAbsentSaysHow(t *testing.T) {
	m := newTest(t, Config{Seed: 1})
	m.SetEngine(GoMLX)
	ctx := context.Background()
	ex := toyData(1, 1)[0]
	if _, err := m.Predict(ctx, ex); !errors.Is(err, errNoGoMLX) {
		t.Errorf("Predict: got %v, want %v", err, errNoGoMLX)
	}
	before := m.params[0].data[0]
	if _, err := m.TrainStep(ctx, []*Example{ex}); !errors.Is(err, errNoGoMLX) {
		t.Errorf("TrainStep: got %v, want %v", err, errNoGoMLX)
	}
	if m.params[0].data[0] != before || m.step != 0 {
		t.Error("a failed step changed the model")
	}
}
