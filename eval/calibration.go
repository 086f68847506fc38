package eval

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
)

// ECEBins is how many equal-width confidence bins ECE sorts questions
// into: [0, 0.1), [0.1, 0.2), ..., [0.9, 1].
const ECEBins = 10

// CurvePoints is how many points of the risk-coverage curve a report
// keeps: coverage 5%, 10%, ..., 100%.
const CurvePoints = 20

// Calibration is how well a run's confidences tell its right first
// answers from its wrong ones. The figures other than the counts are over
// the Scored questions: those with a confidence that were answered (an
// abstained question's withheld answer is not known to the run, so its
// correctness cannot be scored against its confidence; measure
// calibration without --min-confidence, abstention with it).
type Calibration struct {
	// N counts the questions that carry a confidence (Result.Confidence).
	N int `json:"n"`
	// Scored counts those of them that were answered, over which ECE,
	// AURC, the Hits@1 at coverage and the curve are computed.
	Scored int `json:"scored"`
	// ECE is the expected calibration error of the first answer's
	// correctness (Hits@1) against the confidence: the questions sorted
	// into ECEBins equal-width bins by confidence, each bin's
	// |mean Hits@1 - mean confidence| weighted by its share of the
	// questions. In [0, 1]; 0 is perfectly calibrated.
	ECE float64 `json:"ece"`
	// AURC is the area under the risk-coverage curve: questions sorted by
	// confidence, most confident first, the risk (1 - Hits@1) of the k
	// most confident averaged over k = 1..Scored. In [0, 1]; lower ranks
	// right answers above wrong ones better (AURCOptimal is the least a
	// run of that Hits@1 can reach).
	AURC float64 `json:"aurc"`
	// AURCOptimal is the AURC of the same answers ranked with every right
	// one first (AURCOptimal): the least the confidences could reach. A
	// ranking no better than chance has an AURC of about 1 - Hits@1.
	AURCOptimal float64 `json:"aurc_optimal"`
	// Hits1At50 and Hits1At80 are the Hits@1, in percent, over the 50% and
	// 80% most confident questions.
	Hits1At50 float64 `json:"hits1_at_50"`
	Hits1At80 float64 `json:"hits1_at_80"`
	// Abstained counts the questions answered "no answer"
	// (Result.Abstained), over all the run's questions; Answered the
	// others, and AnsweredHits1 is their Hits@1 in percent (the run's
	// Hits@1 scores an abstention as a miss).
	Abstained     int     `json:"abstained"`
	Answered      int     `json:"answered"`
	AnsweredHits1 float64 `json:"answered_hits1"`
	// Curve is the risk-coverage curve at CurvePoints coverages, most
	// confident first, as Hits@1 (100 - risk in percent).
	Curve []CoveragePoint `json:"curve,omitempty"`
}

// CoveragePoint is the Hits@1, in percent, over the most confident
// Coverage (a fraction in (0, 1]) of the questions.
type CoveragePoint struct {
	Coverage float64 `json:"coverage"`
	Hits1    float64 `json:"hits1"`
}

// ECE is the expected calibration error of correct (1 right, 0 wrong, per
// question) against conf (in [0, 1]; values outside are clamped): the
// questions sorted into ECEBins equal-width bins by confidence (1 falls in
// the last), and each bin's |mean correct - mean conf| weighted by its
// count over the total. 0 for no questions.
func ECE(conf, correct []float64) float64 {
	n := min(len(conf), len(correct))
	if n == 0 {
		return 0
	}
	var cnt [ECEBins]int
	var sumC, sumA [ECEBins]float64
	for i := range n {
		c := clamp01(conf[i])
		b := min(int(c*ECEBins), ECEBins-1)
		cnt[b]++
		sumC[b] += c
		sumA[b] += correct[i]
	}
	var e float64
	for b := range ECEBins {
		if cnt[b] > 0 {
			e += math.Abs(sumA[b]-sumC[b]) / float64(n)
		}
	}
	return e
}

