package tracing

import "fmt"

// MarshalText writes the mode's name.
func (m TextMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a mode's name, as --triple-text takes it.
func (m *TextMode) UnmarshalText(b []byte) error {
	for _, v := range []TextMode{TextFarMention, TextKnownEnds, TextFull, TextRelation} {
		if v.String() == string(b) {
			*m = v
			return nil
		}
	}
	return fmt.Errorf("want far-mention, known-ends, full or relation")
}

// String names the rule for logs and flags.
func (r EdgeReuse) String() string {
	switch r {
	case ReuseNotBack:
		return "not-back"
	case ReuseNever:
		return "never"
	}
	return fmt.Sprintf("EdgeReuse(%d)", int(r))
}

// MarshalText writes the rule's name.
func (r EdgeReuse) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a rule's name, as --reuse takes it.
func (r *EdgeReuse) UnmarshalText(b []byte) error {
	switch string(b) {
	case "not-back":
		*r = ReuseNotBack
	case "never":
		*r = ReuseNever
	default:
		return fmt.Errorf("want not-back or never")
	}
	return nil
}

// String names the ordering, as --gnn-answers takes it.
func (r AnswerRank) String() string {
	switch r {
	case RankTrace:
		return "off"
	case RankTies:
		return "ties"
	case RankFirst:
		return "first"
	}
	return fmt.Sprintf("AnswerRank(%d)", int(r))
}

// MarshalText writes the ordering's name.
func (r AnswerRank) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads an ordering's name: off, ties or first.
func (r *AnswerRank) UnmarshalText(b []byte) error {
	for _, v := range []AnswerRank{RankTrace, RankTies, RankFirst} {
		if v.String() == string(b) {
			*r = v
			return nil
		}
	}
	return fmt.Errorf("want off, ties or first")
}

// String names the bias, as --gnn-bias takes it.
func (b TripleBias) String() string {
	switch b {
	case BiasSet:
		return "set"
	case BiasScore:
		return "score"
	case BiasAdaptive:
		return "adaptive"
	}
	return fmt.Sprintf("TripleBias(%d)", int(b))
}

// MarshalText writes the bias's name.
func (b TripleBias) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText reads a bias's name: set, score or adaptive.
func (b *TripleBias) UnmarshalText(t []byte) error {
	switch string(t) {
	case "set":
		*b = BiasSet
	case "score":
		*b = BiasScore
	case "adaptive":
		*b = BiasAdaptive
	default:
		return fmt.Errorf("want set, score or adaptive")
	}
	return nil
}

// String names the selection, as --selection takes it.
func (s Selection) String() string {
	switch s {
	case SelectByStrategy:
		return "strategy"
	case SelectGreedy:
		return "greedy"
	case SelectThreshold:
		return "threshold"
	}
	return fmt.Sprintf("Selection(%d)", int(s))
}

// MarshalText writes the selection's name.
func (s Selection) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a selection's name: strategy, greedy or threshold.
func (s *Selection) UnmarshalText(b []byte) error {
	for _, v := range []Selection{SelectByStrategy, SelectGreedy, SelectThreshold} {
		if v.String() == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("want strategy, greedy or threshold")
}
