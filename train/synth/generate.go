package synth

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/train/dataset"
)

// Reasons a generated item is dropped (its Dropped field).
const (
	// DropNoSolution: the model answered P6 with "No Solution".
	DropNoSolution = "no solution"
	// DropCountMismatch: the model wrote a number of sentences other than
	// the number of triples.
	DropCountMismatch = "sentence count mismatch"
	// DropUnreadable: the reply could not be read, even after retries.
	DropUnreadable = "unreadable reply"
	// DropLeak: the question names an entity the item masks, which would
	// give the answer or an intermediate entity away.
	DropLeak = "question names a masked entity"
	// DropPlaceholder: the question contains an [ENTn] placeholder.
	DropPlaceholder = "placeholder in question"
	// DropNoMention: the question does not name the seed entity, so a
	// planner could not anchor it.
	DropNoMention = "question lacks the seed entity"
)

// Defaults for Generator's zero values.
const (
	DefaultParseRetries     = 1
	DefaultRetryTemperature = 0.7
)

// Generator writes an item's question and assertions with a chat model:
// prompt P6 for both, then P5 for the strategy. It is safe for concurrent
// use.
type Generator struct {
	// Chat is the model; required.
	Chat llm.Chatter
	// Model names the model in QuestionSource and AssertionSource
	// ("llm:MODEL").
	Model string
	// Examples are P6's demonstrations (nil: DefaultP6Examples).
	Examples []P6Example
	// StrategyExamples are P5's (nil: DefaultP5Examples).
	StrategyExamples []llmplan.Example
	// Temperature of the P6 request (the paper used 1.0); P5 is greedy.
	Temperature float64
	// MaxTokens bounds each reply; 0 leaves it to the server.
	MaxTokens int
	// ParseRetries is how often an unreadable P6 reply is asked for again
	// (default 1; negative: never).
	ParseRetries int
	// NoStrategy skips P5.
	NoStrategy bool
}

// Result says what happened to one item beyond its fields.
type Result struct {
	// Dropped repeats the item's Dropped reason ("" when kept).
	Dropped string
	// Strategy is P5's answer, "" when P5 was not asked or its reply was
	// unreadable. The item's Strategy stays the answer-count rule's.
	Strategy string
	// StrategyAgrees reports that P5's answer equals the item's Strategy.
	StrategyAgrees bool
	// Requests is the number of chat calls made.
	Requests int
}

func (g *Generator) source() string { return "llm:" + g.Model }

// Generate asks P6 for the item's sentences and question and P5 for its
// strategy, and sets Question, Assertions and their sources. A reply that
// fails a check marks the item Dropped instead (see the Drop... reasons):
// "No Solution", a sentence count other than the triple count, an
// unreadable reply, a question that names a masked entity or a
// placeholder, or one that does not name the seed entity. An error is
// returned only when the model could not be reached; the item is then left
// as it was, so a resumed run asks again.
func (g *Generator) Generate(ctx context.Context, it *dataset.Item) (Result, error) {
	var res Result
	if g.Chat == nil {
		return res, fmt.Errorf("synth: generator has no chat model")
	}
	if len(it.Masked) == 0 || it.AnswerSlot == "" || len(it.Entities) == 0 {
		return res, fmt.Errorf("synth: item %s has no masked triples, answer slot or entity", it.ID)
	}
	exs := g.Examples
	if exs == nil {
		exs = DefaultP6Examples
	}
	prompt := RenderP6(it.Masked, it.AnswerSlot, exs)
	msgs := []llm.Message{llm.User(prompt)}
	temp := g.Temperature
	retries := g.ParseRetries
	if retries == 0 {
		retries = DefaultParseRetries
	}
	var rep P6Reply
	for try := 0; ; try++ {
		reply, err := g.Chat.Chat(ctx, llm.Request{Messages: msgs, Temperature: temp, MaxTokens: g.MaxTokens})
		res.Requests++
		if err != nil {
			return res, fmt.Errorf("P6 for item %s: %w", it.ID, err)
		}
		text := ""
		if len(reply.Choices) > 0 {
			text = reply.Choices[0]
		}
		var perr error
		if rep, perr = ParseP6(text); perr == nil {
			break
		}
		if try >= retries {
			return g.drop(it, res, DropUnreadable), nil
		}
		// Say what was wrong; sample, since greedy decoding would repeat
		// the same reply (and the response cache would return it).
		msgs = append(msgs[:1:1], llm.Assistant(text), llm.User("Your reply could not be read ("+perr.Error()+
			"). Answer again in exactly this format: [(Sentence_1, Sentence_2, ...), Multi-Hop Question], or No Solution."))
		if temp <= 0 {
			temp = DefaultRetryTemperature
		}
	}
	if rep.NoSolution {
		return g.drop(it, res, DropNoSolution), nil
	}
	it.Question = rep.Question
	if len(rep.Sentences) != len(it.Masked) {
		return g.drop(it, res, DropCountMismatch), nil
	}
	if reason := checkQuestion(it, rep.Question); reason != "" {
		return g.drop(it, res, reason), nil
	}
	it.Assertions = rep.Sentences
	it.QuestionSource, it.AssertionSource = g.source(), g.source()
	if g.NoStrategy {
		return res, nil
	}
	sexs := g.StrategyExamples
	if sexs == nil {
		sexs = DefaultP5Examples
	}
	reply, err := g.Chat.Chat(ctx, llm.Request{Messages: []llm.Message{llm.User(RenderP5(it.Question, it.Assertions, sexs))}, MaxTokens: g.MaxTokens})
	res.Requests++
	if err != nil {
		// The question is good; only the strategy opinion is missing.
		if ctx.Err() != nil {
			return res, fmt.Errorf("P5 for item %s: %w", it.ID, err)
		}
		return res, nil
	}
	if len(reply.Choices) > 0 {
		if s, err := llmplan.ParseStrategyReply(reply.Choices[0]); err == nil {
			res.Strategy = strategyName(s)
			res.StrategyAgrees = res.Strategy == it.Strategy
		}
	}
	return res, nil
}

