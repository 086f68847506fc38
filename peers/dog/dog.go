// Package dog is DoG's retrieval (Li et al., "Decoding on Graphs",
// sections 2.2-2.4 and algorithm 1) as a stem retrieval strategy, with
// the paper's LLM (Config.Scorer ScorerLLM) or without one:
//
//  1. Well-formed chains: a chain is a sequence of KG triples starting at
//     the question entities, each triple touching an entity the chain has
//     visited (an anchor or an end of an earlier triple) and none
//     repeated. That is the paper's query-centric subgraph G_q: it starts
//     as the anchors' triples and grows by the triples at the ends of each
//     generated one, and a step may only be a triple of G_q. Generating
//     only such triples is the graph-aware constrained decoding: every
//     step is a KG triple, at the entity level, not a relation whose
//     entities are filled in later.
//
//  2. Triple-level beam search: the Beam best chains are kept at every
//     step. A chain that has not stopped competes with its continuations
//     by one triple and with stopping where it is; the search ends when
//     every kept chain has stopped or after Depth steps (the paper's T),
//     where every continuation must stop and competes as a stopped chain.
//
//  3. The stopping rule. In the paper the LLM, after a triple, either
//     opens another one (<T_BOS>) or concludes ("Therefore, the answer
//     is"), and the chain ends there. With ScorerLLM that is what is
//     scored: a chain's score is the sum of its triples' log-probabilities
//     given the paper's prompt (its table 6) and the chain so far, plus,
//     after each triple, the log-probability of concluding there (a chain
//     that stops) or of not concluding, 1 - P(conclude) (a chain that goes
//     on). Without an LLM (ScorerEncoder) a chain's score is
//
//     score = cos(question, chain) + PlanWeight * plan(chain)
//
//     the cosine of the question, its mentions masked, and the chain's
//     relation words in order, plus GCR's plan term over the planner's
//     candidate relation paths (gcr.PlanScore; a chain that is not a path
//     from an anchor gets no plan credit). Stopping keeps the chain's
//     score, so a chain stops as soon as no continuation scores better
//     than it: ties stop.
//
//  4. Answers are the ends of the stopped chains in the final beam (the
//     far end of each chain's last triple), scored by their best chain;
//     Precision keeps those whose chain ties the best, Breadth all of
//     them. Every chain's triples are returned as evidence, so every
//     answer is backed (tracing.Audit; it must be 0).
//
// DoG also generates free text between triples ("This tells us ...")
// and the answer sentence itself; neither is generated here, since a
// retrieval strategy returns the chains and their ends and generation is
// the pipeline's.
package dog

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/peers/gcr"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// Config.Scorer values.
const (
	// ScorerEncoder scores a chain by the question-chain cosine and the
	// plan term (the default).
	ScorerEncoder = "encoder"
	// ScorerLLM scores a chain as DoG does: the language model's
	// log-probabilities of its triples and of concluding after them.
	ScorerLLM = "llm"
)

// Config holds DoG's parameters. A zero Beam, Depth or bound takes
// DefaultConfig's value; PlanWeight is taken as given (0 is no plan term).
// A negative field is an error.
type Config struct {
	// Beam is bs, the chains kept per step. The paper states one value,
	// 2 (its table 5), which is the default.
	Beam int
	// Depth is T, the most triples in a chain. The paper gives no value;
	// 3 covers the 2- and 3-hop benchmarks stem runs.
	Depth int
	// PlanWeight weighs the planner's candidate paths against the cosine
	// (1).
	PlanWeight float32
	// MaxCandidates caps the triples a chain may continue by, the lowest
	// ids kept (2000): a hub (MetaQA's genre Drama has 4,030 edges) would
	// otherwise cost a score per edge at every step.
	MaxCandidates int
	// ContextTriples caps the triples of the prompt's context under
	// ScorerLLM (50): the paper linearises the whole question graph,
	// which for a hub outgrows any context window.
	ContextTriples int

	// Scorer chooses the chain scorer: ScorerEncoder ("", the default) or
	// ScorerLLM, which asks LLM.
	Scorer string
	// LLM is the language model of ScorerLLM; *llm.Client implements it.
	LLM llm.PromptScorer
}

