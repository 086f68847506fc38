// Package dog is DoG's retrieval (Li et al., "Decoding on Graphs",
// sections 2.2-2.4 and algorithm 1) as a stem retrieval strategy,
// standing on its own by default, with the paper's LLM as an option
// (Settings.LLM):
//
//  1. Well-formed chains (section 2.2): a chain is a sequence of KG
//     triples starting at the question entities, each triple touching an
//     entity the chain has visited (an anchor or an end of an earlier
//     triple) and none repeated. That is the query-centric subgraph G_q
//     (section 2.3, eq. 1): it starts as the anchors' triples and grows by
//     the triples at the ends of each generated one, and a step may only
//     be a triple of G_q, so every step is a KG triple (graph-aware
//     constrained decoding, eq. 2).
//
//  2. Triple-level beam search (section 2.4, algorithm 1): the bs best
//     chains are kept at every step, a chain's score S the sum of its
//     triples' scores (eq. 3), up to T triples.
//
//  3. With the LLM (Settings.LLM), the paper's procedure: the prompt is
//     its table 6 (prompts/table6.txt, three worked examples) over the
//     question graph, the triples nearest the question by the encoder with
//     the paths that connect them to the question entities, up to 120
//     (section 3.1, appendix B), which is also the graph G_q grows in. A
//     triple's score is its log-probability given the prompt and the
//     chain so far; after each triple the model writes its own text
//     ("This tells us ...") and either opens another triple or concludes
//     ("Therefore, the answer is * X"), which ends the chain. The answers
//     are the entities of the top chain its conclusion names.
//
//     Without an LLM, the stand-in follows eq. 3's flow: a chain's score
//     S is the sum of its triples' scores, each triple scored one by one
//     as it is generated, by the log-probability of that triple among the
//     chain's continuations: the log-softmax, over the continuations, of
//     the encoder's cosine of the whole question and the triple's words
//     (head's name, relation words, tail's name) over a temperature of
//     0.05. For the model's choice to conclude, a chain stops when no
//     continuation's relation words fit the question (signals.Similarity,
//     entity mentions masked) better than its own. The answer step reads
//     the top chain as the paper's examples do: the far end of its last
//     triple, with the ends of the chain's other triples that leave the
//     same entity by the same relation (table 6's second example answers
//     "playwright, and poet" from two such triples). --dog-score chain
//     keeps the earlier stand-in: one cosine of the question and the
//     chain's relation words in order, stopping one of the beam's options.
//
// Only the top chain answers (the paper's model answers from the chain it
// generated); its triples are the evidence, so every answer is backed
// (tracing.Audit; it must be 0). Planner help is the labelled
// planner-assisted mode (Config.PlanWeight above 0): a chain's score adds
// PlanWeight times signals.PlanScore of its relation path when it is one.
// At 0, the default, Retrieve reads neither the projection nor the
// strategy.
//
// What the paper does, what stands in here, and why (the default mode):
//
//   - Graph. Paper: each question comes with its own graph of about 120
//     triples (section 3.1), inside which G_q grows. Here: the same, for
//     the stand-in as for the LLM mode (QuestionGraph: the triples within
//     T hops nearest the question by the encoder, with the triples that
//     connect them to the question entities); --dog-whole-kg lets the
//     stand-in's chains grow over the whole KG instead. Choosing the
//     graph encodes up to 20,000 triples per question, the stand-in's
//     main cost on a hub-heavy KG (MetaQA).
//   - Scoring. Paper: an LLM scores each generated triple by its
//     log-probability given the prompt and the chain so far, entity names
//     and all, and S sums them (eq. 3). Here: the same sum, each triple's
//     score a log-probability among the chain's continuations from the
//     encoder's cosine of the question and the triple's words, names
//     included; what the chain said before a triple is not read (a
//     sentence encoder has no such conditioning; the LLM's is the
//     prompt). Why: no LLM can run here, and a softmax over the allowed
//     triples is what graph-constrained decoding normalises over. No
//     training is involved (the paper fine-tunes none). --dog-score chain
//     scores the chain whole by its relation words instead (names unread).
//   - Conclusion. Paper: the LLM writes "Therefore, the answer is". Here:
//     a chain stops when no continuation's relation words fit the question
//     better than its own; why: a sum of log-probabilities only falls as a
//     chain grows, so it cannot itself say when to stop.
//   - Answers: the top chain's last triple's far end (one answer, or a
//     few that leave the same entity by the same relation).
//   - The paper's figure (table 2: WebQSP Hits@1 90.99, Llama-3.1-8B,
//     beam 2, on its processed WebQSP) is printed beside ours by stem
//     compare (peers.Reported).
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
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/tracing"
)

