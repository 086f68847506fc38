// Package graphraft is GraphRAFT's retrieval (Clemedtson and Shi,
// "GraphRAFT: Retrieval Augmented Fine-Tuning for Knowledge Graphs on
// Graph Databases", section 4) as a stem retrieval strategy, standing on
// its own by default, without a graph database and without fine-tuned
// LLMs:
//
//  1. Query templates (Enumerate, Query; appendix A.2): every one-hop
//     (e)-[r]-(x) and two-hop (e)-[r1]-(y)-[r2]-(x) pattern around each
//     question entity, both directions per hop, and every length-two path
//     (a)-[r1]-(x)-[r2]-(b) between two question entities, each instance
//     kept only when it matches in the KG, so every query considered is
//     grounded and executable (section 4.2's guarantee). Config.Hops 3
//     adds three-hop chains, which the paper's templates lack and
//     three-hop questions need. GraphRAFT runs these as Cypher on Neo4j;
//     here Execute runs the same plan over the kg.Reader interface, in
//     memory or against the kg/sparql backend alike. Query.SPARQL
//     compiles an instance to the SELECT an endpoint would run and
//     Query.Cypher to the paper's pattern.
//
//  2. Ground-truth synthesis (Synthesize, section 4.1): for a training
//     question with gold answers, every template instance is executed and
//     ranked by hits among the gold answers, then by result size.
//
//  3. Query generation (section 4.3): the paper's fine-tuned L1 decodes,
//     under the grounded mask, a beam of m queries, the most probable
//     first. Here the m best of the same grounded instances by the
//     neutral stand-in every peer shares (signals.Similarity: the
//     question's cosine with the query's relation words in walk order),
//     plus PlanWeight times the planner's opinion of its relation path in
//     the planner-assisted mode (between-entity queries get none); or,
//     with Config.Chat, the LLM chooses the m among the Choices best,
//     shown as numbered Cypher (RenderChoice): a grounded choice, never
//     free-form text.
//
//  4. Retrieval (section 4.3, the released code's Retriever): the m
//     queries are executed in order, each one's result nodes ordered by
//     the cosine of their name and the question (the released code's
//     ORDER BY over name embeddings), until the subgraph holds Nodes
//     nodes (the paper's 20, sections 5.1-5.2). The paper's second LLM
//     L2 then picks the answers among those nodes; without it (the
//     paper's "GraphRAFT w/o L2", table 1) the nodes, in that order, are
//     the answers, each bound by the KG triples of its matched paths.
//
// Every answer is the end of a matched path whose triples are returned;
// tracing.Audit counts the ones that are not (it must be 0). At
// PlanWeight 0, the default, Retrieve reads neither the projection nor
// the strategy.
//
// What the paper does, what stands in here, and why (the default mode):
//
//   - Templates and grounding: as the paper (appendix A.2), executed over
//     the kg.Reader instead of Neo4j.
//   - Query generation. Paper: L1 (gemma2-9b-text2cypher) fine-tuned on
//     queries synthesised from the training questions (section 4.1).
//     Here, untrained ("graphraft (stand-in)"): the encoder's cosine of
//     the question and the query's relation words. Trained ("graphraft
//     (stand-in, trained)", --graphraft-model): a selector learnt from
//     the training questions' gold relation paths (the pairs `stem train
//     peer` writes from the same files as STEM's planner; Synthesize is
//     §4.1's synthesis, used by the tests) adds its posterior to the
//     cosine; no LLM can be fine-tuned here.
//   - Answers. Paper: L2 picks the answers among the retrieved nodes.
//     Here: the nodes themselves, up to 20, the paper's "w/o L2" setting,
//     so hit and f1 read a long list: compare hits@1, mrr and hit@5.
//   - The paper reports STaRK only (table 1), which stem does not run: no
//     figure of its own is printed beside ours.
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
	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/tracing"
)

// Name is the strategy's name in the registry.
const Name = "graphraft"

