// Package gcr is GCR's retrieval (Luo et al., "Graph-constrained
// Reasoning", sections 4.2-4.4) as a stem retrieval strategy, standing on
// its own by default, with the paper's LLMs as an option (Settings.LLM):
//
//  1. KG-Trie (section 4.2): every relation path of up to L hops from the
//     question's entities, as a prefix tree over direction-aware relation
//     steps, each node holding the entities its path reaches
//     (signals.Build); built per question and kept in an LRU keyed by
//     anchor set and hops for the shared KG.
//
//  2. Graph-constrained decoding (section 4.3): K reasoning paths, each a
//     walk of KG triples from a question entity ("A -> r -> B -> r2 ->
//     C"), every step allowed only where the trie continues, so every
//     path exists in the KG. GCR scores a path with a fine-tuned LLM's
//     log-probability. With Settings.LLM that is what is scored: each
//     continuation's log-probability given GCR's decoding prompt
//     (prompts/decode.txt) and the path so far, written with its
//     entities from whichever anchor it leaves, in a beam of K entity
//     paths (LLMScorer). Without an LLM, the neutral stand-in every peer
//     shares (signals.Similarity) scores a path by the question's cosine
//     with its relation words; entity paths along one relation path then
//     tie, so the beam runs over the trie's relation paths (one entry per
//     tie class) and the K decoded paths are the entity paths of the best
//     relation paths, in order; among a relation path's entity paths the
//     stand-in breaks the tie by the question's cosine with the end's name
//     (as GraphRAFT's released code orders results), then the path's text.
//
//  3. Hypotheses and answers (section 4.4): each decoded path's last
//     entity is its hypothesis answer. GCR's general LLM reasons over the
//     K paths and their hypotheses (prompts/reason.txt, the released
//     code's prompt); its answers that are hypotheses are kept. Without
//     one, the answers are the hypotheses themselves, as in the paper's
//     "w/o general LLM" ablation (appendix E), in the order the released
//     code's evaluation gives them: by how many identical outputs the
//     beam produced (none repeat here), then by path score.
//
// Planner help is the labelled planner-assisted mode (Config.PlanWeight
// above 0): a path's score adds PlanWeight times signals.PlanScore of its
// relation path. At 0, the default, Retrieve reads neither the
// projection nor the strategy, and UsesPlan says so.
//
// Where stem differs from the released code: the trie is walked in both
// directions, a step against a relation written "B <- r <- A" (the
// released code walks a directed graph, enough on Freebase, which holds
// most relations both ways, but not on MetaQA's or PathQuestion's KBs);
// parallel triples between two entities stay distinct (its networkx
// DiGraph keeps one); and a path never steps straight back over the
// triple it arrived by. A trie node keeps at most MaxReach entities and a
// trie at most MaxNodes nodes, a problem noted when either binds.
//
// What the paper does, what stands in here, and why (the default mode):
//
//   - KG-Trie: as the paper (section 4.2), over relation steps in both
//     directions.
//   - Path scoring. Paper: a KG-specialised LLM fine-tuned on the
//     benchmark's training paths (question to answer entities) scores
//     each step. Here, untrained ("gcr (stand-in)"): the encoder's cosine
//     of the question and the path's relation words, which learnt
//     nothing from the training questions. Trained ("gcr (stand-in,
//     trained)", --gcr-model): a path classifier learnt from the training
//     questions' gold relation paths (signals.Classifier, the pairs `stem
//     train peer` writes from the same files as STEM's planner), decoded
//     under the same trie (Config.Learnt): the faithful analogue of the
//     fine-tuned LLM, since no LLM can be trained here.
//   - Answers. Paper: a general LLM reasons over the K paths. Here: the K
//     paths' ends in path order, the paper's "w/o general LLM" ablation
//     (table 3: F1 57.0 on WebQSP); up to K = 10 answers, so hit and f1
//     read a longer list than STEM's, and hits@1, mrr and hit@5 are the
//     figures to compare.
//   - The paper's figures (table 1: WebQSP Hit 92.6, F1 73.2) are printed
//     beside ours by stem compare (peers.Reported).
package gcr

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/tracing"
)

// Name is the strategy's name in the registry.
const Name = "gcr"

// Doc describes the strategy in --help and errors.
const Doc = "GCR: KG-Trie of relation paths (L=2), graph-constrained decoding of K=10 reasoning paths from the question entities, their ends the answers by path score (--gcr-llm: the LLM's log-probabilities of each path given GCR's prompt, then its inductive reasoning over the K paths)"

