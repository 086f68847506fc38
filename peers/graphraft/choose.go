package graphraft

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
)

// StageChoose is the Evidence.Timings key of the LLM's query choice.
const StageChoose = "graphraft-choose"

// Defaults of the LLM mode.
const (
	// DefaultChoices is how many of the best-scored grounded queries the
	// LLM chooses among.
	DefaultChoices          = 20
	DefaultMaxParseRetries  = 2
	DefaultRetryTemperature = 0.7
)

// choosePrompt is the query generator's task, as section 4.2 poses it to
// the fine-tuned L1 (a question in, a Cypher query out), with the grounded
// constrained decoding turned into a choice: the model sees only queries
// that exist around the question's entities and returns them by number,
// so whatever it replies, no query outside the grounded set runs. The
// paper prints no prompt for L1 (it is fine-tuned); this one is stem's,
// with {question}, {queries} and {format} where they go.
//
//go:embed prompts/choose.txt
var choosePrompt string

// chooseFormat is the reply format a retry restates.
func chooseFormat(want, n int) string {
	if want == 1 {
		return fmt.Sprintf("the number of the best query (1-%d)", n)
	}
	return fmt.Sprintf("the numbers of the best queries (1-%d), at most %d, best first, separated by commas", n, want)
}

// RenderChoice is the prompt that asks for want of the queries qs (shown
// by their Cypher text, numbered from 1) for question.
func RenderChoice(g kg.Reader, question string, qs []Query, want int) string {
	var b strings.Builder
	for i, q := range qs {
		fmt.Fprintf(&b, "%d. %s\n", i+1, q.Cypher(g))
	}
	return strings.NewReplacer("{question}", question, "{queries}", b.String(), "{format}", chooseFormat(want, len(qs))).Replace(choosePrompt)
}

// ParseChoice reads a reply to RenderChoice: the indices (from 0) of the
// queries it names, best first, at most want and none twice. A reply that
// repeats a listed query's Cypher text names that query; otherwise its
// numbers are read, and one that names no listed query, or a number
// outside the list, is an error saying so.
func ParseChoice(reply string, cyphers []string, want int) ([]int, error) {
	reply = strings.TrimSpace(reply)
	if reply == "" {
		return nil, errors.New("empty reply")
	}
	for i, c := range cyphers {
		if strings.Contains(reply, c) {
			return []int{i}, nil
		}
	}
	var out []int
	for _, f := range strings.FieldsFunc(reply, func(r rune) bool { return !unicode.IsDigit(r) }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > len(cyphers) {
			return nil, fmt.Errorf("%q is not the number of a listed query (1-%d)", f, len(cyphers))
		}
		if !containsInt(out, n-1) {
			out = append(out, n-1)
		}
		if len(out) == want {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no query number (1-%d) in the reply", len(cyphers))
	}
	return out, nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// choose asks the LLM for the best of the first cfg.Choices ranked
// queries and returns ranked with its choice first, in its order, the
// rest behind in score order. An unusable reply is asked again up to
// MaxParseRetries times, at the retry temperature and the next seed, with
// the bad reply and the format shown; after that the scored order stands
// and a problem says so. Only a failed request is an error.
func (r *Retriever) choose(ctx context.Context, g kg.Reader, question string, ranked []Scored) ([]Scored, []string, error) {
	n := min(len(ranked), r.cfg.Choices)
	if n <= 1 {
		return ranked, nil, nil
	}
	qs := make([]Query, n)
	cyphers := make([]string, n)
	for i := range n {
		qs[i] = ranked[i].Query
		cyphers[i] = qs[i].Cypher(g)
	}
	want := min(r.cfg.Queries, n)
	prompt := RenderChoice(g, question, qs, want)
	var (
		probs   []string
		lastBad string
		lastErr error
	)
	tries := max(r.cfg.MaxParseRetries, 0) + 1
	for attempt := range tries {
		seed := r.cfg.Seed + int64(attempt)
		req := llm.Request{Messages: []llm.Message{llm.User(prompt)}, Temperature: r.cfg.Temperature, MaxTokens: r.cfg.MaxTokens, Seed: &seed}
		if attempt > 0 {
			req.Messages = append(req.Messages, llm.Assistant(lastBad),
				llm.User("Your reply could not be used ("+lastErr.Error()+"). Reply again with only "+chooseFormat(want, n)+"."))
			req.Temperature = r.cfg.RetryTemperature
		}
		reply, err := r.cfg.Chat.Chat(ctx, req)
		if err != nil {
			return nil, probs, fmt.Errorf("query choice request (attempt %d): %w", attempt+1, err)
		}
		if len(reply.Choices) == 0 {
			lastBad, lastErr = "", errors.New("no reply")
		} else if picked, err := ParseChoice(reply.Choices[0], cyphers, want); err != nil {
			lastBad, lastErr = reply.Choices[0], err
		} else {
			out := make([]Scored, 0, len(ranked))
			for _, i := range picked {
				out = append(out, ranked[i])
			}
			for i, s := range ranked {
				if !containsInt(picked, i) {
					out = append(out, s)
				}
			}
			return out, probs, nil
		}
		probs = append(probs, fmt.Sprintf("query choice unusable (attempt %d of %d): %v", attempt+1, tries, lastErr))
	}
	probs = append(probs, fmt.Sprintf("no query choice: the model gave no usable reply in %d attempts; the best-scored query was executed", tries))
	return ranked, probs, nil
}
