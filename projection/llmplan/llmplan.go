// Package llmplan is STEM's Semantic-to-Structural Projection over a chat
// model (paper sections 3.1-3.2, `--planner llm`): the SGDA step asks the
// model (prompt P1) to decompose the question into atomic assertions with
// [ENTn] placeholders and an answer strategy, B times; the SAGB step asks it
// (prompt P2) to turn each decomposition into (head, relation, tail)
// triples, which become the candidate schema graphs. The paper fine-tunes
// both models; here they are prompted with few-shot examples chosen from
// training data, as in the paper's own ablation with off-the-shelf models
// (section 4.4).
//
// Replies are read by tolerant parsers (ParseDecomposition, ParseTriples)
// that accept what models really write; a reply that is not a plan is
// retried with a note to the model saying what was wrong.
package llmplan

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// Defaults for Config's zero values.
const (
	DefaultSamples          = 4   // the paper's beam size B (D.6)
	DefaultTemperature      = 0.7 // SGDA sampling when Samples > 1
	DefaultRetryTemperature = 0.7
	DefaultMaxParseRetries  = 3
	DefaultStrategyTries    = 5 // the paper's rule (section 4.4, footnote 5)
	DefaultShots            = 3 // P1 and P5 show three examples
	DefaultTripleShots      = 2 // P2 shows two
)

// Config sets up a Planner. Zero values take the defaults above.
type Config struct {
	// Chat is the model; required.
	Chat llm.Chatter

	// Samples is B, the number of candidate decompositions drawn from the
	// SGDA per question (default 4). The paper uses beam search; a chat
	// server samples instead.
	Samples int
	// Temperature for the SGDA samples: 0 means DefaultTemperature when
	// Samples > 1 and greedy when Samples == 1; negative forces greedy.
	// SAGB always decodes greedily (paper, B.2), except on retries.
	Temperature float64
	// TopP for the SGDA samples; 0 leaves it to the server.
	TopP float64
	// OneCallPerSample draws the B samples as B requests with n = 1 and
	// seeds Seed, Seed+1, ..., instead of one request with n = B.
	OneCallPerSample bool
	// Seed is sent with every request (shifted per sample and per retry),
	// so sampled plans are repeatable where the server supports seeds and
	// a response cache keys retries apart.
	Seed int64
	// MaxTokens bounds each reply; 0 leaves it to the server (reasoning
	// models need room for their <think> block).
	MaxTokens int
	// MaxParseRetries is how many times an unreadable reply is asked for
	// again (default 3; negative means never).
	MaxParseRetries int
	// RetryTemperature is used for retries of greedy requests, which
	// would otherwise repeat the same reply (default 0.7).
	RetryTemperature float64
	// StrategyTries is how many times P5 is asked for the strategy of a
	// candidate whose SGDA reply named none, before defaulting to
	// Precision (default 5; negative means default at once).
	StrategyTries int

	// Examples is the few-shot pool (see ExamplesFromPaths); the ones
	// nearest the question are shown.
	Examples []Example
	// Shots is the number of examples shown in P1 and P5 (default 3);
	// TripleShots in P2 (default 2). Negative shows none.
	Shots, TripleShots int
	// Encoder ranks examples by similarity to the question (without one,
	// by shared words) and relations by similarity to assertions.
	Encoder models.Encoder

	// Relations is the KG's relation vocabulary. With it, triples whose
	// relation is not in the KG are noted (tracing matches relations by
	// meaning, so they are kept).
	Relations []string
	// RelationHints offers P2 the M relations nearest each assertion
	// (needs Encoder and Relations); 0 offers none.
	RelationHints int
	// MapRelations replaces a relation not in the KG with the nearest KG
	// relation by the encoder (needs Encoder and Relations).
	MapRelations bool
}

// Planner implements projection.Planner over a chat model. It is safe for
// concurrent use: nothing changes after New.
type Planner struct {
	cfg     Config
	dim     int
	exVecs  []float32 // len(Examples) x dim, when Encoder is set
	exWords []map[string]bool
	relVecs []float32 // len(Relations) x dim, when hints or mapping are on
	relKey  map[string]string
}

var _ projection.Planner = (*Planner)(nil)