// Name is the strategy's name in the registry.
const Name = "dog"

// Doc describes the strategy in --help and errors.
const Doc = "DoG: well-formed triple chains from the question entities, graph-constrained triple by triple, beam bs=2 up to T=3 triples, the top chain's answer (encoder stand-in: each triple's log-probability among the continuations from its words and names, summed as eq. 3, a chain stops when no continuation's relation words fit better; --dog-llm: the paper's table 6 prompt over the 120-triple question graph, the LLM's log-probabilities of each triple, its own text between triples and its conclusion)"

// Settings are DoG's flags.
type Settings struct {
	// Beam is bs. The paper reports 1, 2 and 3 (table 2, within 1.6
	// points of each other); 2 is the setting of its analyses (tables 4
	// and 5), so it is the default.
	Beam int `flag:"dog-beam" min:"1" max:"100" category:"peers" usage:"dog: chains kept per step, the beam size bs (2, the paper's tables 4-5; table 2 reports 1, 2 and 3)"`
	// Depth is T, the most triples in a chain. The paper gives no value;
	// 3 covers the 1- to 3-hop benchmarks stem runs.
	Depth int `flag:"dog-depth" min:"1" max:"8" category:"peers" usage:"dog: the most triples in a chain, T (3; the paper sets no value)"`
	// WholeKG has the stand-in's chains grow over the whole KG instead of
	// the question graph.
	WholeKG bool `flag:"dog-whole-kg" category:"peers" usage:"dog: the no-LLM stand-in's chains grow over the whole KG from the question entities instead of inside the 120-triple question graph the paper (and --dog-llm) works in"`
	// Score is how the no-LLM stand-in scores a chain: ScoreTriple (eq.
	// 3's flow, the default) or ScoreChain (the earlier stand-in).
	Score string `flag:"dog-score" placeholder:"triple|chain" category:"peers" usage:"dog: the no-LLM stand-in's chain score: the sum of its triples' scores, each triple's log-probability among the chain's continuations from the encoder's cosine of the question and the triple's words, entity names included (triple, the paper's eq. 3), or one cosine of the question and the chain's relation words in order (chain, the earlier stand-in)"`
	// LLM runs the paper's procedure over the LLM.
	LLM bool `flag:"dog-llm" category:"peers" usage:"dog: the paper's procedure over the LLM: table 6 prompt over the 120-triple question graph, each triple scored by its log-probability (/v1/completions with echo and logprobs), the model's own text between triples and its conclusion (needs --llm-model)"`
}

// DefaultSettings returns bs = 2, T = 3, triple scores, no LLM.
func DefaultSettings() Settings { return Settings{Beam: 2, Depth: 3, Score: ScoreTriple} }

// How the no-LLM stand-in scores a chain (Settings.Score).
const (
	ScoreTriple = "triple"
	ScoreChain  = "chain"
)

// Check implements plan.SettingsChecker.
func (s Settings) Check(llm bool) error {
	if s.Score != "" && s.Score != ScoreTriple && s.Score != ScoreChain {
		return fmt.Errorf("--dog-score %q: want %s or %s", s.Score, ScoreTriple, ScoreChain)
	}
	return signals.LLMFlag{Name: "--dog-llm", On: s.LLM}.Check(llm)
}

