package load

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
)

// Baseline asks every request of c once, c.Clients at a time, and returns
// each question's answers, to be a timed run's Expect, and the message of
// each question that failed. It also warms the server: every planner
// opened, every code path taken once. Duration, MaxRequests and Expect of
// c are not used.
func Baseline(ctx context.Context, c Config) (answers map[string][]string, failed map[string]string, err error) {
	c.Duration, c.MaxRequests, c.Expect = 0, int64(len(c.Requests)), nil
	c, u, err := c.check()
	if err != nil {
		return nil, nil, err
	}
	r, err := prepare(c)
	if err != nil {
		return nil, nil, err
	}
	header := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if c.Token != "" {
		header.Set("Authorization", "Bearer "+c.Token)
	}
	got := make([][]string, len(r.bodies))
	msgs := make([]string, len(r.bodies))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(c.Clients, len(r.bodies)) {
		cl := newClient(ctx, u, header, c.Timeout)
		wg.Go(func() {
			defer cl.tr.CloseIdleConnections()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(r.bodies) {
					return
				}
				status, err := cl.post(r.bodies[i])
				if err != nil || status != http.StatusOK {
					kind, msg := failure(status, cl.buf.Bytes(), err)
					msgs[i] = kind + ": " + msg
					continue
				}
				names, err := answerNames(cl.buf.Bytes(), nil)
				if err != nil {
					msgs[i] = err.Error()
					continue
				}
				if names == nil {
					names = []string{}
				}
				got[i] = names
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("load: baseline interrupted: %w", err)
	}
	answers, failed = map[string][]string{}, map[string]string{}
	for i, req := range c.Requests {
		if msgs[i] != "" {
			failed[req.Question] = msgs[i]
			delete(answers, req.Question)
			continue
		}
		if _, bad := failed[req.Question]; bad {
			continue
		}
		// Expect is keyed by question: one asked twice (with other
		// entities) and answered otherwise cannot be checked.
		if prev, ok := answers[req.Question]; ok && !sameSet(prev, got[i]) {
			failed[req.Question] = fmt.Sprintf("asked more than once and answered differently (%q, then %q); left unchecked", prev, got[i])
			delete(answers, req.Question)
			continue
		}
		answers[req.Question] = got[i]
	}
	return answers, failed, nil
}

// sameSet reports whether a and b hold the same names, in any order.
func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}
