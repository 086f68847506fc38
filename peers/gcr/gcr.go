// Package gcr is GCR's retrieval (Luo et al., "Graph-constrained
// Reasoning", sections 4.2-4.4) as a stem retrieval strategy, with the
// paper's LLMs (Config.Scorer ScorerLLM, Config.Reason) or without any:
//
//  1. KG-Trie: the relation paths of up to Hops steps leaving the
//     question's anchors, as a prefix tree over direction-aware relation
//     tokens, each node holding the entities its path reaches (Build). It
//     is built per question and kept in an LRU keyed by anchor set and
//     hops.
//
//  2. Graph-constrained decoding: a beam of Beam relation paths, grown one
//     relation at a time, where a path may only continue as the trie
//     allows, so every decoded path exists in the KG. GCR scores a
//     continuation with a fine-tuned LLM's log-probability; here the score
//     of a (partial) path is
//
//     score = model(question, path) + PlanWeight * plan(path)
//
//     where model is Config.Scorer's: by default (EncoderScorer) the
//     cosine of the question, its mentions masked, and the path's
//     relation words in order; with an LLM (LLMScorer) GCR's own, the
//     sum of the path's token log-probabilities given GCR's decoding
//     prompt. plan(path) is the planner's
//     opinion from Request.Projection: for each candidate schema graph,
//     its relation path from a mention to the answer slot (as tokens, with
//     direction); plan(path) is the largest weight(c) * len(path)/len(c)
//     over candidates c whose tokens start with path, 0 when none does.
//     weight(c) is 1 for every candidate of an unranked projection (the
//     oracle's gold paths) and 1/(rank+1) for a ranked one. A path may end
//     at any node: the K best paths among all that entered the beam are
//     the decoded paths.
//
//  3. Hypothesis answers are the entities a decoded path reaches, each
//     grounded in the KG triples of the entity paths that reach it. An
//     entity path never steps straight back over the triple it arrived
//     by (tracing's one forbidden walk), so a question entity is an
//     answer only when another triple leads back to it: "the father of
//     mumtaz_mahal's son" is mumtaz_mahal, by the son's parents triple.
//     GCR's graph inductive reasoning asks a general LLM to weigh the K
//     paths (Config.Reason, ReasonPrompt); without one it is a vote: path k weighs
//     exp((score_k - score_1)/Temperature), an answer's score is the
//     share of the weight of the paths reaching it, Precision keeps the
//     answers within Margin of the best vote and Breadth those whose vote
//     is at least BreadthFloor of the best: the no-LLM stand-in for the
//     general LLM's choice among the K hypotheses, which drops the ends
//     of paths far weaker than the best.
//
// GCR decodes entity-level paths (an LLM writes the entities too), so its
// K paths are K answers; decoding relation paths, each decoded path here
// brings every entity it reaches, which is what a multi-answer question
// (MetaQA's "films by the same director") needs.
//
// Bounds: a trie node keeps at most MaxReach entities and a trie at most
// MaxNodes nodes; grounding keeps the same frontier per step, and an
// answer cut from the frontier is not returned, so every answer stays
// backed by returned triples (tracing.Audit counts those that are not; it
// must be 0).
package gcr

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// Config holds GCR's parameters. A zero Hops, Beam, Temperature or bound
// takes DefaultConfig's value; PlanWeight, Margin and BreadthFloor are
// taken as given, since 0 means something (no plan term; only exact ties
// under Precision; every hypothesis under Breadth). A negative field is
// an error.
type Config struct {
	// Hops is L, the longest relation path in the KG-Trie (paper: 2).
	Hops int
	// Beam is K, the number of decoded paths (paper: 10).
	Beam int
	// PlanWeight weighs the planner's candidate paths against the
	// question-path cosine (1).
	PlanWeight float32
	// Temperature turns path scores into vote weights (0.1; 1 under
	// ScorerLLM): a path Temperature below the best weighs 1/e of it.
	Temperature float32
	// Margin is how far below the best vote, as a fraction of it, an
	// answer still counts as a tie under Precision (0.2), so a path's
	// whole answer set survives the small extra votes weaker paths give
	// some of its members.
	Margin float32
	// BreadthFloor is the least vote, as a fraction of the best, an answer
	// needs under Breadth (0.5). The vote is peaked (Temperature 0.1), so
	// any floor from 0.02 to 0.95 keeps a path's whole answer set and drops
	// the ends of far weaker paths: on MetaQA 2-hop dev (13,099 answerable
	// questions) F1 is 97.39 at 0.02, 97.51 at 0.5 (the best), 97.47 at
	// 0.95, against 56.84 at 0 and 84.13 at 1; PQ-2H train scores F1 100
	// throughout 0.02-0.95. 0 keeps every hypothesis answer.
	BreadthFloor float32
	// MaxReach caps the entities per trie node and per grounding step
	// (2000); MaxNodes the nodes per trie (20000).
	MaxReach int
	MaxNodes int
	// CacheSize is the number of tries kept (1024); tries of per-question
	// graphs are not cached.
	CacheSize int
	// MaxChains caps the reasoning chains returned (500).
	MaxChains int

	// Scorer chooses the path scorer: ScorerEncoder ("", the default) or
	// ScorerLLM, which asks LLM. With ScorerLLM a zero Temperature is 1,
	// so a path's vote weight is its probability relative to the best
	// path's, as log-probability sums are on that scale.
	Scorer string
	// LLM is the language model of ScorerLLM; *llm.Client implements it.
	LLM llm.PromptScorer
	// Reason, when not nil, is the general LLM of the paper's graph
	// inductive reasoning: it reads the K paths and their hypothesis
	// answers and names the final answers, of which those that are
	// hypotheses are kept (the vote decides when it names none).
	Reason llm.Chatter
}

