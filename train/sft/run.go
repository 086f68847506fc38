package sft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/train/dataset"
)

// RunOptions configure AssertItems.
type RunOptions struct {
	// Asserter writes the assertions; required.
	Asserter Asserter
	// Workers is how many items are asserted at once (default 1). An LLM
	// client bounds its requests in flight on its own; more workers than
	// that only queue.
	Workers int
	// Progress receives a progress bar; nil draws none.
	Progress io.Writer
}

// RunStats counts what AssertItems did.
type RunStats struct {
	// Resumed items were already in the file and were skipped.
	Resumed int `json:"resumed"`
	// Kept items were written as they came: not usable, or already with
	// assertions (from an LLM in `stem data synth`).
	Kept int `json:"kept"`
	// Asserted items got assertions in this run.
	Asserted int `json:"asserted"`
	// Dropped items were written with Dropped set, the asserter having
	// refused them (a *ReplyError).
	Dropped int `json:"dropped"`
	// Failed items could not be asserted (a failed request) and were not
	// written, so a resumed run tries them again.
	Failed int `json:"failed"`
	// Stopped reports that the run stopped early after MaxFailuresInRow
	// failed items in a row; the items after them were not attempted.
	Stopped bool `json:"stopped"`
	// FirstFailure is the error of the first failed item.
	FirstFailure error `json:"-"`
}

// MaxFailuresInRow is how many consecutive failed items stop AssertItems.
const MaxFailuresInRow = 3

// AssertItems gives every item not yet in w its assertions and writes it,
// in the order of items whatever the number of workers, so that reruns
// write the same file. Items that are not usable or already have
// assertions are written unchanged. An item the asserter refuses is written
// with Dropped set to the refusal's Reason; one it fails on (a request that
// failed after the client's retries) is counted in Failed and not written,
// and MaxFailuresInRow such items in a row stop the run (RunStats.Stopped),
// leaving the rest for a resumed run. Items whose ID appears twice are an error. A
// cancelled ctx stops the run after the items in flight, with ctx's error.
func AssertItems(ctx context.Context, w *dataset.Writer, items []dataset.Item, opt RunOptions) (RunStats, error) {
	var st RunStats
	if opt.Asserter == nil {
		return st, errors.New("sft: no asserter")
	}
	seen := make(map[string]bool, len(items))
	var pending []int
	for i := range items {
		id := items[i].ID
		if seen[id] {
			return st, fmt.Errorf("sft: item id %q appears twice in the input", id)
		}
		seen[id] = true
		if w.Done(id) {
			st.Resumed++
			continue
		}
		pending = append(pending, i)
	}
	var bar *progress.Bar
	if opt.Progress != nil && len(pending) > 0 {
		bar = progress.New(opt.Progress, "assertions ("+opt.Asserter.Source()+")", int64(len(pending)))
		defer bar.Finish()
	}
	workers := max(opt.Workers, 1)

	type result struct {
		it  dataset.Item
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	jobs := make(chan int)
	results := make([]chan result, len(pending))
	for k := range results {
		results[k] = make(chan result, 1)
	}
	var wg sync.WaitGroup
	// On an early return the feeder stops and the workers finish the items
	// in flight (their Assert sees the cancellation) before we return.
	defer func() { cancel(); wg.Wait() }()
	for range workers {
		wg.Go(func() {
			for k := range jobs {
				it := items[pending[k]]
				var err error
				if it.Usable() && len(it.Assertions) == 0 {
					var as []string
					as, err = opt.Asserter.Assert(ctx, it.Question, it.Masked)
					if err == nil {
						it.Assertions, it.AssertionSource = as, opt.Asserter.Source()
					}
				}
				results[k] <- result{it, err}
			}
		})
	}
	go func() {
		defer close(jobs)
		for k := range pending {
			select {
			case jobs <- k:
			case <-ctx.Done():
				return
			}
		}
	}()

	failedInRow := 0
	for k := range pending {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		var r result
		select {
		case r = <-results[k]:
		case <-ctx.Done():
			return st, ctx.Err()
		}
		var rerr *ReplyError
		switch {
		case r.err == nil:
			if items[pending[k]].Usable() && len(items[pending[k]].Assertions) == 0 {
				st.Asserted++
			} else {
				st.Kept++
			}
		case errors.As(r.err, &rerr):
			r.it.Dropped = rerr.Reason
			r.it.Assertions, r.it.AssertionSource = nil, ""
			st.Dropped++
		default:
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			st.Failed++
			if st.FirstFailure == nil {
				st.FirstFailure = fmt.Errorf("item %s: %w", r.it.ID, r.err)
			}
			bar.Add(1)
			// Several failures in a row mean the server is down or
			// refusing: every later item would wait out the same
			// retries. Stop; a resumed run picks up the rest.
			if failedInRow++; failedInRow >= MaxFailuresInRow {
				st.Stopped = true
				return st, nil
			}
			continue
		}
		failedInRow = 0
		if err := w.Write(&r.it); err != nil {
			return st, err
		}
		bar.Add(1)
	}
	return st, nil
}
