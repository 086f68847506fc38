// Package simgrag is SimGRAG's retrieval (Cai et al., "SimGRAG: Leveraging
// Similar Subgraphs for Knowledge Graphs Driven Retrieval-Augmented
// Generation", sections 4-5) as a stem retrieval strategy, standing on
// its own by default, with the paper's LLM as an option: the evidence is
// the top-k KG subgraphs isomorphic to the question's pattern graph with
// the smallest Graph Semantic Distance.
//
//   - Pattern (section 4.1): with Config.Chat, the LLM's pattern graph for
//     the question (the query-to-pattern prompt, prompts/pattern.txt: the
//     paper's table 16 with ten MetaQA examples of stem's own, in the
//     table's format and as many as the released code has; see
//     ParsePattern). Without an LLM, the neutral stand-in every peer
//     shares (signals.Similarity) chooses it: among the relation paths of
//     up to Hops steps from each question entity (signals.Build), the one
//     whose relation words are most similar to the question, written as a
//     chain from the entity's mention through UNKNOWN nodes to the answer.
//     In the planner-assisted mode (PlanWeight above 0) the planner's
//     candidate schema graphs are the patterns instead, tried in order: a
//     ranked projection's first that yields any subgraph, an unranked
//     one's (the oracle's gold paths) all, competing in one top-k.
//     Mentions are known nodes, [ENTn] placeholders unknown ones (section
//     4.3).
//   - Candidates (section 5, appendix D): every known node's top-k(n) KG
//     entities by cosine of its text and theirs (the kgvec index of the
//     shared KG, or one built for a question's own graph), the linked
//     entity among them as any other, since SimGRAG takes no oracle
//     entities; each edge's top-k(r) KG relations by cosine.
//   - Distance (eq. 2-3): the L2 distance of the unit embeddings of each
//     known node and relation and its match, summed; unknown nodes and
//     relations add 0.
//   - Isomorphism: nodes map injectively and edges to distinct KG triples;
//     direction is ignored, as the paper does (section 4.2, "we do not
//     consider the edge direction"), unless Config.Directed. Among
//     subgraphs of equal GSD the one with fewer edges walked against the
//     schema's direction ranks first, then entity and triple ids, so ties
//     break deterministically.
//   - Search: Algorithm 1 with the lower bound of eq. 11 and the greedy
//     order of section 5.2; it returns exactly what the unpruned search
//     returns (see the property test), and Stats says how much it saved.
//   - Answers (section 4.4): the LLM reads all k subgraphs (the answer
//     prompt, prompts/answer.txt: table 18 with twelve examples of stem's
//     own, in the table's format and as many as the released code has)
//     and its answers that are entities of them are kept.
//     Without it, every kept subgraph's answer node, by GSD: table 18's
//     instruction is to return the answer of every evidence graph.
//   - Evidence: every triple of the kept subgraphs as a tracing.Match with
//     TScore = 1 - its relation distance / 2 and Cum = the subgraph's
//     score, 1 - GSD / (2 x (known nodes + edges)), a mean similarity in
//     [0, 1]; each subgraph is verbalized as arrow chains from its start
//     node ("A -> rel -> B"), the format generation reads support from.
//
// At PlanWeight 0, the default, Retrieve reads neither the projection nor
// the strategy.
//
// What the paper does, what stands in here, and why (the default mode):
//
//   - Pattern. Paper: an LLM rewrites the question alone into a pattern
//     graph (12 shots, Llama 3 70B); the KG enters only at retrieval.
//     Here: no LLM runs on this machine, and the stand-in chooses the
//     pattern among the relation paths the question entity really has in
//     the KG (standin.go), so the KG enters before retrieval and the
//     search re-finds a relation path already chosen; the figure it
//     reaches is an upper bound on a pattern read off the question alone,
//     not the paper's method. --simgrag-llm is the paper's flow.
//   - Candidates, distance, search: as the paper (eq. 2-3, Algorithm 1),
//     with the encoder's vectors in place of its embedding model.
//   - Answers. Paper: the LLM reads the top-k subgraphs (table 18). Here:
//     every kept subgraph's answer node, by GSD (an answer list of up to
//     k, 3); the LLM mode keeps the LLM's answers that are subgraph nodes.
//   - Training: none, as in the paper (it trains nothing).
//   - The paper's figures (table 1: Hits@1 98.0, 98.4, 97.8 on MetaQA 1-3
//     hops, 88.7 and 78.6 on PQ 2- and 3-hop) are printed beside ours by
//     stem compare (peers.Reported).
package simgrag

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// StageMatch names the subgraph search in Evidence.Timings.
const StageMatch = "simgrag"