// New checks cfg, fills in defaults and encodes the example questions and
// relation names once.
func New(ctx context.Context, cfg Config) (*Planner, error) {
	if cfg.Chat == nil {
		return nil, errors.New("llmplan: no chat model configured")
	}
	if cfg.Samples <= 0 {
		cfg.Samples = DefaultSamples
	}
	switch {
	case cfg.Temperature < 0:
		cfg.Temperature = 0
	case cfg.Temperature == 0 && cfg.Samples > 1:
		cfg.Temperature = DefaultTemperature
	case cfg.Temperature > 2:
		return nil, fmt.Errorf("llmplan: temperature %g, want 0..2", cfg.Temperature)
	}
	if cfg.RetryTemperature <= 0 {
		cfg.RetryTemperature = DefaultRetryTemperature
	}
	if cfg.MaxParseRetries == 0 {
		cfg.MaxParseRetries = DefaultMaxParseRetries
	} else if cfg.MaxParseRetries < 0 {
		cfg.MaxParseRetries = 0
	}
	if cfg.StrategyTries == 0 {
		cfg.StrategyTries = DefaultStrategyTries
	} else if cfg.StrategyTries < 0 {
		cfg.StrategyTries = 0
	}
	if cfg.Shots == 0 {
		cfg.Shots = DefaultShots
	}
	if cfg.TripleShots == 0 {
		cfg.TripleShots = DefaultTripleShots
	}
	if cfg.RelationHints < 0 {
		cfg.RelationHints = 0
	}
	if (cfg.RelationHints > 0 || cfg.MapRelations) && (cfg.Encoder == nil || len(cfg.Relations) == 0) {
		return nil, errors.New("llmplan: relation hints and mapping need both an encoder and the KG's relations")
	}
	for i, e := range cfg.Examples {
		if strings.TrimSpace(e.Question) == "" || len(e.Assertions) == 0 {
			return nil, fmt.Errorf("llmplan: example %d (%q) needs a question and assertions", i, e.Question)
		}
		if len(e.Triples) > 0 && len(e.Triples) != len(e.Assertions) {
			return nil, fmt.Errorf("llmplan: example %d (%q): %d triples for %d assertions", i, e.Question, len(e.Triples), len(e.Assertions))
		}
	}
	p := &Planner{cfg: cfg}
	if cfg.Encoder != nil {
		p.dim = cfg.Encoder.Dim()
	}
	if cfg.Encoder != nil && len(cfg.Examples) > 0 {
		qs := make([]string, len(cfg.Examples))
		for i, e := range cfg.Examples {
			qs[i] = e.Question
		}
		var err error
		if p.exVecs, err = models.EncodeAll(ctx, cfg.Encoder, qs); err != nil {
			return nil, fmt.Errorf("llmplan: encoding example questions: %w", err)
		}
	} else {
		p.exWords = make([]map[string]bool, len(cfg.Examples))
		for i, e := range cfg.Examples {
			p.exWords[i] = wordSet(e.Question)
		}
	}
	if err := p.setRelations(ctx, cfg.Relations); err != nil {
		return nil, err
	}
	return p, nil
}

// setRelations makes rels the vocabulary SAGB's triples are grounded in.
func (p *Planner) setRelations(ctx context.Context, rels []string) error {
	p.cfg.Relations = rels
	p.relKey, p.relVecs = nil, nil
	if len(rels) > 0 {
		p.relKey = make(map[string]string, 2*len(rels))
		for _, r := range rels {
			p.relKey[r] = r
			if k := strings.ToLower(r); p.relKey[k] == "" {
				p.relKey[k] = r
			}
		}
	}
	if (p.cfg.RelationHints > 0 || p.cfg.MapRelations) && len(rels) > 0 {
		texts := make([]string, len(rels))
		for i, r := range rels {
			texts[i] = kg.RelationText(r)
		}
		var err error
		if p.relVecs, err = models.EncodeAll(ctx, p.cfg.Encoder, texts); err != nil {
			return fmt.Errorf("llmplan: encoding KG relations: %w", err)
		}
	}
	return nil
}

