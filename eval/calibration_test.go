package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestECE(t *testing.T) {
	for _, c := range []struct {
		name          string
		conf, correct []float64
		want          float64
	}{
		{"none", nil, nil, 0},
		// bin 9: 2 questions, mean right 0.5, mean conf 0.95: 2/4*0.45;
		// bin 1: 2 questions, right 0, conf 0.15: 2/4*0.15.
		{"two bins", []float64{0.95, 0.95, 0.15, 0.15}, []float64{1, 0, 0, 0}, 0.225 + 0.075},
		// 1 falls in the last bin, 0 in the first: both exact.
		{"ends", []float64{1, 0}, []float64{1, 0}, 0},
		{"under-confident", []float64{0.55, 0.45}, []float64{1, 1}, 0.45/2 + 0.55/2},
		// Out of range is clamped: 1.7 -> 1, -0.2 -> 0.
		{"clamped", []float64{1.7, -0.2}, []float64{1, 0}, 0},
	} {
		if got := ECE(c.conf, c.correct); !near(got, c.want, 1e-12) {
			t.Errorf("%s: ECE = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRiskCoverageAndAURC(t *testing.T) {
	for _, c := range []struct {
		name          string
		conf, correct []float64
		curve         []float64
		aurc          float64
	}{
		{"none", nil, nil, []float64{}, 0},
		{"sorted", []float64{0.9, 0.8, 0.7, 0.6}, []float64{1, 0, 1, 0}, []float64{1, 0.5, 2.0 / 3, 0.5}, (0 + 0.5 + 1.0/3 + 0.5) / 4},
		{"shuffled", []float64{0.6, 0.9, 0.7, 0.8}, []float64{0, 1, 1, 0}, []float64{1, 0.5, 2.0 / 3, 0.5}, (0 + 0.5 + 1.0/3 + 0.5) / 4},
		// A tie counts its mean: whichever order, each place holds half
		// a right answer.
		{"tie", []float64{0.5, 0.5}, []float64{1, 0}, []float64{0.5, 0.5}, 0.5},
		{"tie inside", []float64{0.9, 0.5, 0.5, 0.1}, []float64{0, 1, 0, 1}, []float64{0, 0.25, 1.0 / 3, 0.5}, (1 + 0.75 + 2.0/3 + 0.5) / 4},
		// Right ones first: risk 0, 0, 1/3, 1/2.
		{"perfect", []float64{0.9, 0.8, 0.7, 0.6}, []float64{1, 1, 0, 0}, []float64{1, 1, 2.0 / 3, 0.5}, (1.0/3 + 0.5) / 4},
	} {
		got := RiskCoverage(c.conf, c.correct)
		if len(got) != len(c.curve) {
			t.Fatalf("%s: curve %v, want %v", c.name, got, c.curve)
		}
		for i := range got {
			if !near(got[i], c.curve[i], 1e-12) {
				t.Errorf("%s: curve %v, want %v", c.name, got, c.curve)
				break
			}
		}
		if a := AURC(c.conf, c.correct); !near(a, c.aurc, 1e-12) {
			t.Errorf("%s: AURC = %v, want %v", c.name, a, c.aurc)
		}
	}
	if got, want := AURCOptimal(4, 2), (1.0/3+0.5)/4; !near(got, want, 1e-12) {
		t.Errorf("AURCOptimal(4, 2) = %v, want %v", got, want)
	}
	curve := []float64{1, 0.5, 2.0 / 3, 0.5}
	for _, c := range []struct{ share, want float64 }{{0.25, 1}, {0.5, 0.5}, {0.75, 2.0 / 3}, {0.8, 0.5}, {1, 0.5}, {0.01, 1}} {
		if got := AtCoverage(curve, c.share); !near(got, c.want, 1e-12) {
			t.Errorf("AtCoverage(%v) = %v, want %v", c.share, got, c.want)
		}
	}
}

// TestCalibrationProperties checks the metrics against what they must
// give on synthetic runs: a perfectly calibrated one (each answer right
// with the probability it states) has an ECE near 0 and an over-confident
// one does not; a ranking with every right answer first reaches the
// optimal AURC, which for a large run is risk + (1-risk) ln(1-risk), and
// no other ranking does better.
func TestCalibrationProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 100000
	conf := make([]float64, n)
	calibrated := make([]float64, n)
	over := make([]float64, n)
	for i := range conf {
		conf[i] = rng.Float64()
		u := rng.Float64()
		if u < conf[i] {
			calibrated[i] = 1
		}
		if u < conf[i]*conf[i] {
			over[i] = 1
		}
	}
	if e := ECE(conf, calibrated); e > 0.01 {
		t.Errorf("calibrated: ECE = %v, want near 0", e)
	}
	// Right with probability c^2: the gap c - c^2 averages 1/6.
	if e := ECE(conf, over); !near(e, 1.0/6, 0.01) {
		t.Errorf("over-confident: ECE = %v, want about 1/6", e)
	}

	for _, risk := range []float64{0.1, 0.3, 0.6} {
		right := int(math.Round((1 - risk) * n))
		perfect := make([]float64, n)
		correct := make([]float64, n)
		for i := range n {
			if i < right {
				correct[i] = 1
				perfect[i] = 0.5 + 0.5*rng.Float64()
			} else {
				perfect[i] = 0.5 * rng.Float64()
			}
		}
		opt := AURCOptimal(n, right)
		if a := AURC(perfect, correct); !near(a, opt, 1e-9) {
			t.Errorf("risk %v: AURC of the perfect ranking %v, want the optimum %v", risk, a, opt)
		}
		if want := risk + (1-risk)*math.Log(1-risk); !near(opt, want, 1e-3) {
			t.Errorf("risk %v: AURCOptimal %v, want about %v", risk, opt, want)
		}
		if a := AURC(conf, correct); a < opt {
			t.Errorf("risk %v: a random ranking's AURC %v is below the optimum %v", risk, a, opt)
		}
	}
}

// confRetriever answers each question by a script keyed by its id.
type confRetriever map[string]Prediction

func (r confRetriever) Answer(_ context.Context, q benchmark.Question) (Prediction, error) {
	return r[q.ID], nil
}

func TestRunCalibration(t *testing.T) {
	qs := []benchmark.Question{
		{ID: "a", Answers: []string{"x"}},
		{ID: "b", Answers: []string{"x"}},
		{ID: "c", Answers: []string{"x"}},
		{ID: "d", Answers: []string{"x"}},
	}
	script := confRetriever{
		"a": {Answers: []string{"x"}, Confidence: 0.9, Calibrated: true},
		"b": {Answers: []string{"y"}, Confidence: 0.8, Calibrated: true},
		"c": {Answers: []string{"x"}, Confidence: 0.7, Calibrated: true},
		// Abstained, yet the answerer left its answer behind: scored as none.
		"d": {Answers: []string{"x"}, Confidence: 0.2, Calibrated: true, Abstained: true, Abstain: "best candidate 0.2 < 0.5"},
	}
	rep, err := Run(context.Background(), qs, script, Options{PerQuestion: true, Unanswerable: map[string]bool{"b": true, "d": true}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Hits1 != 50 {
		t.Errorf("hits@1 = %v, want 50 (the abstained question is a miss)", rep.Hits1)
	}
	d := rep.Questions[3]
	if !d.Abstained || d.Abstain == "" || len(d.Answers) != 0 || d.Confidence == nil || *d.Confidence != 0.2 {
		t.Errorf("abstained result: %+v", d)
	}
	c := rep.Calibration
	if c == nil {
		t.Fatal("no calibration")
	}
	// Answered: 0.9 right, 0.8 wrong, 0.7 right; bins 9, 8, 7 each of one.
	wantECE := (0.1 + 0.8 + 0.3) / 3
	if c.N != 4 || c.Scored != 3 || c.Abstained != 1 || c.Answered != 3 || !near(c.AnsweredHits1, 200.0/3, 1e-9) ||
		!near(c.ECE, wantECE, 1e-12) || !near(c.AURC, (0+0.5+1.0/3)/3, 1e-12) || !near(c.AURCOptimal, (1.0/3)/3, 1e-12) ||
		!near(c.Hits1At50, 50, 1e-9) || !near(c.Hits1At80, 200.0/3, 1e-9) || len(c.Curve) != CurvePoints {
		t.Errorf("calibration: %+v", c)
	}
	if u := rep.Unanswerable; u == nil || *u != (UnanswerableScores{N: 2, Abstained: 1, AbstentionRecall: 50, AnsweredWrong: 1}) {
		t.Errorf("unanswerable: %+v", u)
	}
	if a := rep.Answerable; a == nil || *a != (AnswerableScores{N: 2, Hits1: 100}) {
		t.Errorf("answerable: %+v", a)
	}
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ECE 0.4000", "AURC 0.2778 (optimum 0.1111)", "abstained 1 of 4", "unanswerable (KG lacks the answer) 2: abstained 1 (50.00%)", "answerable 2: hits@1 100.00"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"calibration":{"n":4`, `"hits1_at_80"`, `"unanswerable":{"n":2`, `"answerable":{"n":2`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}

	// No confidence and no abstention: no calibration.
	rep, err = Run(context.Background(), qs, confRetriever{"a": {Answers: []string{"x"}}}, Options{})
	if err != nil || rep.Calibration != nil || rep.Unanswerable != nil {
		t.Errorf("without confidences: calibration %+v, unanswerable %+v, %v", rep.Calibration, rep.Unanswerable, err)
	}
}