// DefaultConfig returns the paper's L = 2 and K = 10, the bounds above and the
// encoder scorer.
func DefaultConfig() Config {
	return Config{Hops: 2, Beam: 10, PlanWeight: 1, Temperature: 0.1, Margin: 0.2, BreadthFloor: 0.5,
		MaxReach: 2000, MaxNodes: 20000, CacheSize: 1024, MaxChains: 500, Scorer: ScorerEncoder}
}

// withDefaults fills zero fields and rejects negative ones.
func (c Config) withDefaults() (Config, error) {
	if c.Hops < 0 || c.Beam < 0 || c.PlanWeight < 0 || c.Temperature < 0 || c.Margin < 0 || c.Margin >= 1 ||
		c.BreadthFloor < 0 || c.BreadthFloor > 1 ||
		c.MaxReach < 0 || c.MaxNodes < 0 || c.CacheSize < 0 || c.MaxChains < 0 {
		return c, fmt.Errorf("gcr: config %+v: negative value (or margin >= 1, or breadth floor > 1)", c)
	}
	switch c.Scorer {
	case "", ScorerEncoder:
		c.Scorer = ScorerEncoder
	case ScorerLLM:
		if c.LLM == nil {
			return c, fmt.Errorf("gcr: scorer %q without Config.LLM", c.Scorer)
		}
		if c.Temperature == 0 {
			c.Temperature = 1
		}
	default:
		return c, fmt.Errorf("gcr: scorer %q: want %q or %q", c.Scorer, ScorerEncoder, ScorerLLM)
	}
	d := DefaultConfig()
	set := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	set(&c.Hops, d.Hops)
	set(&c.Beam, d.Beam)
	set(&c.MaxReach, d.MaxReach)
	set(&c.MaxNodes, d.MaxNodes)
	set(&c.CacheSize, d.CacheSize)
	set(&c.MaxChains, d.MaxChains)
	if c.Temperature == 0 {
		c.Temperature = d.Temperature
	}
	return c, nil
}

// StageTrie is the Evidence.Timings key of the trie build (0 on a cache
// hit); plan.StageTrace holds the whole retrieval.
const StageTrie = "trie"

