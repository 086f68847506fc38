package progress

import "io"

// Phases draws one bar per phase of work done in phases (a build's read,
// sort and write), each with its own total: a new phase name finishes the
// previous bar and starts the next. The zero value draws nothing; create
// one with NewPhases. Methods are not safe for concurrent use.
type Phases struct {
	w     io.Writer
	bar   *Bar
	phase string
}

// NewPhases returns phase bars drawn on w.
func NewPhases(w io.Writer) *Phases { return &Phases{w: w} }

// Update records that done of total units of phase are finished.
func (p *Phases) Update(phase string, done, total int64) {
	if p == nil || p.w == nil {
		return
	}
	if phase != p.phase || p.bar == nil {
		p.bar.Finish()
		p.bar, p.phase = New(p.w, phase, total), phase
	}
	p.bar.Set(done)
}

// Finish ends the current phase's bar.
func (p *Phases) Finish() {
	if p != nil {
		p.bar.Finish()
	}
}