// Settings are GCR's flags, its paper's values by default.
type Settings struct {
	// Hops is L, the longest path in the KG-Trie: 2, section 5.1 and
	// appendix F.1 (performance peaks at 2 of 1-4 hops).
	Hops int `flag:"gcr-hops" min:"1" max:"4" category:"peers" usage:"gcr: the KG-Trie's depth, L hops (the paper's 2, appendix F.1)"`
	// Beam is K, the reasoning paths decoded: 10, section 5.2 and figure
	// 4 (F1 peaks at 10 of 1, 3, 5, 10 and 20).
	Beam int `flag:"gcr-beam" min:"1" max:"100" category:"peers" usage:"gcr: reasoning paths decoded, K (the paper's 10, figure 4)"`
	// LLM scores paths with the server's log-probabilities and reasons
	// over them with its chat model.
	LLM bool `flag:"gcr-llm" category:"peers" usage:"gcr: score the reasoning paths by the LLM's log-probabilities given GCR's prompt (/v1/completions with echo and logprobs) and choose the answers by its inductive reasoning over the K paths (needs --llm-model)"`
	// Model is the training pairs of the trained stand-in (a path scorer
	// learnt in place of the paper's fine-tuned KG-specialised LLM); ""
	// runs untrained.
	Model string `flag:"gcr-model" placeholder:"FILE" category:"peers" usage:"gcr: training pairs from 'stem train peer' (the training questions' relation paths): a path scorer learnt from them, decoded under the KG-Trie, in place of the encoder stand-in, the analogue of the paper's fine-tuned KG-specialised LLM (row 'gcr (stand-in, trained)')"`
}

// DefaultSettings returns the paper's L = 2 and K = 10, no LLM.
func DefaultSettings() Settings { return Settings{Hops: 2, Beam: 10} }

// Check implements plan.SettingsChecker.
func (s Settings) Check(llm bool) error {
	return signals.LLMFlag{Name: "--gcr-llm", On: s.LLM}.Check(llm)
}

