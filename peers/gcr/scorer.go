package gcr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection/linking"
)

// Config.Scorer values.
const (
	// ScorerEncoder scores a path by the cosine of the masked question and
	// the path's relation words (the default).
	ScorerEncoder = "encoder"
	// ScorerLLM scores a path as GCR does: the language model's
	// log-probability of the path given the decoding prompt.
	ScorerLLM = "llm"
)

// Query is what a PathScorer sees of one question.
type Query struct {
	Question string
	// Mentions are the question's entity mentions; Anchors the names of
	// the KG entities they were placed on, in the order of
	// tracing.Result.Anchors.
	Mentions, Anchors []string
	Graph             kg.Reader
	Trie              *Trie
}

// PathScorer scores the relation paths of a question's KG-Trie, higher
// better; decoding adds the plan term. Its errors need not name the
// question: Retrieve's do.
type PathScorer interface {
	// Begin prepares the scoring of q's paths.
	Begin(ctx context.Context, q Query) (ScoreFunc, error)
}

// ScoreFunc scores the paths ending at trie nodes: prefix[i] as a path
// decoding may continue (which the beam keeps by), whole[i] as a decoded
// path that ends there (which the K paths are chosen by). Decoding grows
// paths one step at a time, so every node's parent (the root aside) was
// scored by an earlier call, which a scorer that extends its prefix's
// score relies on.
type ScoreFunc func(ctx context.Context, nodes []int32) (prefix, whole []float32, err error)

// EncoderScorer scores a path by the cosine of the question, its mentions
// masked, and the path's relation words in order (the direction is not
// in the words: only the trie and the plan term see it).
type EncoderScorer struct {
	Encoder models.Encoder
}

// Begin implements PathScorer.
func (s EncoderScorer) Begin(ctx context.Context, q Query) (ScoreFunc, error) {
	dim := s.Encoder.Dim()
	qv := make([]float32, dim)
	if err := s.Encoder.Encode(ctx, []string{linking.Mask(q.Question, q.Mentions)}, qv); err != nil {
		return nil, fmt.Errorf("encode the question: %w", err)
	}
	// A cosine does not favour short paths, so prefix and whole agree.
	return func(ctx context.Context, nodes []int32) ([]float32, []float32, error) {
		texts := make([]string, len(nodes))
		for i, n := range nodes {
			texts[i] = pathText(q.Graph, q.Trie.Path(n))
		}
		vecs := make([]float32, len(texts)*dim)
		if err := s.Encoder.Encode(ctx, texts, vecs); err != nil {
			return nil, nil, fmt.Errorf("encode %d paths: %w", len(texts), err)
		}
		out := make([]float32, len(nodes))
		for i := range nodes {
			v := vecs[i*dim : (i+1)*dim]
			for j, x := range qv {
				out[i] += x * v[j]
			}
		}
		return out, out, nil
	}, nil
}

// pathText writes a relation path as its relations' words, in order.
func pathText(g kg.Reader, toks []Token) string {
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = kg.RelationTextOf(g, t.Rel)
	}
	return strings.Join(parts, " ")
}

// LLMScorer is GCR's scorer (section 4.3): a path's score is the sum of
// the log-probabilities of its tokens under the language model, given
// the graph-constrained decoding prompt (Prompt), so a continuation adds
// the log-probability of its own tokens given the prompt and the path so
// far. As a decoded path, a path also has the log-probability of closing
// there (" </PATH>"): without it every sum favours the shortest path,
// while GCR's beams compare finished sequences. GCR takes all that from
// the decoding's forward passes; here each continuation is one echoed
// completions call (llm.PromptScorer) over prompt, path so far, step and
// close, run concurrently up to the client's concurrency limit.
//
// A path is written in tracing's chain format from the first anchor,
// "<PATH> anchor -> relation <- relation": GCR writes entities between
// the relations too, but a path here is a relation path whose entities
// are many, so a model fine-tuned on GCR's entity paths sees a format it
// was not trained on.
type LLMScorer struct {
	LLM llm.PromptScorer
}

// Prompt is GCR's graph-constrained decoding prompt (the paper's figure
// 10) for question and its topic entities, up to the opening of the
// reasoning path.
func Prompt(question string, entities []string) string {
	return "Reasoning path is a sequence of triples in the KG that connects the topic entities in the question " +
		"to answer entities. Given a question, please generate some reasoning paths in the KG starting from " +
		"the topic entities to answer the question.\n\n" +
		"# Question: \n" + question + "\n" +
		"# Topic entities: \n" + strings.Join(entities, ", ") + "\n" +
		"# Reasoning Path:\n<PATH>"
}

// pathEnd closes a reasoning path in GCR's output.
const pathEnd = " </PATH>"

// stepText writes one step of a path as it continues the prompt.
func stepText(g kg.Reader, tok Token) string {
	if tok.Inverse {
		return " <- " + g.RelationName(tok.Rel)
	}
	return " -> " + g.RelationName(tok.Rel)
}

// Begin implements PathScorer.
func (s LLMScorer) Begin(ctx context.Context, q Query) (ScoreFunc, error) {
	if s.LLM == nil {
		return nil, errors.New("LLM scorer without a language model")
	}
	head := Prompt(q.Question, q.Anchors)
	if len(q.Anchors) > 0 {
		head += " " + q.Anchors[0]
	}
	var mu sync.Mutex
	// sums holds the score of every path scored so far; the root's is 0.
	sums := map[int32]float32{0: 0}
	return func(ctx context.Context, nodes []int32) ([]float32, []float32, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// cont is a path's score as a prefix, out as a decoded path.
		out, cont := make([]float32, len(nodes)), make([]float32, len(nodes))
		errs := make([]error, len(nodes))
		var wg sync.WaitGroup
		for i, n := range nodes {
			node := q.Trie.Nodes[n]
			var prefix strings.Builder
			prefix.WriteString(head)
			for _, tok := range q.Trie.Path(node.Parent) {
				prefix.WriteString(stepText(q.Graph, tok))
			}
			mu.Lock()
			base, ok := sums[node.Parent]
			mu.Unlock()
			if !ok {
				return nil, nil, fmt.Errorf("path %d scored before its prefix", n)
			}
			wg.Go(func() {
				p := prefix.String()
				step := p + stepText(q.Graph, node.Token)
				l, err := s.LLM.PromptLogprobs(ctx, step+pathEnd)
				if err != nil {
					errs[i] = err
					cancel()
					return
				}
				cont[i] = base + float32(l.Sum(len(p), len(step)))
				out[i] = cont[i] + float32(l.Sum(len(step), len(step)+len(pathEnd)))
			})
		}
		wg.Wait()
		if err := llm.RootFailure(errs); err != nil {
			return nil, nil, fmt.Errorf("score %d paths: %w", len(nodes), err)
		}
		mu.Lock()
		for i, n := range nodes {
			sums[n] = cont[i]
		}
		mu.Unlock()
		return cont, out, nil
	}, nil
}
