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
