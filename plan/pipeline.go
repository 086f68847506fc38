// Package plan is stem's one pipeline: every question, from `stem ask`,
// `stem eval`, `stem compare` or the demo, is answered by Pipeline.Answer,
// which runs STEM's stages in order: entity linking, projection (a
// planner's schema graphs and strategy), retrieval (a strategy found by
// name in a Registry; STEM's own is guidance plus structure tracing) and
// generation. A retrieval strategy that plans for itself (a peer system
// standing alone, PlanUser) gets no planner run and no plan; each
// registered strategy brings its own settings struct (RegisterWith), so
// the package names no peer.
//
// The package depends on the stages' packages (projection, tracing,
// tripgnn through a Guider, generation) and on the KG and model seams; it
// never imports the evaluation harness or the training code, which consume
// it.
package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/generation"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/selection"
	"github.com/stem-kgqa/stem/tracing"
)

// Stage names, in the order they run, as keys of Result.Timings.
const (
	StageLink  = "link"
	StagePlan  = "plan"
	StageGuide = "guide"
	StageTrace = "trace"
	// StageConstrain checks the answers against what the question states
	// about them (package constraint).
	StageConstrain = "constrain"
	StageGenerate  = "generate"
)

// ErrNoEntity is returned when a question names no entity of the KG.
var ErrNoEntity = errors.New("the question names no entity of the KG")

// ErrTooLong is returned for a question longer than Pipeline.MaxQuestion.
var ErrTooLong = errors.New("question too long")

// DefaultMaxQuestion is the longest question answered, in characters:
// benchmark questions are under 300, and planning a 600 KB text took over
// a minute before linking was bounded.
const DefaultMaxQuestion = 4000

// Query is one question to answer.
type Query struct {
	Question string
	// Entities are the question's KG entity names when the caller knows
	// them (a dataset's marked topic entities, `stem ask --entity`);
	// otherwise they are linked from the text. Names the KG does not hold
	// exactly are anchored by similarity.
	Entities []string
	// Graph is the question's own KG (WebQSP, RoG rows); nil means the
	// pipeline's shared KG.
	Graph kg.Reader
	// Gold is a benchmark's answer sheet, for the oracle planner only.
	Gold *projection.Gold
	// AnswersOnly skips attaching each answer's supporting chains, which
	// only a reader needs (evaluation scores the answers alone).
	AnswersOnly bool
}

// Result is everything the pipeline did for a question: the answers with
// their evidence and, for --explain, every intermediate result.
type Result struct {
	Question string
	Links    []linking.Link
	// Mentions are every span of the question that names a KG entity:
	// the Links' and the others beside them, each with its candidates
	// and why the chosen one won (linking.MentionsOf).
	Mentions []linking.Mention
	// Projection is the planner's candidate schema graphs and strategy.
	Projection projection.Projection
	// Strategy is the strategy traced with (the planner's, or the
	// pipeline's override); "" for a strategy that plans for itself and
	// was given none.
	Strategy string
	// Guidance names the guidance graph's entities, when one was used.
	Guidance []string
	// Evidence is what retrieval found: anchors, matched triples with their
	// scores, answers bound to the answer slot, chains and the audit.
	Evidence *tracing.Result
	Answers  []generation.Answer
	Chains   []string
	// Constraints say what each constraint the question states did to
	// the answers: kept, dropped, reordered, or unchecked where the KG
	// holds no such attribute.
	Constraints []constraint.Report
	Timings     map[string]Duration
	// Graph is the KG the question was answered over, to name the ids in
	// Evidence.
	Graph kg.Reader
	// Selection is how the planner's readings were judged by their
	// evidence, and how sure the answer is; nil for a retrieval strategy
	// that returns no readings (a peer system's).
	Selection *Selection
	// Abstained is set when the confidence fell below
	// Pipeline.MinConfidence: Answers is then empty, Withheld holds what
	// would have been answered, and Abstain says why ("best candidate
	// 0.21 < 0.5").
	Abstained bool
	Abstain   string
	Withheld  []generation.Answer
}

// Unsupported counts answers that no evidence backs: tracing's audit
// failures plus generated answers that name no evidence entity.
func (r *Result) Unsupported() int {
	n := r.Evidence.Unbacked
	for _, a := range r.Answers {
		if !a.Supported {
			n++
		}
	}
	return n
}

// EvidenceTriples returns the evidence as (head, relation, tail) names.
func (r *Result) EvidenceTriples() [][3]string {
	out := make([][3]string, 0, len(r.Evidence.Evidence))
	for _, m := range r.Evidence.Evidence {
		t := r.Graph.Triple(m.Triple)
		out = append(out, [3]string{r.Graph.EntityName(t.Head), r.Graph.RelationName(t.Rel), r.Graph.EntityName(t.Tail)})
	}
	return out
}

// Duration marshals as milliseconds.
type Duration time.Duration

// MarshalJSON writes the duration in milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%.3f", float64(d)/1e6), nil
}

