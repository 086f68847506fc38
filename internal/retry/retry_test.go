package retry

import (
	"net/http"
	"testing"
	"time"
)

func TestAfter(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", http.Header{}, -1},
		{"seconds", http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"150"}, "Retry-After": {"2"}}, 150 * time.Millisecond},
		{"date in the past", http.Header{"Retry-After": {"Mon, 02 Jan 2006 15:04:05 GMT"}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, -1},
	}
	for _, tc := range tests {
		if got := After(tc.h); got != tc.want {
			t.Errorf("%s: After = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDelay(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second, MaxRetryAfter: 5 * time.Second}
	for attempt, step := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		step *= time.Millisecond
		for range 50 {
			if d := b.Delay(attempt, -1); d < step/2 || d > step {
				t.Fatalf("attempt %d: delay %v outside [%v, %v]", attempt, d, step/2, step)
			}
		}
	}
	if d := b.Delay(0, 3*time.Second); d != 3*time.Second {
		t.Errorf("Retry-After 3s: delay %v", d)
	}
	if d := b.Delay(0, time.Hour); d != 5*time.Second {
		t.Errorf("Retry-After capped: delay %v, want 5s", d)
	}
}

func TestFillDefaults(t *testing.T) {
	tests := []struct {
		retries, wantRetries int
		base, max            time.Duration
		wantBase, wantMax    time.Duration
	}{
		{0, DefaultMaxRetries, 0, 0, DefaultBase, DefaultMax},
		{-1, 0, time.Millisecond, time.Second, time.Millisecond, time.Second},
		{2, 2, -5, -5, DefaultBase, DefaultMax},
	}
	for _, tc := range tests {
		r, b, m := tc.retries, tc.base, tc.max
		FillDefaults(&r, &b, &m)
		if r != tc.wantRetries || b != tc.wantBase || m != tc.wantMax {
			t.Errorf("FillDefaults(%d, %v, %v) = %d, %v, %v", tc.retries, tc.base, tc.max, r, b, m)
		}
	}
}
