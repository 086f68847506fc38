package signals

import (
	"cmp"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
)

// Named reads which of names an LLM's reply names, whatever its format
// (a list per line, GCR's; "Therefore, the answer is * X, and * Y",
// DoG's; a sentence, SimGRAG's): a name counts when its normalised form
// (kg.Normalize) occurs in the normalised reply between word boundaries.
// It returns the indices of the names named, in the order of their first
// mention; a name found only inside a longer name named at the same place
// ("Bahamas" in "The Bahamas") is the longer one's. Keeping only names of
// the evidence is what keeps an LLM's answers backed: whatever else the
// reply says is not an answer.
func Named(reply string, names []string) []int {
	text := " " + kg.Normalize(reply) + " "
	type hit struct{ i, at, end int }
	var hits []hit
	for i, n := range names {
		nn := kg.Normalize(n)
		if nn == "" {
			continue
		}
		if at := strings.Index(text, " "+nn+" "); at >= 0 {
			hits = append(hits, hit{i: i, at: at, end: at + len(nn) + 2})
		}
	}
	var out []hit
	for _, h := range hits {
		inside := slices.ContainsFunc(hits, func(o hit) bool {
			return o.i != h.i && o.at <= h.at && h.end <= o.end && o.end-o.at > h.end-h.at
		})
		if !inside {
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(a, b hit) int { return cmp.Compare(a.at, b.at) })
	idx := make([]int, len(out))
	for k, h := range out {
		idx[k] = h.i
	}
	return idx
}