// UnmarshalJSON reads milliseconds, so a Go client of a server reads back
// what MarshalJSON wrote.
func (d *Duration) UnmarshalJSON(b []byte) error {
	ms, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("duration %s: want milliseconds", b)
	}
	*d = Duration(ms * 1e6)
	return nil
}

// Pipeline answers questions with STEM's stages. It is safe for concurrent
// use when its parts are (the built-in ones are).
type Pipeline struct {
	// Graph is the shared KG; it may be nil when every Query brings its
	// own graph.
	Graph kg.Reader
	// Linker links entities in the shared KG; nil links by name only.
	Linker  *linking.Linker
	Planner projection.Planner
	// Retriever is the retrieval strategy (see Registry).
	Retriever Retriever
	// Generator turns evidence into answers; nil means
	// generation.Structural.
	Generator generation.Generator
	// Strategy, when not nil, overrides the planner's strategy.
	Strategy *schema.Strategy
	// MaxQuestion caps a question's length in characters
	// (0 = DefaultMaxQuestion).
	MaxQuestion int
	// Usage, when not nil, reports the LLM tokens and requests the
	// pipeline has used so far (planner, retrieval and generator share one
	// client); Open sets it.
	Usage func() llm.Usage
	// MaxHops caps how far from its entities a question's graph reaches
	// when the shared KG is a kg.Neighbourhooder (a SPARQL endpoint);
	// 0 = DefaultMaxHops.
	MaxHops int
	// NoConstraints leaves the constraints a question states (time,
	// gender, type; package constraint) unchecked.
	NoConstraints bool
	// Kinds, when not nil, names the kinds of the answers the KG gives no
	// type (WordNet's instances: France a country), for the type words a
	// question states ("in which country"); Open sets it from the lexicon.
	Kinds constraint.Instances
	// Lexicon, when not nil, says which question words name a relation
	// ("mother" a kind of parents) for the default confidence's evidence
	// (selection.Input.Lexicon); Open sets it.
	Lexicon models.Lexicon
	// PathFit, when not nil, weighs each reading's relations against the
	// trained planner's training questions (selection.PathFit); Open sets
	// it from --planner-model for the pattern and both planners.
	PathFit *selection.PathFit
	// Mode labels how the retrieval strategy runs (ModeOf); Open sets it.
	Mode string
	// PlannerName names the planner that plans its questions, as Open
	// resolved the settings (auto: pattern with a planner model, else
	// compose, or demo for the demo KG's own), or "" when the retrieval
	// strategy reads no plan (a peer standing alone); Open sets it.
	PlannerName string
	// Beam is the readings the planner traces per question, as Open
	// resolved --beam (a selector's recorded beam for auto); 0 for a
	// Pipeline built field by field, whose planner says.
	Beam int
	// Selector judges the planner's readings by their evidence (package
	// selection); nil means selection.Default, which keeps the planner's
	// choice and only rates it.
	Selector *selection.Model
	// Encoder, when not nil, lets plan selection compare the question
	// with each reading's relation names; Open sets it.
	Encoder models.Encoder
	// MinConfidence, above 0, answers "no answer" where the answer's
	// confidence is below it (Result.Abstained).
	MinConfidence float64
	// MinConfidenceAuto says MinConfidence is --min-confidence auto's:
	// a calibrated confidence (a trained selector's) is held to it, an
	// uncalibrated one (the default heuristic's) only where the KG holds
	// evidence against the answer's reading (Selection.Contradicted): a
	// reading the planner preferred bound nothing, or a relation on the
	// entity's edges that a question word names is not walked ("founder"
	// read as works_for reversed where founded_by leads to no
	// birthplace). Elsewhere the heuristic rates right answers as low as
	// 0.02 on the hand-written KGs (a relation the question names by
	// paraphrase: "acted" for starring), too low to withhold them on.
	MinConfidenceAuto bool
	// src is where questions' graphs come from, chosen by Open; nil for
	// a Pipeline built field by field, whose Graph then says (source).
	src *Source
}

// source returns where the questions' graphs come from.
func (p *Pipeline) source() Source {
	if p.src != nil {
		return *p.src
	}
	return SourceOf(p.Graph)
}

// DefaultMaxHops is the default Pipeline.MaxHops: the longest paths of
// PathQuestion and MetaQA, and of most WebQSP and CWQ plans.
const DefaultMaxHops = 3

// StageFetch is the Result.Timings key of the time spent fetching a
// question's graph from a remote KG.
const StageFetch = "fetch"

