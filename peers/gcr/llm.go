package gcr

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/tracing"
)

// decodeTemplate is GCR's graph-constrained decoding prompt, the released
// code's zero-shot prompt (the paper's figure 10), with {question} and
// {entities} where they go.
//
//go:embed prompts/decode.txt
var decodeTemplate string

// reasonTemplate is GCR's graph inductive reasoning prompt (the paper's
// figure 11), as the released code's final-answer step builds it: the K
// decoded paths with their hypotheses, the question, the instruction.
//
//go:embed prompts/reason.txt
var reasonTemplate string

// The fine-tuned model writes each reasoning path between these, after
// the prompt (the released code's answer template, "# Reasoning Path:"
// then "<PATH>...</PATH>", then "# Answer:").
const (
	pathOpen  = "# Reasoning Path:\n<PATH>"
	pathClose = "</PATH>"
)

// question ends a question with "?", as the released code does before
// prompting.
func question(q string) string {
	q = strings.TrimSpace(q)
	if !strings.HasSuffix(q, "?") {
		q += "?"
	}
	return q
}

// DecodePrompt is the decoding prompt for question and its topic
// entities (every anchor, joined by "," as the released code joins
// them), up to the opening of a reasoning path.
func DecodePrompt(q string, entities []string) string {
	return strings.NewReplacer("{question}", question(q), "{entities}", strings.Join(entities, ",")).Replace(decodeTemplate) + pathOpen
}

// ReasonPrompt is the inductive reasoning prompt over paths, each with
// its hypothesis answer.
func ReasonPrompt(q string, paths, hypotheses []string) string {
	blocks := make([]string, len(paths))
	for i := range paths {
		blocks[i] = "# Reasoning Path:\n" + paths[i] + "\n# Answer:\n" + hypotheses[i]
	}
	return strings.NewReplacer("{paths}", strings.Join(blocks, "\n"), "{question}", question(q)).Replace(reasonTemplate)
}

// maxReasonChars bounds the reasoning prompt's paths, as the released
// code bounds its prompt by the model's context: K paths of L triples fit
// many times over, and a path past the bound is left out.
const maxReasonChars = 16000

// stepText writes the step of triple id along s as it continues a path
// written so far: the whole first triple ("A -> r -> B"), or " -> r -> C"
// after it.
func stepText(g kg.Reader, first bool, from int32, id int32, s signals.Step) string {
	arrow := " -> "
	if s.Inverse {
		arrow = " <- "
	}
	out := arrow + g.RelationName(s.Rel) + arrow + g.EntityName(signals.Far(g, id, s))
	if first {
		return g.EntityName(from) + out
	}
	return out
}

// partial is a path in the LLM's beam, with its score as a prefix.
type partial struct {
	Path
	cont float32
}

// expansion is one continuation to score: beam entry from (-1 for a
// path's first step), the triple and how it is walked.
type expansion struct {
	from  int
	start int32
	id    int32
	step  signals.Step
}

// decodeLLM is graph-constrained decoding with the LLM: a beam of K
// entity paths grown one KG triple at a time from every anchor, up to L
// triples, each continuation scored by the model's log-probability of
// its text given the decoding prompt and the path so far (a prefix keeps
// that sum; an ending adds the log-probability of closing the path),
// every scored path a candidate ending; the K best endings are the
// decoded paths.
//
// It says too where the continuations of a path were cut ("" when none
// was).
func (r *Retriever) decodeLLM(ctx context.Context, g kg.Reader, req plan.Request, anchors []int32, plans []signals.PlanPath) ([]Path, string, error) {
	if len(anchors) == 0 {
		return nil, "", nil
	}
	names := make([]string, len(anchors))
	for i, a := range anchors {
		names[i] = g.EntityName(a)
	}
	head := DecodePrompt(req.Question, names)
	var beam []partial
	var pool []Path
	capped := false
	for depth := 0; depth < r.cfg.Hops; depth++ {
		var exps []expansion
		add := func(from int, start, e int32, skip int32) {
			n := 0
			for _, inverse := range []bool{false, true} {
				ids := g.Out(e)
				if inverse {
					ids = g.In(e)
				}
				for _, id := range ids {
					if id == skip {
						continue
					}
					if n >= r.cfg.MaxCandidates {
						capped = true
						return
					}
					n++
					exps = append(exps, expansion{from: from, start: start, id: id, step: signals.Step{Rel: g.Triple(id).Rel, Inverse: inverse}})
				}
			}
		}
		if depth == 0 {
			for _, a := range anchors {
				add(-1, a, a, -1)
			}
		} else {
			for i, p := range beam {
				add(i, p.Start, p.End, p.Triples[len(p.Triples)-1])
			}
		}
		if len(exps) == 0 {
			break
		}
		cont, whole, err := r.scoreLLM(ctx, g, head, beam, exps)
		if err != nil {
			return nil, "", err
		}
		grown := make([]partial, len(exps))
		for i, x := range exps {
			var p Path
			if x.from >= 0 {
				p = beam[x.from].Path
			}
			p = Path{Start: x.start, End: signals.Far(g, x.id, x.step), Triples: append(slices.Clip(p.Triples), x.id), Steps: append(slices.Clip(p.Steps), x.step)}
			bonus := float32(0)
			if r.cfg.PlanWeight > 0 {
				bonus = r.cfg.PlanWeight * signals.PlanScore(plans, p.Steps)
			}
			grown[i] = partial{Path: p, cont: cont[i] + bonus}
			p.Score = whole[i] + bonus
			pool = append(pool, p)
		}
		slices.SortStableFunc(grown, func(a, b partial) int { return cmp.Compare(b.cont, a.cont) })
		beam = grown[:min(len(grown), r.cfg.Beam)]
	}
	problem := ""
	if capped {
		problem = fmt.Sprintf("continuations cut at %d per path: some paths were not scored", r.cfg.MaxCandidates)
	}
	slices.SortStableFunc(pool, func(a, b Path) int { return cmp.Compare(b.Score, a.Score) })
	return pool[:min(len(pool), r.cfg.Beam)], problem, nil
}