// DefaultConfig returns the paper's beam of 2, a depth of 3, the bounds
// above and the encoder scorer.
func DefaultConfig() Config {
	return Config{Beam: 2, Depth: 3, PlanWeight: 1, MaxCandidates: 2000, ContextTriples: 50, Scorer: ScorerEncoder}
}

// withDefaults fills zero fields and rejects negative ones.
func (c Config) withDefaults() (Config, error) {
	if c.Beam < 0 || c.Depth < 0 || c.PlanWeight < 0 || c.MaxCandidates < 0 || c.ContextTriples < 0 {
		return c, fmt.Errorf("dog: config %+v: negative value", c)
	}
	switch c.Scorer {
	case "", ScorerEncoder:
		c.Scorer = ScorerEncoder
	case ScorerLLM:
		if c.LLM == nil {
			return c, fmt.Errorf("dog: scorer %q without Config.LLM", c.Scorer)
		}
	default:
		return c, fmt.Errorf("dog: scorer %q: want %q or %q", c.Scorer, ScorerEncoder, ScorerLLM)
	}
	d := DefaultConfig()
	for _, f := range []struct{ v, def *int }{{&c.Beam, &d.Beam}, {&c.Depth, &d.Depth},
		{&c.MaxCandidates, &d.MaxCandidates}, {&c.ContextTriples, &d.ContextTriples}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return c, nil
}

// Retriever is DoG's retrieval. It holds no mutable state, so it is safe
// for concurrent use.
type Retriever struct {
	scorer Scorer
	cfg    Config
}

// New builds DoG's retriever from the pipeline's environment and cfg; it
// needs the encoder (ScorerEncoder) or cfg.LLM (ScorerLLM), and reads the
// KG of each question from its Request.
func New(ctx context.Context, env plan.Env, cfg Config) (plan.Retriever, error) {
	return newRetriever(env, cfg)
}

func newRetriever(env plan.Env, cfg Config) (*Retriever, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var sc Scorer = LLMScorer{LLM: c.LLM, ContextTriples: c.ContextTriples}
	if c.Scorer == ScorerEncoder {
		if env.Encoder == nil {
			return nil, fmt.Errorf("dog: no encoder")
		}
		sc = EncoderScorer{Encoder: env.Encoder, PlanWeight: c.PlanWeight}
	}
	return &Retriever{scorer: sc, cfg: c}, nil
}

// Step is one triple of a chain: KG triple Triple, walked from entity
// From (visited before it) to To.
type Step struct {
	Triple   int32
	From, To int32
	// Token is the step's relation, Inverse when From is the triple's
	// tail.
	Token gcr.Token
}

// Chain is a well-formed chain being decoded.
type Chain struct {
	Steps []Step
	// Score is the chain's score as decoding goes on (a chain that may
	// still continue), End its score as a chain that stops after its last
	// triple.
	Score, End float32
	// Done says the chain has stopped.
	Done bool
}

// Answer is the entity the chain answers: the far end of its last
// triple; -1 for the empty chain.
func (c Chain) Answer() int32 {
	if len(c.Steps) == 0 {
		return -1
	}
	return c.Steps[len(c.Steps)-1].To
}

// Tokens returns the chain's relation path when it is one, each step
// leaving where the one before arrived, and nil when it branches.
func (c Chain) Tokens() []gcr.Token {
	out := make([]gcr.Token, len(c.Steps))
	for i, s := range c.Steps {
		if i > 0 && s.From != c.Steps[i-1].To {
			return nil
		}
		out[i] = s.Token
	}
	return out
}

// Retrieve implements plan.Retriever.
func (r *Retriever) Retrieve(ctx context.Context, req plan.Request) (*plan.Evidence, error) {
	start := time.Now()
	g := req.Graph
	if g == nil {
		return nil, fmt.Errorf("dog: question %q: no KG", req.Question)
	}
	ev := &plan.Evidence{Timings: map[string]time.Duration{}}
	res := &tracing.Result{}
	ev.Trace = res
	anchors := gcr.Anchors(g, req, res)
	chains, err := r.decode(ctx, g, req, anchors, res)
	if err != nil {
		return nil, fmt.Errorf("dog: question %q: %w", req.Question, err)
	}
	fill(g, chains, req.Strategy, res)
	if len(res.Evidence) == 0 {
		res.Problems = append(res.Problems, "empty evidence: no chain was decoded")
	}
	res.Unbacked = tracing.Audit(g, res)
	ev.Timings[plan.StageTrace] = time.Since(start)
	return ev, nil
}

// decode runs the triple-level beam search of algorithm 1 and returns the
// stopped chains of the final beam, best first.
func (r *Retriever) decode(ctx context.Context, g kg.Reader, req plan.Request, anchors []int32, res *tracing.Result) ([]Chain, error) {
	if len(anchors) == 0 {
		return nil, nil
	}
	q := Query{Question: req.Question, Mentions: req.Mentions, Graph: g, Anchors: anchors, Plans: gcr.PlanPaths(g, req.Projection)}
	if len(q.Mentions) == 0 {
		q.Mentions = req.Input.Mentions
	}
	score, err := r.scorer.Begin(ctx, q)
	if err != nil {
		return nil, err
	}
	beam := []Chain{{}}
	capped := false
	for depth := 0; depth < r.cfg.Depth; depth++ {
		if !slices.ContainsFunc(beam, func(c Chain) bool { return !c.Done }) {
			break
		}
		var pool []Chain
		for _, c := range beam {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if c.Done {
				pool = append(pool, c)
				continue
			}
			// Stopping here is one of the chain's options; the empty
			// chain answers nothing and cannot stop.
			if len(c.Steps) > 0 {
				pool = append(pool, Chain{Steps: c.Steps, Score: c.End, End: c.End, Done: true})
			}
			cands, cut := candidates(g, anchors, c, r.cfg.MaxCandidates)
			capped = capped || cut
			if len(cands) == 0 {
				continue
			}
			next, end, err := score(ctx, c, cands)
			if err != nil {
				return nil, err
			}
			// At depth T a continuation must stop, so it competes by its
			// score as a stopped chain.
			last := depth == r.cfg.Depth-1
			for i, s := range cands {
				steps := append(slices.Clip(c.Steps), s)
				ch := Chain{Steps: steps, Score: next[i], End: end[i]}
				if last {
					ch.Score, ch.Done = end[i], true
				}
				pool = append(pool, ch)
			}
		}
		sortChains(pool)
		beam = pool[:min(len(pool), r.cfg.Beam)]
	}
	if capped {
		res.Problems = append(res.Problems, fmt.Sprintf("continuations cut at %d triples per chain: some chains are missing", r.cfg.MaxCandidates))
	}
	return beam, nil
}

// candidates returns the steps chain c may continue by: the triples of
// the query-centric subgraph, those at an entity c visited, that c does
// not hold yet, in triple id order, at most limit of them. A triple
// joining two visited entities is walked from the later visited one, so
// that a chain that is a path stays one.
func candidates(g kg.Reader, anchors []int32, c Chain, limit int) ([]Step, bool) {
	visited := slices.Clone(anchors)
	used := make([]int32, 0, len(c.Steps))
	for _, s := range c.Steps {
		used = append(used, s.Triple)
		if !slices.Contains(visited, s.To) {
			visited = append(visited, s.To)
		}
	}
	// order[e] is when e was visited, higher later.
	order := func(e int32) int { return slices.Index(visited, e) }
	var out []Step
	seen := map[int32]bool{}
	for _, e := range visited {
		for _, inverse := range []bool{false, true} {
			ids := g.Out(e)
			if inverse {
				ids = g.In(e)
			}
			for _, id := range ids {
				if seen[id] || slices.Contains(used, id) {
					continue
				}
				seen[id] = true
				t := g.Triple(id)
				s := Step{Triple: id, From: t.Head, To: t.Tail, Token: gcr.Token{Rel: t.Rel}}
				if order(t.Tail) > order(t.Head) {
					s = Step{Triple: id, From: t.Tail, To: t.Head, Token: gcr.Token{Rel: t.Rel, Inverse: true}}
				}
				out = append(out, s)
			}
		}
	}
	slices.SortFunc(out, func(a, b Step) int { return cmp.Compare(a.Triple, b.Triple) })
	if len(out) > limit {
		return out[:limit], true
	}
	return out, false
}

// sortChains orders chains best first; at equal scores a stopped chain
// comes first (the no-LLM rule: a continuation must score better than
// stopping), then the shorter, then by triple ids, so that decoding is
// deterministic.
func sortChains(cs []Chain) {
	slices.SortStableFunc(cs, func(a, b Chain) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if a.Done != b.Done {
			if a.Done {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(len(a.Steps), len(b.Steps)); c != 0 {
			return c
		}
		return slices.CompareFunc(a.Steps, b.Steps, func(x, y Step) int { return cmp.Compare(x.Triple, y.Triple) })
	})
}

// fill writes the chains into res: each chain's triples as evidence
// (Match.Graph is the chain's rank, SchemaTriple its step, TScore and Cum
// its score), its answer, and its line in tracing's chain format; answers
// by score, then name.
func fill(g kg.Reader, chains []Chain, strat schema.Strategy, res *tracing.Result) {
	if len(chains) == 0 {
		return
	}
	seen := map[int32]bool{}
	type found struct {
		answer tracing.Answer
		line   string
	}
	var answers []found
	for k, c := range chains {
		for i, s := range c.Steps {
			if !seen[s.Triple] {
				seen[s.Triple] = true
				res.Evidence = append(res.Evidence, tracing.Match{Graph: k, SchemaTriple: i, Triple: s.Triple, TScore: c.Score, Cum: c.Score})
			}
		}
		a := c.Answer()
		// Chains come best first, so an answer's first chain is its best.
		if a < 0 || slices.ContainsFunc(answers, func(f found) bool { return f.answer.Entity == a }) {
			continue
		}
		answers = append(answers, found{tracing.Answer{Entity: a, Name: g.EntityName(a), Score: c.Score, Graph: k}, chainLine(g, c)})
	}
	slices.SortStableFunc(res.Evidence, func(a, b tracing.Match) int {
		if c := cmp.Compare(b.Cum, a.Cum); c != 0 {
			return c
		}
		return cmp.Compare(a.Triple, b.Triple)
	})
	slices.SortStableFunc(answers, func(a, b found) int {
		if c := cmp.Compare(b.answer.Score, a.answer.Score); c != 0 {
			return c
		}
		return strings.Compare(a.answer.Name, b.answer.Name)
	})
	// The chains are those of the answers kept, so that generation reads
	// no chain to an answer Precision dropped; the evidence keeps them all.
	for _, f := range answers {
		if strat == schema.Precision && f.answer.Score < answers[0].answer.Score-tieEps(answers[0].answer.Score) {
			break
		}
		res.Answers = append(res.Answers, f.answer)
		res.Chains = append(res.Chains, f.line)
	}
}

// tieEps is how close two float32 scores of magnitude s count as tied.
func tieEps(s float32) float32 {
	return 1e-5 * max(1, float32(math.Abs(float64(s))))
}

// chainLine writes the path within chain c from an anchor to its answer,
// in tracing's format ("A -> relation -> B" along an edge, "A <- relation
// <- B" against it). A well-formed chain may branch; each step leaves an
// entity an earlier step (or an anchor) reached, so walking back from the
// last step always ends at an anchor.
func chainLine(g kg.Reader, c Chain) string {
	var path []Step
	for i := len(c.Steps) - 1; i >= 0; {
		s := c.Steps[i]
		path = append(path, s)
		j := i - 1
		for j >= 0 && c.Steps[j].To != s.From {
			j--
		}
		i = j
	}
	slices.Reverse(path)
	var b strings.Builder
	b.WriteString(g.EntityName(path[0].From))
	for _, s := range path {
		arrow := " -> "
		if s.Token.Inverse {
			arrow = " <- "
		}
		b.WriteString(arrow + g.RelationName(s.Token.Rel) + arrow + g.EntityName(s.To))
	}
	return b.String()
}
