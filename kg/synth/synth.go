// Package synth generates synthetic knowledge graphs of Freebase's shape,
// with PathQuestion-format questions whose gold relation paths and answers
// are computed on the generated graph, so stem can be benchmarked at any
// scale (10M triples and up) without downloading Freebase.
//
// The model, and why each property matters for benchmarking:
//
//   - Schema. Thousands of relations named domain.type.property
//     (film.film.directed_by, people.person.place_of_birth) in a few dozen
//     domains: a hand-written core (people, places, films, music, books,
//     organisations, sports, education) plus a synthetic long tail of rare
//     types. Each entity has one type, and emits that type's relations,
//     picked Zipf-wise, so relation frequency is skewed as in Freebase. A
//     planner that must choose among thousands of relation names, most
//     rare, is what relation linking faces on the real KG.
//   - Power-law degrees. Tails are drawn Zipf-wise within the target type,
//     and a few hub types (countries, genders, languages) take edges from
//     the most common relations, so at 10M triples "United States of
//     America" or "Male" has 10^5+ in-edges while most entities have degree
//     1-3. Hubs stress tracing: a retriever that expands a hub's whole
//     neighbourhood instead of the one relation it needs blows up.
//   - CVTs. Mediator nodes named like Freebase machine ids ("m.0" and
//     base-32 digits, no readable name) link e.g. an actor to a film and a
//     character (film.actor.film, then film.performance.film), a person to
//     a spouse (people.person.spouse_s, then people.marriage.spouse), a
//     player to a team. A good share of multi-hop questions go through
//     them: they stress multi-hop retrieval, since the middle node has no
//     name to match and its only meaning is its relations.
//   - Namesakes. About 2-3% of named entities share their normalised name
//     (kg.Normalize) with another entity, often of another type: "Anna
//     Kobami" the person, "anna kobami" and "Anna_Kobami" elsewhere. They
//     stress entity linking, where a normalised name lookup is ambiguous.
//
// Entity names are unique by construction (every generated name ends in a
// word that encodes the entity id), no triple is emitted twice, and the
// output is deterministic: the same Config gives the same bytes.
//
// WriteFiles writes the graph and its question files atomically, the
// graph as TSV or, for a .nt name, as N-Triples (kg's encoder): it is
// what stem kg synth runs. The package imports kg and atomicfile only.
package synth

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults for the zero Config fields.
const (
	DefaultRelations      = 3000
	DefaultQuestions      = 1000
	DefaultTrainQuestions = 2000
	// MaxTriples bounds Triples so the int32 ids and columns cannot overflow.
	MaxTriples = 1 << 30
)

// Config says what to generate.
type Config struct {
	// Triples is the exact number of triples to write (> 0).
	Triples int
	// Seed picks the graph: the same seed gives the same bytes.
	Seed uint64
	// Relations is the schema size, DefaultRelations when 0; the core
	// schema's ~90 relations are a floor. Small graphs use only some.
	Relations int
	// Questions is how many questions to write, DefaultQuestions when 0;
	// fewer are written when the graph is too small to give that many
	// distinct ones.
	Questions int
	// TrainQuestions is how many training questions WriteSplits writes,
	// DefaultTrainQuestions when 0.
	TrainQuestions int
	// Complex, when > 0, gives the graph date literals (the from and to
	// of its position, roster and marriage CVTs) and asks for that many
	// complex questions per kind (ComplexKinds) in each of the complex
	// splits WriteComplex writes. 0 leaves the graph as without it, byte
	// for byte.
	Complex int
}

