package eval

import (
	"context"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
)

// TestPredictionConfidence (the compose planner, no selector): the adapter hands on the pipeline's
// confidence, and under --min-confidence its abstention with the reason
// and no answer scored.
func TestPredictionConfidence(t *testing.T) {
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	q := benchmark.Question{ID: "q1", Text: "who directed inception ?", Entities: []string{"Inception"}, Answers: []string{"Christopher_Nolan"}}
	for _, min := range []float64{0, 0.999} {
		s := plan.DefaultSettings()
		s.MinConfidence = plan.ConfidenceFloor(min)
		p, _, err := plan.Open(ctx, s, plan.Assets{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})})
		if err != nil {
			t.Fatal(err)
		}
		pred, err := Pipeline{p}.Answer(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if pred.Confidence <= 0 || pred.Confidence >= 1 || pred.Calibrated {
			t.Errorf("min %g: confidence %v calibrated %v, want the default heuristic's, in (0, 1), uncalibrated", min, pred.Confidence, pred.Calibrated)
		}
		abstain := min > 0
		if pred.Abstained != abstain || (len(pred.Answers) == 0) != abstain || strings.HasPrefix(pred.Abstain, "best candidate ") != abstain {
			t.Errorf("min %g: abstained %v (%q) answers %v, want abstained %v", min, pred.Abstained, pred.Abstain, pred.Answers, abstain)
		}
	}
}
