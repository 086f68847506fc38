package tracing

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/schema"
)

// TextMode is how schema and KG triples are turned into text for the T-Score
// (see the package doc, "Triple text").
type TextMode int

const (
	// TextFarMention compares relation text plus the far end when that end
	// is a question mention (a constraint such as "[ENT1] genre Comedy").
	// The near end is left out on both sides: it is the entity the walk
	// stands on, the same on both sides by construction, and including it
	// only inflates every cosine towards 1. The default.
	TextFarMention TextMode = iota
	// TextKnownEnds drops, on both sides, every end that is a placeholder
	// in the schema triple and keeps the mentions, near or far.
	TextKnownEnds
	// TextFull encodes the KG triple whole and the schema triple without its
	// placeholders (the paper's eq. 12 read literally).
	TextFull
	// TextRelation compares relation text only.
	TextRelation
)

// String names the mode for logs and flags.
func (m TextMode) String() string {
	switch m {
	case TextFarMention:
		return "far-mention"
	case TextKnownEnds:
		return "known-ends"
	case TextFull:
		return "full"
	case TextRelation:
		return "relation"
	}
	return fmt.Sprintf("TextMode(%d)", int(m))
}

// Config holds the tracing parameters; DefaultConfig gives the paper's values.
type Config struct {
	// TopN is how many anchor candidates a question entity gets (paper: 50).
	TopN int `flag:"top-n" min:"0" usage:"anchor candidates per question entity, by similarity (paper: 50; 0 = exact names only)"`
	// Lambda is the entity-level bias, multiplicative, for guidance
	// entities (1.5); Tau the triple-level bias, additive, for guidance
	// triples (0.5); Theta the Breadth threshold on the T-Score (0.6).
	Lambda float32 `flag:"lambda" min:"0" usage:"entity-level guidance bias, multiplicative (paper: 1.5)"`
	Tau    float32 `flag:"tau" min:"0" usage:"triple-level guidance bias, additive (paper: 0.5)"`
	Theta  float32 `flag:"theta" min:"-1" max:"2" usage:"Breadth threshold on the T-Score (paper: 0.6)"`

	// Ablations: ignore the guidance graph's entities / triples.
	NoEntityBias bool `flag:"no-entity-bias" usage:"ablation: no guidance boost for anchor entities"`
	NoTripleBias bool `flag:"no-triple-bias" usage:"ablation: no guidance boost for KG triples"`
	// Selection is which edges a step keeps: the strategy's choice, or
	// (an ablation) greedy or threshold selection whatever the strategy.
	// OnlyGreedy and OnlyThreshold are the older switches for the same
	// ablations; Selected reads the three.
	Selection     Selection `flag:"selection" usage:"which KG edges a tracing step keeps: strategy (greedy for precision, threshold for breadth), or, as an ablation, greedy or threshold whatever the strategy"`
	OnlyGreedy    bool      `flag:"only-greedy" usage:"ablation: greedy selection whatever the strategy (--selection greedy)"`
	OnlyThreshold bool      `flag:"only-threshold" usage:"ablation: threshold selection whatever the strategy (--selection threshold)"`

	// Workers bounds concurrency over candidate graphs x anchors
	// (0 = GOMAXPROCS).
	Workers int

	// Text is how triples are written for the encoder.
	Text TextMode `flag:"triple-text" usage:"how schema and KG triples are written for the encoder: far-mention, known-ends, full or relation (see package tracing)"`
	// StringWeight is the weight of the edit-distance ratio against the
	// embedding cosine in anchoring (0.5); an exact normalised name scores 1.
	StringWeight float32
	// StrictTheta disables Breadth's fallback to the best edges when no edge
	// reaches Theta.
	StrictTheta bool `flag:"strict-theta" usage:"Breadth keeps no edge when none reaches theta (default: fall back to the best edges)"`
	// MaxFallback bounds Breadth's fallback (0 = no bound): when no edge
	// reaches Theta and more than MaxFallback edges tie at the best score,
	// none is kept. On a large KG such a step is a hub (a gender, a
	// country) entered by a weak match, whose hundreds of thousands of
	// edges of one unrelated relation would otherwise all be kept.
	MaxFallback int `flag:"max-fallback" min:"0" usage:"Breadth: the most tied best edges its fallback keeps when no edge reaches theta; more end the branch (0 = no bound)"`
	// MaxWeak bounds the edges a Breadth step keeps below its best score
	// (0 = no bound); the edges tied at the best are always kept. Over a
	// hub, a relation that only resembles the schema edge's (a country's
	// "location.location.country" for its "official_language", both
	// "location ...") can pass Theta with a hundred thousand edges; the
	// bound keeps the best of them, so the search stays a search.
	MaxWeak int `flag:"max-weak" min:"0" usage:"Breadth: the most edges a step keeps below its best score, best first; edges tied at the best are always kept (0 = no bound)"`
	// SoftSymbols matches a schema edge that names a KG relation exactly
	// by similarity alone, as the paper does: other relations whose text
	// resembles it compete at every step. By default, where the walk's
	// entity has edges of the named relation, only those edges match.
	SoftSymbols bool `flag:"soft-symbols" usage:"ablation: a schema relation the KG names exactly is matched by similarity alone, so resembling relations compete (default: where the entity has edges of that relation, only they match)"`
	// MaxScan and MaxKeep are each search's budget (one schema graph
	// traced from one anchor), applied the same way at every step, hubs
	// or not, so that no question runs for seconds (see budget.go):
	// MaxScan bounds the KG edges its steps score, MaxKeep the edges they
	// keep (its evidence). 0 is no bound.
	MaxScan int `flag:"max-scan" min:"0" usage:"search budget: the most KG edges one search (a schema graph from an anchor) scores over all its steps; a step that would pass it looks at its best relations that fit, or is not taken (0 = no bound)"`
	MaxKeep int `flag:"max-keep" min:"0" usage:"search budget: the most KG edges one search keeps over all its steps, best first where a step would pass it (0 = no bound)"`
	// FallbackScan is the scan budget (as MaxScan) of the searches of a
	// ranked request's readings after the first that binds answers:
	// their answers are not the result's (bestAnswers), only evidence and
	// the alternatives plan selection weighs, so a later reading that
	// walks into a hub (a person's "children" matched to its gender, then
	// every person of that gender) stops there instead of reading a
	// million edges' names. 0 gives them the full budget.
	FallbackScan int `flag:"fallback-scan" min:"0" usage:"search budget of a ranked plan's later readings once an earlier one bound answers: the most KG edges one of their searches scores (0 = the --max-scan budget)"`
	// MaxBranch caps the KG edges kept per step, best first (0 = no cap).
	MaxBranch int `flag:"max-branch" min:"0" usage:"cap on KG edges kept per tracing step (0 = none)"`
	// MaxChains caps Result.Chains (0 = no cap); Breadth over a hub can
	// otherwise produce thousands of lines nobody can prompt with.
	MaxChains int
	// GateTripleBias adds the triple-level bias only to KG edges whose
	// similarity alone reaches Theta, so the guidance graph breaks ties
	// among edges that already match the schema edge instead of letting an
	// edge of another relation outscore an exact match (eq. 12 adds it to
	// every edge; that is the default).
	GateTripleBias bool `flag:"gate-triple-bias" usage:"add the triple-level bias only to edges whose similarity alone reaches theta (the paper adds it to every edge)"`
	// Reuse says which KG edges already matched on a branch may be matched
	// again (ReuseNotBack by default; ReuseNever is the paper's Contradict
	// check read literally).
	Reuse EdgeReuse `flag:"reuse" usage:"which matched KG edges a later schema edge may match again: not-back (all but the edge just walked) or never (the paper's Contradict read literally)"`
	// TripleBias says which edges get the triple-level bias and how much.
	// AnswerRank says how the guidance model's entity scores
	// (Guidance.Scores) order the answers bound to the answer slot;
	// RankTrace, the default, ignores them.
	TripleBias TripleBias `flag:"gnn-bias" category:"guidance" usage:"the triple-level bias (with --gnn): set (the paper: +tau on the guidance graph's triples), score (+tau x the GNN's probability of the edge's far end, on every edge whose far end it scored) or adaptive (score, only at steps where no edge's similarity reaches theta)"`
	AnswerRank AnswerRank `flag:"gnn-answers" category:"guidance" usage:"how the Triple-GNN's entity scores order the answers (with --gnn): off (tracing's S alone), ties (break the ties of S that agreement between candidate graphs leaves) or first (by the GNN's score; S breaks ties)"`
}