// Stats describes what Write produced.
type Stats struct {
	Triples         int64
	Entities        int64 // entities in at least one triple
	Relations       int   // relations used by at least one triple
	Schema          int   // relations in the schema
	CVTs            int64
	Namesakes       int64 // entities whose normalised name another entity in the graph shares
	Duplicates      int64 // triples emitted twice (always 0: edges are deduplicated per head)
	MaxDegree       int64
	MaxDegreeEntity string
	MedianDegree    int64
	Hubs            int64 // entities with degree >= max(1000, Triples/1000)
	Questions       int
	QuestionsByHops [4]int // index = hops
	QuestionsViaCVT int    // questions whose gold path passes a CVT node
	// TrainQuestions is the number of training questions written
	// (WriteSplits), none of which is a test question.
	TrainQuestions int
	// Complex and ComplexTrain count the complex questions written per
	// kind (Config.Complex), nil when none were asked for.
	Complex, ComplexTrain map[string]int
}

// ComplexTrainFactor is how many times Config.Complex questions of each
// kind the complex training split holds.
const ComplexTrainFactor = 4

// ErrConfig marks an invalid Config.
var ErrConfig = errors.New("synth: invalid config")

const (
	outMean   = 2.0  // mean out-edge emissions per head
	headSlack = 1.15 // more heads than needed, so the quota is met before they run out
	block     = 64   // namesakes are planted per block of named ids
)

type gen struct {
	r      *rand.Rand
	s      *schema
	nHub   int32   // ids [0, nHub) are hubs
	nNamed int32   // ids [0, nNamed) are named; CVTs follow
	typeOf []int32 // by named id
	// The graph, in emission order; each head's out-edges are contiguous.
	heads, rels, tails []int32
	first, cnt         []int32 // per entity: its out-edges' range
	deg                []int32
	nCVT               int32
	scratch            []byte
}

// Write generates the graph described by cfg, writes it to kgOut as TSV
// (head<TAB>relation<TAB>tail lines, the format kg.ReadTSV and stem kg
// build read) and, when questionsOut is not nil, questions to it in
// PathQuestion format. progress, if not nil, is called now and then with
// the triples written so far and cfg.Triples.
func Write(ctx context.Context, cfg Config, kgOut, questionsOut io.Writer, progress func(done, total int64)) (Stats, error) {
	return WriteSplits(ctx, cfg, kgOut, questionsOut, nil, progress)
}

// WriteSplits is Write that also writes, when trainOut is not nil,
// cfg.TrainQuestions training questions to it: drawn from another random
// stream, in the same format, never the topic and path of a test question,
// so that a planner trained on them (stem train planner) is tested on
// questions it has not seen.
func WriteSplits(ctx context.Context, cfg Config, kgOut, questionsOut, trainOut io.Writer, progress func(done, total int64)) (Stats, error) {
	return writeSplits(ctx, cfg, kgOut, [4]io.Writer{questionsOut, trainOut}, progress)
}

