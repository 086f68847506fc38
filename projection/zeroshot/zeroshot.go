// Package zeroshot is the schema planner that needs no training data: it
// enumerates the relation paths that leave the question's anchored entity
// in the KG (up to MaxHops hops, each relation walked forward or backward)
// and ranks them against the question with the text encoder.
//
// # Ranking
//
// A path's text is its relations' readable texts joined (kg.RelationText:
// "film.film.directed_by" -> "film film directed by"); its score is the
// cosine similarity between the question with its entity mention masked
// out and that text, minus LengthPenalty per hop beyond the first, so that a
// longer path must earn its extra relations. Relation texts do not say which
// way a relation is walked; where both directions leave the entity, the one
// reaching fewer entities ranks first (a question usually narrows).
//
// # Strategy
//
// The strategy follows the number of entities the best path reaches from
// the entity: Breadth when it reaches more than one, else Precision, which
// is the labelling rule (Breadth iff several gold answers) applied to the
// path's own answer set.
//
// # Hubs
//
// Enumeration is capped so that a hub entity cannot make planning slow: at
// most FrontierCap entities of each partial path are expanded (the rest
// still count towards its reach, up to ReachCap), and at most MaxPaths paths
// are kept per hop count, those reaching the fewest entities first. What
// a frontier expands to depends on the KG alone, so Config.Cache keeps the
// expansions of large frontiers (a hub's) for the questions that follow.
// Over an in-memory KG of at most 64 relations, the Cache also reads each
// entity's relations as bits once: a frontier's steps are then the union
// of its entities' bits, and the triples of a step are looked up only
// when the entities it reaches are gathered.
package zeroshot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
)

// Config tunes the planner; zero fields take the defaults.
type Config struct {
	// Beam is the number of candidate paths (B); 0 means projection.DefaultBeam.
	Beam int
	// MaxHops is the longest path enumerated; 0 means 3.
	MaxHops int
	// LengthPenalty is subtracted per hop beyond the first; 0 means
	// DefaultLengthPenalty, negative means none.
	LengthPenalty float32
	// FrontierCap is the most entities expanded per partial path; 0 means
	// 200.
	FrontierCap int
	// MaxPaths is the most partial paths kept per hop count; 0 means 400.
	MaxPaths int
	// Cache, when not nil, keeps the expansions of large frontiers between
	// calls (see Cache); it must serve this graph and FrontierCap alone.
	Cache *Cache
}

// withDefaults fills c's zero fields.
func (c Config) withDefaults() Config {
	if c.Beam <= 0 {
		c.Beam = projection.DefaultBeam
	}
	if c.MaxHops <= 0 {
		c.MaxHops = DefaultMaxHops
	}
	if c.LengthPenalty == 0 {
		c.LengthPenalty = DefaultLengthPenalty
	} else if c.LengthPenalty < 0 {
		c.LengthPenalty = 0
	}
	if c.FrontierCap <= 0 {
		c.FrontierCap = 200
	}
	if c.MaxPaths <= 0 {
		c.MaxPaths = 400
	}
	return c
}

// DefaultLengthPenalty was chosen on the dev splits.
const DefaultLengthPenalty = 0.05

// DefaultMaxHops is the default Config.MaxHops: the longest path planned.
const DefaultMaxHops = 3

// reachCap bounds the entities counted per path.
const reachCap = 10000

// Planner is the zero-shot schema planner over one KG. It implements
// projection.Planner and is safe for concurrent use.
type Planner struct {
	g    kg.Reader
	enc  models.Encoder
	cfg  Config
	rels [][]float32 // un-normalised parts (Additive) or unit vectors, per relation id
	add  bool
}

var _ projection.Planner = (*Planner)(nil)

// New returns a planner over g, encoding every relation's text once.
func New(ctx context.Context, g kg.Reader, enc models.Encoder, cfg Config) (*Planner, error) {
	if g == nil || enc == nil {
		return nil, errors.New("zeroshot: new planner: nil graph or encoder")
	}
	cfg = cfg.withDefaults()
	n, d := g.NumRelations(), enc.Dim()
	texts := make([]string, n)
	for i := range n {
		texts[i] = kg.RelationTextOf(g, int32(i))
	}
	buf := make([]float32, n*d)
	p := &Planner{g: g, enc: enc, cfg: cfg, rels: make([][]float32, n)}
	var err error
	if a, ok := enc.(models.Additive); ok {
		p.add = true
		err = a.EncodeParts(ctx, texts, buf)
	} else {
		err = enc.Encode(ctx, texts, buf)
	}
	if err != nil {
		return nil, fmt.Errorf("zeroshot: encode relation texts: %w", err)
	}
	for i := range n {
		p.rels[i] = buf[i*d : (i+1)*d]
	}
	return p, nil
}