// Check reports settings that exclude each other.
func (c Config) Check() error {
	if c.OnlyGreedy && c.OnlyThreshold {
		return fmt.Errorf("--only-greedy and --only-threshold exclude each other")
	}
	if c.Selection != SelectByStrategy && (c.OnlyGreedy || c.OnlyThreshold) && c.Selected() != c.aliased() {
		return fmt.Errorf("--selection %s and --only-greedy or --only-threshold exclude each other", c.Selection)
	}
	return nil
}

// Selection is which KG edges a tracing step keeps.
type Selection int

const (
	// SelectByStrategy is the strategy's choice: greedy for Precision,
	// threshold for Breadth. The default.
	SelectByStrategy Selection = iota
	// SelectGreedy keeps the best-scored edges whatever the strategy (an
	// ablation; OnlyGreedy).
	SelectGreedy
	// SelectThreshold keeps the edges reaching Theta whatever the
	// strategy (an ablation; OnlyThreshold).
	SelectThreshold
)

// Selected returns the selection c asks for: Selection, or the one an
// older switch (OnlyGreedy, OnlyThreshold) names.
func (c Config) Selected() Selection {
	if c.Selection != SelectByStrategy {
		return c.Selection
	}
	return c.aliased()
}

// aliased is the selection the older switches name.
func (c Config) aliased() Selection {
	switch {
	case c.OnlyGreedy:
		return SelectGreedy
	case c.OnlyThreshold:
		return SelectThreshold
	}
	return SelectByStrategy
}

// strategy returns the strategy a graph planned with st is traced with
// under selection sel.
func (sel Selection) strategy(st schema.Strategy) schema.Strategy {
	switch sel {
	case SelectGreedy:
		return schema.Precision
	case SelectThreshold:
		return schema.Breadth
	}
	return st
}

