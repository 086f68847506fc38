// Package graphraft is GraphRAFT's retrieval (Clemedtson and Shi,
// "GraphRAFT: Retrieval Augmented Fine-Tuning for Knowledge Graphs on
// Graph Databases", section 4) as a stem retrieval strategy, without a
// graph database and without fine-tuned LLMs:
//
//  1. Query templates (Enumerate, Query): every one-hop
//     (e)-[r]->(x) / (e)<-[r]-(x) and two-hop (e)-[r1]-(y)-[r2]-(x)
//     pattern around each question entity, both directions per hop, and
//     every length-two path (a)-[r1]-(x)-[r2]-(b) between two question
//     entities, each instance kept only when it matches in the KG, so
//     every query considered is grounded and executable. Config.Hops 3
//     adds three-hop chains, which the paper's templates lack and
//     three-hop questions need. GraphRAFT runs
//     these as Cypher on Neo4j; here Execute runs the same plan over the
//     kg.Reader interface, in memory or against the kg/sparql backend
//     alike. Query.SPARQL compiles an instance to the SELECT an endpoint
//     would run and Query.Cypher to the paper's pattern: a Cypher (Neo4j)
//     backend would plug in as a kg.Reader, or by executing Query.Cypher
//     in place of Execute, with nothing else changing.
//
//  2. Ground-truth synthesis (Synthesize, section 4.1): for a training
//     question with gold answers, every template instance is executed and
//     ranked by hits among the gold answers, then by result size; the
//     first is the question's ground-truth query. No LLM reads the
//     entities off the question: the dataset's topic entities are used.
//
//  3. Selection (section 4.2's grounded constrained decoding): the paper's
//     fine-tuned LLM generates a query under a logits mask that admits
//     only the grounded instances. Here the choice among the same
//     grounded instances is a score, never free-form text:
//
//     score(q) = cos(question, words(q)) + PlanWeight * plan(q)
//
//     where cos is the encoder's cosine of the question, its mentions
//     removed, and q's relation words in walk order, and plan(q) comes
//     from the planner's candidates in Request.Projection: the pattern
//     planner is learnt from training questions, so using its candidate
//     relation paths to choose among executable queries is the learnt
//     part of the selector. A candidate schema graph that is a chain
//     from a mention to a placeholder gives its relation key; plan(q) is the
//     largest weight(c) over candidates c whose key equals q's (1 for an
//     unranked projection such as the oracle's, 1/(rank+1) for a ranked
//     one), half that when q's steps are a proper prefix of c's, 0
//     otherwise. Between-entity queries get no plan term: the chain
//     candidates do not describe them. Selector.Train learns, from
//     Synthesize's pairs, which relation keys answer which question
//     words; Config.Selector adds its log-odds score when set.
//
//     With Config.Chat an LLM makes the choice instead: it is shown the
//     Choices best-scored queries as numbered Cypher text and replies
//     with a number (RenderChoice, ParseChoice). That is grounded
//     constrained choice, not free-form generation: whatever it replies,
//     no query outside the grounded set runs.
//
//  4. Execution: the Queries best queries are executed; the answers are
//     their results, each bound by the KG triples of its matched paths,
//     which are the evidence. The paper's second LLM, reasoning over the
//     retrieved subgraph (section 4.3), is not reproduced: the chosen
//     query's results are the answers, under Precision and Breadth alike.
//
// Every answer is the end of a matched path whose triples are returned;
// tracing.Audit counts the ones that are not (it must be 0).
package graphraft

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// Config holds the retrieval's parameters; a zero field takes
// DefaultConfig's value except PlanWeight, where 0 means no plan term.
type Config struct {
	// Queries is how many of the best queries are executed (1: the
	// paper's single best query).
	Queries int
	// Hops is the longest chain template, 1 to MaxHops (2: the paper's
	// one- and two-hop templates).
	Hops int
	// PlanWeight weighs the planner's candidates against the cosine (1).
	PlanWeight float32
	// MaxReach bounds the entities per first step whose relations are
	// enumerated (2000); MaxPaths the matches kept per query (5000);
	// MaxChains the chains returned (500).
	MaxReach, MaxPaths, MaxChains int
	// Selector, when set, adds a selector learnt from synthesized pairs.
	Selector *Selector

	// Chat, when set, is the LLM that chooses the executed queries among
	// the Choices best-scored grounded ones (RenderChoice), standing in for
	// the paper's fine-tuned generator L1 under its grounded mask. Nil
	// keeps the scored order.
	Chat llm.Chatter
	// Choices is how many grounded queries the LLM is shown (0 means
	// DefaultChoices).
	Choices int
	// MaxParseRetries is how many times an unusable choice is asked for
	// again (0 means DefaultMaxParseRetries, negative never); after that
	// the scored order stands and a problem says so.
	MaxParseRetries int
	// Temperature of the first choice request (0, greedy); retries use
	// RetryTemperature (0 means DefaultRetryTemperature), since a greedy
	// retry would repeat the reply.
	Temperature, RetryTemperature float64
	// Seed is sent with the first request and shifted by one per retry.
	Seed int64
	// MaxTokens bounds each reply; 0 leaves it to the server.
	MaxTokens int
}

