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