// Retriever is GCR's retrieval. It is safe for concurrent use: its only
// mutable state is the trie cache, behind a lock, and the counters.
type Retriever struct {
	scorer PathScorer
	// graph is the shared KG: only its tries are cached, since anchor ids
	// name different entities in another graph.
	graph kg.Reader
	cfg   Config
	cache *trieCache
	stats stats
}

type stats struct {
	questions, builds, hits, nodes atomic.Int64
	buildNanos                     atomic.Int64
}

// Stats are running totals over the questions a Retriever has answered.
type Stats struct {
	Questions int
	// Builds counts tries built, Hits tries found in the cache.
	Builds, Hits int
	// Nodes sums the nodes of the tries used, one per question.
	Nodes int
	// BuildTime sums the build times.
	BuildTime time.Duration
}

// Stats returns the totals so far.
func (r *Retriever) Stats() Stats {
	return Stats{Questions: int(r.stats.questions.Load()), Builds: int(r.stats.builds.Load()), Hits: int(r.stats.hits.Load()),
		Nodes: int(r.stats.nodes.Load()), BuildTime: time.Duration(r.stats.buildNanos.Load())}
}

// New builds GCR's retriever from the pipeline's environment and cfg; it
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
	var sc PathScorer = LLMScorer{LLM: c.LLM}
	if c.Scorer == ScorerEncoder {
		if env.Encoder == nil {
			return nil, fmt.Errorf("gcr: no encoder")
		}
		sc = EncoderScorer{Encoder: env.Encoder}
	}
	return &Retriever{scorer: sc, graph: env.Graph, cfg: c, cache: newTrieCache(c.CacheSize)}, nil
}

// Retrieve implements plan.Retriever.
func (r *Retriever) Retrieve(ctx context.Context, req plan.Request) (*plan.Evidence, error) {
	start := time.Now()
	g := req.Graph
	if g == nil {
		return nil, fmt.Errorf("gcr: question %q: no KG", req.Question)
	}
	r.stats.questions.Add(1)
	ev := &plan.Evidence{Timings: map[string]time.Duration{}}
	res := &tracing.Result{}
	ev.Trace = res
	anchors := Anchors(g, req, res)
	trie, err := r.trie(ctx, g, !req.Own && r.shared(g), anchors, ev)
	if err != nil {
		return nil, err
	}
	if trie.Capped {
		res.Problems = append(res.Problems, fmt.Sprintf("KG-Trie cut at %d nodes: some paths are missing", r.cfg.MaxNodes))
	}
	paths, err := r.decode(ctx, g, trie, req, res.Anchors)
	if err != nil {
		return nil, fmt.Errorf("gcr: question %q: %w", req.Question, err)
	}
	r.ground(ctx, g, trie, paths, req.Strategy, res)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gcr: question %q: %w", req.Question, err)
	}
	if r.cfg.Reason != nil && len(res.Answers) > 0 {
		if err := r.reason(ctx, req.Question, req.Strategy, res); err != nil {
			return nil, fmt.Errorf("gcr: question %q: %w", req.Question, err)
		}
	} else {
		r.vote(req.Strategy, res)
	}
	if len(res.Evidence) == 0 {
		res.Problems = append(res.Problems, "empty evidence: no decoded path reaches an entity")
	}
	res.Unbacked = tracing.Audit(g, res)
	ev.Timings[plan.StageTrace] = time.Since(start)
	return ev, nil
}

