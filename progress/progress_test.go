package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestBarLines(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	b := New(&buf, "convert", 100)
	b.now = func() time.Time { return clock }
	b.start = clock
	clock = clock.Add(20 * time.Second)
	b.Add(50) // more than 10 s since the start: drawn
	b.Add(10) // within 10 s of the last line: not drawn
	b.Note("loss %.2f", 0.5)
	clock = clock.Add(20 * time.Second)
	b.Add(40)
	b.Finish()
	b.Finish() // idempotent
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		"convert [============            ]  50.0% 50/100 ETA 20s (2/s)",
		"convert [========================] 100.0% 100/100 (2/s) loss 0.50",
		"convert [========================] 100.0% 100/100 (2/s) loss 0.50",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines %q, want %d", len(lines), lines, len(want))
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, lines[i], want[i])
		}
	}
}

func TestNilBar(t *testing.T) {
	var b *Bar
	b.Add(1)
	b.Set(2)
	b.Note("x")
	b.Finish()
}

func TestCompleteEndsAtFull(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "synth", 100) // an upper bound: 30 units came of it
	b.Add(30)
	b.Complete()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "100.0% 30/30") {
		t.Errorf("last line %q, want 100%% of 30", last)
	}
	var stopped bytes.Buffer
	s := New(&stopped, "synth", 100)
	s.Add(30)
	s.Finish()
	if !strings.Contains(stopped.String(), " 30.0% 30/100") {
		t.Errorf("a stopped run's bar %q should stay at 30%%", stopped.String())
	}
	var nilBar *Bar
	nilBar.Complete()
}

func TestPhases(t *testing.T) {
	var buf bytes.Buffer
	p := NewPhases(&buf)
	p.Update("read", 5, 10)
	p.Update("read", 10, 10)
	p.Update("sort", 3, 4)
	p.Finish()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"read 5/10", "read 10/10", "sort 3/4", "sort 3/4"}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines %q, want %d", len(lines), lines, len(want))
	}
	for i, w := range want {
		f := strings.Fields(lines[i])
		label, counts := strings.Fields(w)[0], strings.Fields(w)[1]
		if f[0] != label || !strings.Contains(lines[i], " "+counts) {
			t.Errorf("line %d = %q, want phase %s at %s", i, lines[i], label, counts)
		}
	}
	var none *Phases
	none.Update("read", 1, 2) // a nil Phases draws nothing
	none.Finish()
}