// DefaultConfig returns the paper's parameters: top-N 50 anchor candidates
// (section 3.4), λ 1.5 and τ 0.5 (eq. 10-13, D.4), θ 0.6 (3.5, B.2).
func DefaultConfig() Config {
	return Config{TopN: 50, Lambda: 1.5, Tau: 0.5, Theta: 0.6, StringWeight: 0.5, MaxChains: 500, MaxFallback: 64, MaxWeak: 256,
		MaxScan: DefaultMaxScan, MaxKeep: DefaultMaxKeep, FallbackScan: DefaultFallbackScan}
}

// TripleBias is how the triple-level guidance bias is given.
type TripleBias int

const (
	// BiasSet adds Tau to the guidance graph's triples (paper eq. 12).
	BiasSet TripleBias = iota
	// BiasScore adds Tau x p to every edge whose far end the model
	// scored p (Guidance.Scores): graded where the set is all-or-nothing,
	// so among guidance triples the edge towards the entity the model
	// believes in wins.
	BiasScore
	// BiasAdaptive is BiasScore at the steps where no edge's similarity
	// reaches Theta (relation text cannot tell the edges apart) and no
	// bias where some edge does: the model decides only where the text
	// cannot.
	BiasAdaptive
)

// AnswerRank is how guidance scores order the answers.
type AnswerRank int

const (
	// RankTrace orders answers by tracing's cumulative score S alone
	// (then fewer reversed edges, then more binding graphs, then name).
	RankTrace AnswerRank = iota
	// RankTies breaks the ties left after the binding graphs by the
	// guidance score, before names.
	RankTies
	// RankFirst orders the answers tracing keeps by the guidance score,
	// tracing's order breaking ties.
	RankFirst
)

// EdgeReuse is the rule for matching a KG edge that an earlier schema edge
// of the same branch already matched.
type EdgeReuse int

const (
	// ReuseNotBack never matches the edge the walk arrived at a node by, so
	// a match cannot step straight back; an edge matched further up the
	// branch may be matched again. Gold paths of PQ-3H walk "spouse of the
	// spouse of the spouse of X" (X -> Y -> X -> Y), which re-crosses the
	// first edge: 14.4% of its test questions need this.
	ReuseNotBack EdgeReuse = iota
	// ReuseNever never matches a KG edge twice on one branch (Algorithm 2's
	// Contradict over final_list, read literally).
	ReuseNever
)

// Guidance is the Triple-GNN's global guidance subgraph: entity and triple
// ids of the KG. A nil *Guidance means no guidance.
type Guidance struct {
	Entities map[int32]bool
	Triples  map[int32]bool
	// Scores are the model's probabilities for the entities it scored
	// (the question's subgraph); Config.AnswerRank orders answers by
	// them. An entity without a score ranks below every scored one.
	Scores map[int32]float32
}

// score is e's guidance score, -1 when it has none.
func (g *Guidance) score(e int32) float32 {
	if g == nil {
		return -1
	}
	if s, ok := g.Scores[e]; ok {
		return s
	}
	return -1
}

// Request is one question to trace.
type Request struct {
	// Graphs are the candidate schema graphs; each is traced and the results
	// are merged.
	Graphs   []schema.Graph
	Strategy schema.Strategy
	// Strategies, when not nil, gives each graph its own strategy,
	// parallel to Graphs (the llm planner's candidates each carry the
	// strategy of their SGDA samples); nil traces every graph with
	// Strategy. Precision's cut to the best-scored answers follows the
	// strategy of the graph the best answer came from.
	Strategies []schema.Strategy
	// Mentions are the question's entity mentions. When both Mentions and
	// Anchors are empty, the schema graphs' own mentions are used.
	Mentions []string
	// Anchors are explicit KG entity ids for the question entities, used
	// instead of similarity anchoring. Anchors[i] pairs with Mentions[i] when
	// the lengths agree; otherwise the entity's name stands for the mention.
	Anchors  []int32
	Guidance *Guidance
	// Ranked says Graphs are in a planner's order of preference, best
	// first, rather than equally likely (as the oracle's gold paths are).
	// Answers then come from the first graph that binds any: a planner's
	// later candidates are fallbacks, and their answers would otherwise
	// compete on S with the preferred reading of the question.
	Ranked bool
	// Groups, when not nil, is parallel to Graphs: under Ranked, graphs
	// of one group are one reading of the question (a planner's relation
	// variants, projection.Projection.Groups), so answers come from the
	// first group that binds any, every graph of it together. nil puts
	// each graph in a group of its own.
	Groups []int
	// Alternatives asks, under Ranked, for each group's own answers
	// beside the merged ones (Result.Alternatives), so that a caller can
	// choose among the planner's readings by their evidence.
	Alternatives bool
}

// Anchor is a question entity placed in the KG.
type Anchor struct {
	Mention string
	Entity  int32
	Name    string
	Score   float32 // similarity after the entity-level bias; S0 of the search
}

// Match is one KG triple matched to one schema triple.
type Match struct {
	Graph        int     // index into Request.Graphs
	SchemaTriple int     // index into that graph's Triples
	Triple       int32   // KG triple id
	TScore       float32 // cosine + Bias
	Bias         float32 // triple-level bias added (0 or Tau)
	Cum          float32 // cumulative S after this edge
}