// scoreLLM scores expansions of beam: cont[i] is the path's
// log-probability with expansion i as a prefix, whole[i] as a path that
// closes there. Each is one echoed completions call over the prompt, the
// path, the step and the close, run concurrently up to the client's
// concurrency limit.
func (r *Retriever) scoreLLM(ctx context.Context, g kg.Reader, head string, beam []partial, exps []expansion) (cont, whole []float32, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prefixes := make([]string, len(beam))
	for i, p := range beam {
		prefixes[i] = head + PathText(g, p.Path)
	}
	cont, whole = make([]float32, len(exps)), make([]float32, len(exps))
	errs := make([]error, len(exps))
	var wg sync.WaitGroup
	for i, x := range exps {
		prefix, base := head, float32(0)
		if x.from >= 0 {
			prefix, base = prefixes[x.from], beam[x.from].cont
		}
		step := prefix + stepText(g, x.from < 0, x.start, x.id, x.step)
		wg.Go(func() {
			l, err := r.cfg.LLM.PromptLogprobs(ctx, step+pathClose)
			if err != nil {
				errs[i] = err
				cancel()
				return
			}
			cont[i] = base + float32(l.Sum(len(prefix), len(step)))
			whole[i] = cont[i] + float32(l.Sum(len(step), len(step)+len(pathClose)))
		})
	}
	wg.Wait()
	if err := llm.RootFailure(errs); err != nil {
		return nil, nil, fmt.Errorf("score %d paths: %w", len(exps), err)
	}
	return cont, whole, nil
}

// reason asks the general LLM for the final answers among the hypotheses
// (res.Answers, by vote): the K paths and their hypotheses go into the
// reasoning prompt, and the hypotheses its reply names are the answers,
// in its order. A reply naming none leaves the hypotheses, with a
// problem saying so; names no path reaches are not answers, since every
// answer must be backed by the KG.
func (r *Retriever) reason(ctx context.Context, g kg.Reader, q string, paths []Path, res *tracing.Result) error {
	var texts, hyps []string
	size := 0
	for _, p := range paths {
		t := PathText(g, p)
		if size += len(t); size > maxReasonChars {
			res.Problems = append(res.Problems, fmt.Sprintf("inductive reasoning: %d of %d paths left out of the prompt", len(paths)-len(texts), len(paths)))
			break
		}
		texts, hyps = append(texts, t), append(hyps, g.EntityName(p.End))
	}
	reply, err := r.cfg.Reason.Chat(ctx, llm.Request{Messages: []llm.Message{llm.User(ReasonPrompt(q, texts, hyps))}})
	if err != nil {
		return fmt.Errorf("inductive reasoning: %w", err)
	}
	if len(reply.Choices) == 0 {
		return errors.New("inductive reasoning: no reply")
	}
	names := make([]string, len(res.Answers))
	for i, a := range res.Answers {
		names[i] = a.Name
	}
	named := signals.Named(reply.Choices[0], names)
	if len(named) == 0 {
		res.Problems = append(res.Problems, "inductive reasoning named no hypothesis; the hypotheses stand in the vote's order")
		return nil
	}
	kept := make([]tracing.Answer, len(named))
	for i, k := range named {
		kept[i] = res.Answers[k]
	}
	res.Answers = kept
	return nil
}