// Name is the strategy's name in the registry.
const Name = "simgrag"

// Doc describes the strategy in --help and errors.
const Doc = "SimGRAG: top-k KG subgraphs isomorphic to the question's pattern graph by graph semantic distance (k=3, k(n)=k(r)=16; pattern: the relation path most similar to the question, or --simgrag-llm the LLM's, table 16), every subgraph's answer (--simgrag-llm: the LLM's answers over them, table 18)"

// Settings are SimGRAG's flags, its paper's values by default.
type Settings struct {
	// K is how many subgraphs are kept: 3 (appendix C.1).
	K int `flag:"simgrag-k" min:"1" max:"100" category:"peers" usage:"simgrag: subgraphs kept, k (the paper's 3, appendix C.1)"`
	// KNodes is k(n): 16 for MetaQA (appendix C.1).
	KNodes int `flag:"simgrag-kn" min:"1" max:"1000" category:"peers" usage:"simgrag: candidate entities per pattern node, k(n) (the paper's 16 for MetaQA, appendix C.1)"`
	// KRelations is k(r): 16 for MetaQA (appendix C.1).
	KRelations int `flag:"simgrag-kr" min:"1" max:"1000" category:"peers" usage:"simgrag: candidate relations per pattern edge, k(r) (the paper's 16 for MetaQA, appendix C.1)"`
	// Hops bounds the stand-in pattern's relation path.
	Hops int `flag:"simgrag-hops" min:"1" max:"4" category:"peers" usage:"simgrag: the longest relation path the no-LLM stand-in writes as the pattern graph (2, the reach of GCR's L and GraphRAFT's templates; 3 for 3-hop questions)"`
	// Pattern is where the no-LLM stand-in's pattern graph comes from:
	// PatternQuestion (the question's words alone, the paper's data flow)
	// or PatternKG (the question entity's KG relation paths).
	Pattern string `flag:"simgrag-pattern" placeholder:"question|kg" category:"peers" usage:"simgrag: the no-LLM stand-in's pattern graph from the question's words alone, as the paper's LLM writes it (question), or chosen among the question entity's KG relation paths (kg: the KG enters before retrieval, an upper bound on a pattern from the question)"`
	// LLM writes the pattern and reads the answers with the LLM.
	LLM bool `flag:"simgrag-llm" category:"peers" usage:"simgrag: the pattern graph from the LLM (table 16 with stem's own examples) and the answers from its reading of the k subgraphs (table 18) (needs --llm-model)"`
}

// DefaultSettings returns k = 3, k(n) = k(r) = 16, a 2-hop stand-in
// pattern, no LLM.
func DefaultSettings() Settings {
	return Settings{K: 3, KNodes: 16, KRelations: 16, Hops: 2, Pattern: PatternQuestion}
}

// Where the stand-in's pattern comes from (Settings.Pattern).
const (
	PatternQuestion = "question"
	PatternKG       = "kg"
)

// Check implements plan.SettingsChecker.
func (s Settings) Check(llm bool) error {
	if s.Pattern != "" && s.Pattern != PatternQuestion && s.Pattern != PatternKG {
		return fmt.Errorf("--simgrag-pattern %q: want %s or %s", s.Pattern, PatternQuestion, PatternKG)
	}
	return signals.LLMFlag{Name: "--simgrag-llm", On: s.LLM}.Check(llm)
}

