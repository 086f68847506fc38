package sft

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection/llmplan"
)

// Defaults for LLMConfig's zero values.
const (
	// DefaultTemperature is the paper's for all its data generation (C.1).
	DefaultTemperature = 1.0
	// DefaultRetries is how many times an unusable reply is asked for
	// again, with a note saying what was wrong.
	DefaultRetries = 1
	// retryTemperature replaces greedy decoding on a retry, which would
	// otherwise repeat the reply.
	retryTemperature = 0.7
)

// LLMConfig sets up an LLM asserter.
type LLMConfig struct {
	// Chat is the model; required.
	Chat llm.Chatter
	// Model names the model in Item.AssertionSource ("llm:" + Model);
	// empty takes Chat's Model() when it has one.
	Model string
	// Temperature of the requests: 0 means DefaultTemperature (1.0, the
	// paper's), negative greedy decoding.
	//
	// With the client's response cache each request (prompt, temperature,
	// seed) is answered by the server once: a rerun, or a resumed run,
	// gets the very same sampled assertions back, free. To draw new ones,
	// change Seed or switch the cache off.
	Temperature float64
	// Seed is sent with every request (plus the attempt number on retries),
	// for servers that support repeatable sampling.
	Seed int64
	// MaxTokens bounds a reply; 0 leaves it to the server.
	MaxTokens int
	// Retries is how many times an unusable reply (unreadable, wrong count,
	// placeholders changed) is asked for again: 0 means DefaultRetries,
	// negative never.
	Retries int
	// Examples are P4's few-shot demonstrations: nil means
	// DefaultAssertExamples(), an empty non-nil slice none.
	Examples []AssertExample
}

// LLM writes assertions with a chat model and prompt P4. It is safe for
// concurrent use; the client bounds the requests in flight.
type LLM struct {
	cfg LLMConfig
}

var _ Asserter = (*LLM)(nil)

// NewLLM checks cfg and fills in defaults.
func NewLLM(cfg LLMConfig) (*LLM, error) {
	if cfg.Chat == nil {
		return nil, errors.New("sft: no chat model configured")
	}
	if cfg.Model == "" {
		if m, ok := cfg.Chat.(interface{ Model() string }); ok {
			cfg.Model = m.Model()
		}
	}
	if cfg.Model == "" {
		cfg.Model = "unknown"
	}
	switch {
	case cfg.Temperature == 0:
		cfg.Temperature = DefaultTemperature
	case cfg.Temperature < 0:
		cfg.Temperature = 0
	case cfg.Temperature > 2:
		return nil, fmt.Errorf("sft: temperature %g, want 0..2", cfg.Temperature)
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.Examples == nil {
		cfg.Examples = DefaultAssertExamples()
	}
	for i, e := range cfg.Examples {
		if len(e.Triples) == 0 || len(e.Triples) != len(e.Assertions) {
			return nil, fmt.Errorf("sft: P4 example %d (%q): %d assertions for %d triples", i, e.Question, len(e.Assertions), len(e.Triples))
		}
	}
	return &LLM{cfg: cfg}, nil
}

// Source returns "llm:" + the model name.
func (a *LLM) Source() string { return "llm:" + a.cfg.Model }

// ReplyError is a reply that cannot give the item its assertions: the item
// is dropped with Reason, which is short and free of item details so that
// the dataset card can count drops by kind.
type ReplyError struct {
	// Reason is the item's Dropped text: "llm: 2 assertions for 3 triples",
	// "llm: unreadable reply", ...
	Reason string
	// Detail says exactly what was wrong, for logs.
	Detail string
	// Reply is the model's last reply.
	Reply string
	// Attempts is the number of replies asked for.
	Attempts int
	// Err is the parse error of an unreadable reply.
	Err error
}

func (e *ReplyError) Error() string {
	s := e.Reason
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

func (e *ReplyError) Unwrap() error { return e.Err }

// Assert asks the model for the assertions of masked (P4), retrying an
// unusable reply up to Retries times. See Asserter for the errors.
func (a *LLM) Assert(ctx context.Context, question string, masked [][3]string) ([]string, error) {
	if len(masked) == 0 {
		return nil, nil
	}
	if len(masked) > llmplan.MaxAssertions {
		// Neither the parser nor the planner reads a plan this long, so the
		// request would be wasted.
		return nil, &ReplyError{Reason: fmt.Sprintf("llm: more than %d triples", llmplan.MaxAssertions),
			Detail: fmt.Sprintf("%d triples", len(masked))}
	}
	prompt := RenderAssertionPrompt(question, masked, a.cfg.Examples)
	var last *ReplyError
	attempts := 0
	for attempt := 0; attempt <= a.cfg.Retries; attempt++ {
		attempts++
		seed := a.cfg.Seed + int64(attempt)
		req := llm.Request{Messages: []llm.Message{llm.User(prompt)}, Temperature: a.cfg.Temperature, MaxTokens: a.cfg.MaxTokens, Seed: &seed}
		if last != nil {
			req.Messages = append(req.Messages, llm.Assistant(last.Reply), llm.User(retryNote(last, len(masked))))
			if req.Temperature == 0 {
				req.Temperature = retryTemperature
			}
		}
		r, err := a.cfg.Chat.Chat(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("assertions (P4) for %q: %w", question, err)
		}
		var reply, finish string
		if len(r.Choices) > 0 {
			reply = r.Choices[0]
		}
		if len(r.FinishReasons) > 0 {
			finish = r.FinishReasons[0]
		}
		if finish == "length" {
			// Even a reply that reads well may end in half an assertion.
			last = &ReplyError{Reason: "llm: reply cut off at the token limit", Detail: "raise MaxTokens", Reply: reply}
			continue
		}
		as, err := ParseAssertions(reply)
		if err != nil {
			last = &ReplyError{Reason: "llm: unreadable reply", Detail: err.Error(), Reply: reply, Err: err}
			continue
		}
		if err := CheckAssertions(as, masked); err != nil {
			last = err.(*ReplyError)
			last.Reply = reply
			continue
		}
		return as, nil
	}
	last.Attempts = attempts
	return nil, last
}

// retryNote tells the model what was wrong with its reply.
func retryNote(e *ReplyError, n int) string {
	what := strings.TrimPrefix(e.Reason, "llm: ")
	if e.Detail != "" {
		what += ": " + e.Detail
	}
	return fmt.Sprintf("Your reply could not be used (%s). Reply again with only the list of exactly %d assertions, one per triple and in the same order, each keeping the [ENTX] labels of its triple: [\"Assertion_1\", \"Assertion_2\", ]", what, n)
}