// Answer is a KG entity bound to the answer placeholder.
type Answer struct {
	Entity int32
	Name   string
	Score  float32 // best cumulative S that bound it
	Graph  int     // the schema graph of that best S
	// Reversed counts the KG edges on that branch matched against the
	// schema edge's direction. Between answers of equal S the one reached
	// with fewer reversed edges ranks first, as dropReversedTies does for
	// edges: direction is the one thing the schema still says about them.
	Reversed int
	// Bound is how many of the request's schema graphs bind it (1 for a
	// question entity, which back-and-forth readings all reach). Between
	// answers that still tie, the one more graphs bind ranks first: the
	// planner's other readings of the question agree on it.
	Bound int
}

// better orders answers: higher S first, then (within tieEps) fewer
// reversed edges.
func (a Answer) better(b Answer) bool {
	if a.Score > b.Score+tieEps || a.Score < b.Score-tieEps {
		return a.Score > b.Score
	}
	return a.Reversed < b.Reversed
}

// Result is the retrieved evidence for one Request.
type Result struct {
	Anchors  []Anchor
	Evidence []Match  // each KG triple once, best Cum kept; by Cum desc, then triple id
	Answers  []Answer // by Score desc, then fewer Reversed, then more Bound, then name
	Chains   []string
	// Unbacked counts evidence triples and answers the KG does not back.
	// It must be 0; it exists so that a faithfulness audit is a number.
	Unbacked int
	Problems []string // non-fatal issues met while tracing
	// Alternatives are each group's own answers, in group order, when
	// the request asked for them (Request.Alternatives).
	Alternatives []Alternative
}

// Tracer traces schema graphs over one KG. It is safe for concurrent use.
type Tracer struct {
	g    kg.Reader
	enc  models.Encoder
	add  models.Additive // nil when enc is not additive
	ents *kgvec.Entities
	cfg  Config
	dim  int
	// entParts and relParts are the un-normalised encoder parts of every
	// entity and relation text (Additive encoders only), row-major.
	// entParts is nil when the KG has too many entities to encode them all
	// up front (lazyParts): a run then encodes the few it scores.
	entParts, relParts []float32
	lazyParts          bool
	relByText          map[string]bool
	// heads, rels and tails are the KG's triple table when the backend
	// hands it out (kg.Columnar): the search reads an edge's ends from
	// them instead of a call through the interface per edge.
	heads, rels, tails []int32
	// fars keeps the far ends of hub runs a step collected (farCache);
	// nil without columns.
	fars *farCache
	// kept remembers which edges hub steps kept (keepCache).
	kept *keepCache
	// bigCands and bigRows recycle the candidate and row buffers of hub steps
	// between searches (run.release).
	bigCands, bigRows sync.Pool
	// names ranks the KG's names when it is small and local (nameOrder),
	// so that the merge orders tied triples and answers without reading
	// names; nil otherwise.
	names *nameOrder
	// entityPlaces and triplePlaces recycle the merge's slices of
	// answer and evidence places (places).
	entityPlaces, triplePlaces sync.Pool
	// noPrune turns pruned off, for tests that compare the two.
	noPrune bool
}

// triple returns KG triple id, from the columns when there are some.
func (t *Tracer) triple(id int32) kg.Triple {
	if t.rels != nil {
		return kg.Triple{Head: t.heads[id], Rel: t.rels[id], Tail: t.tails[id]}
	}
	return t.g.Triple(id)
}

const partBatch = 4096

// New prepares a tracer: with an Additive encoder it encodes every entity
// and relation text of g once. ents may be nil, in which case only exact
// normalised names (or explicit anchors) anchor mentions.
func New(g kg.Reader, enc models.Encoder, ents *kgvec.Entities, cfg Config) (*Tracer, error) {
	if g == nil || enc == nil {
		return nil, errors.New("tracing: nil graph or encoder")
	}
	if cfg.Workers < 0 || cfg.TopN < 0 || cfg.MaxBranch < 0 || cfg.MaxChains < 0 || cfg.MaxFallback < 0 || cfg.MaxWeak < 0 || cfg.MaxScan < 0 || cfg.MaxKeep < 0 || cfg.FallbackScan < 0 {
		return nil, fmt.Errorf("tracing: negative Workers, TopN, MaxBranch, MaxChains, MaxFallback, MaxWeak, MaxScan, MaxKeep or FallbackScan in %+v", cfg)
	}
	if cfg.Text < TextFarMention || cfg.Text > TextRelation {
		return nil, fmt.Errorf("tracing: unknown text mode %d", int(cfg.Text))
	}
	t := &Tracer{g: g, enc: enc, ents: ents, cfg: cfg, dim: enc.Dim(), relByText: map[string]bool{}}
	t.heads, t.rels, t.tails = kg.ColumnsOf(g)
	if t.rels != nil {
		// Up to a quarter of the KG's edges, 4 bytes each: about 2% of
		// a snapshot's bytes (46 per triple) at most.
		t.fars = newFarCache(max(len(t.rels)/4, 1<<20))
		t.kept = newKeepCache(1 << 22)
	}
	t.names = newNameOrder(g, t.rels != nil)
	for r := 0; r < g.NumRelations(); r++ {
		t.relByText[kg.RelationTextOf(g, int32(r))] = true
	}
	if a, ok := enc.(models.Additive); ok {
		t.add = a
		ctx := context.Background()
		var err error
		if int64(g.NumEntities())*int64(t.dim)*4 > maxEagerParts {
			t.lazyParts = true
		} else if t.entParts, err = t.parts(ctx, g.NumEntities(), func(id int32) string { return kg.EntityTextOf(g, id) }); err != nil {
			return nil, fmt.Errorf("tracing: encode entities: %w", err)
		}
		if t.relParts, err = t.parts(ctx, g.NumRelations(), func(id int32) string { return kg.RelationTextOf(g, id) }); err != nil {
			return nil, fmt.Errorf("tracing: encode relations: %w", err)
		}
	}
	return t, nil
}