// writeSplits is WriteSplits with the complex splits' writers too: out
// holds the test and training questions', then the complex test and
// training questions' (each nil for none).
func writeSplits(ctx context.Context, cfg Config, kgOut io.Writer, out [4]io.Writer, progress func(done, total int64)) (Stats, error) {
	questionsOut, trainOut := out[0], out[1]
	if cfg.Triples <= 0 || cfg.Triples > MaxTriples {
		return Stats{}, fmt.Errorf("%w: Triples = %d, want 1..%d", ErrConfig, cfg.Triples, MaxTriples)
	}
	if cfg.Relations < 0 || cfg.Questions < 0 || cfg.TrainQuestions < 0 || cfg.Complex < 0 {
		return Stats{}, fmt.Errorf("%w: negative Relations (%d), Questions (%d) or TrainQuestions (%d)", ErrConfig, cfg.Relations, cfg.Questions, cfg.TrainQuestions)
	}
	if cfg.Relations == 0 {
		cfg.Relations = DefaultRelations
	}
	if cfg.Relations > 1_000_000 {
		return Stats{}, fmt.Errorf("%w: Relations = %d, want at most 1000000", ErrConfig, cfg.Relations)
	}
	if cfg.Questions == 0 {
		cfg.Questions = DefaultQuestions
	}
	if cfg.TrainQuestions == 0 {
		cfg.TrainQuestions = DefaultTrainQuestions
	}
	if kgOut == nil {
		return Stats{}, fmt.Errorf("%w: no KG writer", ErrConfig)
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x5eed_57e3_c0de_0001))
	s, err := buildSchema(r, cfg.Relations, cfg.Complex > 0)
	if err != nil {
		return Stats{}, err
	}
	g := &gen{r: r, s: s}
	g.layout(cfg.Triples)
	bw := bufio.NewWriterSize(kgOut, 1<<20)
	if err := g.generate(ctx, cfg.Triples, bw, progress); err != nil {
		return Stats{}, err
	}
	if err := bw.Flush(); err != nil {
		return Stats{}, fmt.Errorf("synth: write KG: %w", err)
	}
	st := g.stats()
	seen := map[string]bool{}
	for i, split := range []struct {
		w      io.Writer
		n      int
		stream uint64
		what   string
	}{{questionsOut, cfg.Questions, 0x5eed_57e3_c0de_0002, "questions"}, {trainOut, cfg.TrainQuestions, 0x5eed_57e3_c0de_0003, "training questions"}} {
		if split.w == nil {
			continue
		}
		qr := rand.New(rand.NewPCG(cfg.Seed, split.stream))
		qw := bufio.NewWriterSize(split.w, 1<<16)
		var qs qStats
		if err := g.questions(ctx, qr, split.n, qw, &qs, seen); err != nil {
			return st, err
		}
		if err := qw.Flush(); err != nil {
			return st, fmt.Errorf("synth: write %s: %w", split.what, err)
		}
		if i == 0 {
			st.Questions, st.QuestionsByHops, st.QuestionsViaCVT = qs.Questions, qs.QuestionsByHops, qs.QuestionsViaCVT
		} else {
			st.TrainQuestions = qs.Questions
		}
	}
	if cfg.Complex > 0 && (out[2] != nil || out[3] != nil) {
		if err := g.writeComplex(ctx, cfg, out[2:], &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// writeComplex writes the complex test and training splits (either
// writer nil for none): cfg.Complex questions of each kind in the test
// split and ComplexTrainFactor times as many in the training split, from
// random streams of their own, the training split repeating no test
// question.
func (g *gen) writeComplex(ctx context.Context, cfg Config, ws []io.Writer, st *Stats) error {
	ix := g.buildIn()
	seen := map[string]bool{}
	st.Complex, st.ComplexTrain = map[string]int{}, map[string]int{}
	for i, split := range []struct {
		n      int
		stream uint64
		prefix string
		counts map[string]int
	}{{cfg.Complex, 0x5eed_57e3_c0de_0004, "complex-test", st.Complex}, {cfg.Complex * ComplexTrainFactor, 0x5eed_57e3_c0de_0005, "complex-train", st.ComplexTrain}} {
		if ws[i] == nil {
			continue
		}
		qr := rand.New(rand.NewPCG(cfg.Seed, split.stream))
		qw := bufio.NewWriterSize(ws[i], 1<<16)
		if err := g.complexQuestions(ctx, ix, complexSplit{r: qr, n: split.n, prefix: split.prefix, w: qw, seen: seen, counts: split.counts}); err != nil {
			return err
		}
		if err := qw.Flush(); err != nil {
			return fmt.Errorf("synth: write %s questions: %w", split.prefix, err)
		}
	}
	return nil
}

// layout assigns id ranges: hubs first, then every named type a range in
// proportion to its weight, sized so the heads suffice for the triples.
func (g *gen) layout(triples int) {
	var id int32
	for i := range g.s.types {
		t := &g.s.types[i]
		if t.hub != nil {
			t.lo, t.n = id, int32(len(t.hub))
			id += t.n
		}
	}
	g.nHub = id
	total := 0.0
	for _, t := range g.s.types {
		if t.hub == nil && !t.cvt {
			total += t.weight
		}
	}
	// Each head emits outMean edges, each a bit more than one triple on
	// average (CVTs add one or two); the slack leaves some named entities
	// without out-edges, as in Freebase, where many are only objects.
	want := float64(triples) / (outMean * 1.1) * headSlack
	for i := range g.s.types {
		t := &g.s.types[i]
		if t.hub != nil || t.cvt {
			continue
		}
		n := int32(math.Ceil(t.weight / total * want))
		t.lo, t.n = id, max(n, 1)
		id += t.n
	}
	g.nNamed = id
	g.typeOf = make([]int32, id)
	for i, t := range g.s.types {
		for j := t.lo; j < t.lo+t.n && !t.cvt; j++ {
			g.typeOf[j] = int32(i)
		}
		if t.n > 1 {
			s := 1.1
			if t.hub != nil {
				s = 1.6
			}
			g.s.types[i].tailZ = rand.NewZipf(g.r, s, 1, uint64(t.n-1))
		}
	}
}

// pickTail draws an entity of type ti: hubs Zipf-wise always, other types
// Zipf-wise a third of the time (each type's first ids become its hubs,
// the power-law head) and uniformly otherwise (the long tail).
func (g *gen) pickTail(ti int) int32 {
	t := &g.s.types[ti]
	if t.n <= 1 {
		return t.lo
	}
	if t.literal {
		return t.lo + g.r.Int32N(t.n)
	}
	if t.hub != nil || g.r.IntN(3) == 0 {
		return t.lo + int32(g.tailZ(ti))
	}
	return t.lo + g.r.Int32N(t.n)
}

func (g *gen) tailZ(ti int) uint64 { return g.s.types[ti].tailZ.Uint64() }

// edge is a pending out-edge.
type edge struct{ rel, tail int32 }

// generate emits exactly n triples, head by head in a scattered order,
// writing each head's edges (then its new CVTs' edges) as it goes.
func (g *gen) generate(ctx context.Context, n int, w *bufio.Writer, progress func(done, total int64)) error {
	g.heads = make([]int32, 0, n)
	g.rels = make([]int32, 0, n)
	g.tails = make([]int32, 0, n)
	g.first = make([]int32, g.nNamed, int(g.nNamed)+n/8)
	g.cnt = make([]int32, g.nNamed, int(g.nNamed)+n/8)
	g.deg = make([]int32, g.nNamed, int(g.nNamed)+n/8)
	total := int64(n)
	// Visit heads in the order i*stride mod nNamed (stride coprime), so
	// the heads left over when the quota is met are spread over all types.
	N := int64(g.nNamed)
	stride := int64(2654435761) % N
	if stride == 0 {
		stride = 1
	}
	for gcd(stride, N) != 1 {
		stride++
	}
	var mine []edge
	next := int64(0)
	lastReport := 0
	for visited := int64(0); len(g.heads) < n; visited++ {
		if visited == N {
			return fmt.Errorf("synth: ran out of head entities after %d of %d triples (internal sizing error)", len(g.heads), n)
		}
		h := int32(next)
		next = (next + stride) % N
		ti := int(g.typeOf[h])
		t := &g.s.types[ti]
		if len(t.rels) == 0 {
			continue
		}
		remaining := n - len(g.heads)
		headsLeft := N - visited
		k := 1 + int(g.r.ExpFloat64()*(outMean-1))
		if g.r.IntN(100) == 0 {
			k *= 10 // a few prolific heads: out-degree has a tail too
		}
		if h < g.nHub {
			k = 30 + g.r.IntN(30)
		}
		if need := int(int64(remaining) / headsLeft); need > k {
			k = need
		}
		mine = mine[:0]
		budget := remaining
		attempts := 0
		for len(mine) < k && budget > 0 && attempts < 4*k+8 {
			attempts++
			ri := t.rels[0]
			if t.relZ != nil {
				ri = t.rels[t.relZ.Uint64()]
			}
			rel := &g.s.rels[ri]
			if rel.cvt != nil {
				if budget < 1+len(rel.cvt) {
					continue
				}
				c := g.newCVT()
				mine = append(mine, edge{int32(ri), c})
				budget -= 1 + len(rel.cvt)
				continue
			}
			tail := g.pickTail(rel.target)
			if tail == h || slices.Contains(mine, edge{int32(ri), tail}) {
				continue
			}
			mine = append(mine, edge{int32(ri), tail})
			budget--
		}
		if len(mine) == 0 {
			continue
		}
		if err := g.emit(w, h, mine); err != nil {
			return err
		}
		// The CVTs' own edges, after the head's run so each entity's
		// out-edges stay contiguous.
		for _, e := range mine {
			rel := &g.s.rels[e.rel]
			if rel.cvt == nil {
				continue
			}
			var out []edge
			from := int32(-1)
			for _, cr := range rel.cvt {
				tail := g.pickTail(g.s.rels[cr].target)
				switch g.s.rels[cr].date {
				case dateFrom:
					from = tail
				case dateTo:
					// A fact ends after it starts: up to two years on.
					t := &g.s.types[g.s.rels[cr].target]
					tail = min(from+1+g.r.Int32N(8), t.lo+t.n-1)
				}
				out = append(out, edge{int32(cr), tail})
			}
			if err := g.emit(w, e.tail, out); err != nil {
				return err
			}
		}
		if len(g.heads)-lastReport >= 1<<16 {
			lastReport = len(g.heads)
			if err := ctx.Err(); err != nil {
				return err
			}
			if progress != nil {
				progress(int64(len(g.heads)), total)
			}
		}
	}
	if progress != nil {
		progress(int64(len(g.heads)), total)
	}
	return nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func (g *gen) newCVT() int32 {
	id := g.nNamed + g.nCVT
	g.nCVT++
	g.first = append(g.first, 0)
	g.cnt = append(g.cnt, 0)
	g.deg = append(g.deg, 0)
	return id
}

// emit records and writes head's out-edges.
func (g *gen) emit(w *bufio.Writer, h int32, es []edge) error {
	g.first[h] = int32(len(g.heads))
	g.cnt[h] = int32(len(es))
	for _, e := range es {
		g.heads = append(g.heads, h)
		g.rels = append(g.rels, e.rel)
		g.tails = append(g.tails, e.tail)
		g.deg[h]++
		g.deg[e.tail]++
		b := g.appendName(g.scratch[:0], h)
		b = append(b, '\t')
		b = append(b, g.s.rels[e.rel].name...)
		b = append(b, '\t')
		b = g.appendName(b, e.tail)
		b = append(b, '\n')
		g.scratch = b
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("synth: write KG: %w", err)
		}
	}
	return nil
}

func (g *gen) stats() Stats {
	st := Stats{Triples: int64(len(g.heads)), CVTs: int64(g.nCVT), Schema: len(g.s.rels)}
	used := make([]bool, len(g.s.rels))
	for _, r := range g.rels {
		used[r] = true
	}
	for _, u := range used {
		if u {
			st.Relations++
		}
	}
	hubAt := int32(max(1000, len(g.heads)/1000))
	var hist []int64
	for id, d := range g.deg {
		if d == 0 {
			continue
		}
		st.Entities++
		if int64(d) > st.MaxDegree {
			st.MaxDegree = int64(d)
			st.MaxDegreeEntity = g.name(int32(id))
		}
		if d >= hubAt {
			st.Hubs++
		}
		if int(d) < 64 {
			for len(hist) <= int(d) {
				hist = append(hist, 0)
			}
			hist[d]++
		}
	}
	half, seen := (st.Entities+1)/2, int64(0)
	st.MedianDegree = 64
	for d, c := range hist {
		seen += c
		if seen >= half {
			st.MedianDegree = int64(d)
			break
		}
	}
	// Every entity in a group of two or more present entities that share
	// a normalised name counts: a source and its (up to two) namesakes.
	group := map[int32]int64{}
	for id := int32(0); id < g.nNamed; id++ {
		if src, _, ok := g.namesakeOf(id); ok && g.deg[id] > 0 {
			group[src]++
		}
	}
	for src, n := range group {
		if g.deg[src] > 0 {
			n++
		}
		if n >= 2 {
			st.Namesakes += n
		}
	}
	return st
}