// Answer answers one question. Each stage is a method that returns what
// the next one reads; none changes what an earlier one returned.
func (p *Pipeline) Answer(ctx context.Context, q Query) (*Result, error) {
	if err := p.checkLength(q.Question); err != nil {
		return nil, err
	}
	kind := p.source().kindFor(q)
	g, err := p.graphOf(q)
	if err != nil {
		return nil, err
	}
	res := &Result{Question: q.Question, Graph: g, Timings: map[string]Duration{}}
	clock := timings(res.Timings)

	if res.Links, res.Mentions, err = p.link(ctx, q, g, clock); err != nil {
		return nil, err
	}
	in := plannerInput(q, res.Links)
	in.Linked = res.Mentions
	if kind == OwnGraphs {
		in.Graph = g
	}
	planned := usesPlan(p.Retriever)
	switch {
	case kind == RemoteKG && planned:
		g, res.Projection, err = p.fetchAndPlan(ctx, in, clock)
	case kind == RemoteKG:
		g, err = p.fetch(ctx, in, clock)
	case planned:
		res.Projection, err = p.plan(ctx, in, clock)
	}
	if err != nil {
		return nil, err
	}
	if kind == RemoteKG {
		res.Graph, in.Graph = g, g
	}

	req := Request{Question: q.Question, Graph: g, Own: kind != SharedKG, Input: in, Projection: res.Projection}
	req.Strategy, req.Strategies, res.Strategy = p.strategy(res.Projection, planned)
	req.Anchors, req.Mentions = anchors(g, res.Links, len(q.Entities) > 0)
	ev, err := p.retrieve(ctx, req, clock)
	if err != nil {
		return nil, err
	}
	res.Chains, res.Guidance = ev.Trace.Chains, ev.Guidance
	if res.Evidence, res.Selection, err = p.choose(ctx, req, ev); err != nil {
		return nil, err
	}
	if !p.NoConstraints {
		c := p.constrain(ctx, req, res.Evidence, clock)
		res.Projection, res.Evidence, res.Constraints = c.projection, c.evidence, c.reports
	}
	if res.Answers, err = p.generate(ctx, q, g, res.Evidence, clock); err != nil {
		return nil, err
	}
	p.abstain(res)
	return res, nil
}

// timings is a Result's Timings as the stages fill them: the one way a
// stage's time is recorded.
type timings map[string]Duration

// since adds the time since start to stage's; a stage timed twice (the
// planner over a remote KG's deeper graph) adds up.
func (t timings) since(stage string, start time.Time) {
	t[stage] += Duration(time.Since(start))
}

// checkLength refuses a question longer than MaxQuestion.
func (p *Pipeline) checkLength(question string) error {
	limit := p.MaxQuestion
	if limit <= 0 {
		limit = DefaultMaxQuestion
	}
	if n := utf8.RuneCountInString(question); n > limit {
		return fmt.Errorf("%w: %d characters, the limit is %d (raise it with --max-question)", ErrTooLong, n, limit)
	}
	return nil
}

// graphOf returns the KG q's entities are linked in: its own graph, or
// the pipeline's shared KG (remote or not).
func (p *Pipeline) graphOf(q Query) (kg.Reader, error) {
	if q.Graph != nil {
		return q.Graph, nil
	}
	if p.Graph == nil {
		return nil, fmt.Errorf("%q: no KG to answer over: give the pipeline a shared KG or the query its own graph", q.Question)
	}
	return p.Graph, nil
}

// link is the first stage: the KG entities the question names, as the
// caller gave them (found in the text where they are) or linked in g,
// and every mention of an entity in the question beside them.
func (p *Pipeline) link(ctx context.Context, q Query, g kg.Reader, clock timings) ([]linking.Link, []linking.Mention, error) {
	defer clock.since(StageLink, time.Now())
	links, err := p.linkEntities(ctx, q, g)
	if err != nil {
		return nil, nil, err
	}
	if p.Linker != nil && q.Graph == nil {
		// The shared KG's linker: near matches through its entity index.
		ms, err := p.Linker.Mentions(ctx, q.Question, links)
		return links, ms, err
	}
	ms, err := linking.MentionsOf(ctx, g, q.Question, links)
	return links, ms, err
}

// linkEntities is the question's entities, as the caller gave them
// (found in the text where they are) or linked in g.
func (p *Pipeline) linkEntities(ctx context.Context, q Query, g kg.Reader) ([]linking.Link, error) {
	if len(q.Entities) > 0 {
		links := make([]linking.Link, 0, len(q.Entities))
		for _, e := range q.Entities {
			l := linking.Link{Entity: e, Mention: e, Score: 1, Method: "given"}
			if sp, ok := linking.Find(q.Question, e); ok {
				l.Start, l.End, l.Mention = sp.Start, sp.End, q.Question[sp.Start:sp.End]
			}
			links = append(links, l)
		}
		return links, nil
	}
	linker := p.Linker
	if q.Graph != nil || linker == nil {
		linker = linking.New(g, nil)
	}
	links, err := linker.Link(ctx, q.Question)
	if errors.Is(err, linking.ErrNoEntity) {
		return nil, fmt.Errorf("%q: %w", q.Question, ErrNoEntity)
	}
	return links, err
}