// Anchors places the question entities of req in g: the request's
// anchors, or, with none, the entities whose normalised name equals a
// mention's (GCR links entities before it builds tries; similarity
// anchoring is tracing's and is not repeated here). It fills res.Anchors and notes anchors without
// edges.
func Anchors(g kg.Reader, req plan.Request, res *tracing.Result) []int32 {
	n := int32(g.NumEntities())
	add := func(e int32, mention string) {
		if e < 0 || e >= n || slices.ContainsFunc(res.Anchors, func(a tracing.Anchor) bool { return a.Entity == e }) {
			return
		}
		name := g.EntityName(e)
		if mention == "" {
			mention = name
		}
		res.Anchors = append(res.Anchors, tracing.Anchor{Mention: mention, Entity: e, Name: name, Score: 1})
	}
	for i, e := range req.Anchors {
		m := ""
		if len(req.Mentions) == len(req.Anchors) {
			m = req.Mentions[i]
		}
		add(e, m)
	}
	if len(req.Anchors) == 0 {
		for _, m := range req.Mentions {
			for _, e := range g.EntitiesByNorm(m) {
				add(e, m)
			}
		}
	}
	if len(res.Anchors) == 0 {
		res.Problems = append(res.Problems, "no question entity found in the KG: nothing to build a KG-Trie from")
	}
	out := make([]int32, 0, len(res.Anchors))
	for _, a := range res.Anchors {
		if g.Degree(a.Entity) == 0 {
			res.Problems = append(res.Problems, fmt.Sprintf("anchor %q (%s) has no neighbours", a.Mention, a.Name))
		}
		out = append(out, a.Entity)
	}
	return out
}

// shared reports whether g is the pipeline's shared KG. Readers are
// compared only when their dynamic type allows it, so an odd backend is
// never cached rather than a panic.
func (r *Retriever) shared(g kg.Reader) bool {
	if r.graph == nil || g == nil {
		return false
	}
	tg, tr := reflect.TypeOf(g), reflect.TypeOf(r.graph)
	return tg == tr && tg.Comparable() && g == r.graph
}

// trie returns the KG-Trie of anchors, through the cache when cached is
// set (the question is on the shared KG).
func (r *Retriever) trie(ctx context.Context, g kg.Reader, cached bool, anchors []int32, ev *plan.Evidence) (*Trie, error) {
	key := cacheKey(distinctAnchors(g, anchors), r.cfg.Hops)
	if cached {
		if t, ok := r.cache.get(key); ok {
			r.stats.hits.Add(1)
			r.stats.nodes.Add(int64(len(t.Nodes)))
			ev.Timings[StageTrie] = 0
			return t, nil
		}
	}
	t, err := Build(ctx, g, anchors, r.cfg.Hops, Limits{MaxReach: r.cfg.MaxReach, MaxNodes: r.cfg.MaxNodes})
	if err != nil {
		return nil, err
	}
	r.stats.builds.Add(1)
	r.stats.nodes.Add(int64(len(t.Nodes)))
	r.stats.buildNanos.Add(int64(t.Took))
	ev.Timings[StageTrie] = t.Took
	if cached {
		r.cache.put(key, t)
	}
	return t, nil
}

// Path is one decoded relation path: a trie node and its score.
type Path struct {
	Node  int32
	Score float32
	// Model is the path scorer's score, Plan the planner term before
	// PlanWeight.
	Model, Plan float32
}

// PlanPath is a candidate schema graph's relation path from a mention
// to the answer slot, with the planner's confidence in it. DoG's
// retrieval scores its chains by the same plan term.
type PlanPath struct {
	// Tokens are the path's steps, in order from the mention.
	Tokens []Token
	// Weight is 1 for every candidate of an unranked projection and
	// 1/(rank+1) for a ranked one.
	Weight float32
}

// PlanPaths reads the relation path of every candidate schema graph of p
// that g knows all the relations of.
func PlanPaths(g kg.Reader, p projection.Projection) []PlanPath {
	var out []PlanPath
	for i, c := range p.Candidates {
		steps := schemaSteps(c.Graph)
		if len(steps) == 0 {
			continue
		}
		toks := make([]Token, 0, len(steps))
		for _, s := range steps {
			rel, ok := g.Relation(s.Rel)
			if !ok {
				break
			}
			toks = append(toks, Token{Rel: rel, Inverse: s.Dir == schema.Inverse})
		}
		if len(toks) != len(steps) {
			continue
		}
		w := float32(1)
		if !p.Unranked {
			w = 1 / float32(i+1)
		}
		out = append(out, PlanPath{Tokens: toks, Weight: w})
	}
	return out
}