// maxEagerParts bounds the bytes of entity parts encoded up front. Below
// it (MetaQA's 43k entities take 39 MB at 228 dimensions) encoding every
// entity once saves work on every question; above it (a 10M-triple KG has
// millions of entities, gigabytes of parts) the memory is not there, and a
// question scores only the parts of its anchors and of the far ends its
// schema graph names, which a run encodes as it meets them.
const maxEagerParts = 1 << 28

func (t *Tracer) parts(ctx context.Context, n int, text func(int32) string) ([]float32, error) {
	out := make([]float32, n*t.dim)
	texts := make([]string, 0, partBatch)
	for lo := 0; lo < n; lo += partBatch {
		hi := min(lo+partBatch, n)
		texts = texts[:0]
		for i := lo; i < hi; i++ {
			texts = append(texts, text(int32(i)))
		}
		if err := t.add.EncodeParts(ctx, texts, out[lo*t.dim:hi*t.dim]); err != nil {
			return nil, fmt.Errorf("%s rows %d-%d: %w", t.enc.Name(), lo, hi-1, err)
		}
	}
	return out, nil
}

// job is one (schema graph, anchor) search.
type job struct {
	graph  int
	anchor int // index into Result.Anchors
	node   int // schema node the anchor binds
	// pins are the graph's other anchored nodes, bound before the search
	// starts (join): a conjunction's branches must reach them.
	pins []pin
}

// pin is a schema node bound to a KG entity before a search starts.
type pin struct {
	node   int
	entity int32
}

// Trace retrieves the evidence for req. Bad input (invalid schema graphs,
// unanchorable mentions) is reported in Result.Problems; an error means the
// encoder failed or ctx ended.
func (t *Tracer) Trace(ctx context.Context, req Request) (*Result, error) {
	res := &Result{}
	if req.Strategies != nil && len(req.Strategies) != len(req.Graphs) {
		return nil, fmt.Errorf("tracing: %d strategies for %d schema graphs", len(req.Strategies), len(req.Graphs))
	}
	if req.Groups != nil && len(req.Groups) != len(req.Graphs) {
		return nil, fmt.Errorf("tracing: %d groups for %d schema graphs", len(req.Groups), len(req.Graphs))
	}
	strats := make([]schema.Strategy, len(req.Graphs))
	sel := t.cfg.Selected()
	for i := range strats {
		strats[i] = req.Strategy
		if req.Strategies != nil {
			strats[i] = req.Strategies[i]
		}
		strats[i] = sel.strategy(strats[i])
	}
	sgs := make([]*sGraph, len(req.Graphs))
	for i, sg := range req.Graphs {
		if err := sg.Validate(); err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("graph %d: invalid: %v", i, err))
			continue
		}
		s, probs, err := t.compile(ctx, sg)
		if err != nil {
			return nil, fmt.Errorf("tracing: graph %d %s: %w", i, sg, err)
		}
		for _, p := range probs {
			res.Problems = append(res.Problems, fmt.Sprintf("graph %d: %s", i, p))
		}
		sgs[i] = s
	}
	if err := t.anchor(ctx, req, sgs, res); err != nil {
		return nil, err
	}
	jobs := t.assign(sgs, res.Anchors)
	for _, a := range res.Anchors {
		if t.g.Degree(a.Entity) == 0 {
			res.Problems = append(res.Problems, fmt.Sprintf("anchor %q (%s) has no neighbours", a.Mention, a.Name))
		}
	}
	s := &searches{req: req, sgs: sgs, strats: strats, jobs: jobs, outs: make([]runOut, len(jobs))}
	if err := t.runJobs(ctx, s, res.Anchors); err != nil {
		return nil, err
	}
	t.merge(s, res)
	return res, nil
}

// searches is one Trace's work: the request, its compiled schema graphs
// (nil where invalid) with the strategy each is traced with, and each
// (graph, anchor) search with what it found, outs parallel to jobs.
type searches struct {
	req    Request
	sgs    []*sGraph
	strats []schema.Strategy
	jobs   []job
	outs   []runOut
}

// group is schema graph g's group under Ranked (Request.Groups).
func (s *searches) group(g int) int {
	if s.req.Groups != nil {
		return s.req.Groups[g]
	}
	return g
}