// plannerInput is what the planner is given: the question, its linked
// entities and their mentions, and the gold sheet (the oracle's).
func plannerInput(q Query, links []linking.Link) projection.Input {
	in := projection.Input{Question: q.Question, Gold: q.Gold}
	for _, l := range links {
		in.Entities = append(in.Entities, l.Entity)
		in.Mentions = append(in.Mentions, l.Mention)
	}
	return in
}

// plan is the second stage: the planner's candidate schema graphs and
// strategy, over the question's own graph when in carries one.
func (p *Pipeline) plan(ctx context.Context, in projection.Input, clock timings) (projection.Projection, error) {
	defer clock.since(StagePlan, time.Now())
	proj, err := p.Planner.Plan(ctx, in)
	if err != nil {
		return projection.Projection{}, fmt.Errorf("plan %q: %w", in.Question, err)
	}
	return proj, nil
}

// maxHops is MaxHops, or its default.
func (p *Pipeline) maxHops() int {
	if p.MaxHops <= 0 {
		return DefaultMaxHops
	}
	return p.MaxHops
}

// neighbourhood fetches the graph of in's entities within hops from the
// remote KG.
func (p *Pipeline) neighbourhood(ctx context.Context, in projection.Input, hops int, clock timings) (*kg.Graph, error) {
	return p.fetchWith(ctx, in, clock, func(nb kg.Neighbourhooder) (*kg.Graph, error) { return nb.Neighbourhood(ctx, in.Entities, hops) })
}

// fetchWith times get's fetch of the graph of in's entities from the
// remote KG, and names the question in its error.
func (p *Pipeline) fetchWith(ctx context.Context, in projection.Input, clock timings, get func(kg.Neighbourhooder) (*kg.Graph, error)) (*kg.Graph, error) {
	defer clock.since(StageFetch, time.Now())
	sub, err := get(p.source().remote)
	if err != nil {
		return nil, fmt.Errorf("fetch the graph of %q: %w", in.Question, err)
	}
	return sub, nil
}

// fetch is the graph a strategy that plans for itself reads over a remote
// KG: as deep as it says it walks (Reacher), or MaxHops, in one fetch.
func (p *Pipeline) fetch(ctx context.Context, in projection.Input, clock timings) (*kg.Graph, error) {
	hops := p.maxHops()
	if r, ok := p.Retriever.(Reacher); ok {
		hops = max(1, min(r.Reach(), hops))
	}
	return p.neighbourhood(ctx, in, hops, clock)
}

// fetchAndPlan plans a question over a remote KG. The question's graph
// is fetched in rings around its entities, counted in triples as the
// plans' paths are (kg.FetchSteps: a CVT is a step): one step (or as deep
// as a Reacher planner says it explores), then as deep as the plan's
// schema graphs reach from their anchors (depth, up to MaxHops), planning
// again over the deeper graph. The planner is told how deep the graph is
// (projection.Input.Hops), so that a path longer than that is not taken
// for one that leads nowhere: a plan that needs no deeper graph is then
// what planning over the whole KG gives. Tracing a schema graph of depth
// d reads the edges of the entities fewer than d triples from an anchor,
// all of which the fetch holds.
func (p *Pipeline) fetchAndPlan(ctx context.Context, in projection.Input, clock timings) (*kg.Graph, projection.Projection, error) {
	limit := p.maxHops()
	hops := 1
	if r, ok := p.Planner.(Reacher); ok {
		hops = max(1, min(r.Reach(), limit))
	}
	for {
		sub, err := p.fetchWith(ctx, in, clock, func(nb kg.Neighbourhooder) (*kg.Graph, error) { return kg.FetchSteps(ctx, nb, in.Entities, hops) })
		if err != nil {
			return nil, projection.Projection{}, err
		}
		in.Graph, in.Hops = sub, hops
		proj, err := p.plan(ctx, in, clock)
		if err != nil {
			return nil, projection.Projection{}, err
		}
		// A planner may need a deeper graph than its plans reach to
		// plan as over the whole KG (a join through an entity).
		need := max(1, proj.Deeper)
		for _, c := range proj.Candidates {
			need = max(need, depth(c.Graph))
		}
		need = min(need, limit)
		if need <= hops {
			return sub, proj, nil
		}
		hops = need
	}
}

// depth is how far tracing g walks from the entities it names: the most
// triples between a named node and any other node (its eccentricity),
// the largest over the named nodes, since a search may start at any of
// them. A path is as deep as it is long; a second entity joined at its
// CVT adds no depth ("who played X in film Y": two triples from the actor
// and from the film, where the graph has three). A graph whose triples do
// not all connect is as deep as its triple count.
func depth(g schema.Graph) int {
	node := func(n string) string {
		if schema.IsPlaceholder(n) {
			return schema.CanonicalPlaceholder(n)
		}
		return n
	}
	adj := map[string][]string{}
	for _, t := range g.Triples {
		h, tl := node(t.Head), node(t.Tail)
		adj[h] = append(adj[h], tl)
		adj[tl] = append(adj[tl], h)
	}
	deepest := 0
	for _, m := range g.Mentions() {
		dist := map[string]int{node(m): 0}
		queue := []string{node(m)}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			for _, x := range adj[n] {
				if _, ok := dist[x]; !ok {
					dist[x] = dist[n] + 1
					deepest = max(deepest, dist[x])
					queue = append(queue, x)
				}
			}
		}
		if len(dist) < len(adj) {
			return len(g.Triples)
		}
	}
	if deepest == 0 {
		return len(g.Triples)
	}
	return deepest
}

