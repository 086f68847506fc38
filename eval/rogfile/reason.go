package rogfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/progress"
)

// ReasonOptions tune Reason.
type ReasonOptions struct {
	// Workers is how many rows are asked at once (0 means 4); the chat
	// client bounds its requests in flight as well.
	Workers int
	// MaxTokens bounds each answer; 0 leaves it to the server.
	MaxTokens int
	// Done holds the ids already answered (the rows of an output file
	// being resumed); they are skipped.
	Done map[string]bool
	// Progress, when not nil, receives a progress bar.
	Progress io.Writer
}

// Reason is the reasoning step of RoG's predict_answer.py over rows of an
// export: each row's Input goes to chat as the user message (ChatPrompt;
// greedy decoding) and the reply, as the model wrote it, becomes the
// prediction of a Prediction row written to out as soon as it comes. Rows
// are asked opts.Workers at a time, so out holds them in the order they
// finish. A row with no input is refused before any request. The first
// request that fails (after the client's own retries) stops the run and
// is returned; the rows written stay whole, so a rerun with their ids in
// opts.Done picks up where it stopped. answered counts the rows written.
func Reason(ctx context.Context, rows []Row, chat llm.Chatter, out *File, opts ReasonOptions) (answered int, err error) {
	var todo []Row
	for _, r := range rows {
		if r.Input == "" {
			return 0, fmt.Errorf("row %s (line %d) has no \"input\" prompt to send", r.ID, r.Line)
		}
		if !opts.Done[r.ID] {
			todo = append(todo, r)
		}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = 4
	}
	var bar *progress.Bar // nil draws nothing
	if opts.Progress != nil {
		bar = progress.New(opts.Progress, "reason", int64(len(todo)))
	}
	defer bar.Finish()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		row  Row
		text string
		err  error
	}
	jobs := make(chan Row)
	answers := make(chan answer)
	go func() {
		defer close(jobs)
		for _, r := range todo {
			select {
			case jobs <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range min(workers, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				rep, err := chat.Chat(ctx, llm.Request{Messages: []llm.Message{llm.User(ChatPrompt(r.Input))}, MaxTokens: opts.MaxTokens})
				a := answer{row: r, err: err}
				if err == nil {
					if len(rep.Choices) == 0 {
						a.err = errors.New("the server returned no choice")
					} else {
						a.text = rep.Choices[0]
					}
				}
				answers <- a
			}
		}()
	}
	go func() {
		wg.Wait()
		close(answers)
	}()
	// After a failure the requests in flight are cancelled, but an answer
	// that still comes is written: it is paid for, and whole.
	var first error
	for a := range answers {
		if a.err != nil {
			if first == nil {
				first = fmt.Errorf("reason: row %s: %w", a.row.ID, a.err)
				cancel()
			}
			continue
		}
		gold := a.row.GroundTruth
		if gold == nil {
			gold = []string{}
		}
		if err := out.Write(Prediction{ID: a.row.ID, Question: a.row.Question, Prediction: a.text, GroundTruth: gold, Input: a.row.Input}); err != nil {
			if first == nil {
				first = err
				cancel()
			}
			continue
		}
		answered++
		bar.Add(1)
	}
	if first == nil {
		first = ctx.Err()
	}
	return answered, first
}