// RiskCoverage returns the Hits@1 (as a fraction) of the k most confident
// questions for k = 1..n, most confident first. Questions of equal
// confidence are one group whose order the run does not decide, so within
// a group each question counts the group's mean correctness: the expected
// curve over the group's orders, the same whatever order the questions
// came in.
func RiskCoverage(conf, correct []float64) []float64 {
	n := min(len(conf), len(correct))
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(conf[b], conf[a]) })
	out := make([]float64, n)
	cum := 0.0
	for start := 0; start < n; {
		end := start + 1
		for end < n && conf[idx[end]] == conf[idx[start]] {
			end++
		}
		group := 0.0
		for _, i := range idx[start:end] {
			group += correct[i]
		}
		mean := group / float64(end-start)
		for k := start; k < end; k++ {
			cum += mean
			out[k] = cum / float64(k+1)
		}
		start = end
	}
	return out
}

// AURC is the area under the risk-coverage curve: the mean over k = 1..n
// of the risk (1 - Hits@1) of the k most confident questions
// (RiskCoverage). 0 for no questions.
func AURC(conf, correct []float64) float64 {
	return area(RiskCoverage(conf, correct))
}

// area is the mean risk of a RiskCoverage curve.
func area(curve []float64) float64 {
	if len(curve) == 0 {
		return 0
	}
	var s float64
	for _, a := range curve {
		s += 1 - a
	}
	return s / float64(len(curve))
}

// AURCOptimal is the least AURC of n questions of which right are right:
// that of a ranking with every right one first, where the risk is 0 up to
// k = right and (k - right)/k after.
func AURCOptimal(n, right int) float64 {
	if n <= 0 {
		return 0
	}
	var s float64
	for k := right + 1; k <= n; k++ {
		s += float64(k-right) / float64(k)
	}
	return s / float64(n)
}

// AtCoverage is the Hits@1, as a fraction, of the most confident share
// (in (0, 1]) of the questions, given their RiskCoverage curve: the first
// ceil(share*n) of them. 0 for no questions.
func AtCoverage(curve []float64, share float64) float64 {
	if len(curve) == 0 {
		return 0
	}
	k := int(math.Ceil(share*float64(len(curve)) - 1e-9))
	return curve[min(max(k, 1), len(curve))-1]
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return min(max(v, 0), 1)
}

// calibrate is the calibration of a run's results; nil when no result
// carries a confidence or abstained.
func calibrate(results []Result) *Calibration {
	c := &Calibration{}
	var conf, correct []float64
	var answeredHits float64
	for _, r := range results {
		if r.Abstained {
			c.Abstained++
		} else {
			c.Answered++
			answeredHits += r.Hits1
		}
		if r.Confidence == nil {
			continue
		}
		c.N++
		if !r.Abstained {
			conf = append(conf, *r.Confidence)
			correct = append(correct, r.Hits1)
		}
	}
	if c.N == 0 && c.Abstained == 0 {
		return nil
	}
	if c.Answered > 0 {
		c.AnsweredHits1 = 100 * answeredHits / float64(c.Answered)
	}
	c.Scored = len(conf)
	if c.Scored == 0 {
		return c
	}
	c.ECE = ECE(conf, correct)
	curve := RiskCoverage(conf, correct)
	c.AURC = area(curve)
	right := 0.0
	for _, v := range correct {
		right += v
	}
	c.AURCOptimal = AURCOptimal(c.Scored, int(math.Round(right)))
	c.Hits1At50 = 100 * AtCoverage(curve, 0.5)
	c.Hits1At80 = 100 * AtCoverage(curve, 0.8)
	for i := 1; i <= CurvePoints; i++ {
		share := float64(i) / CurvePoints
		c.Curve = append(c.Curve, CoveragePoint{Coverage: share, Hits1: 100 * AtCoverage(curve, share)})
	}
	return c
}

// writeCalibration prints c's lines under a report's table.
func writeCalibration(w io.Writer, c *Calibration) error {
	if c == nil {
		return nil
	}
	if c.Scored > 0 {
		if _, err := fmt.Fprintf(w, "calibration over %d answered questions with a confidence: ECE %.4f (%d bins)  AURC %.4f (optimum %.4f)  hits@1 at 50%% coverage %.2f  at 80%% %.2f\n",
			c.Scored, c.ECE, ECEBins, c.AURC, c.AURCOptimal, c.Hits1At50, c.Hits1At80); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "abstained %d of %d questions (coverage %.2f%%); hits@1 over the %d answered %.2f\n",
		c.Abstained, c.Abstained+c.Answered, 100*float64(c.Answered)/float64(max(c.Abstained+c.Answered, 1)), c.Answered, c.AnsweredHits1)
	return err
}