// strategy returns the strategy to trace with (the pipeline's override,
// else the planner's), the candidates' own strategies when not
// overridden, and the name Result.Strategy reports ("" for a strategy
// that plans for itself and was given none).
func (p *Pipeline) strategy(proj projection.Projection, planned bool) (schema.Strategy, []schema.Strategy, string) {
	if p.Strategy != nil {
		return *p.Strategy, nil, p.Strategy.String()
	}
	name := ""
	if planned {
		name = proj.Strategy.String()
	}
	return proj.Strategy, proj.Strategies(), name
}

// retrieve is the retrieval stage: the registered strategy's evidence,
// with the time of its own stages (guidance, tracing).
func (p *Pipeline) retrieve(ctx context.Context, req Request, clock timings) (*Evidence, error) {
	ev, err := p.Retriever.Retrieve(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("retrieve evidence for %q: %w", req.Question, err)
	}
	for k, d := range ev.Timings {
		clock[k] = Duration(d)
	}
	return ev, nil
}

// generate is the last stage: the generator's answers from the evidence,
// each with its supporting chains unless q asks for the answers alone,
// and their count first when the question asks "how many"
// (generation.Count).
func (p *Pipeline) generate(ctx context.Context, q Query, g kg.Reader, ev *tracing.Result, clock timings) ([]generation.Answer, error) {
	defer clock.since(StageGenerate, time.Now())
	gen := p.Generator
	if gen == nil {
		gen = generation.Structural{}
	}
	answers, err := gen.Generate(ctx, q.Question, g, ev)
	if err != nil {
		return nil, fmt.Errorf("generate an answer to %q: %w", q.Question, err)
	}
	if !q.AnswersOnly {
		generation.Support(answers, g, ev)
	}
	return generation.Count(q.Question, answers), nil
}

// anchors returns the KG ids the question's entities anchor on, with the
// mention each is matched to the schema graphs by. Entities the caller
// named are anchored by their KG name; linked ones by the question's span.
// When none of the named entities is in the KG exactly, no id is returned
// and their names become mentions that tracing anchors by similarity.
func anchors(g kg.Reader, links []linking.Link, given bool) (ids []int32, mentions []string) {
	for _, l := range links {
		if id, ok := g.Entity(l.Entity); ok {
			ids = append(ids, id)
			if given {
				mentions = append(mentions, l.Entity)
			} else {
				mentions = append(mentions, l.Mention)
			}
		}
	}
	if len(ids) == 0 && given {
		for _, l := range links {
			mentions = append(mentions, l.Entity)
		}
	}
	return ids, mentions
}

// Resolve maps a user-given entity name to a KG name: exactly, then
// ignoring case and punctuation. It is how `stem ask --entity` refuses a
// name the KG does not hold before any work starts.
func Resolve(g kg.Reader, name string) (string, error) {
	if _, ok := g.Entity(name); ok {
		return name, nil
	}
	if ids := g.EntitiesByNorm(name); len(ids) > 0 {
		return g.EntityName(ids[0]), nil
	}
	return "", fmt.Errorf("entity %q is not in the KG (names match exactly, or ignoring case and punctuation)", name)
}

