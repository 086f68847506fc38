package eval

import (
	"strings"
	"unicode"
)

// Normalize folds s the way the RoG evaluation code does before matching:
// lowercase, drop ASCII punctuation (Python's string.punctuation), replace
// each whole word "a", "an" or "the" with a space, and collapse whitespace.
// Word boundaries are Unicode-aware, as in Python 3's re module.
func Normalize(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 && isASCIIPunct(byte(r)) {
			continue
		}
		b.WriteRune(r)
	}
	s = b.String()
	// re.sub(r"\b(a|an|the)\b", " ", s): a maximal run of word characters
	// equal to an article becomes a space.
	var c strings.Builder
	c.Grow(len(s))
	start := -1
	for i, r := range s {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			writeWord(&c, s[start:i])
			start = -1
		}
		c.WriteRune(r)
	}
	if start >= 0 {
		writeWord(&c, s[start:])
	}
	// " ".join(s.split())
	return strings.Join(strings.FieldsFunc(c.String(), isPySpace), " ")
}

func writeWord(b *strings.Builder, w string) {
	if w == "a" || w == "an" || w == "the" {
		b.WriteByte(' ')
		return
	}
	b.WriteString(w)
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// isWordRune is Python's \w for str patterns: alphanumerics and '_'.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// isPySpace is Python's str.isspace, which str.split() splits on; it
// includes the separators 0x1c-0x1f that unicode.IsSpace leaves out.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Match reports whether the normalised gold answer is a substring of the
// normalised prediction.
func Match(prediction, gold string) bool {
	return strings.Contains(Normalize(prediction), Normalize(gold))
}

// SplitLines turns a model's free-text output into predictions, one per
// line, exactly as the peers' code does (Python's s.split("\n")): "" gives
// one empty prediction, not none.
func SplitLines(s string) []string { return strings.Split(s, "\n") }

// Score is one question's answer metrics, each in [0, 1].
type Score struct {
	Hit   float64 `json:"hit"`
	Hits1 float64 `json:"hits1"`
	// Matched is the number of gold answers found in the predictions.
	Matched        int     `json:"matched"`
	Precision      float64 `json:"precision"`
	Recall         float64 `json:"recall"`
	F1             float64 `json:"f1"`
	NumPredictions int     `json:"n_predictions"`
	NumGold        int     `json:"n_gold"`
	// RR is the reciprocal rank of the first prediction that matches a
	// gold answer (0 with none), and HitK whether one of the first HitAtK
	// predictions does: rank metrics, which unlike Hit do not grow with
	// the length of the list, so answerers returning 1 and 20 answers
	// compare.
	RR   float64 `json:"rr"`
	HitK float64 `json:"hit_at_k"`
}

// HitAtK is the k of Score.HitK: one fixed k for every row of a
// comparison, whatever answer-list size each answerer returns.
const HitAtK = 5

// ScoreAnswers scores ranked predictions against the gold answer set.
// With no gold answer every figure is 0 (the peers' code divides by zero
// there; Run leaves such questions out).
func ScoreAnswers(predictions, gold []string) Score {
	s := Score{NumPredictions: len(predictions), NumGold: len(gold)}
	if len(predictions) == 0 || len(gold) == 0 {
		return s
	}
	joined := Normalize(strings.Join(predictions, " "))
	normGold := make([]string, len(gold))
	for i, g := range gold {
		normGold[i] = Normalize(g)
		if strings.Contains(joined, normGold[i]) {
			s.Matched++
		}
	}
	if rank := firstMatch(predictions, normGold); rank > 0 {
		s.RR = 1 / float64(rank)
		if rank == 1 {
			s.Hits1 = 1
		}
		if rank <= HitAtK {
			s.HitK = 1
		}
	}
	if s.Matched > 0 {
		s.Hit = 1
	}
	s.Precision = float64(s.Matched) / float64(len(predictions))
	s.Recall = float64(s.Matched) / float64(len(gold))
	if s.Precision+s.Recall > 0 {
		s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	return s
}

// firstMatch returns the 1-based rank of the first prediction that
// contains a normalised gold answer, 0 when none does.
func firstMatch(predictions, normGold []string) int {
	for i, p := range predictions {
		np := Normalize(p)
		for _, g := range normGold {
			if strings.Contains(np, g) {
				return i + 1
			}
		}
	}
	return 0
}