// runJobs runs the searches, each search's output in s.outs at its
// job's index; the first error stops them all. A ranked request's
// readings (groups) run in their order until one binds answers, which
// are then the result's (bestAnswers); the later readings run after it,
// all at once, on the fallback budget (Config.FallbackScan).
func (t *Tracer) runJobs(ctx context.Context, s *searches, anchors []Anchor) error {
	if !s.req.Ranked || t.cfg.FallbackScan == 0 || (t.cfg.MaxScan > 0 && t.cfg.FallbackScan >= t.cfg.MaxScan) {
		return t.runWave(ctx, s, anchors, allJobs(len(s.jobs)), false)
	}
	waves := s.waves()
	for i, w := range waves {
		if err := t.runWave(ctx, s, anchors, w, false); err != nil {
			return err
		}
		if s.binds(w) {
			var rest []int
			for _, later := range waves[i+1:] {
				rest = append(rest, later...)
			}
			return t.runWave(ctx, s, anchors, rest, true)
		}
	}
	return nil
}

// allJobs is the indexes 0..n-1.
func allJobs(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// waves groups the jobs' indexes by their graph's group, groups in
// ascending order (the planner's preference).
func (s *searches) waves() [][]int {
	var groups []int
	by := map[int][]int{}
	for i, j := range s.jobs {
		g := s.group(j.graph)
		if _, ok := by[g]; !ok {
			groups = append(groups, g)
		}
		by[g] = append(by[g], i)
	}
	slices.Sort(groups)
	out := make([][]int, len(groups))
	for i, g := range groups {
		out[i] = by[g]
	}
	return out
}

// binds reports whether any of the searches idx bound an answer.
func (s *searches) binds(idx []int) bool {
	for _, i := range idx {
		if len(s.outs[i].answers) > 0 {
			return true
		}
	}
	return false
}

// runWave runs the searches idx on Config.Workers goroutines, on the
// fallback budget when fallback is set.
func (t *Tracer) runWave(ctx context.Context, s *searches, anchors []Anchor, idx []int, fallback bool) error {
	if len(idx) == 0 {
		return nil
	}
	workers := t.cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(idx))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     int
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				stop := firstErr != nil
				mu.Unlock()
				if stop || k >= len(idx) {
					return
				}
				i := idx[k]
				j := s.jobs[i]
				r := newRun(t, s.sgs[j.graph], s.req.Guidance, s.strats[j.graph])
				if fallback {
					r.maxScan, r.out.fallback = t.cfg.FallbackScan, true
				}
				err := r.trace(ctx, j, anchors[j.anchor].Entity, anchors[j.anchor].Score)
				r.release()
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
					return
				}
				s.outs[i] = r.out
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("tracing: %w", firstErr)
	}
	return ctx.Err()
}

const tieEps = 1e-5

// merge folds the searches' outputs, in job order, into res: the
// evidence, the answers in their order, what the searches could not do,
// the audit and the chains.
func (t *Tracer) merge(s *searches, res *Result) {
	res.Evidence = t.evidence(s)
	res.Answers = t.answers(s, res.Anchors)
	res.Alternatives = t.alternatives(s, res.Anchors)
	res.Problems = append(res.Problems, s.problems()...)
	if p := budgetProblem(t.cfg, s.outs); p != "" {
		res.Problems = append(res.Problems, p)
	}
	if len(res.Evidence) == 0 {
		res.Problems = append(res.Problems, "empty evidence: no KG edge matched any schema edge")
	}
	res.Unbacked = t.audit(res)
	res.Chains = t.chains(res)
}

// evidence returns each matched KG triple once, with the best Cum any
// search gave it, by Cum descending, then by the triples' names.
func (t *Tracer) evidence(s *searches) []Match {
	n := 0
	for _, o := range s.outs {
		n += len(o.matches)
	}
	// Sized once: a plan through a hub matches thousands of edges.
	at := t.newPlaces(&t.triplePlaces, len(t.rels), n)
	var out []Match
	for i, o := range s.outs {
		for _, m := range o.matches {
			m.Graph = s.jobs[i].graph
			if k, ok := at.get(m.Triple); ok {
				if m.Cum > out[k].Cum {
					out[k] = m
				}
				continue
			}
			if out == nil {
				out = make([]Match, 0, n)
			}
			at.put(m.Triple, len(out))
			out = append(out, m)
		}
	}
	t.freePlaces(&t.triplePlaces, at, len(out), func(i int) int32 { return out[i].Triple })
	if len(out) == 0 {
		return nil
	}
	// By Cum first; only triples whose Cum ties are ordered by name, each
	// one's names read once, not once per comparison: a hub's evidence is
	// thousands of triples, and a name is a random read.
	slices.SortFunc(out, func(x, y Match) int {
		switch {
		case x.Cum > y.Cum:
			return -1
		case x.Cum < y.Cum:
			return 1
		}
		return 0
	})
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].Cum == out[i].Cum {
			j++
		}
		if j-i > 1 {
			t.sortMatches(out[i:j])
		}
		i = j
	}
	return out
}

// sortMatches sorts ms, each of a distinct triple, as Tracer.byName
// orders their triples: by ranks when the tracer has them, else by names
// read once each.
func (t *Tracer) sortMatches(ms []Match) {
	if t.names != nil {
		sortByKey(ms, func(m Match) tripleRank { return t.rank(m.Triple) }, compareTripleRanks)
		return
	}
	sortByKey(ms, func(m Match) tripleName { return t.tripleName(m.Triple) }, compareTripleNames)
}