// ResolveAll maps each of names to a KG name (Resolve), in order; the
// first name the KG does not hold is the error.
func ResolveAll(g kg.Reader, names []string) ([]string, error) {
	out := make([]string, len(names))
	for i, e := range names {
		var err error
		if out[i], err = Resolve(g, e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// constrained is what the constraint check returns, leaving what it was
// given as it was: the projection with the constraints it checked joined
// to every candidate when the planner wrote none (so that --explain shows
// them), the evidence with the answers it kept, in its order, and what
// each constraint did.
type constrained struct {
	projection projection.Projection
	evidence   *tracing.Result
	reports    []constraint.Report
}

// constrain checks the traced answers against the constraints the
// question states: the planner's (constraint edges of its first schema
// graph) or, when it wrote none, those constraint.Detect reads. The
// answers are checked in the KG the question was answered over, or, when
// that is a neighbourhood fetched from a remote KG, in the answers' own
// neighbourhood there, fetched in one batch (their outgoing edges alone
// where the KG can fetch just those, kg.FetchOut: the check reads nothing
// else): their own edges (a gender, a type) lie past the question's last
// hop.
func (p *Pipeline) constrain(ctx context.Context, req Request, tr *tracing.Result, clock timings) constrained {
	defer clock.since(StageConstrain, time.Now())
	out := constrained{projection: req.Projection, evidence: tr}
	cands := req.Projection.Candidates
	var cs []schema.Constraint
	if len(cands) > 0 {
		cs = cands[0].Graph.Constraints
	}
	if len(cs) == 0 {
		cs = constraint.Detect(unnamed(req.Question, req.Input.Linked))
		out.projection.Candidates = slices.Clone(cands)
		for i := range out.projection.Candidates {
			out.projection.Candidates[i].Graph.Constraints = cs
		}
	}
	if tr == nil || len(tr.Answers) == 0 {
		return out
	}
	g := req.Graph
	if more := seriesMates(g, req.Question, cs, tr); more != nil && p.orders(ctx, g, cs, more) {
		tr = more
		out.evidence = more
	}
	// order is the answers to check and keep, indices into tr.Answers:
	// first those that meet the question's other named things.
	order := make([]int, len(tr.Answers))
	for i := range order {
		order[i] = i
	}
	if m, ok := mentioned(req, cs, tr); ok {
		var rep constraint.Report
		order, rep = p.meet(ctx, g, m, tr)
		if rep.Dropped > 0 {
			order = hubsLast(g, req.Projection, tr, order)
		}
		out.reports = append(out.reports, rep)
	}
	if len(cs) > 0 {
		var reps []constraint.Report
		order, reps = p.check(ctx, g, cs, tr, order)
		out.reports = append(out.reports, reps...)
	}
	if len(order) == len(tr.Answers) && slices.IsSorted(order) {
		return out
	}
	kept := *tr
	kept.Answers = make([]tracing.Answer, 0, len(order))
	for _, k := range order {
		kept.Answers = append(kept.Answers, tr.Answers[k])
	}
	out.evidence = &kept
	return out
}

// seriesMates returns tr with the answers of its other readings
// (tr.Alternatives) added that stand in a series with one of its own, or
// in a series the question names, for a question asking for the first or
// last of them ("when was the last time the giants won the world
// series"): a KG may hold one fact under two relations (a team's
// championships, a championship's champion), and the reading chosen then
// reaches only some of the editions (constraint.Series: "2010 World
// Series" and "2014 World Series"), or the editions of another series
// ("2013 AFC Championship Game" for "won a superbowl"); where some
// answers are editions of a series the question names, only those. nil
// when nothing changes.
func seriesMates(g kg.Reader, question string, cs []schema.Constraint, tr *tracing.Result) *tracing.Result {
	if !slices.ContainsFunc(cs, func(c schema.Constraint) bool {
		return c.Kind == constraint.Order && (c.Value == "first" || c.Value == "last")
	}) || len(tr.Alternatives) < 2 {
		return nil
	}
	squash := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), "") }
	q := squash(question)
	series := map[string]bool{}
	have := map[int32]bool{}
	for _, a := range tr.Answers {
		have[a.Entity] = true
		if s, ok := constraint.Series(g.EntityName(a.Entity)); ok {
			series[s] = true
		}
	}
	var add []tracing.Answer
	for _, alt := range tr.Alternatives {
		for _, a := range alt.Answers {
			if s, ok := constraint.Series(g.EntityName(a.Entity)); ok && (series[s] || strings.Contains(q, squash(s))) && !have[a.Entity] {
				have[a.Entity] = true
				add = append(add, a)
			}
		}
	}
	all := append(slices.Clone(tr.Answers), add...)
	// The editions of a series the question names, where some answers
	// are of it and others of another series: the others go.
	named := slices.DeleteFunc(slices.Clone(all), func(a tracing.Answer) bool {
		s, ok := constraint.Series(g.EntityName(a.Entity))
		return !ok || !strings.Contains(q, squash(s))
	})
	if len(named) > 0 {
		all = named
	}
	if len(all) == len(tr.Answers) && len(add) == 0 {
		return nil
	}
	more := *tr
	more.Answers = all
	return &more
}

// orders says the order constraints of cs, checked over tr's answers,
// drop some: the answers seriesMates added are kept only to be ordered.
func (p *Pipeline) orders(ctx context.Context, g kg.Reader, cs []schema.Constraint, tr *tracing.Result) bool {
	var only []schema.Constraint
	for _, c := range cs {
		if c.Kind == constraint.Order {
			only = append(only, c)
		}
	}
	all := make([]int, len(tr.Answers))
	for i := range all {
		all[i] = i
	}
	_, reps := p.check(ctx, g, only, tr, all)
	return slices.ContainsFunc(reps, func(r constraint.Report) bool { return r.Dropped > 0 })
}

