package eval

// false when R is empty and coverage is undefined.
func Coverage(gold, evidence [][3]string) (cov float64, ok bool) {
	if len(gold) == 0 {
		return 0, false
	}
	have := make(map[[3]string]bool, 2*len(evidence))
	for _, t := range evidence {
		have[t] = true
		have[[3]string{t[2], t[1], t[0]}] = true
	}
	n := 0
	for _, t := range gold {
		if have[t] {
			n++
		}
	}
	return float64(n) / float64(len(gold)), true
}