// Prediction is the planner's ranked paths and strategy.
type Prediction struct {
	Paths    []projection.ScoredPath
	Strategy schema.Strategy
	Notes    []string
	// Anchor is the entity the paths leave.
	Anchor string
}

// Predict ranks the paths leaving the entities (the first one the graph
// knows anchors them) against the question.
func (p *Planner) Predict(ctx context.Context, question string, entities, mentions []string) (Prediction, error) {
	if len(linking.Words(question)) == 0 {
		return Prediction{}, errors.New("zeroshot: empty question")
	}
	start, anchor, err := Anchor(p.g, entities)
	if err != nil {
		return Prediction{}, fmt.Errorf("zeroshot: %w", err)
	}
	if len(mentions) == 0 {
		mentions = linking.Mentions(question, entities)
	}
	d := p.enc.Dim()
	q := make([]float32, d)
	if err := p.enc.Encode(ctx, []string{linking.Mask(question, mentions)}, q); err != nil {
		return Prediction{}, fmt.Errorf("zeroshot: encode question: %w", err)
	}
	walks, notes, err := Walks(ctx, p.g, start, p.cfg)
	if err != nil {
		return Prediction{}, err
	}
	pred := Prediction{Anchor: anchor, Notes: notes}
	all := make([]projection.ScoredPath, 0, len(walks))
	vec := make([]float32, d)
	for _, pa := range walks {
		clear(vec)
		for _, s := range pa.Steps {
			for j, x := range p.rels[s.Rel] {
				vec[j] += x
			}
		}
		var dot, nn float32
		for j, x := range vec {
			dot += x * q[j]
			nn += x * x
		}
		cos := float32(0)
		if nn > 0 {
			cos = dot / float32(math.Sqrt(float64(nn)))
		}
		all = append(all, projection.ScoredPath{Steps: SchemaSteps(p.g, pa.Steps), Score: cos - p.cfg.LengthPenalty*float32(len(pa.Steps)-1), Reach: pa.Reach})
	}
	if len(all) == 0 {
		return Prediction{}, fmt.Errorf("zeroshot: entity %q has no edges in the KG", entities[0])
	}
	slices.SortFunc(all, func(a, b projection.ScoredPath) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		if a.Reach != b.Reach {
			return a.Reach - b.Reach
		}
		return compareSteps(a.Steps, b.Steps)
	})
	if len(all) > p.cfg.Beam {
		all = all[:p.cfg.Beam]
	}
	pred.Paths = all
	if all[0].Reach > 1 {
		pred.Strategy = schema.Breadth
	}
	return pred, nil
}

// Step is one hop of a Walk: a relation id, walked against its direction
// when Inv is set.
type Step struct {
	Rel int32
	Inv bool
}

// Walk is a relation path leaving the anchor and the entities it reaches.
type Walk struct {
	Steps []Step
	// Front holds the entities reached (at most reachCap); Reach counts
	// them.
	Front []int32
	Reach int
}

// Anchor returns the entities the paths leave: those of the first of
// entities the graph knows, by exact name and else by normalised name,
// and that name.
func Anchor(g kg.Reader, entities []string) ([]int32, string, error) {
	for _, e := range entities {
		if id, ok := g.Entity(e); ok {
			return []int32{id}, e, nil
		}
		if ids := g.EntitiesByNorm(e); len(ids) > 0 {
			return ids, e, nil
		}
	}
	return nil, "", fmt.Errorf("none of the question's entities %q is in the KG", entities)
}

// Walks enumerates the relation paths of 1 to cfg.MaxHops hops that leave
// start in g, each relation walked forward or backward, shortest first.
// cfg's caps bound the work at hubs (see the package comment); notes say
// where they cut. Zero fields of cfg take New's defaults.
func Walks(ctx context.Context, g kg.Reader, start []int32, cfg Config) (walks []Walk, notes []string, err error) {
	cfg = cfg.withDefaults()
	level := []Walk{{Front: start, Reach: len(start)}}
	for hop := 1; hop <= cfg.MaxHops; hop++ {
		pend, err := Extend(ctx, g, level, cfg)
		if err != nil {
			return nil, nil, err
		}
		next, note := pend.Fill(nil)
		if note != "" {
			notes = append(notes, note)
		}
		walks = append(walks, next...)
		level = next
	}
	return walks, notes, nil
}