// Open builds GCR from the pipeline's environment and its settings, as
// the registry does.
func Open(ctx context.Context, env plan.Env, s Settings) (plan.Retriever, error) {
	cfg := DefaultConfig()
	cfg.Hops, cfg.Beam, cfg.PlanWeight = s.Hops, s.Beam, env.PlanWeight
	if s.LLM {
		c, err := signals.OpenChat(env, "--gcr-llm")
		if err != nil {
			return nil, err
		}
		cfg.LLM, cfg.Reason = c, c
	}
	if s.Model != "" {
		m, err := signals.Learn(ctx, s.Model)
		if err != nil {
			return nil, fmt.Errorf("--gcr-model: %w", err)
		}
		cfg.Learnt = m
	}
	r, err := New(ctx, env, cfg)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Config holds GCR's parameters. A zero count takes DefaultConfig's
// value; PlanWeight is taken as given (0 is no planner help). A negative
// field is an error.
type Config struct {
	// Hops is L, Beam is K (Settings).
	Hops, Beam int
	// PlanWeight weighs the planner's relation paths (the planner-assisted
	// mode); 0 runs GCR standing alone.
	PlanWeight float32
	// MaxReach caps the entities per trie node (2000); MaxNodes the nodes
	// per trie (20000); MaxCandidates the continuations the LLM scores per
	// path and step (200, the lowest triple ids kept).
	MaxReach, MaxNodes, MaxCandidates int
	// CacheSize is the number of tries kept (1024); tries of per-question
	// graphs are not cached.
	CacheSize int

	// Learnt, when set, is the trained stand-in's path scorer: a
	// relation path decoded under the trie scores the classifier's
	// posterior of the training paths it begins (in the beam) or is (as a
	// decoded path), the encoder's cosine breaking ties by a thousandth.
	Learnt *signals.Classifier

	// LLM, when set, scores the paths (LLMScorer) in place of the
	// stand-in; *llm.Client implements it.
	LLM llm.PromptScorer
	// Reason, when set, is the general LLM of the graph inductive
	// reasoning over the K paths.
	Reason llm.Chatter
}

// DefaultConfig returns the paper's L = 2 and K = 10, the bounds above,
// no planner help and no LLM.
func DefaultConfig() Config {
	return Config{Hops: 2, Beam: 10, MaxReach: 2000, MaxNodes: 20000, MaxCandidates: 200, CacheSize: 1024}
}

// withDefaults fills zero fields and rejects negative ones.
func (c Config) withDefaults() (Config, error) {
	if c.Hops < 0 || c.Beam < 0 || c.PlanWeight < 0 || c.MaxReach < 0 || c.MaxNodes < 0 || c.MaxCandidates < 0 || c.CacheSize < 0 {
		return c, fmt.Errorf("gcr: config %+v: negative value", c)
	}
	d := DefaultConfig()
	for _, f := range []struct{ v, def *int }{{&c.Hops, &d.Hops}, {&c.Beam, &d.Beam}, {&c.MaxReach, &d.MaxReach},
		{&c.MaxNodes, &d.MaxNodes}, {&c.MaxCandidates, &d.MaxCandidates}, {&c.CacheSize, &d.CacheSize}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return c, nil
}

// StageTrie is the Evidence.Timings key of the trie build (0 on a cache
// hit); plan.StageTrace holds the whole retrieval.
const StageTrie = "trie"

// Retriever is GCR's retrieval. It is safe for concurrent use: its only
// mutable state is the trie cache, behind a lock, and the counters.
type Retriever struct {
	enc models.Encoder
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
// needs the encoder unless cfg.LLM scores, and reads the KG of each
// question from its Request.
func New(ctx context.Context, env plan.Env, cfg Config) (*Retriever, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if c.LLM == nil && env.Encoder == nil {
		return nil, fmt.Errorf("gcr: no encoder for the stand-in scorer")
	}
	return &Retriever{enc: env.Encoder, graph: env.Graph, cfg: c, cache: newTrieCache(c.CacheSize)}, nil
}

// UsesPlan implements plan.PlanUser: GCR reads the planner's paths only
// in the planner-assisted mode.
func (r *Retriever) UsesPlan() bool { return r.cfg.PlanWeight > 0 }

// Reach implements plan.Reacher: a question's graph is walked L hops.
func (r *Retriever) Reach() int { return r.cfg.Hops }

// Mode implements plan.Moder.
func (r *Retriever) Mode() string {
	return signals.Mode(r.cfg.PlanWeight, r.cfg.LLM != nil) + signals.TrainedMode(r.cfg.Learnt != nil && r.cfg.LLM == nil)
}

// Path is one decoded reasoning path: a walk of KG triples from a
// question entity, as GCR writes it ("A -> r -> B -> r2 -> C"), whose
// last entity is its hypothesis answer.
type Path struct {
	// Start is the question entity it leaves, End its hypothesis.
	Start, End int32
	// Triples are its KG triples, Steps their relations as walked.
	Triples []int32
	Steps   []signals.Step
	// Score is the scorer's, with the plan term when there is one.
	Score float32
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
	anchors := signals.Anchors(g, req, res)
	var plans []signals.PlanPath
	if r.cfg.PlanWeight > 0 {
		plans = signals.PlanPaths(g, req.Projection)
	}
	var paths []Path
	var err error
	if r.cfg.LLM != nil {
		var problem string
		if paths, problem, err = r.decodeLLM(ctx, g, req, anchors, plans); problem != "" {
			res.Problems = append(res.Problems, problem)
		}
	} else {
		var trie *signals.Trie
		if trie, err = r.trie(ctx, g, !req.Own && r.shared(g), anchors, ev); err != nil {
			return nil, fmt.Errorf("gcr: question %q: %w", req.Question, err)
		}
		if trie.Capped {
			res.Problems = append(res.Problems, fmt.Sprintf("KG-Trie cut at %d nodes: some paths are missing", r.cfg.MaxNodes))
		}
		paths, err = r.decode(ctx, g, trie, req, plans)
	}
	if err != nil {
		return nil, fmt.Errorf("gcr: question %q: %w", req.Question, err)
	}
	fill(g, paths, res)
	if r.cfg.Reason != nil && len(res.Answers) > 0 {
		if err := r.reason(ctx, g, req.Question, paths, res); err != nil {
			return nil, fmt.Errorf("gcr: question %q: %w", req.Question, err)
		}
	}
	if len(res.Evidence) == 0 {
		res.Problems = append(res.Problems, "empty evidence: no reasoning path was decoded")
	}
	res.Unbacked = tracing.Audit(g, res)
	ev.Timings[plan.StageTrace] = time.Since(start)
	return ev, nil
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
func (r *Retriever) trie(ctx context.Context, g kg.Reader, cached bool, anchors []int32, ev *plan.Evidence) (*signals.Trie, error) {
	key := cacheKey(signals.DistinctAnchors(g, anchors), r.cfg.Hops)
	if cached {
		if t, ok := r.cache.get(key); ok {
			r.stats.hits.Add(1)
			r.stats.nodes.Add(int64(len(t.Nodes)))
			ev.Timings[StageTrie] = 0
			return t, nil
		}
	}
	t, err := signals.Build(ctx, g, anchors, r.cfg.Hops, signals.Limits{MaxReach: r.cfg.MaxReach, MaxNodes: r.cfg.MaxNodes})
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

// relPath is a relation path of the trie with its score and its name
// (pathKey).
type relPath struct {
	node  int32
	score float32
	key   string
}

// decode is the stand-in's graph-constrained decoding (package doc): a
// beam of K relation paths grown one step at a time as the trie allows,
// scored by the question's similarity to their relation words (plus the
// plan term), every path that entered the beam a candidate ending; the
// K decoded entity paths are those of the best relation paths, in order.
func (r *Retriever) decode(ctx context.Context, g kg.Reader, trie *signals.Trie, req plan.Request, plans []signals.PlanPath) ([]Path, error) {
	if len(trie.Nodes[0].Children) == 0 {
		return nil, nil
	}
	sim, err := signals.NewSimilarity(ctx, r.enc, req.Question, signals.Mentions(req))
	if err != nil {
		return nil, err
	}
	var post map[string]float32
	if r.cfg.Learnt != nil {
		post = r.cfg.Learnt.Posterior(req.Question)
	}
	beam := []int32{0}
	var pool []relPath
	for depth := 0; depth < trie.Hops && len(beam) > 0; depth++ {
		var cands []int32
		for _, n := range beam {
			cands = append(cands, trie.Nodes[n].Children...)
		}
		if len(cands) == 0 {
			break
		}
		texts := make([]string, len(cands))
		for i, n := range cands {
			texts[i] = signals.Words(g, trie.Path(n))
		}
		cos, err := sim.Scores(ctx, texts)
		if err != nil {
			return nil, err
		}
		grow := make([]relPath, len(cands))
		for i, n := range cands {
			s := cos[i]
			if r.cfg.PlanWeight > 0 {
				s += r.cfg.PlanWeight * signals.PlanScore(plans, trie.Path(n))
			}
			grow[i] = relPath{node: n, score: s, key: pathKey(g, trie.Path(n))}
		}
		if post != nil {
			grow = learntScores(grow, post, &pool)
		} else {
			pool = append(pool, grow...)
		}
		sortRel(grow)
		beam = beam[:0]
		for _, p := range grow[:min(len(grow), r.cfg.Beam)] {
			beam = append(beam, p.node)
		}
	}
	sortRel(pool)
	var out []Path
	for _, p := range pool {
		if len(out) >= r.cfg.Beam {
			break
		}
		ws, err := r.ranked(ctx, g, sim, walks(g, trie.Anchors, trie.Path(p.node), r.cfg.MaxReach))
		if err != nil {
			return nil, err
		}
		for _, w := range ws[:min(len(ws), r.cfg.Beam-len(out))] {
			w.Score = p.score
			out = append(out, w)
		}
	}
	return out, nil
}

// learntTie is the weight of the stand-in's score beside the learnt
// posterior: enough to order paths the classifier cannot tell apart (or
// never saw), never enough to overturn it.
const learntTie = 1e-3

// learntScores scores the trained stand-in's candidates (Config.Learnt):
// in the beam, a relation path scores the posterior mass of the training
// paths it begins, so a first step is kept for the second it leads to;
// as a decoded path (appended to pool), the posterior of the path
// itself, so a one-hop prefix never outranks the two-hop path it begins.
// Each keeps the stand-in's score times learntTie.
func learntScores(grow []relPath, post map[string]float32, pool *[]relPath) []relPath {
	for i, p := range grow {
		var prefix float32
		for k, v := range post {
			if strings.HasPrefix(k, p.key) {
				prefix += v
			}
		}
		end := p
		end.score = post[p.key] + learntTie*p.score
		*pool = append(*pool, end)
		grow[i].score = prefix + learntTie*p.score
	}
	return grow
}

// ranked orders entity paths that tie under the stand-in (they share a
// relation path): by the cosine of the question and their end's name,
// then by their text, so that neither the alphabet nor a backend's
// numbering decides alone which K are decoded (GraphRAFT's released code
// orders a query's results by the same name similarity).
func (r *Retriever) ranked(ctx context.Context, g kg.Reader, sim *signals.Similarity, ws []Path) ([]Path, error) {
	names := make([]string, len(ws))
	texts := make([]string, len(ws))
	for i, w := range ws {
		names[i], texts[i] = kg.EntityTextOf(g, w.End), PathText(g, w)
	}
	cos, err := sim.Scores(ctx, names)
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(ws))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(cos[b], cos[a]); c != 0 {
			return c
		}
		return strings.Compare(texts[a], texts[b])
	})
	out := make([]Path, len(ws))
	for i, j := range idx {
		out[i] = ws[j]
	}
	return out, nil
}

// pathKey names a relation path by its relations and directions, so that
// ties order alike whatever ids a backend gave the relations.
func pathKey(g kg.Reader, steps []signals.Step) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString(g.RelationName(s.Rel))
		if s.Inverse {
			b.WriteByte('<')
		} else {
			b.WriteByte('>')
		}
	}
	return b.String()
}

