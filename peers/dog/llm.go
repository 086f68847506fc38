package dog

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/plan"
)

// Model is the language model of DoG's LLM mode: it scores a prompt's
// tokens and continues a prompt. *llm.Client implements it.
type Model interface {
	llm.PromptScorer
	llm.Completer
}

// table6 is the paper's prompt (its table 6, verbatim, its second example
// headed "Example 1" as printed), with {graph} and {question} where they
// go.
//
//go:embed prompts/table6.txt
var table6 string

// Prompt is DoG's prompt for question over the linearised context
// triples ("h -> r -> t", joined by " | " as table 6's contexts are), up
// to the first step.
func Prompt(question string, context []string) string {
	return strings.NewReplacer("{graph}", strings.Join(context, " | "), "{question}", question).Replace(table6)
}

// TripleText writes KG triple id as the paper's steps and contexts write
// a triple, head to tail whichever way the chain walked it.
func TripleText(g kg.Reader, id int32) string {
	t := g.Triple(id)
	return g.EntityName(t.Head) + " -> " + g.RelationName(t.Rel) + " -> " + g.EntityName(t.Tail)
}

// stepText writes step i (from 0) of a chain as table 6's answers do.
func stepText(g kg.Reader, i int, s Step) string {
	return " " + strconv.Itoa(i+1) + ". < " + TripleText(g, s.Triple) + " >"
}

// Conclude is how a chain ends in the paper's answers.
const Conclude = " Therefore, the answer is"

var (
	// concludes finds the conclusion in the model's text.
	concludes = regexp.MustCompile(`(?i)therefore,?\s+the\s+answers?\s+(?:is|are)`)
	// nextStep is the number the model writes before opening its next
	// triple (" 2."), which the next step's own text repeats.
	nextStep = regexp.MustCompile(`\s*\d+\.\s*$`)
)

// llmSession is one question under the LLM: the prompt over its
// question graph, G_q confined to that graph.
type llmSession struct {
	g      kg.Reader
	model  Model
	head   string
	inside map[int32]bool
	plans  []signals.PlanPath
	weight float32
	tokens int
}

// llmSession builds the question graph (QuestionGraph) and the prompt,
// and says what the graph lacks where its scan bound was hit ("" when
// it was not).
func (r *Retriever) llmSession(ctx context.Context, g kg.Reader, req plan.Request, anchors []int32, plans []signals.PlanPath) (session, string, error) {
	ids, cut, err := QuestionGraph(ctx, g, r.enc, req.Question, anchors, r.cfg.Depth, r.cfg.GraphTriples, r.cfg.GraphScan)
	if err != nil {
		return nil, "", err
	}
	problem := ""
	if cut {
		problem = fmt.Sprintf("question graph chosen among the first %d triples within %d hops", r.cfg.GraphScan, r.cfg.Depth)
	}
	ctxTriples := make([]string, len(ids))
	inside := make(map[int32]bool, len(ids))
	for i, id := range ids {
		ctxTriples[i] = TripleText(g, id)
		inside[id] = true
	}
	return &llmSession{g: g, model: r.cfg.LLM, head: Prompt(req.Question, ctxTriples), inside: inside, plans: plans, weight: r.cfg.PlanWeight, tokens: r.cfg.MaxTextTokens}, problem, nil
}

// written is the prompt with chain c's steps and the model's text after
// each.
func (s *llmSession) written(c Chain) string {
	var b strings.Builder
	b.WriteString(s.head)
	for i, st := range c.Steps {
		b.WriteString(stepText(s.g, i, st))
		if i < len(c.Texts) {
			b.WriteString(c.Texts[i])
		}
	}
	return b.String()
}

// score is eq. 3: S plus the log-probability of each next triple given
// the prompt and the chain so far, one echoed completions call per
// triple, run concurrently up to the client's concurrency limit.
func (s *llmSession) score(ctx context.Context, c Chain, steps []Step) ([]float32, []float32, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prefix := s.written(c)
	out := make([]float32, len(steps))
	errs := make([]error, len(steps))
	path := c.Path()
	var wg sync.WaitGroup
	for i, st := range steps {
		wg.Go(func() {
			text := prefix + stepText(s.g, len(c.Steps), st)
			l, err := s.model.PromptLogprobs(ctx, text)
			if err != nil {
				errs[i] = err
				cancel()
				return
			}
			out[i] = c.Score + float32(l.Sum(len(prefix), len(text)))
			if s.weight > 0 && path != nil && (len(c.Steps) == 0 || st.From == c.Steps[len(c.Steps)-1].To) {
				out[i] += s.weight * signals.PlanScore(s.plans, append(slices.Clip(path), st.Rel))
			}
		})
	}
	wg.Wait()
	if err := llm.RootFailure(errs); err != nil {
		return nil, nil, fmt.Errorf("score %d triples: %w", len(steps), err)
	}
	return out, out, nil
}