// Pending is one hop of Walks before the entities its paths reach are
// gathered: a caller that ranks paths can read their steps first and have
// Fill gather only those that may rank.
type Pending struct {
	g   kg.Reader
	cfg Config
	hop int
	// Steps holds each new path's steps, in the order Walks returns them.
	Steps [][]Step
	refs  []stepRef // each path's last step, in its frontier's expansion
}

// run is the triples of one relation leaving (or, inv, entering) one
// entity: a sub-slice of Out or In.
type run struct {
	ts  []int32
	inv bool
}

// stepRef is one step of an expansion.
type stepRef struct {
	ex *expansion
	i  int
}

// expansion is what one frontier expands to: its steps in name order,
// each with its runs (the triples it walks, per entity of the frontier),
// and the entities each step reaches, gathered on first use. It depends on
// the frontier and the frontier cap alone, so a Cache shares it between
// paths and questions that reach the same frontier (a hub's).
type expansion struct {
	front  []int32 // the frontier expanded, before the cap: the cache's key
	steps  []Step
	runs   [][]run
	once   []sync.Once
	fronts [][]int32
	cache  *Cache // where the gathered entities are counted, or nil
	// capped is set, and runs nil, for an expansion read from relMasks:
	// the frontier after the cap, whose runs of a step are looked up when
	// its entities are gathered. size and work are what put counts of
	// it, as of the runs it stands for.
	capped     []int32
	size, work int64
}

// reached returns the distinct entities step i reaches, gathering them on
// the first call.
func (ex *expansion) reached(g kg.Reader, i int, x *grouper) []int32 {
	ex.once[i].Do(func() {
		var runs []run
		if ex.capped != nil {
			x.runs = lookupRuns(g, ex.capped, ex.steps[i], x.runs[:0])
			runs = x.runs
		} else {
			runs = ex.runs[i]
		}
		ex.fronts[i] = x.gather(g, runs)
		if ex.cache != nil {
			ex.cache.size.Add(int64(len(ex.fronts[i])))
		}
	})
	return ex.fronts[i]
}

// lookupRuns appends to buf the runs of step s leaving (or entering) each
// entity of front, in front's order, as expand meets them: Out and In are
// sorted by relation, so each run's start is found by binary search and
// its end by runEnd's galloping, as expand finds them.
func lookupRuns(g kg.Reader, front []int32, s Step, buf []run) []run {
	_, rels, _ := kg.ColumnsOf(g)
	for _, e := range front {
		ts := g.Out(e)
		if s.Inv {
			ts = g.In(e)
		}
		lo, found := slices.BinarySearchFunc(ts, s.Rel, func(t, r int32) int { return cmp.Compare(rels[t], r) })
		if found {
			hi := runEnd(ts, lo, s.Rel, func(t int32) int32 { return rels[t] })
			buf = append(buf, run{ts[lo:hi:hi], s.Inv})
		}
	}
	return buf
}

// Cache keeps the expansions of large frontiers between Extend calls, so
// that the hubs many questions walk through (a gender, a country, a
// genre) are expanded and gathered once, not per question: their steps,
// runs and reached entities depend on the KG alone. A Cache serves one
// graph and one FrontierCap; it is safe for concurrent use and bounded
// (see NewCache). A nil *Cache caches nothing.
type Cache struct {
	mu     sync.Mutex
	byHash map[uint64][]*expansion
	size   atomic.Int64 // entities held, roughly: fronts, runs and gathered ones
	limit  int64
	// expanders and groupers keep Extend's and Fill's buffers between
	// calls: a grouper's marks span every entity id, and an expander's
	// slots every relation, too much to allocate per question.
	expanders, groupers sync.Pool
	// masks is the graph's relMasks, read on the first Extend; nil for a
	// KG they do not fit.
	masks     *relMasks
	masksOnce sync.Once
}

// relMasks returns g's relMasks, read once, or nil (always, for a nil
// Cache: they are worth reading for a KG planned over again and again).
func (c *Cache) relMasks(g kg.Reader) *relMasks {
	if c == nil {
		return nil
	}
	c.masksOnce.Do(func() { c.masks = newRelMasks(g) })
	return c.masks
}