// sortRel orders relation paths best first, then by their relations'
// names, so decoding is deterministic on every backend.
func sortRel(ps []relPath) {
	slices.SortFunc(ps, func(a, b relPath) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
}

// walks returns up to limit entity paths along steps from anchors (in
// anchor order, then the KG's order of each entity's edges). A walk never
// steps straight back over the triple it arrived by: "the father of X's
// son" reaches X by the son's parents triple, while X's own children
// triple walked back says nothing.
func walks(g kg.Reader, anchors []int32, steps []signals.Step, limit int) []Path {
	var out []Path
	triples := make([]int32, 0, len(steps))
	var walk func(e int32, i int)
	walk = func(e int32, i int) {
		if len(out) >= limit {
			return
		}
		if i == len(steps) {
			out = append(out, Path{Start: anchorOf(g, triples, steps, e), End: e, Triples: slices.Clone(triples), Steps: steps})
			return
		}
		s := steps[i]
		ids := g.OutRel(e, s.Rel)
		if s.Inverse {
			ids = g.InRel(e, s.Rel)
		}
		for _, id := range ids {
			if i > 0 && triples[i-1] == id {
				continue
			}
			triples = append(triples, id)
			walk(signals.Far(g, id, s), i+1)
			triples = triples[:i]
			if len(out) >= limit {
				return
			}
		}
	}
	for _, a := range anchors {
		walk(a, 0)
	}
	return out
}

// anchorOf returns the entity a walk along triples and steps ending at
// end left from.
func anchorOf(g kg.Reader, triples []int32, steps []signals.Step, end int32) int32 {
	if len(triples) == 0 {
		return end
	}
	return signals.Near(g, triples[0], steps[0])
}

// PathText writes p as GCR writes a reasoning path: "A -> r -> B" along
// each triple, "A <- r <- B" against it.
func PathText(g kg.Reader, p Path) string {
	var b strings.Builder
	b.WriteString(g.EntityName(p.Start))
	cur := p.Start
	for i, id := range p.Triples {
		arrow := " -> "
		if p.Steps[i].Inverse {
			arrow = " <- "
		}
		cur = signals.Far(g, id, p.Steps[i])
		b.WriteString(arrow + g.RelationName(p.Steps[i].Rel) + arrow + g.EntityName(cur))
	}
	return b.String()
}

// fill writes the decoded paths into res: their triples as evidence
// (Match.Graph the path's rank, SchemaTriple its step, TScore and Cum its
// score), one chain per path, and the hypotheses as answers, in the order
// of the first path reaching each (Answer.Score that path's score). That
// is how the released code orders the K outputs when no general LLM
// reasons over them: by how many identical outputs the beam produced,
// then by beam rank; decoded paths here are distinct, so by beam rank.
func fill(g kg.Reader, paths []Path, res *tracing.Result) {
	seen := map[int32]bool{}
	answered := map[int32]bool{}
	for k, p := range paths {
		for i, id := range p.Triples {
			if !seen[id] {
				seen[id] = true
				res.Evidence = append(res.Evidence, tracing.Match{Graph: k, SchemaTriple: i, Triple: id, TScore: p.Score, Cum: p.Score})
			}
		}
		res.Chains = append(res.Chains, PathText(g, p))
		if !answered[p.End] {
			answered[p.End] = true
			res.Answers = append(res.Answers, tracing.Answer{Entity: p.End, Name: g.EntityName(p.End), Score: p.Score, Graph: k})
		}
	}
}
