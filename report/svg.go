package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
)

// Series is one configuration's bars, one value per group; NaN leaves a
// gap (the configuration has no question in that group).
type Series struct {
	Name   string
	Values []float64
}

// BarChart is a grouped bar chart: along the x axis one cluster per group,
// within a cluster one bar per series, coloured by series.
type BarChart struct {
	Title  string
	YLabel string
	Groups []string
	Series []Series
	// YMax fixes the top of the y axis (100 for percentages); 0 fits it to
	// the data.
	YMax float64
}

// palette is a colour-blind-safe qualitative set (Okabe-Ito); series past
// its end reuse colours.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}

// Chart geometry in SVG user units.
const (
	chartLeft   = 64
	chartTop    = 40
	chartHeight = 260
	barWidth    = 14
	groupGap    = 24
	legendRow   = 18
)

// WriteSVG draws the chart as a standalone SVG document. Each series is one
// <g class="series"> element holding its bars, each bar a <rect> with a
// <title> tooltip, so the figure can be read by tools as well as by eye.
func (b BarChart) WriteSVG(w io.Writer) error {
	for _, s := range b.Series {
		if len(s.Values) != len(b.Groups) {
			return fmt.Errorf("bar chart %q: series %q has %d values for %d groups", b.Title, s.Name, len(s.Values), len(b.Groups))
		}
	}
	top := b.YMax
	if top <= 0 {
		for _, s := range b.Series {
			for _, v := range s.Values {
				if !math.IsNaN(v) && v > top {
					top = v
				}
			}
		}
		top = niceCeil(top)
	}
	ns := max(len(b.Series), 1)
	groupW := float64(ns*barWidth + groupGap)
	plotW := math.Max(groupW*float64(max(len(b.Groups), 1)), 240)
	legendY := chartTop + chartHeight + 44
	width := chartLeft + plotW + 20
	height := float64(legendY + legendRow*len(b.Series) + 10)
	y := func(v float64) float64 { return chartTop + chartHeight - chartHeight*v/top }

	var buf bytes.Buffer
	begin(&buf, width, height, b.Title)
	p := func(format string, args ...any) { fmt.Fprintf(&buf, format, args...) }
	// Y axis with five gridlines.
	p(`<g class="axis">` + "\n")
	for i := 0; i <= 5; i++ {
		v := top * float64(i) / 5
		p(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", chartLeft, y(v), chartLeft+plotW, y(v))
		p(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", chartLeft-6, y(v)+4, fmtTick(v))
	}
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", chartLeft, chartTop, chartLeft, chartTop+chartHeight)
	p(`<line x1="%d" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", chartLeft, chartTop+chartHeight, chartLeft+plotW, chartTop+chartHeight)
	p(`<text transform="translate(16 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", chartTop+chartHeight/2, esc(b.YLabel))
	for gi, g := range b.Groups {
		x := chartLeft + groupW*float64(gi) + groupW/2
		p(`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, chartTop+chartHeight+16, esc(g))
	}
	p("</g>\n")
	for si, s := range b.Series {
		color := palette[si%len(palette)]
		p(`<g class="series" data-name="%s" fill="%s">`+"\n", esc(s.Name), color)
		for gi, v := range s.Values {
			if math.IsNaN(v) {
				continue
			}
			x := chartLeft + groupW*float64(gi) + groupGap/2 + float64(si*barWidth)
			h := math.Max(chartTop+chartHeight-y(math.Min(v, top)), 0)
			p(`<rect x="%.1f" y="%.1f" width="%d" height="%.1f"><title>%s, %s: %.2f</title></rect>`+"\n",
				x, chartTop+chartHeight-h, barWidth-2, h, esc(s.Name), esc(b.Groups[gi]), v)
		}
		p("</g>\n")
	}
	names := make([]string, len(b.Series))
	for i, s := range b.Series {
		names[i] = s.Name
	}
	return finish(w, &buf, legendY, names)
}

// begin opens an SVG document of the size given in buf: a white page
// with the title above.
func begin(buf *bytes.Buffer, width, height float64, title string) {
	fmt.Fprintf(buf, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(buf, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(buf, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(buf, `<text x="%.1f" y="20" font-size="14" text-anchor="middle">%s</text>`+"\n", width/2, esc(title))
}

// finish closes an SVG document in buf with the legend of the series
// names, one row each from y legendY, coloured as the series, and writes
// it to w.
func finish(w io.Writer, buf *bytes.Buffer, legendY int, names []string) error {
	buf.WriteString(`<g class="legend">` + "\n")
	for si, name := range names {
		ly := legendY + legendRow*si
		fmt.Fprintf(buf, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", chartLeft, ly, palette[si%len(palette)])
		fmt.Fprintf(buf, `<text x="%d" y="%d">%s</text>`+"\n", chartLeft+18, ly+10, esc(name))
	}
	buf.WriteString("</g>\n</svg>\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, so the y axis
// ticks are round numbers.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func fmtTick(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// esc escapes s for XML text and attribute values.
func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s)) // writes to a bytes.Buffer cannot fail
	return b.String()
}