// hubsLast moves, of the answers order keeps (indices into tr.Answers),
// those traced by a schema graph that walks through a hub from its anchor
// (projection.ThroughHub) after the others, each group in its order: of
// the answers that meet the question's other named things, one reached
// through a gender or a country meets them by chance.
func hubsLast(g kg.Reader, proj projection.Projection, tr *tracing.Result, order []int) []int {
	hub := map[int]bool{}
	for _, k := range order {
		gi := tr.Answers[k].Graph
		if _, done := hub[gi]; done || gi < 0 || gi >= len(proj.Candidates) {
			continue
		}
		graph := proj.Candidates[gi].Graph
		for _, e := range graph.Mentions() {
			if steps, ok := graph.PathTo(e); ok && projection.ThroughHub(g, e, steps) {
				hub[gi] = true
			}
		}
		if !hub[gi] {
			hub[gi] = false
		}
	}
	out := slices.Clone(order)
	slices.SortStableFunc(out, func(a, b int) int {
		ga, gb := tr.Answers[a].Graph, tr.Answers[b].Graph
		switch {
		case hub[ga] == hub[gb]:
			return 0
		case hub[ga]:
			return 1
		}
		return -1
	})
	return out
}

// meet checks tr's answers against the things m names
// (constraint.Checker.Meet) in g or, when g is a neighbourhood fetched
// from a remote KG, in the named things' own neighbourhood there: what
// Meet reads (their edges, and those of the entities beside them of at
// most constraint.MeetVia edges) lies within two hops of them, past what
// the question's fetch may hold, and reading it gives what the KG in
// memory gives (meetGraph).
func (p *Pipeline) meet(ctx context.Context, g kg.Reader, m constraint.Mentioned, tr *tracing.Result) ([]int, constraint.Report) {
	check := g
	var checker constraint.Checker
	// One answer is narrowed by nothing: no graph is fetched for it.
	if src := p.source(); src.Kind() == RemoteKG && g != src.Graph() && len(tr.Answers) >= 2 {
		var names []string
		for _, n := range m.Names {
			names = append(names, g.EntityName(n.Entity))
		}
		sub, over, err := meetGraph(ctx, src.remote, names)
		if err != nil {
			keep := make([]int, len(tr.Answers))
			for i := range keep {
				keep[i] = i
			}
			return keep, constraint.Report{Constraint: schema.Constraint{Kind: constraint.Mention, Text: strings.Join(names, ", ")},
				Note: fmt.Sprintf("mentions %q not checked: fetching their graph failed: %v", strings.Join(names, ", "), err)}
		}
		check = sub
		overIDs := map[int32]bool{}
		for _, n := range over {
			if x, ok := check.Entity(n); ok {
				overIDs[x] = true
			}
		}
		if len(overIDs) > 0 {
			checker.Over = func(e int32) bool { return overIDs[e] }
		}
	}
	// id is e's entity in check; -1 (no entity) when check lacks it, so
	// it meets nothing.
	id := func(e int32) int32 {
		if check == g {
			return e
		}
		if x, ok := check.Entity(g.EntityName(e)); ok {
			return x
		}
		return -1
	}
	cm := constraint.Mentioned{Question: m.Question, Own: make([][]int32, len(m.Own))}
	for _, n := range m.Names {
		if x := id(n.Entity); x >= 0 {
			cm.Names = append(cm.Names, constraint.Named{Entity: x, Text: n.Text})
		}
	}
	for i, own := range m.Own {
		if own == nil {
			continue
		}
		cm.Own[i] = []int32{}
		for _, e := range own {
			cm.Own[i] = append(cm.Own[i], id(e))
		}
	}
	as := make([]constraint.Answer, len(tr.Answers))
	for i, a := range tr.Answers {
		as[i] = constraint.Answer{Entity: id(a.Entity)}
	}
	checker.Graph = check
	return checker.Meet(cm, as)
}

// meetGraph is what Meet reads around the named things of a remote KG:
// their edges and those of their neighbours of at most
// constraint.MeetVia edges where the KG can fetch just those
// (kg.WithinFetcher; over names the neighbours with more), else their
// whole two-hop neighbourhood.
func meetGraph(ctx context.Context, nb kg.Neighbourhooder, names []string) (*kg.Graph, []string, error) {
	if wf, ok := nb.(kg.WithinFetcher); ok {
		return wf.NeighbourhoodWithin(ctx, names, constraint.MeetVia)
	}
	sub, err := nb.Neighbourhood(ctx, names, 2)
	return sub, nil, err
}

// unnamed is question with the spans of its topic mentions blanked: a
// word of an entity's name states nothing of the answer ("when was The
// Last Kiss released" asks for no last one).
func unnamed(question string, linked []linking.Mention) string {
	b := []byte(question)
	for _, m := range linked {
		if m.Topic && 0 <= m.Start && m.Start < m.End && m.End <= len(b) {
			for i := m.Start; i < m.End; i++ {
				b[i] = ' '
			}
		}
	}
	return string(b)
}