// WithRelations returns a planner like p whose SAGB triples are grounded
// in rels, a question's own graph's relations (per-question graphs, where
// each question's graph is its KG). The examples' vectors are shared.
func (p *Planner) WithRelations(ctx context.Context, rels []string) (*Planner, error) {
	q := *p
	if err := q.setRelations(ctx, rels); err != nil {
		return nil, err
	}
	return &q, nil
}

// Plan decomposes the question into B candidate assertion sets (SGDA),
// builds each one's schema graph (SAGB) and gives each candidate the
// strategy its SGDA samples named (P5's for a sample that named none);
// identical graphs merge, their samples voting graph and strategy. The
// projection's Strategy is the best candidate's.
func (p *Planner) Plan(ctx context.Context, in projection.Input) (projection.Projection, error) {
	q := strings.TrimSpace(in.Question)
	if q == "" {
		return projection.Projection{}, errors.New("llmplan: empty question")
	}
	var out projection.Projection
	note := func(format string, args ...any) { out.Notes = append(out.Notes, fmt.Sprintf(format, args...)) }
	if len(in.Entities) == 0 {
		note("no question entities given: the model names them in its assertions, and tracing anchors on those names")
	}
	order, err := p.rankExamples(ctx, q)
	if err != nil {
		return projection.Projection{}, fmt.Errorf("llmplan: question %q: %w", q, err)
	}

	exs := p.shots(order, p.cfg.Shots, false)
	decs, err := p.decompose(ctx, q, exs, note)
	if err != nil {
		return projection.Projection{}, fmt.Errorf("llmplan: question %q: %w", q, err)
	}
	var nP, nB int
	for _, d := range decs {
		switch {
		case !d.HasStrategy:
		case d.Strategy == schema.Breadth:
			nB++
		default:
			nP++
		}
	}
	if nP > 0 && nB > 0 {
		note("strategy votes split: %d precision, %d breadth", nP, nB)
	}

	// Identical decompositions are built once and vote together, for
	// their graph and for its strategy.
	type group struct {
		assertions []string
		count      int
		votes      [2]int // precision, breadth
		unnamed    int    // samples that named no strategy
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, d := range decs {
		k := strings.Join(d.Assertions, "\x00")
		g := byKey[k]
		if g == nil {
			g = &group{assertions: d.Assertions}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.count++
		switch {
		case !d.HasStrategy:
			g.unnamed++
		case d.Strategy == schema.Breadth:
			g.votes[1]++
		default:
			g.votes[0]++
		}
	}

	tshots := p.shots(order, p.cfg.TripleShots, true)
	type built struct {
		triples []schema.Triple
		notes   []string
		err     error
	}
	res := make([]built, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Go(func() {
			res[i].triples, res[i].notes, res[i].err = p.build(ctx, g.assertions, tshots, i+1)
			if res[i].err != nil || res[i].triples == nil || g.unnamed == 0 {
				return
			}
			// The samples that named no strategy take P5's for their
			// assertions (the paper's fallback, per sample).
			st, notes, err := p.strategy(ctx, q, g.assertions, exs, i+1)
			res[i].notes = append(res[i].notes, notes...)
			if err != nil {
				res[i].err = err
				return
			}
			if st == schema.Breadth {
				g.votes[1] += g.unnamed
			} else {
				g.votes[0] += g.unnamed
			}
		})
	}
	wg.Wait()

	ents := entityIndex(in)
	type cand struct {
		c     projection.Candidate
		votes int
		strat [2]int
	}
	var cands []*cand
	byGraph := map[string]*cand{}
	for i, g := range groups {
		r := res[i]
		if r.err != nil {
			return projection.Projection{}, fmt.Errorf("llmplan: question %q: %w", q, r.err)
		}
		out.Notes = append(out.Notes, r.notes...)
		if r.triples == nil {
			continue // unreadable; noted by build
		}
		graph := p.graph(ctx, r.triples, ents, i+1, note)
		if err := graph.Validate(); err != nil {
			note("candidate %d dropped: %v", i+1, err)
			continue
		}
		k := FormatTriples(graph.Triples) + graph.Answer
		c := byGraph[k]
		if c == nil {
			c = &cand{c: projection.Candidate{Graph: graph, Assertions: g.assertions}}
			byGraph[k] = c
			cands = append(cands, c)
		}
		c.votes += g.count
		c.strat[0] += g.votes[0]
		c.strat[1] += g.votes[1]
	}
	if len(cands) == 0 {
		return projection.Projection{}, fmt.Errorf("llmplan: question %q: no candidate schema graph survived (%s)", q, strings.Join(out.Notes, "; "))
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].votes > cands[b].votes })
	for _, c := range cands {
		c.c.Score = float32(c.votes) / float32(len(decs))
		// A candidate's samples vote its strategy; ties go to Precision.
		if c.strat[1] > c.strat[0] {
			c.c.Strategy = schema.Breadth
		}
		out.Candidates = append(out.Candidates, c.c)
	}
	out.PerCandidate = true
	out.Strategy = out.Candidates[0].Strategy
	return out, nil
}

