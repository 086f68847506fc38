package pattern

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
)

// Config tunes a Planner.
type Config struct {
	// Beam is the number of candidate paths (B); 0 means projection.DefaultBeam.
	Beam int
	// Graph, when not nil, is the KG plans are made for: paths naming a
	// relation it lacks are dropped with a note, paths that lead nowhere
	// from the question's entity are ranked after those that do, and the
	// strategy comes from how many entities the best path reaches.
	Graph kg.Reader
	// VoteStrategy keeps the neighbours' strategy vote even with a Graph.
	VoteStrategy bool
	// Options override the model's stored planning settings field by
	// field (zero fields keep the model's).
	Options Options
}

// Planner plans with a trained model. It implements projection.Planner and
// is safe for concurrent use.
type Planner struct {
	m    *Model
	enc  models.Encoder
	cfg  Config
	opts Options
	// inKG holds the model's relations that cfg.Graph was found to hold
	// when the planner was made. A KG does not lose a relation, so a path
	// of them is not looked up again for every question (a lookup in a
	// remote KG's cache takes its lock: a tenth of planning's CPU over
	// WebQSP's endpoint). A relation not found is looked up each time, as
	// before: a failed lookup is no absence to remember.
	inKG map[string]bool
}

var _ projection.Planner = (*Planner)(nil)

// New returns a planner over m. enc must be the encoder m was trained with.
func New(m *Model, enc models.Encoder, cfg Config) (*Planner, error) {
	if m == nil || enc == nil {
		return nil, errors.New("pattern: new planner: nil model or encoder")
	}
	if enc.Name() != m.f.Encoder || enc.Dim() != m.f.Dim {
		return nil, fmt.Errorf("pattern: new planner: %w: model has %s (dim %d), given %s (dim %d)", ErrEncoderMismatch, m.f.Encoder, m.f.Dim, enc.Name(), enc.Dim())
	}
	inKG := map[string]bool{}
	if cfg.Graph != nil && len(m.rels) > 0 {
		for r := range m.rels {
			if _, ok := cfg.Graph.Relation(r); ok {
				inKG[r] = true
			}
		}
		if len(inKG) == 0 {
			return nil, fmt.Errorf("pattern: new planner: %w: none of the model's %d relations is in the KG", ErrOtherKG, len(m.rels))
		}
	}
	if cfg.Beam <= 0 {
		cfg.Beam = projection.DefaultBeam
	}
	o := m.f.Options
	if cfg.Options.K > 0 {
		o.K = cfg.Options.K
	}
	if cfg.Options.Temperature > 0 {
		o.Temperature = cfg.Options.Temperature
	}
	if cfg.Options.TFIDF != 0 {
		o.TFIDF = cfg.Options.TFIDF
	}
	if cfg.Options.Centroid != 0 {
		o.Centroid = cfg.Options.Centroid
	}
	if cfg.Options.Classifier != 0 {
		o.Classifier = cfg.Options.Classifier
	}
	if cfg.Options.Variants != 0 {
		o.Variants = cfg.Options.Variants
	}
	return &Planner{m: m, enc: enc, cfg: cfg, opts: o.withDefaults(), inKG: inKG}, nil
}

// Prediction is the planner's answer before it becomes schema graphs.
type Prediction struct {
	Paths    []projection.ScoredPath
	Strategy schema.Strategy
	Notes    []string
	// Demoted is the score of the best path ranked after the kept ones
	// because it reaches nothing from the question's entities in the KG,
	// where it scored above the first kept path; 0 when none did
	// (projection.Projection.Demoted).
	Demoted float32
	// DemotedLast says the demoted path's steps but its last reach
	// something (projection.Projection.DemotedLast).
	DemotedLast bool
}

// ErrEmptyQuestion is returned for a question with no words.
var ErrEmptyQuestion = errors.New("pattern: empty question")