// schemaSteps returns the shortest relation path of g from an entity
// mention to its answer slot, each step Forward when walked from head to
// tail, Inverse otherwise; nil when there is none. Constraint edges off
// that path are not relation steps of the answer and are left out.
func schemaSteps(g schema.Graph) []schema.Step {
	ans := g.AnswerSlot()
	if ans == "" {
		return nil
	}
	type visit struct {
		node  string
		steps []schema.Step
	}
	var queue []visit
	seen := map[string]bool{}
	for _, m := range g.Mentions() {
		queue = append(queue, visit{node: m})
		seen[m] = true
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if schema.CanonicalPlaceholder(v.node) == ans && schema.IsPlaceholder(v.node) {
			return v.steps
		}
		for _, t := range g.Triples {
			next, dir := "", schema.Forward
			switch v.node {
			case t.Head:
				next = t.Tail
			case t.Tail:
				next, dir = t.Head, schema.Inverse
			default:
				continue
			}
			if seen[next] {
				continue
			}
			seen[next] = true
			queue = append(queue, visit{node: next, steps: append(slices.Clip(v.steps), schema.Step{Rel: t.Rel, Dir: dir})})
		}
	}
	return nil
}

// PlanScore is plan(path) of the package doc: the largest Weight *
// len(path)/len(Tokens) over the plans whose Tokens start with path, 0
// when none does.
func PlanScore(plans []PlanPath, path []Token) float32 {
	best := float32(0)
	for _, p := range plans {
		if len(path) > len(p.Tokens) || !slices.Equal(p.Tokens[:len(path)], path) {
			continue
		}
		best = max(best, p.Weight*float32(len(path))/float32(len(p.Tokens)))
	}
	return best
}

// decode runs the graph-constrained beam search over trie and returns
// the Beam best paths, best first.
func (r *Retriever) decode(ctx context.Context, g kg.Reader, trie *Trie, req plan.Request, anchors []tracing.Anchor) ([]Path, error) {
	if len(trie.Nodes[0].Children) == 0 {
		return nil, nil
	}
	q := Query{Question: req.Question, Mentions: req.Mentions, Graph: g, Trie: trie}
	if len(q.Mentions) == 0 {
		q.Mentions = req.Input.Mentions
	}
	for _, a := range anchors {
		q.Anchors = append(q.Anchors, a.Name)
	}
	score, err := r.scorer.Begin(ctx, q)
	if err != nil {
		return nil, err
	}
	plans := PlanPaths(g, req.Projection)
	beam := []int32{0}
	var pool []Path
	for depth := 0; depth < trie.Hops && len(beam) > 0; depth++ {
		var cands []int32
		for _, n := range beam {
			cands = append(cands, trie.Nodes[n].Children...)
		}
		if len(cands) == 0 {
			break
		}
		prefix, whole, err := score(ctx, cands)
		if err != nil {
			return nil, err
		}
		// The beam keeps the best prefixes, the pool every path as it
		// would end; the K decoded paths come from the pool.
		grow := make([]Path, len(cands))
		for i, n := range cands {
			pl := PlanScore(plans, trie.Path(n))
			grow[i] = Path{Node: n, Score: prefix[i] + r.cfg.PlanWeight*pl}
			pool = append(pool, Path{Node: n, Model: whole[i], Plan: pl, Score: whole[i] + r.cfg.PlanWeight*pl})
		}
		sortPaths(grow)
		beam = beam[:0]
		for _, p := range grow[:min(len(grow), r.cfg.Beam)] {
			beam = append(beam, p.Node)
		}
	}
	sortPaths(pool)
	return pool[:min(len(pool), r.cfg.Beam)], nil
}

// sortPaths orders paths best first, then by node index (the trie's fixed
// order) so that decoding is deterministic.
func sortPaths(ps []Path) {
	slices.SortFunc(ps, func(a, b Path) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return int(a.Node - b.Node)
	})
}

// voteWeight is path k's weight in the vote, relative to the best path.
func (r *Retriever) voteWeight(score, best float32) float64 {
	return math.Exp(float64(score-best) / float64(r.cfg.Temperature))
}