// Open builds SimGRAG from the pipeline's environment and its settings,
// as the registry does.
func Open(ctx context.Context, env plan.Env, s Settings) (plan.Retriever, error) {
	cfg := DefaultConfig()
	cfg.K, cfg.KNodes, cfg.KRelations, cfg.Hops, cfg.PlanWeight = s.K, s.KNodes, s.KRelations, s.Hops, env.PlanWeight
	cfg.PatternFromKG = s.Pattern == PatternKG
	if s.LLM {
		c, err := signals.OpenChat(env, "--simgrag-llm")
		if err != nil {
			return nil, err
		}
		cfg.Chat = c
	}
	r, err := New(ctx, env, cfg)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Config holds SimGRAG's retrieval parameters; DefaultConfig gives the
// paper's values for MetaQA.
type Config struct {
	// K is how many subgraphs are kept (paper: 3).
	K int
	// KNodes is k(n), the candidate entities per mention node (paper,
	// MetaQA: 16).
	KNodes int
	// KRelations is k(r), the candidate KG relations per pattern edge
	// (paper, MetaQA: 16).
	KRelations int
	// Hops bounds the stand-in pattern's relation path (2).
	Hops int
	// PatternFromKG has the stand-in choose its pattern among the
	// question entity's KG relation paths (standInPattern) instead of
	// writing it from the question's words (questionPatterns).
	PatternFromKG bool
	// PlanWeight above 0 is the planner-assisted mode: the planner's
	// schema graphs are the patterns. 0 runs SimGRAG standing alone.
	PlanWeight float32
	// Directed makes a KG triple match a pattern edge only along the
	// edge's direction (the paper ignores direction).
	Directed bool
	// MaxExpansions caps one search's expansions (0 = no cap); a capped
	// search reports a problem and keeps the best subgraphs it found.
	MaxExpansions int64
	// NoPrune is the ablation of section 6.6: Algorithm 1 as written,
	// without the lower-bound pruning and greedy order of section 5.2.
	// The subgraphs are the same; only the work differs.
	NoPrune bool

	// Chat, when set, is the LLM that writes the pattern graph from the
	// question (section 4.1, RenderPattern) and reads the answers off the
	// k subgraphs (section 4.4, RenderAnswer).
	Chat llm.Chatter
	// MaxParseRetries is how many times a reply that gives no usable
	// pattern is asked for again (0 means DefaultMaxParseRetries,
	// negative never); after that the question has no answer and a
	// problem says why.
	MaxParseRetries int
	// Temperature of the first pattern request (0, greedy, by default);
	// retries use RetryTemperature (0 means DefaultRetryTemperature),
	// since a greedy retry would repeat the reply.
	Temperature, RetryTemperature float64
	// Seed is sent with the first pattern request and shifted by one per
	// retry, so replies repeat where the server honours seeds and a
	// response cache keys retries apart.
	Seed int64
	// MaxTokens bounds each pattern reply; 0 leaves it to the server.
	MaxTokens int
}

// DefaultConfig returns the paper's parameters: k = 3, k(n) = k(r) = 16
// (appendix C.1), a 2-hop stand-in pattern, with a cap of 4M expansions
// per search so that a hub under a placeholder cannot stall a server, and
// no LLM.
func DefaultConfig() Config {
	return Config{K: 3, KNodes: 16, KRelations: 16, Hops: 2, MaxExpansions: 1 << 22,
		MaxParseRetries: DefaultMaxParseRetries, RetryTemperature: DefaultRetryTemperature}
}

// graphState is what is computed once per KG: its entity index (built on
// first need for a question's own graph) and its relation vectors.
type graphState struct {
	g    kg.Reader
	enc  models.Encoder
	mu   sync.Mutex
	ents *kgvec.Entities
	// rels holds one vector per relation id, row-major; a remote backend
	// that interns more relations later has the new rows encoded then.
	rels []float32
}

func (s *graphState) entities(ctx context.Context) (*kgvec.Entities, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ents == nil {
		ents, err := kgvec.Build(ctx, s.g, s.enc, nil)
		if err != nil {
			return nil, fmt.Errorf("index KG entities: %w", err)
		}
		s.ents = ents
	}
	return s.ents, nil
}

func (s *graphState) relations(ctx context.Context) ([]float32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dim := s.enc.Dim()
	have, n := len(s.rels)/dim, s.g.NumRelations()
	if have >= n {
		return s.rels[:n*dim], nil
	}
	texts := make([]string, 0, n-have)
	for r := have; r < n; r++ {
		texts = append(texts, kg.RelationTextOf(s.g, int32(r)))
	}
	vecs, err := models.EncodeAll(ctx, s.enc, texts)
	if err != nil {
		return nil, fmt.Errorf("encode KG relations %d-%d: %w", have, n-1, err)
	}
	// A new slice, not an append: requests still reading the old one keep it.
	s.rels = append(slices.Clip(s.rels), vecs...)
	return s.rels, nil
}

// Retriever is SimGRAG's retrieval strategy. It is safe for concurrent use.
type Retriever struct {
	enc    models.Encoder
	cfg    Config
	shared *graphState
	// Totals over every search since New, for benchmarks and metrics.
	expansions, pruned, complete, searches atomic.Int64
}

// New prepares SimGRAG over env's shared KG (when there is one): the
// relation vectors are encoded now; the entity index is env.Entities, or
// built when a mention first needs similarity candidates (a run whose
// question entities are all linked never needs it).
func New(ctx context.Context, env plan.Env, cfg Config) (*Retriever, error) {
	if env.Encoder == nil {
		return nil, fmt.Errorf("simgrag: no encoder")
	}
	if cfg.Hops == 0 {
		cfg.Hops = DefaultConfig().Hops
	}
	if cfg.K <= 0 || cfg.KNodes <= 0 || cfg.KRelations <= 0 || cfg.Hops < 0 || cfg.MaxExpansions < 0 || cfg.PlanWeight < 0 {
		return nil, fmt.Errorf("simgrag: config %+v: K, KNodes, KRelations and Hops must be positive, MaxExpansions and PlanWeight not negative", cfg)
	}
	switch {
	case cfg.MaxParseRetries == 0:
		cfg.MaxParseRetries = DefaultMaxParseRetries
	case cfg.MaxParseRetries < 0:
		cfg.MaxParseRetries = 0
	}
	if cfg.RetryTemperature == 0 {
		cfg.RetryTemperature = DefaultRetryTemperature
	}
	if cfg.Temperature < 0 || cfg.Temperature > 2 || cfg.RetryTemperature < 0 || cfg.RetryTemperature > 2 || cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("simgrag: config %+v: temperatures must be in 0..2, MaxTokens not negative", cfg)
	}
	r := &Retriever{enc: env.Encoder, cfg: cfg}
	if env.Graph == nil {
		return r, nil
	}
	r.shared = &graphState{g: env.Graph, enc: env.Encoder, ents: env.Entities}
	if _, err := r.shared.relations(ctx); err != nil {
		return nil, fmt.Errorf("simgrag: %w", err)
	}
	return r, nil
}