// Predict returns the top-B relation paths and the strategy for a question
// whose entities are entities (KG names, may be empty when the planner has
// no Graph) named by mentions (may be empty: the entities are then looked
// up in the text with linking.Find).
func (p *Planner) Predict(ctx context.Context, question string, entities, mentions []string) (Prediction, error) {
	return p.predict(ctx, walkIn{g: p.cfg.Graph, rels: p.cfg.Graph, own: p.cfg.Graph != nil}, question, entities, mentions)
}

// walkIn is the graph predict walks paths in: g (nil: not checked),
// with their relations looked up in rels, the KG g is part of (g itself,
// or the shared KG g is a neighbourhood of, hops deep; 0: g is whole).
// With explore, the relation paths that leave the entities in g are
// candidates too, those the model never saw scored by the classifier
// from their parts (see pathParts): g is then the question's own graph,
// small enough to walk.
type walkIn struct {
	g, rels kg.Reader
	hops    int
	explore bool
	own     bool // rels is the planner's KG (Config.Graph): Planner.inKG holds for it
}

// predict is Predict with paths walked in w.
func (p *Planner) predict(ctx context.Context, w walkIn, question string, entities, mentions []string) (Prediction, error) {
	g, explore := w.g, w.explore
	if len(linking.Words(question)) == 0 {
		return Prediction{}, ErrEmptyQuestion
	}
	if err := ctx.Err(); err != nil {
		return Prediction{}, err
	}
	text := p.maskedText(question, entities, mentions)
	var pred Prediction
	if len(linking.Words(text)) == 0 {
		pred.Notes = append(pred.Notes, "question is only its entity mention; voting by the model's most common paths")
	}
	sc, err := p.scoreAll(ctx, text)
	if err != nil {
		return Prediction{}, err
	}
	m := p.m
	wc := sc.wc
	cands := make([]projection.ScoredPath, 0, len(m.f.Paths))
	for id, s := range sc.known {
		if s == 0 && wc == 0 && p.opts.Centroid <= 0 {
			continue // no neighbour voted for it
		}
		cands = append(cands, projection.ScoredPath{Steps: m.f.Paths[id], Score: s, Reach: -1})
	}
	slices.SortFunc(cands, byScore)
	if len(entities) < 2 {
		// A conjunction path anchors on two entities.
		cands = slices.DeleteFunc(cands, func(c projection.ScoredPath) bool { return isConjunction(c.Steps) })
	}
	// Paths the model never saw come after every path it knows, ranked
	// among themselves by their parts: they are fallbacks for a question
	// whose graph walks none of the known paths. Ranked by score with the
	// known ones they displaced better plans (WebQSP-mini Hits@1 65.79 ->
	// 61.00 with the paths' mean bias).
	var starts []int32
	if g != nil {
		starts = startsIn(g, entities)
	}
	if explore && g != nil && wc > 0 {
		var unseen []projection.ScoredPath
		for _, path := range explorePaths(g, starts, m.maxHops, m.undirected) {
			if _, seen := m.pathID[path.key()]; seen {
				continue
			}
			unseen = append(unseen, projection.ScoredPath{Steps: path, Score: p.unseenScore(sc, path), Reach: -1})
		}
		slices.SortFunc(unseen, byScore)
		cands = append(cands, unseen...)
	}
	switch {
	case sc.breadth > sc.precision:
		pred.Strategy = schema.Breadth
	case sc.breadth == 0 && sc.precision == 0:
		pred.Notes = append(pred.Notes, "no neighbour has a strategy label; strategy defaults to precision")
	}
	if g != nil {
		cands = p.checkKG(w, cands, starts, &pred)
	}
	if len(cands) > p.cfg.Beam {
		cands = cands[:p.cfg.Beam]
	}
	pred.Paths = cands
	if g != nil && !p.cfg.VoteStrategy && len(cands) > 0 && cands[0].Reach > 0 {
		pred.Strategy = schema.Precision
		if cands[0].Reach > 1 || explore && beamReach(g, starts, cands) > 1 {
			pred.Strategy = schema.Breadth
		}
	}
	return pred, nil
}