// answers returns the entities the searches bound to the answer slot,
// each with its best binding, ranked (rankAnswers) and cut
// (cutAnswers).
func (t *Tracer) answers(s *searches, anchors []Anchor) []Answer {
	out, at := t.bestAnswers(s)
	defer t.freePlaces(&t.entityPlaces, at, len(out), func(i int) int32 { return out[i].Entity })
	bounds := boundBy(s, at, len(out))
	for _, a := range anchors {
		if i, ok := at.get(a.Entity); ok && bounds[i] > 1 {
			bounds[i] = 1
		}
	}
	for i := range out {
		out[i].Bound = bounds[i]
	}
	rank := t.cfg.AnswerRank
	if s.req.Guidance == nil || len(s.req.Guidance.Scores) == 0 {
		rank = RankTrace
	}
	t.rankAnswers(out, s, rank)
	kept := cutAnswers(out, s, rank)
	if t.names != nil {
		// Ranked by their names' ranks: only those kept are named.
		for i := range kept {
			kept[i].Name = t.g.EntityName(kept[i].Entity)
		}
	}
	return kept
}

// bestAnswers returns each answer entity's best binding over the
// searches, and where each is in them; under Ranked, only those of the
// first group of graphs that binds any.
func (t *Tracer) bestAnswers(s *searches) ([]Answer, places) {
	// Under Ranked only the searches of the first group that binds any
	// are read: a later group's binding of an entity neither wins over
	// the first group's nor stays beside it, and a broad plan's later
	// readings bind thousands.
	first := -1
	if s.req.Ranked {
		for i, o := range s.outs {
			if g := s.group(s.jobs[i].graph); len(o.answers) > 0 && (first < 0 || g < first) {
				first = g
			}
		}
	}
	read := func(i int) bool { return first < 0 || s.group(s.jobs[i].graph) == first }
	n := 0
	for i, o := range s.outs {
		if read(i) {
			n = max(n, len(o.answers))
		}
	}
	at := t.newPlaces(&t.entityPlaces, t.g.NumEntities(), n)
	var out []Answer
	if n > 0 {
		out = make([]Answer, 0, n)
	}
	for i, o := range s.outs {
		if !read(i) {
			continue
		}
		g := s.jobs[i].graph
		for e, a := range o.answers {
			a.Graph = g
			if t.names == nil {
				a.Name = t.g.EntityName(e)
			}
			if k, ok := at.get(e); ok {
				if a.better(out[k]) {
					out[k] = a
				}
				continue
			}
			at.put(e, len(out))
			out = append(out, a)
		}
	}
	return out, at
}

// places is where each answer entity, or evidence triple, is in a
// merge's answers or evidence: over a small KG (nameOrder) a slice by id
// from the tracer's pool, cleared of what was set after use, since a map
// made per merge (about ten per compose request, each sized for a
// reading's answers or matches) cost more to make than to fill; a map
// otherwise.
type places struct {
	dense []int32 // place+1 by entity, 0 for none
	m     map[int32]int32
}

// get returns e's place.
func (p places) get(e int32) (int, bool) {
	if p.dense != nil {
		i := p.dense[e]
		return int(i) - 1, i > 0
	}
	i, ok := p.m[e]
	return int(i), ok
}

// put sets e's place.
func (p places) put(e int32, i int) {
	if p.dense != nil {
		p.dense[e] = int32(i + 1)
		return
	}
	p.m[e] = int32(i)
}

// maxDensePlaces bounds the ids of a pooled places slice (4 bytes
// each, one slice per merge under way): 16 MB.
const maxDensePlaces = 1 << 22

// newPlaces returns empty places for about n of size ids, from pool
// over a small KG.
func (t *Tracer) newPlaces(pool *sync.Pool, size, n int) places {
	if t.names == nil || size > maxDensePlaces {
		return places{m: make(map[int32]int32, n)}
	}
	if d, ok := pool.Get().(*[]int32); ok {
		return places{dense: *d}
	}
	return places{dense: make([]int32, size)}
}

// freePlaces clears p of the n ids put in it, id(0) to id(n-1), and
// returns it to pool.
func (t *Tracer) freePlaces(pool *sync.Pool, p places, n int, id func(i int) int32) {
	if p.dense == nil {
		return
	}
	for i := range n {
		p.dense[id(i)] = 0
	}
	pool.Put(&p.dense)
}

// boundBy counts, for each of the n answers at, the schema graphs whose
// searches bound it; other entities (a later reading's thousands) are
// not counted.
func boundBy(s *searches, at places, n int) []int {
	bounds := make([]int, n)
	if distinctGraphs(s.jobs) {
		// Each search binds an entity once and no two search one graph:
		// every binding is a graph's own.
		for _, o := range s.outs {
			for e := range o.answers {
				if i, ok := at.get(e); ok {
					bounds[i]++
				}
			}
		}
		return bounds
	}
	type binding struct{ answer, graph int }
	bound := make(map[binding]bool, n)
	for i, o := range s.outs {
		for e := range o.answers {
			k, ok := at.get(e)
			if !ok {
				continue
			}
			if b := (binding{k, s.jobs[i].graph}); !bound[b] {
				bound[b] = true
				bounds[k]++
			}
		}
	}
	return bounds
}

