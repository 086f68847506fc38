// Package progress draws a one-line progress report for long work (vector
// conversion, training, evaluation) on a terminal, and a few plain lines when
// the output is a file or a CI log, so that logs stay readable. Phases draws
// one such bar per phase of work done in phases (stem kg build's).
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Bar reports progress of a task with a known total. The zero value is not
// usable; create one with New. A nil *Bar is a valid no-op, so callers can
// pass nil to silence progress. Methods are safe for concurrent use.
type Bar struct {
	mu       sync.Mutex
	w        io.Writer
	label    string
	total    int64
	done     int64
	start    time.Time
	last     time.Time
	every    time.Duration
	tty      bool
	extra    string
	finished bool
	now      func() time.Time
}

// New returns a bar for total units of work labelled label, drawn on w. When w
// is a terminal the bar redraws in place at most ten times a second;
// otherwise it prints a line at most every ten seconds and one at the end.
func New(w io.Writer, label string, total int64) *Bar {
	b := &Bar{w: w, label: label, total: total, now: time.Now}
	b.start = b.now()
	b.tty = isTerminal(w)
	b.every = 10 * time.Second
	if b.tty {
		b.every = 100 * time.Millisecond
	}
	return b
}

// Add records n more units done.
func (b *Bar) Add(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	b.maybeDraw(false)
}

// Set records that done units are finished in all.
func (b *Bar) Set(done int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = done
	b.maybeDraw(false)
}

// Note sets a short text shown after the counts, such as "loss 0.231".
func (b *Bar) Note(format string, args ...any) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.extra = fmt.Sprintf(format, args...)
}

// Complete ends a bar whose total was an upper bound (walks that may give
// no item, questions that may be skipped): the work is done, so the bar
// ends at 100% of what was done. A run that stopped early calls Finish.
func (b *Bar) Complete() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.total = b.done
	b.mu.Unlock()
	b.Finish()
}

// Finish draws the final state and ends the line.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.finished = true
	b.maybeDraw(true)
	if b.tty {
		fmt.Fprintln(b.w)
	}
}

func (b *Bar) maybeDraw(force bool) {
	now := b.now()
	if !force && now.Sub(b.last) < b.every {
		return
	}
	b.last = now
	line := b.line(now)
	if b.tty {
		fmt.Fprintf(b.w, "\r%s\x1b[K", line)
	} else {
		fmt.Fprintln(b.w, line)
	}
}

// line formats the report: label, bar, counts, rate, ETA and the note.
func (b *Bar) line(now time.Time) string {
	var sb strings.Builder
	sb.WriteString(b.label)
	elapsed := now.Sub(b.start)
	if b.total > 0 {
		frac := float64(b.done) / float64(b.total)
		if frac > 1 {
			frac = 1
		}
		const width = 24
		n := int(frac * width)
		fmt.Fprintf(&sb, " [%s%s] %5.1f%% %d/%d", strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, b.done, b.total)
		if b.done > 0 && b.done < b.total {
			eta := time.Duration(float64(elapsed) / frac * (1 - frac))
			fmt.Fprintf(&sb, " ETA %s", eta.Round(time.Second))
		}
	} else {
		fmt.Fprintf(&sb, " %d", b.done)
	}
	if s := elapsed.Seconds(); s > 0 && b.done > 0 {
		fmt.Fprintf(&sb, " (%.0f/s)", float64(b.done)/s)
	}
	if b.extra != "" {
		sb.WriteString(" ")
		sb.WriteString(b.extra)
	}
	return sb.String()
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