// Doc describes the strategy in --help and errors.
const Doc = "GraphRAFT: every grounded 1-hop, 2-hop and between-entity query template instance around the question entities, the m=5 best by the encoder stand-in (--graphraft-llm: chosen by the LLM among the 20 best, shown as numbered Cypher) executed in order until 20 result nodes, ranked by name similarity to the question"

// Settings are GraphRAFT's flags.
type Settings struct {
	// Queries is m, the queries of L1's beam executed. The paper sets no
	// value; its released code's default beam width is 5.
	Queries int `flag:"graphraft-queries" min:"1" max:"100" category:"peers" usage:"graphraft: queries executed in order, the beam width m (5, the released code's default; the paper sets none)"`
	// Nodes is the size threshold of the retrieved subgraph: 20, the
	// paper's "up to 20 nodes" (sections 5.1-5.2, its R@20).
	Nodes int `flag:"graphraft-nodes" min:"1" max:"1000" category:"peers" usage:"graphraft: result nodes retrieved before the queries stop, the size threshold (20, the paper's sections 5.1-5.2)"`
	// Hops is the longest chain template.
	Hops int `flag:"graphraft-hops" min:"1" max:"3" category:"peers" usage:"graphraft: the longest chain template, in hops (2, the paper's appendix A.2; 3 adds three-hop chains)"`
	// Choices is how many grounded queries the LLM chooses among.
	Choices int `flag:"graphraft-choices" min:"1" max:"200" category:"peers" usage:"graphraft: best grounded queries the LLM chooses among with --graphraft-llm (20)"`
	// LLM has the LLM choose the queries.
	LLM bool `flag:"graphraft-llm" category:"peers" usage:"graphraft: the LLM chooses the executed queries among the grounded ones, shown as numbered Cypher queries (needs --llm-model); never a free-form query"`
	// Model is the training pairs of the trained stand-in (the selector
	// learnt in place of the paper's fine-tuned L1); "" runs untrained.
	Model string `flag:"graphraft-model" placeholder:"FILE" category:"peers" usage:"graphraft: training pairs from 'stem train peer' (the training questions' relation paths): a query selector learnt from them adds its posterior to each query's score, the trained stand-in for the paper's fine-tuned L1 (row 'graphraft (stand-in, trained)')"`
}

// DefaultSettings returns m = 5, 20 nodes, two hops, 20 choices, no LLM.
func DefaultSettings() Settings {
	return Settings{Queries: 5, Nodes: 20, Hops: 2, Choices: DefaultChoices}
}

// Check implements plan.SettingsChecker.
func (s Settings) Check(llm bool) error {
	return signals.LLMFlag{Name: "--graphraft-llm", On: s.LLM}.Check(llm)
}