// classify returns the classifier's logit of every path for a masked text
// and its encoder vector q, and the question's hidden vector; nil when the
// model has no classifier.
func (p *Planner) classify(text string, q []float32) (logits, hid []float32) {
	m := p.m
	c := m.f.Classifier
	if c == nil {
		return nil, nil
	}
	var feats []int32
	for _, s := range features(text) {
		if id, ok := m.featID[s]; ok {
			feats = append(feats, id)
		}
	}
	hid = make([]float32, c.Hidden)
	c.hidden(hid, feats, q)
	out := make([]float32, len(m.f.Paths))
	h := c.Hidden
	for k := range out {
		out[k] = dot(m.classVecs[k*h:(k+1)*h], hid) + c.Bias[k]
	}
	return out, hid
}

// partLogit is the classifier's logit of path from its known parts alone,
// without the bias: what the model knows of a path it never saw.
func (p *Planner) partLogit(path Path, hid []float32) float32 {
	c := p.m.f.Classifier
	h := c.Hidden
	var l float32
	for _, part := range pathParts(path) {
		if id, ok := p.m.partID[part]; ok {
			l += dot(c.PartVec[int(id)*h:(int(id)+1)*h], hid)
		}
	}
	return l
}

// softmaxInto writes the softmax of logits into dst and returns the
// largest logit and the sum of exp(logit - largest), so that a logit
// scored later can be put on the same scale.
func softmaxInto(dst, logits []float32) (lmax, sum float32) {
	lmax = logits[0]
	for _, v := range logits {
		lmax = max(lmax, v)
	}
	for i, v := range logits {
		e := float32(math.Exp(float64(v - lmax)))
		dst[i] = e
		sum += e
	}
	for i := range dst {
		dst[i] /= sum
	}
	return lmax, sum
}

// checkKG drops paths with relations the KG lacks (looked up in rels) and
// ranks paths that reach something in g from the question's entities
// (starts, their ids in g) before those that do not. A path longer than
// hops (> 0) cannot be walked in g, a neighbourhood that deep: its reach
// is unknown (-1) and it keeps its rank.
func (p *Planner) checkKG(w walkIn, cands []projection.ScoredPath, starts []int32, pred *Prediction) []projection.ScoredPath {
	g, rels, hops := w.g, w.rels, w.hops
	has := func(rel string) bool {
		if w.own && p.inKG[rel] {
			return true
		}
		_, ok := rels.Relation(rel)
		return ok
	}
	kept := cands[:0]
	var dead []projection.ScoredPath
	for _, c := range cands {
		missing := ""
		for _, s := range c.Steps {
			if !has(s.Rel) && s.Rel != JoinRel {
				missing = s.Rel
				break
			}
		}
		if missing != "" {
			pred.Notes = append(pred.Notes, fmt.Sprintf("dropped path %s: relation %q is not in the KG", formatSteps(c.Steps), missing))
			continue
		}
		if isConjunction(c.Steps) {
			// Its reach is left unknown: each part's walk from a hub is
			// cut at reachCap, so an empty intersection of the cut sets
			// says nothing, and over a neighbourhood or an endpoint the
			// plan must rank as over the whole KG.
		} else if len(starts) > 0 && (hops == 0 || len(c.Steps) <= hops) {
			c.Reach = Reach(g, starts, c.Steps, reachCap)
			if c.Reach == 0 {
				dead = append(dead, c)
				continue
			}
		}
		kept = append(kept, c)
	}
	if len(dead) > 0 && (len(kept) == 0 || dead[0].Score > kept[0].Score) {
		// cands are best first, so dead[0] is the best dead path.
		pred.Demoted = dead[0].Score
		steps := dead[0].Steps
		pred.DemotedLast = len(steps) <= 1 || Reach(g, starts, steps[:len(steps)-1], reachCap) > 0
	}
	if len(kept) == 0 && len(dead) > 0 {
		pred.Notes = append(pred.Notes, "no planned path leads anywhere from the question's entity in the KG")
	}
	return append(kept, dead...)
}