// expander returns an expander for one Extend call; put it back with
// release.
func (c *Cache) expander() *expander {
	if c != nil {
		if x, ok := c.expanders.Get().(*expander); ok {
			return x
		}
	}
	return &expander{}
}

// grouper returns a grouper for one Fill call, one that marks entities
// by id when c keeps it between calls; put it back with release.
func (c *Cache) grouper() *grouper {
	if c != nil {
		if x, ok := c.groupers.Get().(*grouper); ok {
			return x
		}
		return &grouper{dense: true}
	}
	return &grouper{}
}

// release keeps x's and y's buffers for later calls; either may be nil.
func (c *Cache) release(x *expander, y *grouper) {
	if c == nil {
		return
	}
	if x != nil {
		c.expanders.Put(x)
	}
	if y != nil {
		c.groupers.Put(y)
	}
}

// NewCache returns a cache that holds about limit entity ids (4 bytes
// each) before it starts over; limit <= 0 means DefaultCacheLimit.
func NewCache(limit int64) *Cache {
	if limit <= 0 {
		limit = DefaultCacheLimit
	}
	return &Cache{byHash: map[uint64][]*expansion{}, limit: limit}
}

// DefaultCacheLimit is NewCache's default bound: 16M entity ids, 64 MB.
const DefaultCacheLimit = 16 << 20

// cacheMin is the least work (frontier entities plus the triples its
// steps walk) worth caching: a small frontier is expanded about as fast as
// it is looked up.
const cacheMin = 256

