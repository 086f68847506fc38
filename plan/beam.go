package plan

import (
	"errors"
	"strconv"

	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/selection"
)

// BeamSize is --beam: the candidate schema graphs (readings) the planner
// traces per question, or AutoBeam. A setting the user left auto is
// resolved where the pipeline opens (For): the beam a --selector was
// trained at when its file records one, else projection.DefaultBeam.
// A beam the user gives (flag, --config file, compare key) always wins.
type BeamSize int

// AutoBeam is --beam auto, the default: the selector's recorded beam, or
// projection.DefaultBeam.
const AutoBeam BeamSize = 0

// MaxBeam is the largest beam --beam takes.
const MaxBeam = 64

// UnmarshalText reads "auto" or a whole number from 1 to MaxBeam.
func (b *BeamSize) UnmarshalText(t []byte) error {
	if string(t) == "auto" {
		*b = AutoBeam
		return nil
	}
	n, err := strconv.Atoi(string(t))
	if err != nil || n < 1 || n > MaxBeam {
		return errors.New("want auto or a whole number from 1 to " + strconv.Itoa(MaxBeam))
	}
	*b = BeamSize(n)
	return nil
}

// MarshalText writes b as UnmarshalText reads it.
func (b BeamSize) MarshalText() ([]byte, error) {
	if b.Auto() {
		return []byte("auto"), nil
	}
	return []byte(strconv.Itoa(int(b))), nil
}

// Auto reports whether b is AutoBeam (or below it: never a beam).
func (b BeamSize) Auto() bool { return b <= AutoBeam }

// Value is the beam b stands for: projection.DefaultBeam for auto.
func (b BeamSize) Value() int {
	if b.Auto() {
		return projection.DefaultBeam
	}
	return int(b)
}

// For resolves an auto beam for the selector m: the beam m was trained at
// (selection.Model.Beam) when it records one; b itself when the user gave
// a beam, m is nil (no selector) or m records none (a file written before
// selectors recorded their beam), which then traces as it always did.
func (b BeamSize) For(m *selection.Model) BeamSize {
	if !b.Auto() || m == nil || m.Beam <= 0 {
		return b
	}
	return BeamSize(min(m.Beam, MaxBeam))
}