// UsesPlan implements plan.PlanUser: SimGRAG reads the planner's schema
// graphs only in the planner-assisted mode.
func (r *Retriever) UsesPlan() bool { return r.cfg.PlanWeight > 0 }

// Reach implements plan.Reacher: the stand-in pattern walks Hops hops.
func (r *Retriever) Reach() int { return r.cfg.Hops }

// Mode implements plan.Moder.
func (r *Retriever) Mode() string {
	m := signals.Mode(r.cfg.PlanWeight, r.cfg.Chat != nil)
	if r.cfg.PatternFromKG && r.cfg.Chat == nil && r.cfg.PlanWeight == 0 {
		m += ", pattern from KG paths"
	}
	return m
}

// Totals returns the search work summed over every Retrieve so far, and
// how many searches that was.
func (r *Retriever) Totals() (Stats, int64) {
	return Stats{Expansions: r.expansions.Load(), Pruned: r.pruned.Load(), Complete: r.complete.Load()}, r.searches.Load()
}

// Retrieve implements plan.Retriever.
func (r *Retriever) Retrieve(ctx context.Context, req plan.Request) (*plan.Evidence, error) {
	ev, _, err := r.Match(ctx, req)
	return ev, err
}

// found is one subgraph of one candidate schema graph.
type found struct {
	graph int
	pat   *compiled
	sub   *Subgraph
}

