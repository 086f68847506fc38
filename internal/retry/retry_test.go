package retry

import (
	"context"
	"errors"
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

func TestDo(t *testing.T) {
	b := Backoff{Base: time.Microsecond, Max: time.Microsecond, MaxRetryAfter: time.Millisecond}
	busy := errors.New("busy")
	refused := Permanent(errors.New("refused"))
	for _, c := range []struct {
		name    string
		errs    []error // returned by successive attempts; then success
		retries int
		calls   int
		want    string // "" for success
	}{
		{"first try", nil, 2, 1, ""},
		{"after two failures", []error{busy, busy}, 2, 3, ""},
		{"gives up", []error{busy, busy, busy, busy}, 2, 3, "busy (gave up after 3 attempts)"},
		{"no retries", []error{busy}, 0, 1, "busy"},
		{"fatal stops at once", []error{refused}, 5, 1, "refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			v, err := Do(context.Background(), c.retries, b, func() (int, time.Duration, error) {
				calls++
				if calls <= len(c.errs) {
					return 0, -1, c.errs[calls-1]
				}
				return 42, -1, nil
			})
			if calls != c.calls {
				t.Errorf("%d calls, want %d", calls, c.calls)
			}
			switch {
			case c.want == "" && (err != nil || v != 42):
				t.Errorf("got %v, %v; want 42", v, err)
			case c.want != "" && (err == nil || err.Error() != c.want):
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Do(ctx, 3, Backoff{Base: time.Hour, Max: time.Hour}, func() (int, time.Duration, error) { return 0, -1, busy }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
