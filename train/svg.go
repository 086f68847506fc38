package train

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"github.com/stem-kgqa/stem/atomicfile"
)

// WriteCurve writes h as an SVG line chart to path (atomically): training
// loss per epoch on the left axis, dev recall@K on the right, best epoch
// marked.
func WriteCurve(path string, h History) error {
	var b bytes.Buffer
	curveSVG(&b, h)
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	})
}

func curveSVG(b *bytes.Buffer, h History) {
	const W, H, L, R, T, B = 640.0, 360.0, 60.0, 60.0, 30.0, 40.0
	pw, ph := W-L-R, H-T-B
	n := max(len(h.TrainLoss), len(h.DevRecall))
	maxLoss := 0.0
	for _, v := range h.TrainLoss {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			maxLoss = max(maxLoss, v)
		}
	}
	if maxLoss == 0 {
		maxLoss = 1
	}
	x := func(i int) float64 {
		if n <= 1 {
			return L + pw/2
		}
		return L + pw*float64(i)/float64(n-1)
	}
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(b, `<rect width="%g" height="%g" fill="white"/>`+"\n", W, H)
	fmt.Fprintf(b, `<text x="%g" y="18" text-anchor="middle">Triple-GNN training: loss (blue, left) and dev recall@K (orange, right)</text>`+"\n", W/2)
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#888"/>`+"\n", L, T, pw, ph)
	for i := 0; i <= 4; i++ {
		y := T + ph*float64(i)/4
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#eee"/>`+"\n", L, y, L+pw, y)
		fmt.Fprintf(b, `<text x="%g" y="%.1f" text-anchor="end" fill="#1f77b4">%.3g</text>`+"\n", L-4, y+4, maxLoss*float64(4-i)/4)
		fmt.Fprintf(b, `<text x="%g" y="%.1f" fill="#ff7f0e">%.2f</text>`+"\n", L+pw+4, y+4, float64(4-i)/4)
	}
	for i := range n {
		fmt.Fprintf(b, `<text x="%.1f" y="%g" text-anchor="middle">%d</text>`+"\n", x(i), T+ph+16, i+1)
	}
	fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="middle">epoch</text>`+"\n", L+pw/2, H-6)
	line := func(vals []float64, scale float64, color string) {
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="`, color)
		for i, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			fmt.Fprintf(b, "%.1f,%.1f ", x(i), T+ph*(1-v/scale))
		}
		b.WriteString("\"/>\n")
		for i, v := range vals {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x(i), T+ph*(1-v/scale), color)
			}
		}
	}
	line(h.TrainLoss, maxLoss, "#1f77b4")
	line(h.DevRecall, 1, "#ff7f0e")
	if h.BestEpoch > 0 {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#2ca02c" stroke-dasharray="4 3"/>`+"\n", x(h.BestEpoch-1), T, x(h.BestEpoch-1), T+ph)
		fmt.Fprintf(b, `<text x="%.1f" y="%g" fill="#2ca02c">best</text>`+"\n", x(h.BestEpoch-1)+3, T+12)
	}
	b.WriteString("</svg>\n")
}
