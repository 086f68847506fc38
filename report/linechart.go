package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/stem-kgqa/stem/eval"
)

// Point is one (x, y) point of a line.
type Point struct{ X, Y float64 }

// Line is one configuration's points, in the order they are joined.
type Line struct {
	Name   string
	Points []Point
}

// LineChart is a line per series over shared x and y axes from 0 to XMax
// and YMax.
type LineChart struct {
	Title, XLabel, YLabel string
	XMax, YMax            float64
	// XTick formats an x axis tick (such as a coverage as a percentage).
	XTick func(float64) string
	Lines []Line
}

// lineWidth is the plot's width in SVG user units.
const lineWidth = 360

// WriteSVG draws the chart as a standalone SVG document. Each line is one
// <g class="series"> element holding a <polyline> and a <circle> per
// point with a <title> tooltip ("name, X: Y"), so the figure can be read
// by tools as well as by eye.
func (c LineChart) WriteSVG(w io.Writer) error {
	if c.XMax <= 0 || c.YMax <= 0 {
		return fmt.Errorf("line chart %q: axes need positive maxima, not %v and %v", c.Title, c.XMax, c.YMax)
	}
	xTick := c.XTick
	if xTick == nil {
		xTick = fmtTick
	}
	legendY := chartTop + chartHeight + 44
	width := float64(chartLeft + lineWidth + 20)
	height := float64(legendY + legendRow*len(c.Lines) + 10)
	x := func(v float64) float64 { return chartLeft + lineWidth*math.Min(math.Max(v, 0), c.XMax)/c.XMax }
	y := func(v float64) float64 {
		return chartTop + chartHeight - chartHeight*math.Min(math.Max(v, 0), c.YMax)/c.YMax
	}
	var buf bytes.Buffer
	begin(&buf, width, height, c.Title)
	p := func(format string, args ...any) { fmt.Fprintf(&buf, format, args...) }
	p(`<g class="axis">` + "\n")
	for i := 0; i <= 5; i++ {
		vy, vx := c.YMax*float64(i)/5, c.XMax*float64(i)/5
		p(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", chartLeft, y(vy), x(c.XMax), y(vy))
		p(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", chartLeft-6, y(vy)+4, fmtTick(vy))
		p(`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(vx), chartTop+chartHeight+16, esc(xTick(vx)))
	}
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", chartLeft, chartTop, chartLeft, chartTop+chartHeight)
	p(`<line x1="%d" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", chartLeft, chartTop+chartHeight, x(c.XMax), chartTop+chartHeight)
	p(`<text transform="translate(16 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", chartTop+chartHeight/2, esc(c.YLabel))
	p(`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(c.XMax/2), chartTop+chartHeight+32, esc(c.XLabel))
	p("</g>\n")
	for si, l := range c.Lines {
		color := palette[si%len(palette)]
		p(`<g class="series" data-name="%s" stroke="%s" fill="%s">`+"\n", esc(l.Name), color, color)
		pts := make([]string, len(l.Points))
		for i, pt := range l.Points {
			pts[i] = fmt.Sprintf("%.1f,%.1f", x(pt.X), y(pt.Y))
		}
		p(`<polyline fill="none" stroke-width="2" points="%s"/>`+"\n", strings.Join(pts, " "))
		for _, pt := range l.Points {
			p(`<circle cx="%.1f" cy="%.1f" r="2.5"><title>%s, %s: %.2f</title></circle>`+"\n", x(pt.X), y(pt.Y), esc(l.Name), esc(xTick(pt.X)), pt.Y)
		}
		p("</g>\n")
	}
	names := make([]string, len(c.Lines))
	for i, l := range c.Lines {
		names[i] = l.Name
	}
	return finish(w, &buf, legendY, names)
}

// percent formats a share as a whole percentage.
func percent(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

// RiskCoverage is the risk-coverage chart of the entries whose runs carry
// a calibration (eval.Calibration.Curve): Hits@1 over the most confident
// share of the questions, one line per configuration, coverage on x. ok
// is false when no entry has one.
func (c *Comparison) RiskCoverage() (chart LineChart, ok bool) {
	chart = LineChart{Title: "Hits@1 by coverage (most confident first)", XLabel: "coverage: share of questions answered, most confident first",
		YLabel: "Hits@1 (%)", XMax: 1, YMax: 100, XTick: percent}
	for _, e := range c.Entries {
		cal := e.Report.Calibration
		if cal == nil || len(cal.Curve) == 0 {
			continue
		}
		l := Line{Name: e.Name}
		for _, pt := range cal.Curve {
			l.Points = append(l.Points, Point{X: pt.Coverage, Y: pt.Hits1})
		}
		chart.Lines = append(chart.Lines, l)
	}
	return chart, len(chart.Lines) > 0
}

// calibrationRows writes the Markdown table of the entries' calibration
// figures, when any entry has them.
func calibrationRows(b *bytes.Buffer, entries []Entry) {
	var rows []string
	for _, e := range entries {
		if c := e.Report.Calibration; c != nil {
			rows = append(rows, fmt.Sprintf("| %s | %d | %.4f | %.4f (%.4f) | %.2f | %.2f | %d | %.2f |",
				mdCell(e.Name), c.Scored, c.ECE, c.AURC, c.AURCOptimal, c.Hits1At50, c.Hits1At80, c.Abstained, c.AnsweredHits1))
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "## Calibration\n\nECE: expected calibration error of the first answer's correctness against its confidence, %d equal-width bins weighted by count; AURC: area under the risk-coverage curve (risk = 1 - Hits@1, most confident first), with in brackets the least the run's answers allow (every right answer ranked first); Hits@1 over the 50%% and 80%% most confident questions; abstained questions score as misses in the table above.\n\n", eval.ECEBins)
	b.WriteString("| config | scored | ECE | AURC (optimum) | hits@1 at 50% | hits@1 at 80% | abstained | hits@1 answered |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	b.WriteString(strings.Join(rows, "\n"))
	fmt.Fprintf(b, "\n\n![Risk-coverage](%s)\n\n", RiskCoverageFile)
}