func (g *Generator) drop(it *dataset.Item, res Result, reason string) Result {
	it.Dropped, res.Dropped = reason, reason
	it.QuestionSource = g.source()
	return res
}

// checkQuestion returns why the question may not be kept, or "".
func checkQuestion(it *dataset.Item, q string) string {
	if placeholderAnywhere.MatchString(q) {
		return DropPlaceholder
	}
	seed := it.Entities[0]
	sp, ok := linking.Find(q, seed)
	if !ok {
		return DropNoMention
	}
	// Look for masked names outside the seed's mention, so that a masked
	// entity whose name is part of the seed's ("Paris" in "Paris_Hilton")
	// is not taken for a leak.
	rest := q[:sp.Start] + " | " + q[sp.End:]
	for _, name := range it.Placeholders {
		if _, ok := linking.Find(rest, name); ok {
			return DropLeak
		}
	}
	return ""
}

var placeholderAnywhere = regexp.MustCompile(`\[\s*ENT\s*\d+\s*\]`)

// Pool runs Generate on several items at once, as many as the chat client
// allows in flight, and hands the items back in submission order, so the
// output file is in sampling order however replies arrive.
type Pool struct {
	g      *Generator
	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}
	queue  chan chan poolResult
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

type poolResult struct {
	it  *dataset.Item
	res Result
	err error
}

// NewPool starts a pool of workers goroutines; out is called from one
// goroutine with each item and its result, in submission order. The first
// error (from the model or from out) stops the pool.
func (g *Generator) NewPool(ctx context.Context, workers int, out func(*dataset.Item, Result) error) *Pool {
	workers = max(workers, 1)
	ctx, cancel := context.WithCancel(ctx)
	p := &Pool{g: g, ctx: ctx, cancel: cancel, sem: make(chan struct{}, workers),
		queue: make(chan chan poolResult, 2*workers), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for slot := range p.queue {
			r := <-slot
			if p.Err() != nil {
				continue
			}
			err := r.err
			if err == nil {
				err = out(r.it, r.res)
			}
			if err != nil {
				p.fail(err)
			}
		}
	}()
	return p
}

func (p *Pool) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	p.cancel()
}

// Err returns the error that stopped the pool, if any.
func (p *Pool) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Submit queues an item, waiting while all workers are busy. It returns
// the pool's error once the pool has stopped. It must not be called after
// Wait.
func (p *Pool) Submit(it *dataset.Item) error {
	if err := p.Err(); err != nil {
		return err
	}
	select {
	case p.sem <- struct{}{}:
	case <-p.ctx.Done():
		if err := p.Err(); err != nil {
			return err
		}
		return p.ctx.Err()
	}
	slot := make(chan poolResult, 1)
	p.queue <- slot
	go func() {
		res, err := p.g.Generate(p.ctx, it)
		<-p.sem
		slot <- poolResult{it, res, err}
	}()
	return nil
}

// Wait waits for the submitted items and returns the pool's error.
func (p *Pool) Wait() error {
	close(p.queue)
	<-p.done
	p.cancel()
	return p.Err()
}