// DefaultConfig returns the values above.
func DefaultConfig() Config {
	return Config{Queries: 1, Hops: 2, PlanWeight: 1, MaxReach: 2000, MaxPaths: 5000, MaxChains: 500,
		Choices: DefaultChoices, MaxParseRetries: DefaultMaxParseRetries, RetryTemperature: DefaultRetryTemperature}
}

func (c Config) withDefaults() (Config, error) {
	if c.Queries < 0 || c.Hops < 0 || c.PlanWeight < 0 || c.MaxReach < 0 || c.MaxPaths < 0 || c.MaxChains < 0 || c.Choices < 0 || c.Temperature < 0 || c.RetryTemperature < 0 || c.MaxTokens < 0 {
		return c, fmt.Errorf("graphraft: config %+v: negative value", c)
	}
	d := DefaultConfig()
	for _, f := range []struct {
		v   *int
		def int
	}{{&c.Queries, d.Queries}, {&c.Hops, d.Hops}, {&c.MaxReach, d.MaxReach}, {&c.MaxPaths, d.MaxPaths}, {&c.MaxChains, d.MaxChains},
		{&c.Choices, d.Choices}, {&c.MaxParseRetries, d.MaxParseRetries}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if c.RetryTemperature == 0 {
		c.RetryTemperature = d.RetryTemperature
	}
	if c.Hops > MaxHops {
		return c, fmt.Errorf("graphraft: %d hops: at most %d", c.Hops, MaxHops)
	}
	return c, nil
}

// Retriever is GraphRAFT's retrieval; it holds no mutable state and is
// safe for concurrent use.
type Retriever struct {
	enc models.Encoder
	cfg Config
}

// New builds the retriever from the pipeline's encoder and cfg.
func New(ctx context.Context, env plan.Env, cfg Config) (plan.Retriever, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if env.Encoder == nil {
		return nil, fmt.Errorf("graphraft: no encoder")
	}
	return &Retriever{enc: env.Encoder, cfg: c}, nil
}

// Scored is a grounded query with its selection score.
type Scored struct {
	Query               Query
	Score, Cosine, Plan float32
	Learnt              float32
}

// Retrieve implements plan.Retriever.
func (r *Retriever) Retrieve(ctx context.Context, req plan.Request) (*plan.Evidence, error) {
	start := time.Now()
	g := req.Graph
	if g == nil {
		return nil, fmt.Errorf("graphraft: question %q: no KG", req.Question)
	}
	res := &tracing.Result{}
	ev := &plan.Evidence{Trace: res, Timings: map[string]time.Duration{}}
	anchors := anchorsOf(g, req, res)
	qs, err := Enumerate(ctx, g, anchors, r.cfg.Hops, r.cfg.MaxReach)
	if err != nil {
		return nil, fmt.Errorf("graphraft: question %q: %w", req.Question, err)
	}
	if len(qs) == 0 && len(anchors) > 0 {
		res.Problems = append(res.Problems, "no query template matches around the question entities")
	}
	ranked, err := r.Rank(ctx, g, req, qs)
	if err != nil {
		return nil, fmt.Errorf("graphraft: question %q: %w", req.Question, err)
	}
	if r.cfg.Chat != nil {
		t := time.Now()
		var probs []string
		ranked, probs, err = r.choose(ctx, g, req.Question, ranked)
		res.Problems = append(res.Problems, probs...)
		if err != nil {
			return nil, fmt.Errorf("graphraft: question %q: %w", req.Question, err)
		}
		ev.Timings[StageChoose] = time.Since(t)
	}
	if err := r.execute(ctx, g, ranked[:min(len(ranked), r.cfg.Queries)], res); err != nil {
		return nil, fmt.Errorf("graphraft: question %q: %w", req.Question, err)
	}
	if len(res.Evidence) == 0 {
		res.Problems = append(res.Problems, "empty evidence: no query executed")
	}
	res.Unbacked = tracing.Audit(g, res)
	ev.Timings[plan.StageTrace] = time.Since(start)
	return ev, nil
}

// anchorsOf places the question entities: the request's anchors, or,
// with none, the entities whose normalised name equals a mention's.
func anchorsOf(g kg.Reader, req plan.Request, res *tracing.Result) []int32 {
	var out []int32
	add := func(e int32, mention string) {
		if e < 0 || int(e) >= g.NumEntities() || slices.Contains(out, e) {
			return
		}
		if mention == "" {
			mention = g.EntityName(e)
		}
		out = append(out, e)
		res.Anchors = append(res.Anchors, tracing.Anchor{Mention: mention, Entity: e, Name: g.EntityName(e), Score: 1})
		if g.Degree(e) == 0 {
			res.Problems = append(res.Problems, fmt.Sprintf("anchor %q (%s) has no neighbours", mention, g.EntityName(e)))
		}
	}
	for i, e := range req.Anchors {
		m := ""
		if len(req.Mentions) == len(req.Anchors) {
			m = req.Mentions[i]
		}
		add(e, m)
	}
	if len(req.Anchors) == 0 {
		mentions := req.Mentions
		if len(mentions) == 0 {
			mentions = req.Input.Mentions
		}
		for _, m := range mentions {
			for _, e := range g.EntitiesByNorm(m) {
				add(e, m)
			}
		}
	}
	if len(out) == 0 {
		res.Problems = append(res.Problems, "no question entity found in the KG: no query to build")
	}
	return out
}

// Rank scores qs for the request (the package doc's score) and returns
// them best first; ties keep enumeration order.
func (r *Retriever) Rank(ctx context.Context, g kg.Reader, req plan.Request, qs []Query) ([]Scored, error) {
	if len(qs) == 0 {
		return nil, nil
	}
	question := masked(req.Question, append(slices.Clone(req.Mentions), req.Input.Mentions...))
	texts := []string{question}
	idx := map[string]int{}
	for _, q := range qs {
		t := words(g, q)
		if _, ok := idx[t]; !ok {
			idx[t] = len(texts)
			texts = append(texts, t)
		}
	}
	vecs, err := models.EncodeAll(ctx, r.enc, texts)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	d := r.enc.Dim()
	plans := planKeys(req.Projection)
	var post map[string]float32
	if r.cfg.Selector != nil {
		post = r.cfg.Selector.Posterior(req.Question)
	}
	out := make([]Scored, len(qs))
	for i, q := range qs {
		j := idx[words(g, q)]
		var cos float32
		for k := range d {
			cos += vecs[k] * vecs[j*d+k]
		}
		s := Scored{Query: q, Cosine: cos, Plan: planScore(plans, g, q)}
		if post != nil {
			s.Learnt = post[q.Key(g)]
		}
		s.Score = s.Cosine + r.cfg.PlanWeight*s.Plan + s.Learnt
		out[i] = s
	}
	slices.SortStableFunc(out, func(a, b Scored) int { return cmp.Compare(b.Score, a.Score) })
	return out, nil
}

// masked removes the mentions from the question, so the cosine compares
// what is asked, not who it is asked about.
func masked(q string, mentions []string) string {
	for _, m := range mentions {
		if m != "" {
			q = strings.ReplaceAll(q, m, " ")
		}
	}
	return q
}

// words is q's relation words in walk order.
func words(g kg.Reader, q Query) string {
	ws := make([]string, len(q.Steps))
	for i, s := range q.Steps {
		ws[i] = kg.RelationTextOf(g, s.Rel)
	}
	return strings.Join(ws, " ")
}

// planKey is a candidate schema graph's relation key and weight.
type planKey struct {
	steps  []string // relation name + '>' or '<', as Query.Key
	weight float32
}

// planKeys reads the chain candidates of p: a schema graph whose triples,
// in order, walk from a mention to a placeholder.
func planKeys(p projection.Projection) []planKey {
	var out []planKey
	for i, c := range p.Candidates {
		ms := c.Graph.Mentions()
		if len(ms) == 0 || len(c.Graph.Triples) == 0 {
			continue
		}
		cur := ms[0]
		var steps []string
		for _, t := range c.Graph.Triples {
			switch cur {
			case t.Head:
				steps, cur = append(steps, t.Rel+">"), t.Tail
			case t.Tail:
				steps, cur = append(steps, t.Rel+"<"), t.Head
			default:
				steps = nil
			}
			if steps == nil {
				break
			}
		}
		if steps == nil || !schema.IsPlaceholder(cur) {
			continue
		}
		w := float32(1)
		if !p.Unranked {
			w = 1 / float32(i+1)
		}
		out = append(out, planKey{steps: steps, weight: w})
	}
	return out
}

// planScore is plan(q) of the package doc.
func planScore(plans []planKey, g kg.Reader, q Query) float32 {
	if q.Template == Between {
		return 0
	}
	steps := make([]string, len(q.Steps))
	for i, s := range q.Steps {
		steps[i] = g.RelationName(s.Rel) + map[bool]string{false: ">", true: "<"}[s.Inverse]
	}
	best := float32(0)
	for _, p := range plans {
		switch {
		case slices.Equal(p.steps, steps):
			best = max(best, p.weight)
		case len(steps) < len(p.steps) && slices.Equal(p.steps[:len(steps)], steps):
			best = max(best, p.weight/2)
		}
	}
	return best
}

// execute runs the chosen queries and fills res: Match.Graph and
// Answer.Graph index chosen (best first), Match.SchemaTriple the step,
// TScore and Cum the query's score.
func (r *Retriever) execute(ctx context.Context, g kg.Reader, chosen []Scored, res *tracing.Result) error {
	evidence := map[int32]bool{}
	answers := map[int32]bool{}
	for k, s := range chosen {
		paths, err := Execute(ctx, g, s.Query, r.cfg.MaxPaths)
		if err != nil {
			return err
		}
		if len(paths) == r.cfg.MaxPaths {
			res.Problems = append(res.Problems, fmt.Sprintf("query %s cut at %d matches: some answers are missing", s.Query.Key(g), r.cfg.MaxPaths))
		}
		for _, p := range paths {
			for i, id := range p.Triples {
				if !evidence[id] {
					evidence[id] = true
					res.Evidence = append(res.Evidence, tracing.Match{Graph: k, SchemaTriple: i, Triple: id, TScore: s.Score, Cum: s.Score})
				}
			}
			if !answers[p.Answer] {
				answers[p.Answer] = true
				res.Answers = append(res.Answers, tracing.Answer{Entity: p.Answer, Name: g.EntityName(p.Answer), Score: s.Score, Graph: k})
			}
			if len(res.Chains) < r.cfg.MaxChains {
				res.Chains = append(res.Chains, chain(g, s.Query, p))
			}
		}
	}
	slices.SortStableFunc(res.Answers, func(a, b tracing.Answer) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return nil
}

// chain verbalises a matched path in tracing's format: "A -> r -> B"
// along an edge, "A <- r <- B" against it.
func chain(g kg.Reader, q Query, p Path) string {
	var b strings.Builder
	b.WriteString(g.EntityName(q.Anchors[0]))
	cur := q.Anchors[0]
	for i, id := range p.Triples {
		s := q.Steps[i]
		arrow := " -> "
		if s.Inverse {
			arrow = " <- "
		}
		cur = far(g, id, s)
		b.WriteString(arrow + g.RelationName(s.Rel) + arrow + g.EntityName(cur))
	}
	return b.String()
}