// Open builds GraphRAFT from the pipeline's environment and its settings,
// as the registry does.
func Open(ctx context.Context, env plan.Env, s Settings) (plan.Retriever, error) {
	cfg := DefaultConfig()
	cfg.Queries, cfg.Nodes, cfg.Hops, cfg.Choices, cfg.PlanWeight = s.Queries, s.Nodes, s.Hops, s.Choices, env.PlanWeight
	if s.LLM {
		c, err := signals.OpenChat(env, "--graphraft-llm")
		if err != nil {
			return nil, err
		}
		cfg.Chat = c
	}
	if s.Model != "" {
		sel, err := signals.Learn(ctx, s.Model)
		if err != nil {
			return nil, fmt.Errorf("--graphraft-model: %w", err)
		}
		cfg.Selector = sel
	}
	r, err := New(ctx, env, cfg)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Config holds the retrieval's parameters; a zero field takes
// DefaultConfig's value except PlanWeight, where 0 means no planner help.
type Config struct {
	// Queries is m, Nodes the size threshold, Hops the longest chain
	// template (Settings).
	Queries, Nodes, Hops int
	// PlanWeight weighs the planner's relation paths (the planner-assisted
	// mode); 0 runs GraphRAFT standing alone.
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
	return Config{Queries: 5, Nodes: 20, Hops: 2, MaxReach: 2000, MaxPaths: 5000, MaxChains: 500,
		Choices: DefaultChoices, MaxParseRetries: DefaultMaxParseRetries, RetryTemperature: DefaultRetryTemperature}
}

func (c Config) withDefaults() (Config, error) {
	if c.Queries < 0 || c.Nodes < 0 || c.Hops < 0 || c.PlanWeight < 0 || c.MaxReach < 0 || c.MaxPaths < 0 || c.MaxChains < 0 || c.Choices < 0 || c.Temperature < 0 || c.RetryTemperature < 0 || c.MaxTokens < 0 {
		return c, fmt.Errorf("graphraft: config %+v: negative value", c)
	}
	d := DefaultConfig()
	for _, f := range []struct {
		v   *int
		def int
	}{{&c.Queries, d.Queries}, {&c.Nodes, d.Nodes}, {&c.Hops, d.Hops}, {&c.MaxReach, d.MaxReach}, {&c.MaxPaths, d.MaxPaths}, {&c.MaxChains, d.MaxChains},
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
func New(ctx context.Context, env plan.Env, cfg Config) (*Retriever, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if env.Encoder == nil {
		return nil, fmt.Errorf("graphraft: no encoder")
	}
	return &Retriever{enc: env.Encoder, cfg: c}, nil
}

// UsesPlan implements plan.PlanUser: GraphRAFT reads the planner's paths
// only in the planner-assisted mode.
func (r *Retriever) UsesPlan() bool { return r.cfg.PlanWeight > 0 }

// Reach implements plan.Reacher: the templates reach Hops hops.
func (r *Retriever) Reach() int { return r.cfg.Hops }

// Mode implements plan.Moder.
func (r *Retriever) Mode() string {
	return signals.Mode(r.cfg.PlanWeight, r.cfg.Chat != nil) + signals.TrainedMode(r.cfg.Selector != nil)
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
	anchors := signals.Anchors(g, req, res)
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
	if err := r.retrieve(ctx, g, req.Question, ranked[:min(len(ranked), r.cfg.Queries)], res); err != nil {
		return nil, fmt.Errorf("graphraft: question %q: %w", req.Question, err)
	}
	if len(res.Evidence) == 0 {
		res.Problems = append(res.Problems, "empty evidence: no query executed")
	}
	res.Unbacked = tracing.Audit(g, res)
	ev.Timings[plan.StageTrace] = time.Since(start)
	return ev, nil
}

// Rank scores qs for the request (the package doc's query generation)
// and returns them best first; ties keep enumeration order.
func (r *Retriever) Rank(ctx context.Context, g kg.Reader, req plan.Request, qs []Query) ([]Scored, error) {
	if len(qs) == 0 {
		return nil, nil
	}
	sim, err := signals.NewSimilarity(ctx, r.enc, req.Question, signals.Mentions(req))
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = signals.Words(g, q.Steps)
	}
	cos, err := sim.Scores(ctx, texts)
	if err != nil {
		return nil, err
	}
	var plans []signals.PlanPath
	if r.cfg.PlanWeight > 0 {
		plans = signals.PlanPaths(g, req.Projection)
	}
	var post map[string]float32
	if r.cfg.Selector != nil {
		post = r.cfg.Selector.Posterior(req.Question)
	}
	out := make([]Scored, len(qs))
	for i, q := range qs {
		s := Scored{Query: q, Cosine: cos[i]}
		if r.cfg.PlanWeight > 0 && q.Template != Between {
			s.Plan = signals.PlanScore(plans, q.Steps)
		}
		if post != nil {
			s.Learnt = post[q.Key(g)]
		}
		s.Score = s.Cosine + r.cfg.PlanWeight*s.Plan + s.Learnt
		out[i] = s
	}
	slices.SortStableFunc(out, func(a, b Scored) int { return cmp.Compare(b.Score, a.Score) })
	return out, nil
}

// retrieve executes the chosen queries in order and fills res with the
// first Nodes result nodes (the package doc's retrieval): within a query,
// nodes by the cosine of their name and the question, then by id; each
// node's matched paths of that query are its evidence (Match.Graph the
// query's rank, SchemaTriple the step, TScore and Cum the query's score)
// and chains. Answer.Score is the node's name cosine.
func (r *Retriever) retrieve(ctx context.Context, g kg.Reader, question string, chosen []Scored, res *tracing.Result) error {
	evidence := map[int32]bool{}
	kept := map[int32]bool{}
	var qv []float32
	for k, s := range chosen {
		if len(kept) >= r.cfg.Nodes {
			break
		}
		paths, err := Execute(ctx, g, s.Query, r.cfg.MaxPaths)
		if err != nil {
			return err
		}
		if len(paths) == r.cfg.MaxPaths {
			res.Problems = append(res.Problems, fmt.Sprintf("query %s cut at %d matches: some answers are missing", s.Query.Key(g), r.cfg.MaxPaths))
		}
		byNode := map[int32][]Path{}
		var nodes []int32
		for _, p := range paths {
			if _, ok := byNode[p.Answer]; !ok {
				nodes = append(nodes, p.Answer)
			}
			byNode[p.Answer] = append(byNode[p.Answer], p)
		}
		if qv == nil && len(nodes) > 0 {
			if qv, err = r.encode(ctx, question); err != nil {
				return err
			}
		}
		sims, err := r.nameSimilarity(ctx, g, qv, nodes)
		if err != nil {
			return err
		}
		order := make([]int, len(nodes))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			if c := cmp.Compare(sims[b], sims[a]); c != 0 {
				return c
			}
			return cmp.Compare(nodes[a], nodes[b])
		})
		for _, i := range order {
			n := nodes[i]
			if kept[n] {
				continue
			}
			if len(kept) >= r.cfg.Nodes {
				break
			}
			kept[n] = true
			res.Answers = append(res.Answers, tracing.Answer{Entity: n, Name: g.EntityName(n), Score: sims[i], Graph: k})
			for _, p := range byNode[n] {
				for j, id := range p.Triples {
					if !evidence[id] {
						evidence[id] = true
						res.Evidence = append(res.Evidence, tracing.Match{Graph: k, SchemaTriple: j, Triple: id, TScore: s.Score, Cum: s.Score})
					}
				}
				if len(res.Chains) < r.cfg.MaxChains {
					res.Chains = append(res.Chains, chain(g, s.Query, p))
				}
			}
		}
	}
	return nil
}

// encode returns text's vector.
func (r *Retriever) encode(ctx context.Context, text string) ([]float32, error) {
	v := make([]float32, r.enc.Dim())
	if err := r.enc.Encode(ctx, []string{text}, v); err != nil {
		return nil, fmt.Errorf("encode the question: %w", err)
	}
	return v, nil
}

// nameSimilarity returns the cosine of each node's name and the question
// vector qv.
func (r *Retriever) nameSimilarity(ctx context.Context, g kg.Reader, qv []float32, nodes []int32) ([]float32, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	texts := make([]string, len(nodes))
	for i, n := range nodes {
		texts[i] = kg.EntityTextOf(g, n)
	}
	vecs, err := models.EncodeAll(ctx, r.enc, texts)
	if err != nil {
		return nil, fmt.Errorf("encode %d result names: %w", len(nodes), err)
	}
	d := r.enc.Dim()
	out := make([]float32, len(nodes))
	for i := range nodes {
		out[i] = models.Cosine(qv, vecs[i*d:(i+1)*d])
	}
	return out, nil
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
		cur = signals.Far(g, id, s)
		b.WriteString(arrow + g.RelationName(s.Rel) + arrow + g.EntityName(cur))
	}
	return b.String()
}
