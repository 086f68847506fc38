package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// A lease holds the question slots a request took until its reply is
// written: a reply held for a client that does not read it still counts
// against Options.MaxConcurrent (it did not, and 30 clients that never
// read held 20 MB each with the in-flight gauge at 0).
type lease struct {
	mu       sync.Mutex
	releases []func()
}

type leaseKey struct{}

// withLease returns ctx carrying a lease, and the function that releases
// what it holds: call it once the reply is written.
func withLease(ctx context.Context) (context.Context, func()) {
	l := &lease{}
	return context.WithValue(ctx, leaseKey{}, l), func() {
		l.mu.Lock()
		rs := l.releases
		l.releases = nil
		l.mu.Unlock()
		for _, r := range rs {
			r()
		}
	}
}

// takeSlot takes a question slot, or refuses with 503 when every one is
// taken. The slot goes back when the returned function is called, or,
// when ctx carries a lease, when the lease is released.
func (s *Server) takeSlot(ctx context.Context) (func(), error) {
	select {
	case s.slots <- struct{}{}:
	default:
		s.metrics.rejected.Inc()
		return nil, &requestError{http.StatusServiceUnavailable, "busy", fmt.Sprintf("%d questions are being answered or their replies written, the most this server takes at once (--max-concurrent); retry shortly, or send fewer calls in one batch", cap(s.slots))}
	}
	s.metrics.inFlight.Inc()
	var once sync.Once
	release := func() {
		once.Do(func() {
			s.metrics.inFlight.Dec()
			<-s.slots
		})
	}
	if l, ok := ctx.Value(leaseKey{}).(*lease); ok {
		l.mu.Lock()
		l.releases = append(l.releases, release)
		l.mu.Unlock()
		return func() {}, nil
	}
	return release, nil
}

// A budget is what is left of a request's reply bound (Options.MaxReply):
// the calls of an MCP batch share one.
type budget struct {
	mu   sync.Mutex
	left int
}

type budgetKey struct{}

func withBudget(ctx context.Context, n int) (context.Context, *budget) {
	b := &budget{left: n}
	return context.WithValue(ctx, budgetKey{}, b), b
}

// remaining is what is left of ctx's reply budget; Options.MaxReply when
// ctx has none.
func (s *Server) remaining(ctx context.Context) int {
	if b, ok := ctx.Value(budgetKey{}).(*budget); ok {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.left
	}
	return s.opt.MaxReply
}

// spend takes n bytes from the budget.
func (b *budget) spend(n int) {
	b.mu.Lock()
	b.left -= n
	b.mu.Unlock()
}

// errReplyTooLarge is a reply of size bytes (0: not computed) over what
// is left (left) of a request's bound, with how to narrow the request
// (hint).
func errReplyTooLarge(size, left, bound int, hint string) error {
	what := fmt.Sprintf("the %d this server sends for one request (--max-reply)", bound)
	var msg string
	switch {
	case size <= 0:
		msg = fmt.Sprintf("the earlier calls of the batch took all of %s", what)
	case left < bound:
		msg = fmt.Sprintf("the reply would be %d bytes, over the %d bytes left of %s, which the calls of a batch share", size, max(left, 0), what)
	default:
		msg = fmt.Sprintf("the reply would be %d bytes, over %s", size, what)
	}
	return &requestError{http.StatusUnprocessableEntity, "reply_too_large", msg + ": " + hint}
}

// Hints of errReplyTooLarge, by what was asked.
const (
	hintAsk        = `narrow the question: name fewer entities, ask with "strategy": "precision", or without "explain"`
	hintNeighbours = "ask for fewer triples with a smaller limit"
	hintSearch     = "ask for fewer entities with a smaller k"
	hintBatch      = "send fewer calls in one batch, or narrow each (fewer entities, strategy precision, no explain, a smaller limit)"
)

// bodyDeadline is how long a client may take to send a body once its
// headers are in: a body shorter than its Content-Length is answered
// with 408 after it, not held for the whole read timeout.
func (s *Server) bodyDeadline() time.Duration { return s.opt.HeaderTimeout }

// readBody reads r's body, at most Options.MaxBody bytes, within the body
// deadline. Its errors are the caller's, and name no socket address: 413
// for a body over the bound, 408 for one that stops short of its
// Content-Length.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength != 0 {
		// Cleared by net/http once the body is read to its end. Not set
		// for no body: net/http is already reading the connection, and a
		// deadline would end the request's context. Not supported by a
		// test's recorder: then the server's read timeout is the bound.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.bodyDeadline()))
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opt.MaxBody))
	var tooBig *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
		return b, nil
	case errors.As(err, &tooBig):
		return nil, errBodyTooLarge(tooBig.Limit)
	case errors.As(err, &ne) && ne.Timeout():
		return nil, &requestError{http.StatusRequestTimeout, "body_timeout",
			fmt.Sprintf("the body stopped after %d of its %d bytes (Content-Length) for %v: send the whole body", len(b), r.ContentLength, s.bodyDeadline())}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, &requestError{http.StatusBadRequest, "body_short",
			fmt.Sprintf("the body ended after %d of its %d bytes (Content-Length)", len(b), r.ContentLength)}
	}
	return nil, &requestError{http.StatusBadRequest, "body_unreadable", "the body could not be read to its end"}
}

func errBodyTooLarge(limit int64) error {
	return &requestError{http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the request body is over %d bytes (--max-body)", limit)}
}
