// Package editdist holds the Levenshtein distance, which entity anchoring
// (tracing) and "did you mean" hints (settings) both use.
package editdist

// Distance is the Levenshtein distance between a and b over runes: the
// fewest single-rune insertions, deletions and substitutions that turn a
// into b. It keeps two rows, O(len(b)) memory.
func Distance(a, b string) int {
	if a == b {
		return 0
	}
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := prev[j-1]
			if ra[i-1] != rb[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Ratio is 1 - Distance / the longer length in runes: 1 for equal strings
// (two empty ones included), 0 when one is empty and the other is not.
func Ratio(a, b string) float32 {
	if a == b {
		return 1
	}
	la, lb := len([]rune(a)), len([]rune(b))
	if la == 0 || lb == 0 {
		return 0
	}
	return 1 - float32(Distance(a, b))/float32(max(la, lb))
}