// rankExamples orders the example pool by similarity to q, nearest first.
func (p *Planner) rankExamples(ctx context.Context, q string) ([]int, error) {
	n := len(p.cfg.Examples)
	if n == 0 {
		return nil, nil
	}
	scores := make([]float32, n)
	if p.exVecs != nil {
		qv, err := models.EncodeAll(ctx, p.cfg.Encoder, []string{q})
		if err != nil {
			return nil, fmt.Errorf("encoding the question: %w", err)
		}
		for i := range scores {
			scores[i] = dot(qv, p.exVecs[i*p.dim:(i+1)*p.dim])
		}
	} else {
		w := wordSet(q)
		for i := range scores {
			scores[i] = jaccard(w, p.exWords[i])
		}
	}
	return rankBy(scores), nil
}

// shots picks the first k ranked examples, only ones with triples when
// needTriples. They are shown farthest first, so the nearest example sits
// next to the question.
func (p *Planner) shots(order []int, k int, needTriples bool) []Example {
	var out []Example
	for _, i := range order {
		if len(out) >= k {
			break
		}
		e := p.cfg.Examples[i]
		if needTriples && len(e.Triples) == 0 {
			continue
		}
		out = append(out, e)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// sample asks for n choices of req, as one request or as n seeded ones.
func (p *Planner) sample(ctx context.Context, req llm.Request, n int, seed int64) ([]string, error) {
	if !p.cfg.OneCallPerSample || n == 1 {
		req.N = n
		req.Seed = &seed
		r, err := p.cfg.Chat.Chat(ctx, req)
		if err != nil {
			return nil, err
		}
		return r.Choices, nil
	}
	var out []string
	for i := range n {
		s := seed + int64(i)
		req.N, req.Seed = 1, &s
		r, err := p.cfg.Chat.Chat(ctx, req)
		if err != nil {
			return nil, err
		}
		out = append(out, r.Choices...)
	}
	return out, nil
}

// retryMessages asks again after an unreadable reply, showing the model
// its reply and what was wrong with it; the changed request also keeps a
// response cache from answering the retry with the same reply.
func retryMessages(prompt, bad string, err error, format string) []llm.Message {
	return []llm.Message{
		llm.User(prompt),
		llm.Assistant(bad),
		llm.User("Your reply could not be read (" + err.Error() + "). Reply again with only the result in the required format: " + format),
	}
}

// decompose runs the SGDA: B decompositions, retrying unreadable replies.
func (p *Planner) decompose(ctx context.Context, q string, exs []Example, note func(string, ...any)) ([]Decomposition, error) {
	prompt := RenderSGDA(q, exs)
	B := p.cfg.Samples
	var (
		decs    []Decomposition
		lastBad string
		lastErr error
	)
	attempts := 0
	for attempt := 0; attempt <= p.cfg.MaxParseRetries && len(decs) < B; attempt++ {
		attempts++
		req := llm.Request{Messages: []llm.Message{llm.User(prompt)}, Temperature: p.cfg.Temperature, TopP: p.cfg.TopP, MaxTokens: p.cfg.MaxTokens}
		if attempt > 0 {
			req.Messages = retryMessages(prompt, lastBad, lastErr, `(("Assertion_1", "Assertion_2"), Strategy)`)
			if req.Temperature == 0 {
				req.Temperature = p.cfg.RetryTemperature
			}
		}
		choices, err := p.sample(ctx, req, B-len(decs), p.cfg.Seed+int64(attempt*B))
		if err != nil {
			return nil, fmt.Errorf("SGDA: %w", err)
		}
		for _, c := range choices {
			d, err := ParseDecomposition(c)
			if err != nil {
				lastBad, lastErr = c, err
				note("SGDA reply unreadable (attempt %d): %v", attempt+1, err)
				continue
			}
			decs = append(decs, d)
		}
	}
	if len(decs) == 0 {
		if lastErr == nil {
			lastErr = errors.New("the model returned no reply")
		}
		return nil, fmt.Errorf("SGDA gave no readable decomposition in %d attempts; last reply: %w", attempts, lastErr)
	}
	if len(decs) < B {
		note("only %d of %d SGDA samples were readable after %d attempts", len(decs), B, attempts)
	}
	return decs, nil
}

// strategy asks P5 for the strategy of candidate cand's assertions, for
// the SGDA samples that named none, and after StrategyTries unreadable
// answers defaults to Precision, the paper's rule.
func (p *Planner) strategy(ctx context.Context, q string, assertions []string, exs []Example, cand int) (schema.Strategy, []string, error) {
	prompt := RenderStrategy(q, assertions, exs)
	var lastErr error
	for try := range p.cfg.StrategyTries {
		req := llm.Request{Messages: []llm.Message{llm.User(prompt)}, MaxTokens: p.cfg.MaxTokens}
		if try > 0 {
			req.Temperature = p.cfg.RetryTemperature
		}
		choices, err := p.sample(ctx, req, 1, p.cfg.Seed+int64(try))
		if err != nil {
			return 0, nil, fmt.Errorf("strategy (P5) for candidate %d: %w", cand, err)
		}
		if len(choices) == 0 {
			lastErr = errors.New("no reply")
			continue
		}
		st, err := ParseStrategyReply(choices[0])
		if err == nil {
			return st, []string{fmt.Sprintf("candidate %d: no strategy in its SGDA reply; P5 chose %s (try %d)", cand, st, try+1)}, nil
		}
		lastErr = err
	}
	if lastErr != nil {
		return schema.Precision, []string{fmt.Sprintf("candidate %d: no strategy readable in its SGDA reply or %d P5 tries (last: %v); defaulting to precision", cand, p.cfg.StrategyTries, lastErr)}, nil
	}
	return schema.Precision, []string{fmt.Sprintf("candidate %d: no strategy in its SGDA reply; defaulting to precision", cand)}, nil
}

// build runs the SAGB for one decomposition. An unreadable result is not
// an error (the candidate is dropped with a note, returning nil triples);
// a failed request is.
func (p *Planner) build(ctx context.Context, assertions []string, exs []Example, cand int) ([]schema.Triple, []string, error) {
	var notes []string
	var rels []string
	if p.cfg.RelationHints > 0 {
		var err error
		if rels, err = p.hints(ctx, assertions); err != nil {
			return nil, nil, fmt.Errorf("SAGB candidate %d: %w", cand, err)
		}
	}
	prompt := RenderSAGB(assertions, exs, rels)
	var (
		lastBad string
		lastErr error
	)
	for attempt := 0; attempt <= p.cfg.MaxParseRetries; attempt++ {
		req := llm.Request{Messages: []llm.Message{llm.User(prompt)}, MaxTokens: p.cfg.MaxTokens}
		if attempt > 0 {
			req.Messages = retryMessages(prompt, lastBad, lastErr, `[("Entity_1", "Relation_1", "Entity_2"), ]`)
			req.Temperature = p.cfg.RetryTemperature
		}
		choices, err := p.sample(ctx, req, 1, p.cfg.Seed+int64(attempt))
		if err != nil {
			return nil, nil, fmt.Errorf("SAGB candidate %d: %w", cand, err)
		}
		if len(choices) == 0 {
			lastBad, lastErr = "", errors.New("no reply")
			continue
		}
		ts, err := ParseTriples(choices[0])
		if err == nil {
			return ts, notes, nil
		}
		lastBad, lastErr = choices[0], err
		notes = append(notes, fmt.Sprintf("SAGB reply for candidate %d unreadable (attempt %d): %v", cand, attempt+1, err))
	}
	notes = append(notes, fmt.Sprintf("candidate %d dropped: no readable triples in %d attempts", cand, p.cfg.MaxParseRetries+1))
	return nil, notes, nil
}

// hints returns the RelationHints KG relations nearest each assertion,
// best first, without repeats.
func (p *Planner) hints(ctx context.Context, assertions []string) ([]string, error) {
	texts := make([]string, len(assertions))
	for i, a := range assertions {
		texts[i] = strings.TrimSpace(placeholderRE.ReplaceAllString(a, " "))
	}
	vs, err := models.EncodeAll(ctx, p.cfg.Encoder, texts)
	if err != nil {
		return nil, fmt.Errorf("encoding assertions: %w", err)
	}
	seen := map[int]bool{}
	var out []string
	scores := make([]float32, len(p.cfg.Relations))
	for i := range texts {
		v := vs[i*p.dim : (i+1)*p.dim]
		for r := range scores {
			scores[r] = dot(v, p.relVecs[r*p.dim:(r+1)*p.dim])
		}
		for k, r := range rankBy(scores) {
			if k >= p.cfg.RelationHints {
				break
			}
			if !seen[r] {
				seen[r] = true
				out = append(out, p.cfg.Relations[r])
			}
		}
	}
	return out, nil
}

// graph turns SAGB triples into a schema graph: mentions written as the
// linked entity names, relations checked against the KG, and the answer
// set to the highest-numbered placeholder, since SGDA numbers bridging
// entities before the answer ("[ENT2] played a kid in [ENT1]").
func (p *Planner) graph(ctx context.Context, ts []schema.Triple, ents map[string]string, cand int, note func(string, ...any)) schema.Graph {
	g := schema.Graph{Triples: make([]schema.Triple, len(ts))}
	for i, t := range ts {
		t.Head, t.Tail = entityName(t.Head, ents), entityName(t.Tail, ents)
		t.Rel = p.relation(ctx, t.Rel, cand, note)
		g.Triples[i] = t
	}
	best := -1
	for _, ph := range g.Placeholders() {
		if n, err := strconv.Atoi(ph[4 : len(ph)-1]); err == nil && n > best {
			best, g.Answer = n, ph
		}
	}
	return g
}

// relation checks rel against the KG's vocabulary: a case variant becomes
// the KG's symbol; an unknown relation is kept (tracing matches relations
// by meaning) or, with MapRelations, replaced by the nearest KG relation.
func (p *Planner) relation(ctx context.Context, rel string, cand int, note func(string, ...any)) string {
	if p.relKey == nil {
		return rel
	}
	if r, ok := p.relKey[rel]; ok {
		return r
	}
	if r, ok := p.relKey[strings.ToLower(rel)]; ok {
		return r
	}
	if !p.cfg.MapRelations {
		note("candidate %d: relation %q is not in the KG; kept for tracing to match by meaning", cand, rel)
		return rel
	}
	v, err := models.EncodeAll(ctx, p.cfg.Encoder, []string{kg.RelationText(rel)})
	if err != nil {
		note("candidate %d: relation %q is not in the KG and could not be mapped: %v", cand, rel, err)
		return rel
	}
	best, bestScore := -1, float32(-2)
	for r := range p.cfg.Relations {
		if s := dot(v, p.relVecs[r*p.dim:(r+1)*p.dim]); s > bestScore {
			best, bestScore = r, s
		}
	}
	note("candidate %d: relation %q is not in the KG; mapped to %q (cosine %.2f)", cand, rel, p.cfg.Relations[best], bestScore)
	return p.cfg.Relations[best]
}

// entityIndex maps the normalised names and mentions of the question's
// entities to the entity names.
func entityIndex(in projection.Input) map[string]string {
	m := map[string]string{}
	for i, e := range in.Entities {
		if k := kg.Normalize(e); k != "" {
			m[k] = e
		}
		if i < len(in.Mentions) {
			if k := kg.Normalize(in.Mentions[i]); k != "" {
				if _, ok := m[k]; !ok {
					m[k] = e
				}
			}
		}
	}
	return m
}

// entityName writes a mention as the linked entity it names, if any.
func entityName(s string, ents map[string]string) string {
	if schema.IsPlaceholder(s) {
		return schema.CanonicalPlaceholder(s)
	}
	if e, ok := ents[kg.Normalize(s)]; ok {
		return e
	}
	return s
}