// byScore orders paths best first, ties by their steps.
func byScore(a, b projection.ScoredPath) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return compareSteps(a.Steps, b.Steps)
}

// startsIn returns the ids of entities in g, by exact name or else by
// normalised name.
func startsIn(g kg.Reader, entities []string) []int32 {
	var starts []int32
	for _, e := range entities {
		if id, ok := g.Entity(e); ok {
			starts = append(starts, id)
		} else {
			starts = append(starts, g.EntitiesByNorm(e)...)
		}
	}
	return starts
}

// Exploration caps: the most entities a partial path expands, and the most
// paths kept, so that a question's graph with a hub stays cheap to plan.
const (
	exploreFrontier = 200
	explorePathCap  = 2000
)

// explorePaths lists the distinct relation paths of 1 to hops steps that
// leave starts in g, shortest first, each step written Either way when
// undirected (the model's paths are) and otherwise in the direction walked;
// paths with a step that backtracks over the one before are left out.
func explorePaths(g kg.Reader, starts []int32, hops int, undirected bool) []Path {
	type partial struct {
		path  Path
		front []int32
	}
	step := func(r int32, d schema.Direction) schema.Step {
		if undirected {
			d = schema.Either
		}
		return schema.Step{Rel: g.RelationName(r), Dir: d}
	}
	level := []partial{{front: starts}}
	var out []Path
	for h := 0; h < hops && len(level) > 0; h++ {
		var next []partial
		for _, pa := range level {
			groups := map[schema.Step]map[int32]bool{}
			var order []schema.Step
			add := func(st schema.Step, e int32) {
				if groups[st] == nil {
					groups[st] = map[int32]bool{}
					order = append(order, st)
				}
				groups[st][e] = true
			}
			for _, e := range pa.front[:min(len(pa.front), exploreFrontier)] {
				for _, t := range g.Out(e) {
					tr := g.Triple(t)
					add(step(tr.Rel, schema.Forward), tr.Tail)
				}
				for _, t := range g.In(e) {
					tr := g.Triple(t)
					add(step(tr.Rel, schema.Inverse), tr.Head)
				}
			}
			for _, st := range order {
				if len(out) >= explorePathCap {
					return out
				}
				if n := len(pa.path); n > 0 && backtracks(pa.path[n-1], st) {
					continue
				}
				path := append(slices.Clip(slices.Clone(pa.path)), st)
				out = append(out, path)
				front := make([]int32, 0, len(groups[st]))
				for e := range groups[st] {
					front = append(front, e)
				}
				slices.Sort(front)
				next = append(next, partial{path: path, front: front})
			}
		}
		level = next
	}
	return out
}

// backtracks says whether step b can walk straight back over the triple
// step a took: the same relation against a's direction, or either way
// when the steps are undirected. Such a path mostly returns to where it
// started; among the paths a model never saw, it is noise that fills the
// beam (WebQSP-mini's graphs turned up art_forms>art_forms>art_forms).
func backtracks(a, b schema.Step) bool {
	if a.Rel != b.Rel {
		return false
	}
	return a.Dir == schema.Either || b.Dir == schema.Either || a.Dir != b.Dir
}

// beamReach counts the distinct entities the walkable paths of the beam
// reach together. Over a question's own graph the planner answers Breadth
// when it is more than one: one path's reach undercounts the answers
// there, because a retrieved graph spreads them over sibling relations
// (languages_spoken and official_language) that Breadth's threshold
// gathers and Precision's greedy step does not (WebQSP-mini F1 57.82 ->
// 61.19 with Hits@1 unchanged, the same gain on either half of the
// questions split by id).
func beamReach(g kg.Reader, starts []int32, beam []projection.ScoredPath) int {
	all := map[int32]bool{}
	for _, c := range beam {
		if c.Reach <= 0 {
			continue
		}
		for _, e := range reached(g, starts, c.Steps, reachCap) {
			all[e] = true
		}
	}
	return len(all)
}