// Open builds DoG from the pipeline's environment and its settings, as
// the registry does.
func Open(ctx context.Context, env plan.Env, s Settings) (plan.Retriever, error) {
	cfg := DefaultConfig()
	cfg.Beam, cfg.Depth, cfg.PlanWeight, cfg.WholeKG = s.Beam, s.Depth, env.PlanWeight, s.WholeKG
	cfg.ChainScore = s.Score == ScoreChain
	if s.LLM {
		c, err := signals.OpenChat(env, "--dog-llm")
		if err != nil {
			return nil, err
		}
		cfg.LLM = c
	}
	r, err := New(ctx, env, cfg)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Config holds DoG's parameters. A zero count takes DefaultConfig's
// value; PlanWeight is taken as given (0 is no planner help). A negative
// field is an error.
type Config struct {
	// Beam is bs, Depth is T (Settings).
	Beam, Depth int
	// PlanWeight weighs the planner's relation paths (the planner-assisted
	// mode); 0 runs DoG standing alone.
	PlanWeight float32
	// MaxCandidates caps the triples a chain may continue by, the lowest
	// ids kept (2000): a hub (MetaQA's genre Drama has 4,030 edges) would
	// otherwise cost a score per edge at every step.
	MaxCandidates int
	// GraphTriples is the size of the LLM's question graph (120, section
	// 3.1); GraphScan caps the triples within T hops it is chosen from
	// (20000).
	GraphTriples, GraphScan int
	// MaxTextTokens bounds the model's text after each triple and its
	// conclusion (64 tokens).
	MaxTextTokens int
	// WholeKG lets the stand-in's chains grow over the whole KG; by
	// default they grow inside the question graph (QuestionGraph), as the
	// paper's and the LLM mode's do.
	WholeKG bool
	// ChainScore has the stand-in score a chain by one cosine of the
	// question and its relation words in order, a continuation kept only
	// when it scores better than stopping (the earlier stand-in), instead
	// of eq. 3's sum of triple scores.
	ChainScore bool
	// Temperature turns the stand-in's cosines of the question and each
	// continuation into log-probabilities (log-softmax of cosine over
	// Temperature among a chain's continuations): 0.05, so a cosine 0.05
	// higher is e times likelier. Chosen once, not tuned.
	Temperature float32

	// LLM, when set, runs the paper's procedure (package doc);
	// *llm.Client implements it.
	LLM Model
}

// DefaultConfig returns bs = 2, T = 3, the bounds above, no planner help
// and no LLM.
func DefaultConfig() Config {
	return Config{Beam: 2, Depth: 3, MaxCandidates: 2000, GraphTriples: 120, GraphScan: 20000, MaxTextTokens: 64, Temperature: 0.05}
}

// withDefaults fills zero fields and rejects negative ones.
func (c Config) withDefaults() (Config, error) {
	if c.Beam < 0 || c.Depth < 0 || c.PlanWeight < 0 || c.MaxCandidates < 0 || c.GraphTriples < 0 || c.GraphScan < 0 || c.MaxTextTokens < 0 || c.Temperature < 0 {
		return c, fmt.Errorf("dog: config %+v: negative value", c)
	}
	d := DefaultConfig()
	for _, f := range []struct{ v, def *int }{{&c.Beam, &d.Beam}, {&c.Depth, &d.Depth}, {&c.MaxCandidates, &d.MaxCandidates},
		{&c.GraphTriples, &d.GraphTriples}, {&c.GraphScan, &d.GraphScan}, {&c.MaxTextTokens, &d.MaxTextTokens}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if c.Temperature == 0 {
		c.Temperature = d.Temperature
	}
	return c, nil
}

// Retriever is DoG's retrieval. It holds no mutable state, so it is safe
// for concurrent use.
type Retriever struct {
	enc models.Encoder
	cfg Config
}

// New builds DoG's retriever from the pipeline's environment and cfg; it
// needs the encoder (the stand-in, and the LLM's question graph), and
// reads the KG of each question from its Request.
func New(ctx context.Context, env plan.Env, cfg Config) (*Retriever, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if env.Encoder == nil {
		return nil, fmt.Errorf("dog: no encoder")
	}
	return &Retriever{enc: env.Encoder, cfg: c}, nil
}

// UsesPlan implements plan.PlanUser: DoG reads the planner's paths only
// in the planner-assisted mode.
func (r *Retriever) UsesPlan() bool { return r.cfg.PlanWeight > 0 }

// Reach implements plan.Reacher: a chain walks at most T hops.
func (r *Retriever) Reach() int { return r.cfg.Depth }

// Mode implements plan.Moder.
func (r *Retriever) Mode() string {
	m := signals.Mode(r.cfg.PlanWeight, r.cfg.LLM != nil)
	if r.cfg.WholeKG && r.cfg.LLM == nil {
		m += ", whole KG"
	}
	if r.cfg.ChainScore && r.cfg.LLM == nil {
		m += ", chain score"
	}
	return m
}

// Step is one triple of a chain: KG triple Triple, walked from entity
// From (visited before it) to To.
type Step struct {
	Triple   int32
	From, To int32
	// Rel is the step's relation, Inverse when From is the triple's tail.
	Rel signals.Step
}

// Chain is a well-formed chain being decoded.
type Chain struct {
	Steps []Step
	// Score is S, the chain's score as decoding goes on; End its score as
	// a chain that stops after its last triple (the stand-in's).
	Score, End float32
	// Done says the chain has stopped.
	Done bool
	// Texts[i] is the model's text after step i, Conclusion its
	// conclusion ("Therefore, the answer is ..."), under the LLM.
	Texts      []string
	Conclusion string
}

// Path returns the chain's relation path when it is one, each step
// leaving where the one before arrived, and nil when it branches.
func (c Chain) Path() []signals.Step {
	out := make([]signals.Step, len(c.Steps))
	for i, s := range c.Steps {
		if i > 0 && s.From != c.Steps[i-1].To {
			return nil
		}
		out[i] = s.Rel
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
	anchors := signals.Anchors(g, req, res)
	top, err := r.decode(ctx, g, req, anchors, res)
	if err != nil {
		return nil, fmt.Errorf("dog: question %q: %w", req.Question, err)
	}
	if top != nil {
		r.answer(g, *top, res)
	} else {
		res.Problems = append(res.Problems, "empty evidence: no chain was decoded")
	}
	res.Unbacked = tracing.Audit(g, res)
	ev.Timings[plan.StageTrace] = time.Since(start)
	return ev, nil
}

// session is one question's scoring: the stand-in's or the LLM's.
type session interface {
	// score returns the scores of c continued by each of steps, as chains
	// that go on (next) and as chains that stop there (end).
	score(ctx context.Context, c Chain, steps []Step) (next, end []float32, err error)
	// grew is called on each chain the beam kept after it grew by a
	// triple; the LLM writes its text, which may conclude the chain.
	grew(ctx context.Context, c *Chain) error
	// conclude ends a chain that reached T triples undecided.
	conclude(ctx context.Context, c *Chain) error
	// stops reports whether stopping is a chain's own option in the beam
	// (the stand-in's rule) rather than the model's decision.
	stops() bool
	// allowed reports whether a triple may be a step (the LLM's question
	// graph); nil allows every KG triple.
	allowed() func(int32) bool
}

// decode runs the triple-level beam search of algorithm 1 and returns the
// top chain, nil when none was decoded.
func (r *Retriever) decode(ctx context.Context, g kg.Reader, req plan.Request, anchors []int32, res *tracing.Result) (*Chain, error) {
	if len(anchors) == 0 {
		return nil, nil
	}
	var plans []signals.PlanPath
	if r.cfg.PlanWeight > 0 {
		plans = signals.PlanPaths(g, req.Projection)
	}
	var s session
	var err error
	if r.cfg.LLM != nil {
		var problem string
		if s, problem, err = r.llmSession(ctx, g, req, anchors, plans); problem != "" && err == nil {
			res.Problems = append(res.Problems, problem)
		}
	} else {
		var problem string
		if s, problem, err = r.standIn(ctx, g, req, anchors, plans); problem != "" && err == nil {
			res.Problems = append(res.Problems, problem)
		}
	}
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
			// Under the stand-in, stopping here is one of the chain's
			// options; the empty chain answers nothing and cannot stop.
			if s.stops() && len(c.Steps) > 0 {
				stopped := c
				stopped.Score, stopped.Done = c.End, true
				pool = append(pool, stopped)
			}
			cands, cut := candidates(g, anchors, c, s.allowed(), r.cfg.MaxCandidates)
			capped = capped || cut
			if len(cands) == 0 {
				if !s.stops() && len(c.Steps) > 0 {
					pool = append(pool, c) // nowhere to go: the model must conclude
				}
				continue
			}
			next, end, err := s.score(ctx, c, cands)
			if err != nil {
				return nil, err
			}
			last := depth == r.cfg.Depth-1
			for i, st := range cands {
				ch := Chain{Steps: append(slices.Clip(c.Steps), st), Score: next[i], End: end[i], Texts: slices.Clip(c.Texts)}
				if last && s.stops() {
					// At depth T a continuation must stop, so it competes
					// by its score as a stopped chain.
					ch.Score, ch.Done = end[i], true
				}
				pool = append(pool, ch)
			}
		}
		sortChains(pool)
		beam = pool[:min(len(pool), r.cfg.Beam)]
		for i := range beam {
			if !beam[i].Done && len(beam[i].Texts) < len(beam[i].Steps) {
				if err := s.grew(ctx, &beam[i]); err != nil {
					return nil, err
				}
			}
		}
	}
	for i := range beam {
		if !beam[i].Done {
			if err := s.conclude(ctx, &beam[i]); err != nil {
				return nil, err
			}
		}
	}
	if capped {
		res.Problems = append(res.Problems, fmt.Sprintf("continuations cut at %d triples per chain: some chains are missing", r.cfg.MaxCandidates))
	}
	sortChains(beam)
	if len(beam) == 0 || len(beam[0].Steps) == 0 {
		return nil, nil
	}
	return &beam[0], nil
}

// standIn is the no-LLM session. By default (eq. 3's flow) a chain's
// score is the sum of its triples' scores, each the log-probability of
// the triple among the chain's continuations, from the encoder's cosine
// of the whole question (entity names and all) and the triple's words
// (tripleWords); a chain concludes when no continuation's relation words
// fit the question better than its own (chain.conclude). With
// Config.ChainScore, a chain's score is the question's similarity to its
// relation words in order, stopping keeps the score. The plan term is
// added in the planner-assisted mode. Its chains grow inside the question
// graph the LLM mode reads (QuestionGraph, 120 triples), unless
// Config.WholeKG; problem says where that graph's scan bound was hit.
func (r *Retriever) standIn(ctx context.Context, g kg.Reader, req plan.Request, anchors []int32, plans []signals.PlanPath) (session, string, error) {
	sim, err := signals.NewSimilarity(ctx, r.enc, req.Question, signals.Mentions(req))
	if err != nil {
		return nil, "", err
	}
	s := &standIn{g: g, sim: sim, plans: plans, weight: r.cfg.PlanWeight, anchors: anchors, limit: r.cfg.MaxCandidates, temperature: r.cfg.Temperature}
	if !r.cfg.ChainScore {
		// The whole question: a triple's entity names are read against
		// the names the question gives, as the LLM reads them.
		if s.triples, err = signals.NewSimilarity(ctx, r.enc, req.Question, nil); err != nil {
			return nil, "", err
		}
	}
	if r.cfg.WholeKG {
		return s, "", nil
	}
	ids, cut, err := QuestionGraph(ctx, g, r.enc, req.Question, anchors, r.cfg.Depth, r.cfg.GraphTriples, r.cfg.GraphScan)
	if err != nil {
		return nil, "", err
	}
	s.inside = make(map[int32]bool, len(ids))
	for _, id := range ids {
		s.inside[id] = true
	}
	problem := ""
	if cut {
		problem = fmt.Sprintf("question graph chosen among the first %d triples within %d hops", r.cfg.GraphScan, r.cfg.Depth)
	}
	return s, problem, nil
}

type standIn struct {
	g   kg.Reader
	sim *signals.Similarity
	// triples scores a triple's words against the whole question; nil
	// under Config.ChainScore.
	triples     *signals.Similarity
	temperature float32
	anchors     []int32
	limit       int
	plans       []signals.PlanPath
	weight      float32
	// inside is the question graph a step must be in; nil allows every
	// KG triple (Config.WholeKG).
	inside map[int32]bool
}

// chainScores returns the question's cosine with the relation words of
// c continued by each of steps (the earlier stand-in's chain score).
func (s *standIn) chainScores(ctx context.Context, c Chain, steps []Step) ([]float32, error) {
	prefix := make([]signals.Step, len(c.Steps))
	for i, st := range c.Steps {
		prefix[i] = st.Rel
	}
	texts := make([]string, len(steps))
	for i, st := range steps {
		texts[i] = signals.Words(s.g, append(slices.Clip(prefix), st.Rel))
	}
	return s.sim.Scores(ctx, texts)
}

// addPlan adds w times the plan score of c continued by each of steps to
// out, in the planner-assisted mode (w above 0).
func (s *standIn) addPlan(c Chain, steps []Step, out []float32, w float32) {
	if w <= 0 {
		return
	}
	path := c.Path()
	for i, st := range steps {
		// Only a chain that is a path from an anchor can follow a
		// planned relation path.
		if path != nil && (len(c.Steps) == 0 || st.From == c.Steps[len(c.Steps)-1].To) {
			out[i] += w * signals.PlanScore(s.plans, append(slices.Clip(path), st.Rel))
		}
	}
}

// tripleWords is a triple as the stand-in reads it: its head's name, its
// relation's words and its tail's name, in the KG's order.
func tripleWords(g kg.Reader, id int32) string {
	t := g.Triple(id)
	return g.EntityName(t.Head) + " " + kg.RelationTextOf(g, t.Rel) + " " + g.EntityName(t.Tail)
}

func (s *standIn) score(ctx context.Context, c Chain, steps []Step) ([]float32, []float32, error) {
	var out []float32
	var err error
	if s.triples == nil {
		out, err = s.chainScores(ctx, c, steps)
	} else {
		out, err = s.tripleScores(ctx, c, steps)
	}
	if err != nil {
		return nil, nil, err
	}
	w := s.weight
	if s.triples != nil {
		// Under eq. 3 a triple's score is a cosine over the
		// temperature, so the plan term is too: a plan score of 1
		// weighs as a cosine 1 higher in either mode.
		w /= s.temperature
	}
	s.addPlan(c, steps, out, w)
	return out, out, nil
}

// tripleScores returns S of c continued by each of steps (eq. 3): c's
// score plus the step's triple score, the log-softmax over steps of the
// question's cosine with each triple's words over the temperature.
func (s *standIn) tripleScores(ctx context.Context, c Chain, steps []Step) ([]float32, error) {
	texts := make([]string, len(steps))
	for i, st := range steps {
		texts[i] = tripleWords(s.g, st.Triple)
	}
	cos, err := s.triples.Scores(ctx, texts)
	if err != nil {
		return nil, err
	}
	top := float32(math.Inf(-1))
	for _, v := range cos {
		top = max(top, v/s.temperature)
	}
	var sum float64
	for _, v := range cos {
		sum += math.Exp(float64(v/s.temperature - top))
	}
	norm := top + float32(math.Log(sum))
	out := make([]float32, len(cos))
	for i, v := range cos {
		out[i] = c.Score + v/s.temperature - norm
	}
	return out, nil
}

// grew is where, under eq. 3's scores, the stand-in concludes for the
// model: a chain stops when no continuation's relation words fit the
// question better than its own (the stopping rule of the chain score,
// the plan term included in the planner-assisted mode).
func (s *standIn) grew(ctx context.Context, c *Chain) error {
	if s.triples == nil {
		return nil
	}
	cands, _ := candidates(s.g, s.anchors, *c, s.allowed(), s.limit)
	if len(cands) == 0 {
		return nil
	}
	prefix, last := Chain{Steps: c.Steps[:len(c.Steps)-1]}, c.Steps[len(c.Steps)-1:]
	own, err := s.chainScores(ctx, prefix, last)
	if err != nil {
		return err
	}
	next, err := s.chainScores(ctx, *c, cands)
	if err != nil {
		return err
	}
	// The plan term as the chain score has it (planner-assisted mode).
	s.addPlan(prefix, last, own, s.weight)
	s.addPlan(*c, cands, next, s.weight)
	if slices.Max(next) <= own[0] {
		c.Done = true
	}
	return nil
}

func (s *standIn) conclude(_ context.Context, c *Chain) error {
	c.Done = true
	return nil
}

// stops is the earlier stand-in's rule (stopping competes in the beam);
// under eq. 3 the stand-in concludes in grew, as the model would.
func (s *standIn) stops() bool { return s.triples == nil }

func (s *standIn) allowed() func(int32) bool {
	if s.inside == nil {
		return nil
	}
	return func(id int32) bool { return s.inside[id] }
}

// candidates returns the steps chain c may continue by: the triples of
// the query-centric subgraph, those at an entity c visited, that c does
// not hold yet (and that allowed admits), in triple id order, at most
// limit of them. A triple joining two visited entities is walked from the
// later visited one, so that a chain that is a path stays one.
func candidates(g kg.Reader, anchors []int32, c Chain, allowed func(int32) bool, limit int) ([]Step, bool) {
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
				if seen[id] || slices.Contains(used, id) || (allowed != nil && !allowed(id)) {
					continue
				}
				seen[id] = true
				t := g.Triple(id)
				s := Step{Triple: id, From: t.Head, To: t.Tail, Rel: signals.Step{Rel: t.Rel}}
				if order(t.Tail) > order(t.Head) {
					s = Step{Triple: id, From: t.Tail, To: t.Head, Rel: signals.Step{Rel: t.Rel, Inverse: true}}
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
// comes first (the stand-in's rule: a continuation must score better than
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

// Answers returns the steps of chain c whose far ends answer it without
// an LLM: its last step, with the earlier steps that leave the same
// entity by the same relation and direction, in chain order (table 6's
// second example answers "playwright, and poet" from two such triples).
func Answers(c Chain) []int {
	if len(c.Steps) == 0 {
		return nil
	}
	last := c.Steps[len(c.Steps)-1]
	var out []int
	for i, s := range c.Steps {
		if s.From == last.From && s.Rel == last.Rel {
			out = append(out, i)
		}
	}
	return out
}

// answer fills res from the top chain: its triples as evidence (Match.
// SchemaTriple the step, TScore and Cum the chain's score), its answers
// (the LLM's conclusion's, else Answers'), and for each answer the path
// within the chain from an anchor to it, in tracing's chain format.
func (r *Retriever) answer(g kg.Reader, c Chain, res *tracing.Result) {
	for i, s := range c.Steps {
		res.Evidence = append(res.Evidence, tracing.Match{SchemaTriple: i, Triple: s.Triple, TScore: c.Score, Cum: c.Score})
	}
	steps := Answers(c)
	if r.cfg.LLM != nil {
		if named, ok := concluded(g, c); ok {
			steps = named
		} else {
			res.Problems = append(res.Problems, "the model's conclusion names no entity of its chain; the chain's last triple answers")
		}
	}
	seen := map[int32]bool{}
	for _, i := range steps {
		e := c.Steps[i].To
		if seen[e] {
			continue
		}
		seen[e] = true
		res.Answers = append(res.Answers, tracing.Answer{Entity: e, Name: g.EntityName(e), Score: c.Score})
		res.Chains = append(res.Chains, chainLine(g, c, i))
	}
}

// chainLine writes the path within chain c from an anchor to the far end
// of step i, in tracing's format ("A -> relation -> B" along an edge, "A
// <- relation <- B" against it). A well-formed chain may branch; each
// step leaves an entity an earlier step (or an anchor) reached, so
// walking back from step i always ends at an anchor.
func chainLine(g kg.Reader, c Chain, i int) string {
	var path []Step
	for i >= 0 {
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
		if s.Rel.Inverse {
			arrow = " <- "
		}
		b.WriteString(arrow + g.RelationName(s.Rel.Rel) + arrow + g.EntityName(s.To))
	}
	return b.String()
}
