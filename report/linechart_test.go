package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/eval"
)

func TestRiskCoverageFile(t *testing.T) {
	c := sampleComparison()
	dir := t.TempDir()
	if err := WriteDir(dir, c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, RiskCoverageFile)); !os.IsNotExist(err) {
		t.Errorf("%s written without confidences: %v", RiskCoverageFile, err)
	}

	c.Entries[0].Report.Calibration = &eval.Calibration{N: 4, Scored: 4, ECE: 0.0321, AURC: 0.1234, AURCOptimal: 0.0417, Hits1At50: 100, Hits1At80: 75, Abstained: 1, AnsweredHits1: 80,
		Curve: []eval.CoveragePoint{{Coverage: 0.25, Hits1: 100}, {Coverage: 0.5, Hits1: 100}, {Coverage: 0.75, Hits1: 66.6667}, {Coverage: 1, Hits1: 50}}}
	if err := WriteDir(dir, c); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(dir, RiskCoverageFile))
	if err != nil {
		t.Fatal(err)
	}
	names, points := svgSeries(t, doc)
	if len(names) != 1 || names[0] != "full" {
		t.Fatalf("series = %q, want the one run with confidences", names)
	}
	want := []string{"full, 25%: 100.00", "full, 50%: 100.00", "full, 75%: 66.67", "full, 100%: 50.00"}
	if strings.Join(points[0], ";") != strings.Join(want, ";") {
		t.Errorf("points = %q, want %q", points[0], want)
	}
	// The polyline joins the points in coverage order: x from the axis'
	// left (64) to its right (64+360), y from the top (40) down the
	// 260-unit plot.
	if !bytes.Contains(doc, []byte(`points="154.0,40.0 244.0,40.0 334.0,126.7 424.0,170.0"`)) {
		t.Errorf("polyline points:\n%s", doc)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Calibration", "| full | 4 | 0.0321 | 0.1234 (0.0417) | 100.00 | 75.00 | 1 | 80.00 |", "![Risk-coverage](risk_coverage.svg)"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report.md lacks %q", w)
		}
	}
	if err := (LineChart{Title: "t"}).WriteSVG(&bytes.Buffer{}); err == nil {
		t.Error("a chart with no axis maxima drew")
	}
}
