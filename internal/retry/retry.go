// Package retry holds the waiting rules stem's HTTP clients share (the
// embeddings client and the chat client): exponential backoff with jitter,
// and the server's own Retry-After.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Backoff says how long to wait before retries.
type Backoff struct {
	// Base is the delay before the first retry; it doubles on each further
	// retry up to Max.
	Base, Max time.Duration
	// MaxRetryAfter caps how long a server's Retry-After can make a retry
	// wait.
	MaxRetryAfter time.Duration
}

// Delay is how long to wait before retry number attempt+1: the server's
// retryAfter when it gave one (>= 0), otherwise exponential backoff with
// jitter (a uniform draw from the upper half of the step), so clients that
// failed together do not retry together.
func (b Backoff) Delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter >= 0 {
		return min(retryAfter, b.MaxRetryAfter)
	}
	d := b.Base
	for range attempt {
		if d >= b.Max/2 {
			d = b.Max
			break
		}
		d *= 2
	}
	d = min(d, b.Max)
	return d/2 + rand.N(d/2+1)
}

// After reads the server's requested delay from retry-after-ms (sent by
// OpenAI) or Retry-After (seconds or an HTTP date). It returns -1 when there
// is none.
func After(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return -1
}

// Defaults shared by stem's HTTP clients.
const (
	DefaultMaxRetries = 4
	DefaultBase       = 500 * time.Millisecond
	DefaultMax        = 30 * time.Second
)

// FillDefaults applies the clients' shared conventions to their retry
// settings: maxRetries 0 means DefaultMaxRetries and a negative value means
// never retry (0); a non-positive base or max takes its default.
func FillDefaults(maxRetries *int, base, max *time.Duration) {
	switch {
	case *maxRetries == 0:
		*maxRetries = DefaultMaxRetries
	case *maxRetries < 0:
		*maxRetries = 0
	}
	if *base <= 0 {
		*base = DefaultBase
	}
	if *max <= 0 {
		*max = DefaultMax
	}
}

// Fatal marks a failure that retrying cannot fix (a refused request, a
// reply that is not what was asked for): Do returns it at once.
type Fatal struct{ Err error }

func (e *Fatal) Error() string { return e.Err.Error() }
func (e *Fatal) Unwrap() error { return e.Err }

// Permanent wraps err as a Fatal.
func Permanent(err error) error { return &Fatal{Err: err} }

// Do calls attempt until it succeeds, fails with a Fatal, ctx ends, or
// maxRetries retries have failed too, waiting b.Delay between tries.
// attempt returns the server's requested delay (-1 for none) beside a
// retryable error. The last error says how many attempts were made.
func Do[T any](ctx context.Context, maxRetries int, b Backoff, attempt func() (T, time.Duration, error)) (T, error) {
	var zero T
	for n := 0; ; n++ {
		v, after, err := attempt()
		if err == nil {
			return v, nil
		}
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			return zero, fmt.Errorf("%w (the last attempt: %v)", cerr, err)
		}
		var fatal *Fatal
		if ctx.Err() != nil || errors.As(err, &fatal) {
			return zero, err
		}
		if n >= maxRetries {
			if n > 0 {
				return zero, fmt.Errorf("%w (gave up after %d attempts)", err, n+1)
			}
			return zero, err
		}
		t := time.NewTimer(b.Delay(n, after))
		select {
		case <-ctx.Done():
			t.Stop()
			return zero, fmt.Errorf("%w (while waiting to retry after: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}