// reachCap bounds the frontier Reach walks, so that a hub cannot make
// planning slow; reaching the cap means "many".
const reachCap = 10000

// Reach counts the distinct entities reached by following steps from the
// start entities in g (Either steps both ways), stopping early at limit.
func Reach(g kg.Reader, starts []int32, steps []schema.Step, limit int) int {
	return len(reached(g, starts, steps, limit))
}

// reached returns the distinct entities reached by following steps from
// starts in g (Either steps both ways), stopping early at limit.
func reached(g kg.Reader, starts []int32, steps []schema.Step, limit int) []int32 {
	front := slices.Clone(starts)
	for _, s := range steps {
		r, ok := g.Relation(s.Rel)
		if !ok {
			return nil
		}
		seen := map[int32]bool{}
		var next []int32
		for _, e := range front {
			if s.Dir != schema.Inverse {
				for _, t := range g.OutRel(e, r) {
					if x := g.Triple(t).Tail; !seen[x] {
						seen[x] = true
						next = append(next, x)
					}
				}
			}
			if s.Dir != schema.Forward {
				for _, t := range g.InRel(e, r) {
					if x := g.Triple(t).Head; !seen[x] {
						seen[x] = true
						next = append(next, x)
					}
				}
			}
			if len(next) >= limit {
				break
			}
		}
		front = next
		if len(front) == 0 {
			return nil
		}
	}
	return front
}

// Plan implements projection.Planner: the top-B paths as schema graphs
// anchored on in.Entities[0], and conjunction paths (JoinRel) as graphs
// anchored on the entities in the order the question names them.
func (p *Planner) Plan(ctx context.Context, in projection.Input) (projection.Projection, error) {
	if len(in.Entities) == 0 {
		return projection.Projection{}, errors.New("pattern: plan: the question has no linked entity to anchor the paths on")
	}
	// Paths are walked in the question's own graph when it has one (a
	// per-question subgraph, or a neighbourhood fetched from an endpoint),
	// else in the KG the planner was made for: a path the question's graph
	// cannot walk is no plan for it (WebQSP-mini Hits@1 59.28 -> 65.79).
	g, rels := p.cfg.Graph, p.cfg.Graph
	if in.Graph != nil {
		g = in.Graph
	}
	// With a KG of its own, the question's graph is a neighbourhood of it
	// (in.Hops deep): a relation is looked up in the KG, and a path the
	// neighbourhood is too shallow to walk is ranked as if it led
	// somewhere, so that the pipeline fetches deeper rather than drop it
	// (PQL-2H over SPARQL lost 73 of 106 plans so: over a one-hop graph
	// the second step's relation looked absent from the KG). Graph paths
	// the model never saw are explored only where the question's graph is
	// its whole KG, so that over a neighbourhood the plans stay what the
	// whole KG gives.
	own := rels != nil
	if rels == nil {
		rels = g
	}
	hops := 0
	if p.cfg.Graph != nil && in.Graph != nil {
		hops = in.Hops
	}
	explore := in.Graph != nil && p.cfg.Graph == nil
	pred, err := p.predict(ctx, walkIn{g: g, rels: rels, hops: hops, explore: explore, own: own}, in.Question, in.Entities, in.Mentions)
	if err != nil {
		return projection.Projection{}, err
	}
	out := projection.Projection{Strategy: pred.Strategy, Notes: pred.Notes, Demoted: pred.Demoted, DemotedLast: pred.DemotedLast}
	var joined []bool // per candidate: a second entity joined to it
	for i, c := range pred.Paths {
		cand := projection.Candidate{Score: c.Score}
		if !isConjunction(c.Steps) {
			var (
				notes  []string
				deeper int
			)
			cand.Graph, notes, deeper = anchored(g, hops, in.Entities, c.Steps)
			out.Notes = append(out.Notes, notes...)
			out.Deeper = max(out.Deeper, deeper)
			joined = append(joined, len(notes) > 0)
		} else {
			g, ok := ConjunctionGraph(textOrder(in), c.Steps)
			if !ok {
				continue
			}
			cand.Graph = g
		}
		// Under Breadth every answer counts, and a KG may record one fact
		// under several relations (WebQSP-mini, own graphs: F1 55.51 ->
		// 62.95 with the variants beside the first path).
		cand.Variant = i > 0 && pred.Strategy == schema.Breadth && p.opts.Variants > 0 &&
			p.m.Variants(pred.Paths[0].Steps, c.Steps) >= p.opts.Variants
		out.Candidates = append(out.Candidates, cand)
		if len(joined) < len(out.Candidates) {
			joined = append(joined, true) // a conjunction path meets two anchors
		}
	}
	out.Candidates = joinedFirst(out.Candidates, joined)
	return out, nil
}