// mentioned is what the answers of tr are checked against for the things
// the question names (constraint.Checker.Meet): the entity in g of every
// topic mention and of every mention beside them that stands in a clause
// about the answer (constraint.Attached) without naming the answer's
// kind or a relation of the plan (constraint.Describes), once; and per
// answer the entities the schema graph it was
// traced by is anchored at. ok is false when the question names fewer
// than two entities of g.
func mentioned(req Request, cs []schema.Constraint, tr *tracing.Result) (constraint.Mentioned, bool) {
	g, question, proj := req.Graph, req.Question, req.Projection
	var rels []string
	for _, c := range proj.Candidates {
		for _, t := range c.Graph.Triples {
			rels = append(rels, t.Rel)
		}
	}
	m := constraint.Mentioned{Question: question}
	seen := map[int32]bool{}
	for _, l := range req.Input.Linked {
		id, ok := g.Entity(l.Entity)
		if !ok || seen[id] || !l.Topic && (constraint.Describes(question, l.Text, cs, rels) || !constraint.Attached(question, l.Text)) {
			continue
		}
		seen[id] = true
		m.Names = append(m.Names, constraint.Named{Entity: id, Text: l.Text})
	}
	if len(m.Names) < 2 {
		return m, false
	}
	// The anchors of each schema graph: the entities tracing anchored its
	// named nodes at.
	byNode := map[string][]int32{}
	for _, a := range tr.Anchors {
		byNode[a.Mention] = append(byNode[a.Mention], a.Entity)
	}
	m.Own = make([][]int32, len(tr.Answers))
	for i, a := range tr.Answers {
		if a.Graph < 0 || a.Graph >= len(proj.Candidates) {
			continue
		}
		for _, t := range proj.Candidates[a.Graph].Graph.Triples {
			for _, node := range [2]string{t.Head, t.Tail} {
				for _, e := range byNode[node] {
					if !slices.Contains(m.Own[i], e) {
						m.Own[i] = append(m.Own[i], e)
					}
				}
			}
		}
	}
	return m, true
}

// check judges the answers order picks of tr against cs (constraint
// Apply) and returns those it keeps, in its order, indices into
// tr.Answers. The answers are checked in g or, when that is a
// neighbourhood fetched from a remote KG, in the answers' own
// neighbourhood there, fetched in one batch (their outgoing edges alone
// where the KG can fetch just those, kg.FetchOut: the check reads nothing
// else): their own edges (a gender, a type) lie past the question's last
// hop.
func (p *Pipeline) check(ctx context.Context, g kg.Reader, cs []schema.Constraint, tr *tracing.Result, order []int) ([]int, []constraint.Report) {
	via := answerVia(g, tr, cs)
	check := g
	if src := p.source(); src.Kind() == RemoteKG && g != src.Graph() {
		var names []string
		for _, k := range order {
			a := tr.Answers[k]
			names = append(names, g.EntityName(a.Entity))
			for _, v := range via[a.Entity] {
				names = append(names, g.EntityName(v))
			}
		}
		sub, err := kg.FetchOutEnding(ctx, src.remote, names, constraint.Reads(cs))
		if err != nil {
			var reps []constraint.Report
			for _, c := range cs {
				reps = append(reps, constraint.Report{Constraint: c,
					Note: fmt.Sprintf("%s %q not checked: fetching the answers' edges failed: %v", c.Kind, c.Text, err)})
			}
			return order, reps
		}
		check = sub
	}
	id := func(e int32) (int32, bool) {
		if check == g {
			return e, true
		}
		return check.Entity(g.EntityName(e))
	}
	as := make([]constraint.Answer, 0, len(order))
	for _, k := range order {
		e, ok := id(tr.Answers[k].Entity)
		if !ok {
			break
		}
		ca := constraint.Answer{Entity: e}
		for _, v := range via[tr.Answers[k].Entity] {
			if x, ok := id(v); ok {
				ca.Via = append(ca.Via, x)
			}
		}
		as = append(as, ca)
	}
	keep, reps := constraint.Checker{Graph: check, Lexicon: p.Kinds}.Apply(cs, as)
	if len(as) < len(order) {
		return order, reps // an answer the check cannot name: leave the order alone
	}
	out := make([]int, 0, len(keep))
	for _, k := range keep {
		out = append(out, order[k])
	}
	return out, reps
}

// answerVia returns each answer's neighbours in the evidence: the CVT it
// was reached through holds the dates of the fact. Only dates need them
// (a Time or Order constraint among cs), and never a question entity: its
// own dates (a state's founding) do not date the fact, and over a remote
// KG fetching its edges again (a country: thousands) cost seconds a
// question.
func answerVia(g kg.Reader, tr *tracing.Result, cs []schema.Constraint) map[int32][]int32 {
	via := map[int32][]int32{}
	if !slices.ContainsFunc(cs, func(c schema.Constraint) bool { return c.Kind == constraint.Time || c.Kind == constraint.Order }) {
		return via
	}
	anchor := map[int32]bool{}
	for _, a := range tr.Anchors {
		anchor[a.Entity] = true
	}
	for _, m := range tr.Evidence {
		t := g.Triple(m.Triple)
		if !anchor[t.Tail] {
			via[t.Head] = append(via[t.Head], t.Tail)
		}
		if !anchor[t.Head] {
			via[t.Tail] = append(via[t.Tail], t.Head)
		}
	}
	return via
}