// distinctGraphs reports whether no two jobs search the same schema
// graph.
func distinctGraphs(jobs []job) bool {
	for i := range jobs {
		for j := range i {
			if jobs[i].graph == jobs[j].graph {
				return false
			}
		}
	}
	return true
}

// rankAnswers orders answers: higher S, fewer reversed edges, more
// binding graphs, the planner's preferred reading (Ranked), the guidance
// score (RankTies), then name. It sorts as sort.Slice with the less
// function answerLess would (the same algorithm, asking the same
// comparisons, since better's tie margin makes the order not quite
// transitive), without copying answers. With the KG's
// names ranked (nameOrder) names are compared as ranks, which order
// them as the names do, and need not be read.
func (t *Tracer) rankAnswers(answers []Answer, s *searches, rank AnswerRank) {
	// The sort moves indices, not answers: the comparisons, and so the
	// order, are the same.
	keyed := make([]rankedAnswer, len(answers))
	order := make([]int32, len(answers))
	for i, a := range answers {
		keyed[i].a, order[i] = a, int32(i)
		if t.names != nil {
			keyed[i].name = t.names.ents[a.Entity]
		}
	}
	slices.SortFunc(order, func(x, y int32) int {
		if answerLess(&keyed[x], &keyed[y], s, rank) {
			return -1
		}
		return 1
	})
	for i, k := range order {
		answers[i] = keyed[k].a
	}
}

// rankedAnswer is an answer with its name's rank (nameOrder), 0 for
// every answer when the names are not ranked.
type rankedAnswer struct {
	a    Answer
	name int32
}

// answerLess is rankAnswers' order.
func answerLess(rx, ry *rankedAnswer, s *searches, rank AnswerRank) bool {
	x, y := &rx.a, &ry.a
	if x.better(*y) || y.better(*x) {
		return x.better(*y)
	}
	if x.Bound != y.Bound {
		return x.Bound > y.Bound
	}
	if s.req.Ranked && x.Graph != y.Graph {
		// Within a group, the planner's preferred reading first.
		return x.Graph < y.Graph
	}
	if rank == RankTies {
		if gx, gy := s.req.Guidance.score(x.Entity), s.req.Guidance.score(y.Entity); gx != gy {
			return gx > gy
		}
	}
	if rx.name != ry.name {
		return rx.name < ry.name
	}
	if x.Name != y.Name {
		return x.Name < y.Name
	}
	return x.Entity < y.Entity
}

// cutAnswers keeps, where the best answer's graph is traced with
// Precision, the answers that cannot be told from the best; under
// RankFirst it orders those kept by the guidance model's score.
func cutAnswers(answers []Answer, s *searches, rank AnswerRank) []Answer {
	if len(answers) > 0 && s.strats[answers[0].Graph] == schema.Precision {
		// Precision keeps the best answer and those it cannot tell from
		// it: tied on S and direction, and bound by as many of the
		// request's graphs. Over a shared KG a spurious reading (a
		// person's nationality and back) ties with the right one on S
		// but binds a thousand compatriots that only it reaches.
		k := 1
		for k < len(answers) && !answers[0].better(answers[k]) && answers[k].Bound == answers[0].Bound {
			k++
		}
		answers = answers[:k]
	}
	if rank == RankFirst {
		// Among the answers tracing keeps, the model's order; tracing's
		// order (stable sort) breaks ties.
		sort.SliceStable(answers, func(a, b int) bool {
			return s.req.Guidance.score(answers[a].Entity) > s.req.Guidance.score(answers[b].Entity)
		})
	}
	return answers
}

// problems lists what the searches could not do: a graph no question
// entity anchors, a placeholder never bound.
func (s *searches) problems() []string {
	var out []string
	for gi, sg := range s.sgs {
		if sg == nil {
			continue
		}
		bound := make([]bool, len(sg.nodes))
		traced := false
		for i, o := range s.outs {
			if s.jobs[i].graph != gi {
				continue
			}
			traced = true
			for n, b := range o.bound {
				bound[n] = bound[n] || b
			}
		}
		if !traced {
			out = append(out, fmt.Sprintf("graph %d: no question entity anchors any of its mentions", gi))
			continue
		}
		for n, name := range sg.nodes {
			if sg.isPH[n] && !bound[n] {
				out = append(out, fmt.Sprintf("graph %d: placeholder %s never bound", gi, name))
			}
		}
	}
	return out
}

// audit is Audit over the tracer's KG. With the KG's triple columns an
// evidence triple in range is one the KG holds: its id is its place in
// the columns, so the check is the range and the answers' ends, with no
// search of the head's row per triple (a hub's evidence is thousands of
// triples, and each search is a score of random reads at 100M triples).
func (t *Tracer) audit(res *Result) int {
	if t.rels == nil {
		return Audit(t.g, res)
	}
	return audit(res, int32(len(t.rels)), func(id int32) (int32, int32, bool) {
		return t.heads[id], t.tails[id], true
	})
}