// hashFront hashes a frontier's ids (FNV-1a over the ids, then mixed).
func hashFront(front []int32) uint64 {
	h := uint64(14695981039346656037)
	for _, e := range front {
		h ^= uint64(uint32(e))
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// get returns the cached expansion of front, or nil.
func (c *Cache) get(h uint64, front []int32) *expansion {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ex := range c.byHash[h] {
		if slices.Equal(ex.front, front) {
			return ex
		}
	}
	return nil
}

// put keeps ex when it is worth it, starting over when the cache is full.
func (c *Cache) put(h uint64, ex *expansion) {
	if c == nil {
		return
	}
	n, work := int64(len(ex.front)+len(ex.steps)), int64(len(ex.front))
	for _, rs := range ex.runs {
		n += int64(8 * len(rs)) // a run is 8 ids' worth of memory
		for _, r := range rs {
			work += int64(len(r.ts))
		}
	}
	if ex.capped != nil {
		n, work = ex.size, ex.work
	}
	if work < cacheMin {
		return
	}
	ex.cache = c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size.Load()+n > c.limit {
		clear(c.byHash)
		c.size.Store(0)
	}
	c.byHash[h] = append(c.byHash[h], ex)
	c.size.Add(n)
}

// Extend reads the steps that extend each walk of level (all of one hop
// count) by one hop, in every direction its frontier allows, with cfg's
// frontier cap. Everything it keeps or cuts is chosen by names, never by
// ids, so that the paths do not depend on how a backend numbers the KG: a
// question's neighbourhood fetched from an endpoint is numbered otherwise
// than the same KG read from its file. cfg.Cache, when set, keeps the
// expansions of large frontiers for later calls.
func Extend(ctx context.Context, g kg.Reader, level []Walk, cfg Config) (*Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Pending{g: g, cfg: cfg, hop: 1}
	if len(level) > 0 {
		p.hop = len(level[0].Steps) + 1
	}
	x := cfg.Cache.expander()
	defer cfg.Cache.release(x, nil)
	masks := cfg.Cache.relMasks(g)
	exs := make([]*expansion, len(level))
	n := 0
	for li, pa := range level {
		var h uint64
		ex := (*expansion)(nil)
		if cfg.Cache != nil {
			h = hashFront(pa.Front)
			ex = cfg.Cache.get(h, pa.Front)
		}
		if ex == nil {
			if masks != nil {
				ex = masks.expand(g, pa.Front, cfg.FrontierCap)
			} else {
				ex = x.expand(g, pa.Front, cfg.FrontierCap)
			}
			cfg.Cache.put(h, ex)
		}
		exs[li] = ex
		n += len(ex.steps)
	}
	// Every new path's steps side by side in one slice, each capped at
	// its end.
	all := make([]Step, 0, n*p.hop)
	p.Steps = make([][]Step, 0, n)
	p.refs = make([]stepRef, 0, n)
	for li, pa := range level {
		for i, s := range exs[li].steps {
			at := len(all)
			all = append(append(all, pa.Steps...), s)
			p.Steps = append(p.Steps, all[at:len(all):len(all)])
			p.refs = append(p.refs, stepRef{exs[li], i})
		}
	}
	return p, nil
}

// expander expands frontiers, with buffers reused between them.
type expander struct {
	// slot holds each step's place in order, by stepKey; -1 for a step
	// not met yet. A slice indexed by relation, not a map: a hub's
	// frontier groups thousands of runs.
	slot     []int32
	order    []Step
	met      []run   // the runs as met
	metGroup []int32 // each run's step, by its place in order
	count    []int
}

// stepKey is step s's index in expander.slot.
func stepKey(s Step) int { return 2*int(s.Rel) + btoi(s.Inv) }

// expand groups the triples leaving and entering the first frontierCap
// entities of front (by name) by step, the steps in name order.
func (x *expander) expand(g kg.Reader, front []int32, frontierCap int) *expansion {
	_, rels, _ := kg.ColumnsOf(g)
	relOf := func(t int32) int32 {
		if rels != nil {
			return rels[t]
		}
		return g.Triple(t).Rel
	}
	x.order, x.met, x.metGroup = x.order[:0], x.met[:0], x.metGroup[:0]
	ex := &expansion{front: front}
	if len(front) > frontierCap {
		front = firstByName(g, front, frontierCap)
	}
	add := func(ts []int32, inv bool) {
		for i := 0; i < len(ts); {
			r := relOf(ts[i])
			j := runEnd(ts, i, r, relOf)
			s := Step{r, inv}
			k := stepKey(s)
			for k >= len(x.slot) {
				// A remote backend numbers relations as it meets them.
				x.slot = append(x.slot, -1)
			}
			gi := x.slot[k]
			if gi < 0 {
				gi = int32(len(x.order))
				x.slot[k] = gi
				x.order = append(x.order, s)
			}
			x.met = append(x.met, run{ts[i:j], inv})
			x.metGroup = append(x.metGroup, gi)
			i = j
		}
	}
	for _, e := range front {
		add(g.Out(e), false)
		add(g.In(e), true)
	}
	for _, s := range x.order {
		x.slot[stepKey(s)] = -1
	}
	order := x.order
	// Each step's runs in the order met, side by side in one slice.
	count := append(x.count[:0], make([]int, len(order)+1)...)
	x.count = count
	for _, gi := range x.metGroup {
		count[gi+1]++
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	byStep := make([]run, len(x.met))
	at := slices.Clone(count[:len(order)])
	for k, gi := range x.metGroup {
		byStep[at[gi]] = x.met[k]
		at[gi]++
	}
	idx := make([]int, len(order))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		sa, sb := order[a], order[b]
		if c := strings.Compare(g.RelationName(sa.Rel), g.RelationName(sb.Rel)); c != 0 {
			return c
		}
		return cmp.Compare(btoi(sa.Inv), btoi(sb.Inv))
	})
	ex.steps = make([]Step, len(idx))
	ex.runs = make([][]run, len(idx))
	for k, i := range idx {
		ex.steps[k] = order[i]
		ex.runs[k] = byStep[count[i]:count[i+1]:count[i+1]]
	}
	ex.once = make([]sync.Once, len(idx))
	ex.fronts = make([][]int32, len(idx))
	return ex
}

// relMasks holds the relations around every entity of a KG of at most
// 64 relations, one bit each: those leaving it and those entering it. A
// frontier's steps are then the union of its entities' bits, read without
// walking their edges; the runs of a step are looked up only for the
// steps whose entities are gathered, most of a hop's being bounded away
// by the caller. The steps and their runs are those expand finds.
type relMasks struct {
	out, in []uint64
	// byName holds the relation ids in name order: a frontier's steps
	// are listed in that order, each forward before backward.
	byName []int32
}

// Bounds of relMasks: the relations a bit set holds, and the entities
// whose bits are kept (8 MB each way at most).
const (
	maskRelations = 64
	maskEntities  = 1 << 20
)

// newRelMasks reads g's relMasks, or returns nil for a KG they do not
// fit or whose relations are not local (only a *kg.Graph, built in
// memory or mapped from a snapshot, has columns to read them from).
func newRelMasks(g kg.Reader) *relMasks {
	gr, ok := g.(*kg.Graph)
	if !ok || gr.NumRelations() > maskRelations || gr.NumEntities() > maskEntities {
		return nil
	}
	heads, rels, tails := gr.Columns()
	m := &relMasks{out: make([]uint64, gr.NumEntities()), in: make([]uint64, gr.NumEntities())}
	for t, r := range rels {
		m.out[heads[t]] |= 1 << r
		m.in[tails[t]] |= 1 << r
	}
	m.byName = make([]int32, gr.NumRelations())
	for r := range m.byName {
		m.byName[r] = int32(r)
	}
	slices.SortFunc(m.byName, func(a, b int32) int { return strings.Compare(gr.RelationName(a), gr.RelationName(b)) })
	return m
}

// expand is expander.expand read from the bits: the same steps, in the
// same order, their runs left to reached.
func (m *relMasks) expand(g kg.Reader, front []int32, frontierCap int) *expansion {
	ex := &expansion{front: front}
	if len(front) > frontierCap {
		front = firstByName(g, front, frontierCap)
	}
	var out, in uint64
	runs, work := 0, len(ex.front)
	for _, e := range front {
		out |= m.out[e]
		in |= m.in[e]
		runs += bits.OnesCount64(m.out[e]) + bits.OnesCount64(m.in[e])
		work += len(g.Out(e)) + len(g.In(e))
	}
	for _, r := range m.byName {
		if out&(1<<r) != 0 {
			ex.steps = append(ex.steps, Step{r, false})
		}
		if in&(1<<r) != 0 {
			ex.steps = append(ex.steps, Step{r, true})
		}
	}
	ex.capped = front
	ex.size = int64(len(ex.front)+len(ex.steps)) + int64(8*runs)
	ex.work = int64(work)
	ex.once = make([]sync.Once, len(ex.steps))
	ex.fronts = make([][]int32, len(ex.steps))
	return ex
}

// runEnd returns the end of the run of relation r that starts at ts[i]:
// Out and In are sorted by relation, so the run's end is found by
// galloping, then binary search, in a few lookups even at a hub.
func runEnd(ts []int32, i int, r int32, relOf func(int32) int32) int {
	lo := i // relOf(ts[lo]) == r
	step := 1
	for lo+step < len(ts) && relOf(ts[lo+step]) == r {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(ts)) // relOf(ts[hi]) != r, or the end
	return lo + 1 + sort.Search(hi-lo-1, func(k int) bool { return relOf(ts[lo+1+k]) != r })
}

// nameKey is a name's first 8 bytes, big-endian, zero-padded: names
// whose keys differ are ordered as their keys, so most comparisons of
// firstByName read no further.
func nameKey(s string) uint64 {
	if len(s) >= 8 {
		// One 8-byte load: the compiler merges these.
		return uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
			uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7])
	}
	var k uint64
	for i := range 8 {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}