// Match is Retrieve that also returns the search's Stats.
func (r *Retriever) Match(ctx context.Context, req plan.Request) (*plan.Evidence, Stats, error) {
	var st Stats
	gs := r.shared
	if req.Own {
		if req.Graph == nil {
			return nil, st, fmt.Errorf("simgrag: a question with its own graph but no graph")
		}
		gs = &graphState{g: req.Graph, enc: r.enc}
	}
	if gs == nil {
		return nil, st, fmt.Errorf("simgrag: no KG: give a shared KG or a per-question graph")
	}
	start := time.Now()
	res := &tracing.Result{}
	timings := map[string]time.Duration{}
	var graphs []schema.Graph
	unranked, perTerm := false, false
	switch {
	case r.cfg.Chat != nil:
		g, ok, probs, err := r.askPattern(ctx, req.Question)
		timings[StagePattern] = time.Since(start)
		if err != nil {
			return nil, st, fmt.Errorf("simgrag: question %q: %w", req.Question, err)
		}
		res.Problems = append(res.Problems, probs...)
		if ok {
			graphs = []schema.Graph{g}
		}
	case r.cfg.PlanWeight > 0:
		graphs, unranked = req.Projection.Graphs(), req.Projection.Unranked
		if len(graphs) == 0 {
			res.Problems = append(res.Problems, "no schema graph to match")
		}
	case r.cfg.PatternFromKG:
		g, ok, err := r.standInPattern(ctx, gs.g, req, res)
		if err != nil {
			return nil, st, fmt.Errorf("simgrag: question %q: %w", req.Question, err)
		}
		if ok {
			graphs = []schema.Graph{g}
		}
	default:
		graphs, perTerm = questionPatterns(req, r.cfg.Hops), true
		if len(graphs) == 0 {
			res.Problems = append(res.Problems, "no entity mention and relation words in the question to write a pattern graph from")
		} else if m := signals.Mentions(req)[0]; len(gs.g.EntitiesByNorm(m)) == 0 {
			// A note only: the pattern is the question's, and its known
			// node finds its candidates by similarity whatever this says.
			res.Problems = append(res.Problems, fmt.Sprintf("mention %q names no KG entity exactly: its nearest by similarity stand in", m))
		}
	}
	var all []found
	for gi, sg := range graphs {
		if err := sg.Validate(); err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("graph %d: invalid: %v", gi, err))
			continue
		}
		c, probs, err := r.compile(ctx, gs, sg, req)
		if err != nil {
			return nil, st, fmt.Errorf("simgrag: graph %d %s: %w", gi, sg, err)
		}
		for _, p := range probs {
			res.Problems = append(res.Problems, fmt.Sprintf("graph %d: %s", gi, p))
		}
		subs, s, err := search(ctx, gs.g, &c.pattern, r.cfg)
		st.Add(s)
		r.searches.Add(1)
		r.expansions.Add(s.Expansions)
		r.pruned.Add(s.Pruned)
		r.complete.Add(s.Complete)
		if err != nil {
			if ctx.Err() != nil {
				return nil, st, fmt.Errorf("simgrag: %w", err)
			}
			res.Problems = append(res.Problems, fmt.Sprintf("graph %d: %v", gi, err))
			continue
		}
		if s.Capped {
			res.Problems = append(res.Problems, fmt.Sprintf("graph %d: search stopped after %d expansions; subgraphs are the best found", gi, r.cfg.MaxExpansions))
		}
		if len(subs) == 0 {
			res.Problems = append(res.Problems, fmt.Sprintf("graph %d: no KG subgraph is isomorphic to it", gi))
			continue
		}
		for _, sub := range subs {
			all = append(all, found{graph: gi, pat: c, sub: sub})
		}
		if !unranked && !perTerm {
			break
		}
	}
	if perTerm {
		all = bestPerTerm(all)
	}
	slices.SortStableFunc(all, func(a, b found) int {
		if a.sub.GSD != b.sub.GSD || a.sub.NRev != b.sub.NRev {
			if a.sub.before(b.sub) {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.graph, b.graph)
	})
	all = all[:min(len(all), r.cfg.K)]
	r.evidence(gs.g, req, all, res)
	if r.cfg.Chat != nil && len(all) > 0 {
		t := time.Now()
		if err := r.answer(ctx, gs.g, req.Question, all, res); err != nil {
			return nil, st, fmt.Errorf("simgrag: question %q: %w", req.Question, err)
		}
		timings[StageAnswer] = time.Since(t)
	}
	timings[StageMatch] = time.Since(start) - timings[StagePattern] - timings[StageAnswer]
	ev := &plan.Evidence{Trace: res, Timings: timings}
	return ev, st, nil
}