// topK returns the indices of the k largest values, largest first.
func topK(x []float32, k int) []int {
	k = min(k, len(x))
	out := make([]int, 0, k+1)
	for i, v := range x {
		if len(out) == k && v <= x[out[k-1]] {
			continue
		}
		j := len(out)
		if j < k {
			out = append(out, i)
		} else {
			j = k - 1
		}
		for j > 0 && x[out[j-1]] < v {
			out[j] = out[j-1]
			j--
		}
		out[j] = i
	}
	return out
}

func compareSteps(a, b []schema.Step) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i].Rel != b[i].Rel {
			if a[i].Rel < b[i].Rel {
				return -1
			}
			return 1
		}
		if a[i].Dir != b[i].Dir {
			return int(a[i].Dir) - int(b[i].Dir)
		}
	}
	return len(a) - len(b)
}

func formatSteps(steps []schema.Step) string {
	s := ""
	for i, st := range steps {
		if i > 0 {
			s += " "
		}
		s += st.Rel
		switch st.Dir {
		case schema.Inverse:
			s += "<"
		case schema.Either:
			s += "~"
		default:
			s += ">"
		}
	}
	return s
}

// WithBeam returns a planner like p that keeps beam candidate paths (0:
// projection.DefaultBeam); p is unchanged. They share the model.
func (p *Planner) WithBeam(beam int) *Planner {
	if beam <= 0 {
		beam = projection.DefaultBeam
	}
	out := *p
	out.cfg.Beam = beam
	return &out
}

// FromExamples learns a planner in memory from training examples, as
// `stem train planner` does without writing a model file (the demo learns
// its planner this way from its embedded questions; train.PatternExamples
// turns benchmark questions into examples). g may be nil.
func FromExamples(ctx context.Context, g kg.Reader, enc models.Encoder, exs []Example, beam int) (*Planner, error) {
	m, err := Train(ctx, enc, exs, Options{})
	if err != nil {
		return nil, err
	}
	return New(m, enc, Config{Beam: beam, Graph: g})
}

// textOrder returns the question's entities in the order its text names
// them (by their mentions, where each has one; as given otherwise), the
// order a conjunction path's parts are in.
func textOrder(in projection.Input) []string {
	if len(in.Mentions) != len(in.Entities) {
		return in.Entities
	}
	q := strings.ToLower(in.Question)
	idx := make([]int, len(in.Entities))
	for i := range idx {
		idx[i] = i
	}
	at := func(i int) int {
		if k := strings.Index(q, strings.ToLower(in.Mentions[i])); k >= 0 {
			return k
		}
		return len(q)
	}
	slices.SortStableFunc(idx, func(a, b int) int { return at(a) - at(b) })
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = in.Entities[j]
	}
	return out
}