// byName is a name with its nameKey.
type byName struct {
	key  uint64
	name string
	e    int32
}

// less reports whether a's name comes before b's.
func (a byName) less(b byName) bool {
	return a.key < b.key || a.key == b.key && a.name < b.name
}

// firstByName returns the k entities of es whose names come first, in
// name order: a hub's front of thousands is not sorted whole to expand its
// first hundreds.
func firstByName(g kg.Reader, es []int32, k int) []int32 {
	// h is a max-heap by name of the k first names seen so far.
	h := make([]byName, 0, k)
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && h[c].less(h[c+1]) {
				c++
			}
			if !h[i].less(h[c]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for _, e := range es {
		name := g.EntityName(e)
		n := byName{nameKey(name), name, e}
		switch {
		case len(h) < k:
			h = append(h, n)
			for i := len(h) - 1; i > 0; {
				up := (i - 1) / 2
				if !h[up].less(h[i]) {
					break
				}
				h[i], h[up] = h[up], h[i]
				i = up
			}
		case n.less(h[0]):
			h[0] = n
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b byName) int { return strings.Compare(a.name, b.name) })
	out := make([]int32, len(h))
	for i, n := range h {
		out[i] = n.e
	}
	return out
}

// Narrow keeps the pending paths at the indices in idx (into Steps), in
// that order, and drops the rest: a caller that can rank the paths by
// something cheaper than their reach (compose, by how the question's
// words align with their relations) picks the Config.MaxPaths it gathers,
// so that a hub's cut keeps the paths the question names rather than the
// ones reaching the fewest entities. An index out of range is skipped.
func (p *Pending) Narrow(idx []int) {
	steps := make([][]Step, 0, len(idx))
	refs := make([]stepRef, 0, len(idx))
	for _, i := range idx {
		if i < 0 || i >= len(p.Steps) {
			continue
		}
		steps = append(steps, p.Steps[i])
		refs = append(refs, p.refs[i])
	}
	p.Steps, p.refs = steps, refs
}

// MaxPaths is the most paths Fill gathers (Config.MaxPaths, defaults
// applied).
func (p *Pending) MaxPaths() int { return p.cfg.MaxPaths }

// Cut reports whether there are more pending paths than Config.MaxPaths,
// so that Fill keeps those reaching the fewest entities and does not ask
// its keep.
func (p *Pending) Cut() bool { return len(p.Steps) > p.cfg.MaxPaths }

// Fill gathers the entities each pending path reaches and returns the
// paths as Walks returns them. keep, when not nil, is asked about each
// path (by its index in Steps) first, and a path it declines is left out;
// where there are more paths than Config.MaxPaths, every path's reach
// decides which are kept, so keep is not asked and note says how many
// were cut.
func (p *Pending) Fill(keep func(i int) bool) (walks []Walk, note string) {
	cut := p.Cut()
	x := p.cfg.Cache.grouper()
	defer p.cfg.Cache.release(nil, x)
	for i, steps := range p.Steps {
		if !cut && keep != nil && !keep(i) {
			continue
		}
		r := p.refs[i]
		nf := r.ex.reached(p.g, r.i, x)
		walks = append(walks, Walk{Steps: steps, Front: nf, Reach: len(nf)})
	}
	if cut {
		slices.SortStableFunc(walks, func(a, b Walk) int { return a.Reach - b.Reach })
		note = fmt.Sprintf("hub: kept %d of %d %d-hop paths", p.cfg.MaxPaths, len(walks), p.hop)
		walks = walks[:p.cfg.MaxPaths]
	}
	return walks, note
}

// grouper gathers the entities a path's runs reach, with buffers reused
// from path to path.
type grouper struct {
	list []int32 // the entities as met
	runs []run   // a light expansion's runs of one step
	seen map[int32]struct{}
	// dense is set for a grouper a Cache keeps between calls: it marks
	// the entities met in bits, by id, instead of sorting them or keeping
	// them in seen. Every bit is clear between gathers.
	dense bool
	bits  []uint64
}

// gather returns the distinct far ends of runs in id order: the first
// reachCap of them met, where more are.
func (x *grouper) gather(g kg.Reader, runs []run) []int32 {
	heads, _, tails := kg.ColumnsOf(g)
	end := func(r run, t int32) int32 {
		switch {
		case heads != nil && r.inv:
			return heads[t]
		case heads != nil:
			return tails[t]
		case r.inv:
			return g.Triple(t).Head
		}
		return g.Triple(t).Tail
	}
	total := 0
	for _, r := range runs {
		total += len(r.ts)
	}
	x.list = x.list[:0]
	if total <= reachCap {
		lo, hi := int32(math.MaxInt32), int32(-1)
		for _, r := range runs {
			for _, t := range r.ts {
				e := end(r, t)
				lo, hi = min(lo, e), max(hi, e)
				x.list = append(x.list, e)
			}
		}
		// One entity's run (a hub's) is in id order already: Out and
		// In are sorted by the other end within a relation.
		if slices.IsSorted(x.list) {
			return slices.Clone(slices.Compact(x.list))
		}
		if x.denser(len(x.list), lo, hi) {
			for _, e := range x.list {
				x.bits[e>>6] |= 1 << (e & 63)
			}
			return x.collect(lo, hi)
		}
		slices.Sort(x.list)
		return slices.Clone(slices.Compact(x.list))
	}
	// Which reachCap entities are kept depends on the order they were
	// met: they are read in that order until reachCap distinct ones are
	// found, and a hub's edges past them are never read.
	if x.dense {
		return x.firstDense(g, runs, end)
	}
	if x.seen == nil {
		x.seen = make(map[int32]struct{}, reachCap)
	}
	clear(x.seen)
scan:
	for _, r := range runs {
		for _, t := range r.ts {
			e := end(r, t)
			if _, ok := x.seen[e]; ok {
				continue
			}
			x.seen[e] = struct{}{}
			x.list = append(x.list, e)
			if len(x.list) == reachCap {
				break scan
			}
		}
	}
	slices.Sort(x.list)
	return slices.Clone(x.list)
}

// firstDense is gather's reading of the first reachCap distinct far ends
// met, for a dense grouper: marked in bits, not kept in a map.
func (x *grouper) firstDense(g kg.Reader, runs []run, end func(run, int32) int32) []int32 {
	x.reserve(g, -1)
	if cap(x.list) < reachCap {
		x.list = make([]int32, 0, reachCap)
	}
	lo, hi := int32(math.MaxInt32), int32(-1)
scan:
	for _, r := range runs {
		for _, t := range r.ts {
			e := end(r, t)
			x.reserve(g, e)
			w, b := e>>6, uint64(1)<<(e&63)
			if x.bits[w]&b != 0 {
				continue
			}
			x.bits[w] |= b
			lo, hi = min(lo, e), max(hi, e)
			x.list = append(x.list, e)
			if len(x.list) == reachCap {
				break scan
			}
		}
	}
	if int(hi>>6-lo>>6) <= len(x.list)*bits.Len(uint(len(x.list))) {
		return x.collect(lo, hi)
	}
	for _, e := range x.list {
		x.bits[e>>6] = 0
	}
	slices.Sort(x.list)
	return slices.Clone(x.list)
}

// denser reports whether n entities met, between ids lo and hi, are
// found in id order faster by marking them in bits and reading the bits
// back than by sorting them; when so, it makes room for hi in bits.
func (x *grouper) denser(n int, lo, hi int32) bool {
	if !x.dense || n < denseMin || int(hi>>6-lo>>6) > n*bits.Len(uint(n)) {
		return false
	}
	x.reserve(nil, hi)
	return true
}

// denseMin is the fewest entities a dense grouper marks in bits: fewer
// are sorted faster.
const denseMin = 64

// reserve grows bits to hold entity e, or, with e < 0, every entity of g.
func (x *grouper) reserve(g kg.Reader, e int32) {
	n := int(e>>6) + 1
	if e < 0 {
		n = (g.NumEntities() + 63) >> 6
	}
	if n > len(x.bits) {
		x.bits = append(x.bits, make([]uint64, max(n, 2*len(x.bits))-len(x.bits))...)
	}
}

// collect returns the entities marked in bits from lo to hi in id order
// and clears their marks.
func (x *grouper) collect(lo, hi int32) []int32 {
	n := 0
	for w := lo >> 6; w <= hi>>6; w++ {
		n += bits.OnesCount64(x.bits[w])
	}
	out := make([]int32, 0, n)
	for w := lo >> 6; w <= hi>>6; w++ {
		for v := x.bits[w]; v != 0; v &= v - 1 {
			out = append(out, w<<6|int32(bits.TrailingZeros64(v)))
		}
		x.bits[w] = 0
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compareSteps orders paths by their relations' names and directions.
func compareSteps(a, b []schema.Step) int {
	for i := range min(len(a), len(b)) {
		if c := strings.Compare(a[i].Rel, b[i].Rel); c != 0 {
			return c
		}
		if a[i].Dir != b[i].Dir {
			return cmp.Compare(a[i].Dir, b[i].Dir)
		}
	}
	return cmp.Compare(len(a), len(b))
}

// SchemaSteps names a walk's steps as schema steps.
func SchemaSteps(g kg.Reader, ss []Step) []schema.Step {
	out := make([]schema.Step, len(ss))
	for i, s := range ss {
		out[i] = schema.Step{Rel: g.RelationName(s.Rel), Dir: schema.Forward}
		if s.Inv {
			out[i].Dir = schema.Inverse
		}
	}
	return out
}

// Plan implements projection.Planner.
func (p *Planner) Plan(ctx context.Context, in projection.Input) (projection.Projection, error) {
	if len(in.Entities) == 0 {
		return projection.Projection{}, errors.New("zeroshot: plan: the question has no linked entity to anchor the paths on")
	}
	pred, err := p.Predict(ctx, in.Question, in.Entities, in.Mentions)
	if err != nil {
		return projection.Projection{}, err
	}
	return pred.Projection(), nil
}

// Projection is the prediction as a planner's output: each path a schema
// graph from the anchor, with its score.
func (pred Prediction) Projection() projection.Projection {
	out := projection.Projection{Strategy: pred.Strategy, Notes: pred.Notes}
	for _, c := range pred.Paths {
		out.Candidates = append(out.Candidates, projection.Candidate{Graph: schema.PathGraph(pred.Anchor, c.Steps), Score: c.Score})
	}
	return out
}