// compiled is a pattern with what evidence building needs to read back.
type compiled struct {
	pattern
	names  []string // node names: mentions and canonical placeholders
	answer int      // the answer placeholder's node
	terms  int      // known nodes + edges: the GSD's number of terms
}

// compile turns sg into a pattern: numbers its nodes, finds each mention
// node's candidates and each edge's candidate relations.
func (r *Retriever) compile(ctx context.Context, gs *graphState, sg schema.Graph, req plan.Request) (*compiled, []string, error) {
	var probs []string
	c := &compiled{answer: -1}
	index := map[string]int{}
	node := func(s string) int {
		s = schema.CanonicalPlaceholder(strings.TrimSpace(s))
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = len(c.names)
		c.names = append(c.names, s)
		c.known = append(c.known, !schema.IsPlaceholder(s))
		return len(c.names) - 1
	}
	for _, t := range sg.Triples {
		c.heads = append(c.heads, node(t.Head))
		c.tails = append(c.tails, node(t.Tail))
	}
	if i, ok := index[sg.AnswerSlot()]; ok {
		c.answer = i
	}
	n := len(c.names)
	c.cands, c.byEnt = make([][]cand, n), make([][]cand, n)
	c.terms = len(c.heads)
	for v := range n {
		if !c.known[v] {
			continue
		}
		c.terms++
		var cs []cand
		ents, err := gs.entities(ctx)
		if err != nil {
			return nil, nil, err
		}
		hits, err := ents.Nearest(ctx, kg.EntityText(c.names[v]), r.cfg.KNodes)
		if err != nil {
			return nil, nil, fmt.Errorf("candidates of %q: %w", c.names[v], err)
		}
		for _, h := range hits {
			cs = append(cs, cand{entity: h.Entity, dist: distance(h.Score)})
		}
		if len(cs) == 0 {
			probs = append(probs, fmt.Sprintf("no KG entity is a candidate for %q", c.names[v]))
		}
		slices.SortFunc(cs, func(a, b cand) int {
			if c := cmp.Compare(a.dist, b.dist); c != 0 {
				return c
			}
			return cmp.Compare(a.entity, b.entity)
		})
		cs = slices.CompactFunc(cs, func(a, b cand) bool { return a.entity == b.entity })
		c.cands[v] = cs
		c.byEnt[v] = slices.SortedFunc(slices.Values(cs), func(a, b cand) int { return cmp.Compare(a.entity, b.entity) })
	}
	if err := r.relationCandidates(ctx, gs, sg, c); err != nil {
		return nil, nil, err
	}
	return c, probs, nil
}

// distance turns the cosine of two embeddings into the L2 distance of
// their unit vectors, a GSD term (eq. 2): ||a - b|| = sqrt(2 - 2 cos),
// clamped to [0, 2] so that rounding cannot make a term negative and
// break the lower bound. A cosine within float32 rounding of 1 is 0 apart:
// the square root would blow its 1e-7 of noise up to 4e-4.
func distance(cos float32) float64 {
	if cos >= 1-1e-6 {
		return 0
	}
	return min(math.Sqrt(max(2-2*float64(cos), 0)), 2)
}