// grew lets the model write its text after c's last triple, unconstrained
// (section 2.3), up to the opening of another triple: a conclusion ends
// the chain.
func (s *llmSession) grew(ctx context.Context, c *Chain) error {
	text, err := s.model.Complete(ctx, s.written(*c), s.tokens, []string{"<"})
	if err != nil {
		return fmt.Errorf("the text after triple %d: %w", len(c.Steps), err)
	}
	if concludes.MatchString(text) {
		c.Texts = append(c.Texts, text)
		c.Done, c.Conclusion = true, text
		return nil
	}
	c.Texts = append(c.Texts, nextStep.ReplaceAllString(text, ""))
	return nil
}

// conclude has the model conclude a chain that reached T triples.
func (s *llmSession) conclude(ctx context.Context, c *Chain) error {
	text, err := s.model.Complete(ctx, s.written(*c)+Conclude, s.tokens, []string{"\n", "<"})
	if err != nil {
		return fmt.Errorf("the conclusion after triple %d: %w", len(c.Steps), err)
	}
	c.Done, c.Conclusion = true, strings.TrimSpace(Conclude)+text
	return nil
}

func (s *llmSession) stops() bool { return false }

func (s *llmSession) allowed() func(int32) bool {
	return func(id int32) bool { return s.inside[id] }
}

// concluded returns the steps whose far ends the chain's conclusion names
// (after its last "the answer is"), in the order it names them.
func concluded(g kg.Reader, c Chain) ([]int, bool) {
	text := c.Conclusion
	if loc := concludes.FindAllStringIndex(text, -1); len(loc) > 0 {
		text = text[loc[len(loc)-1][1]:]
	}
	names := make([]string, len(c.Steps))
	for i, s := range c.Steps {
		names[i] = g.EntityName(s.To)
	}
	named := signals.Named(text, names)
	return named, len(named) > 0
}

// QuestionGraph is DoG's question graph (section 3.1, appendix B): the
// triples within hops of the anchors, ranked by the encoder's cosine of
// "(head, relation, tail)" and the question, added best first, each with
// the triples that connect it to an anchor (by breadth-first parents),
// until size triples; at most scan triples are ranked, and cut says the
// scan bound was hit. The result is in the order the triples were added.
func QuestionGraph(ctx context.Context, g kg.Reader, enc models.Encoder, question string, anchors []int32, hops, size, scan int) (ids []int32, cut bool, err error) {
	depth := map[int32]int{}
	parent := map[int32]int32{}
	for _, a := range anchors {
		depth[a] = 0
	}
	var found []int32
	seen := map[int32]bool{}
	front := slices.Clone(anchors)
	for d := 0; d < hops && len(front) > 0 && !cut; d++ {
		var next []int32
		for _, e := range front {
			for _, ids := range [][]int32{g.Out(e), g.In(e)} {
				for _, id := range ids {
					if seen[id] {
						continue
					}
					if len(found) >= scan {
						cut = true
						break
					}
					seen[id] = true
					found = append(found, id)
					t := g.Triple(id)
					for _, o := range []int32{t.Head, t.Tail} {
						if _, ok := depth[o]; !ok {
							depth[o], parent[o] = d+1, id
							next = append(next, o)
						}
					}
				}
			}
		}
		front = next
	}
	if len(found) <= size {
		return found, cut, nil
	}
	texts := make([]string, len(found)+1)
	texts[0] = question
	for i, id := range found {
		t := g.Triple(id)
		texts[i+1] = "(" + g.EntityName(t.Head) + ", " + g.RelationName(t.Rel) + ", " + g.EntityName(t.Tail) + ")"
	}
	vecs, err := models.EncodeAll(ctx, enc, texts)
	if err != nil {
		return nil, cut, fmt.Errorf("rank the question graph: %w", err)
	}
	dim := enc.Dim()
	cos := make(map[int32]float32, len(found))
	for i, id := range found {
		cos[id] = models.Cosine(vecs[:dim], vecs[(i+1)*dim:(i+2)*dim])
	}
	ranked := slices.Clone(found)
	slices.SortStableFunc(ranked, func(a, b int32) int { return cmp.Compare(cos[b], cos[a]) })
	added := map[int32]bool{}
	for _, id := range ranked {
		if len(ids) >= size {
			break
		}
		t := g.Triple(id)
		near := t.Head
		if depth[t.Tail] < depth[t.Head] {
			near = t.Tail
		}
		var path []int32
		for e := near; depth[e] > 0; {
			p := parent[e]
			path = append(path, p)
			pt := g.Triple(p)
			if pt.Head == e {
				e = pt.Tail
			} else {
				e = pt.Head
			}
		}
		slices.Reverse(path)
		for _, p := range append(path, id) {
			if !added[p] {
				added[p] = true
				ids = append(ids, p)
			}
		}
	}
	return ids, cut, nil
}