// relationCandidates fills each edge's distances to the KG relations and
// keeps its top-k(r).
func (r *Retriever) relationCandidates(ctx context.Context, gs *graphState, sg schema.Graph, c *compiled) error {
	g := gs.g
	rels, err := gs.relations(ctx)
	if err != nil {
		return err
	}
	dim := r.enc.Dim()
	nr := len(rels) / dim
	texts := make([]string, len(sg.Triples))
	for e, t := range sg.Triples {
		if id, ok := g.Relation(strings.TrimSpace(t.Rel)); ok {
			texts[e] = kg.RelationTextOf(g, id)
		} else if isUnknown(t.Rel) {
			texts[e] = "" // section 4.3: every relation, at distance 0
		} else {
			texts[e] = kg.RelationText(strings.TrimSpace(t.Rel))
		}
	}
	var known []string
	row := make([]int, len(texts))
	for e, t := range texts {
		row[e] = len(known)
		if t != "" {
			known = append(known, t)
		}
	}
	var q []float32
	if len(known) > 0 {
		if q, err = models.EncodeAll(ctx, r.enc, known); err != nil {
			return fmt.Errorf("encode pattern relations %q: %w", known, err)
		}
	}
	c.relDist = make([][]float64, len(texts))
	c.relCands = make([][]int32, len(texts))
	order := make([]int32, nr)
	for e := range texts {
		dist := make([]float64, nr)
		if texts[e] == "" {
			c.relDist[e] = dist
			c.relCands[e] = make([]int32, nr)
			for rel := range nr {
				c.relCands[e][rel] = int32(rel)
			}
			continue
		}
		qv := q[row[e]*dim : (row[e]+1)*dim]
		for rel := range nr {
			dist[rel] = distance(models.Cosine(qv, rels[rel*dim:(rel+1)*dim]))
			order[rel] = int32(rel)
		}
		slices.SortFunc(order, func(a, b int32) int {
			if c := cmp.Compare(dist[a], dist[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		keep := order[:min(nr, r.cfg.KRelations)]
		for _, rel := range order[len(keep):] {
			dist[rel] = noRel
		}
		c.relDist[e] = dist
		c.relCands[e] = slices.Clone(keep)
	}
	return nil
}

// evidence fills res from the kept subgraphs, best first.
func (r *Retriever) evidence(g kg.Reader, req plan.Request, kept []found, res *tracing.Result) {
	bestMatch := map[int32]tracing.Match{}
	answers := map[int32]tracing.Answer{}
	rank := map[int32]int{}
	seenChain := map[string]bool{}
	seenAnchor := map[int32]bool{}
	for i, f := range kept {
		score := float32(1)
		if f.pat.terms > 0 {
			score = float32(1 - f.sub.GSD/(2*float64(f.pat.terms)))
		}
		for e, t := range f.sub.Triples {
			rd := f.pat.relDist[e][g.Triple(t).Rel]
			m := tracing.Match{Graph: f.graph, SchemaTriple: e, Triple: t, TScore: float32(1 - rd/2), Cum: score}
			if b, ok := bestMatch[t]; !ok || m.Cum > b.Cum {
				bestMatch[t] = m
			}
		}
		if i == 0 {
			for v, e := range f.sub.Nodes {
				if f.pat.known[v] && !seenAnchor[e] {
					seenAnchor[e] = true
					d, _ := lookup(f.pat.byEnt[v], e)
					res.Anchors = append(res.Anchors, tracing.Anchor{Mention: f.pat.names[v], Entity: e, Name: g.EntityName(e), Score: float32(1 - d)})
				}
			}
		}
		if f.pat.answer >= 0 {
			e := f.sub.Nodes[f.pat.answer]
			if _, ok := answers[e]; !ok {
				answers[e] = tracing.Answer{Entity: e, Name: g.EntityName(e), Score: score, Graph: f.graph, Reversed: f.sub.NRev}
				rank[e] = i
			}
		}
		for _, ch := range verbalize(g, f.sub.Triples, f.sub.Nodes[firstKnown(f.pat)]) {
			if !seenChain[ch] {
				seenChain[ch] = true
				res.Chains = append(res.Chains, ch)
			}
		}
	}
	if len(kept) == 0 {
		for i, e := range req.Anchors {
			if e < 0 || int(e) >= g.NumEntities() || seenAnchor[e] {
				continue
			}
			seenAnchor[e] = true
			m := g.EntityName(e)
			if len(req.Mentions) == len(req.Anchors) {
				m = req.Mentions[i]
			}
			res.Anchors = append(res.Anchors, tracing.Anchor{Mention: m, Entity: e, Name: g.EntityName(e), Score: 1})
		}
	}
	for _, m := range bestMatch {
		res.Evidence = append(res.Evidence, m)
	}
	slices.SortFunc(res.Evidence, func(a, b tracing.Match) int {
		if c := cmp.Compare(b.Cum, a.Cum); c != 0 {
			return c
		}
		return byName(g, a.Triple, b.Triple)
	})
	for _, a := range answers {
		res.Answers = append(res.Answers, a)
	}
	// Answers in the subgraphs' order: by GSD, then the search's
	// deterministic tie-break, never by name.
	slices.SortFunc(res.Answers, func(a, b tracing.Answer) int { return cmp.Compare(rank[a.Entity], rank[b.Entity]) })
	if len(res.Evidence) == 0 {
		res.Problems = append(res.Problems, "empty evidence: no KG subgraph matched")
	}
	res.Unbacked = tracing.Audit(g, res)
}

// firstKnown returns the node chains start from: the first mention, as
// the schema wrote it (the question entity of a path).
func firstKnown(p *compiled) int {
	for v, k := range p.known {
		if k {
			return v
		}
	}
	return 0
}

// byName orders triples by head, relation and tail name, then id, so
// printed evidence does not follow a backend's numbering.
func byName(g kg.Reader, a, b int32) int {
	x, y := g.Triple(a), g.Triple(b)
	if c := strings.Compare(g.EntityName(x.Head), g.EntityName(y.Head)); c != 0 {
		return c
	}
	if c := strings.Compare(g.RelationName(x.Rel), g.RelationName(y.Rel)); c != 0 {
		return c
	}
	if c := strings.Compare(g.EntityName(x.Tail), g.EntityName(y.Tail)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// verbalize writes one subgraph as the maximal simple paths from start
// over its triples, in tracing's chain format ("A -> rel -> B", "A <- rel
// <- B" against a triple's direction), so generation finds an answer's
// support in them as it does in tracing's chains. A pattern is a handful
// of triples, so the walk scans them all at every step.
func verbalize(g kg.Reader, triples []int32, start int32) []string {
	var out []string
	usedT := make([]bool, len(triples))
	visited := map[int32]bool{start: true}
	parts := []string{g.EntityName(start)}
	var walk func(e int32)
	walk = func(e int32) {
		extended := false
		for i, t := range triples {
			if usedT[i] {
				continue
			}
			tr := g.Triple(t)
			other, arrow := tr.Tail, " -> "
			switch {
			case tr.Head == e:
			case tr.Tail == e:
				other, arrow = tr.Head, " <- "
			default:
				continue
			}
			if visited[other] && other != e {
				continue
			}
			extended = true
			usedT[i], visited[other] = true, true
			n := len(parts)
			parts = append(parts, arrow, g.RelationName(tr.Rel), arrow, g.EntityName(other))
			if other != e {
				walk(other)
			} else {
				out = append(out, strings.Join(parts, ""))
			}
			parts = parts[:n]
			usedT[i] = false
			if other != e {
				visited[other] = false
			}
		}
		if !extended && len(parts) > 1 {
			out = append(out, strings.Join(parts, ""))
		}
	}
	walk(start)
	return out
}
