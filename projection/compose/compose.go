// Package compose is the zero-shot planner that composes: it reads the
// question's relation words in order and aligns them to a relation path
// that exists in the KG from the question's entity, with no training
// questions and no LLM. It is what --planner auto uses when no planner
// model is given.
//
// # Reading the question
//
// The question's entity mention is masked; its other words are function
// words (articles, auxiliaries, prepositions), wh-words, cue words
// ("together", "same", "also", "co-") and content words. Content words are
// ordered by their distance from the mention, counted in content words,
// nearest first: in English the relation nearest the entity is walked
// first ("the movies directed by X", "X 's mother 's husband"). A
// possessive chain after the mention ("X 's A 's B") comes first, then the
// word bound by "of X" or a passive "by X" ("the gender of X 's mother",
// "the movies written by X starred who"). A participle between the
// mention and a noun ("the director of X starred movies") makes the
// mention's clause a modifier, read as "X 's movies": the participle comes
// first and the noun, which names what it reaches, is dropped. A noun
// right after "which" or "what" ("which movies", "what languages") names
// the answer's type.
//
// # Aligning a path
//
// Every relation path of up to MaxHops hops leaving the entity (package
// zeroshot enumerates them, hubs capped) is aligned to the content words:
// hop j takes the next word in distance order, or a run of words that
// stand side by side in the question and all resemble its relation
// ("release years", "the cause of death of X"; two links of a possessive
// chain only when the relation names the second outright), or none; each
// word is used at most once, so "the manager of X 's manager" reads two
// hops and "X 's manager" one. A word matches a relation by stem ("acted"
// and "starred_actors", "nation" and "nationality", "screenwriter" and
// "writer"), or else by the best of the encoder's cosine and the
// lexicon's relatedness (Config.Lexicon: "wife" names a kind of spouse,
// which word vectors, placing "wife" nearest "parents", miss) between the
// word and the relation's words (property words in full, the domain and
// type parts of a Freebase-style name at a discount), less the word's
// mean match over the relations around the entity. A path scores its hops' matches, less
// HopCost per hop; a word it leaves unused costs in proportion to how
// distinctly it names a relation there, and a word of a possessive chain
// always costs, since it names a relation even when the encoder knows no
// synonym. The type noun may be taken only by a last hop walked forward,
// at a discount. A path that walks a relation and straight back gains
// when the question has a cue word ("who acted together with X") and
// loses otherwise: it is then mostly one relation's words read as two
// hops ("cause" and "death").
//
// # A second mention
//
// Where the question names a second thing beside its entity (Input.Linked:
// "which company does bob martin work for in lyon") and the best path
// reaches several answers, the second mention's best-aligned path of up to
// two hops (Predict over the question with the entity's mention left out,
// so the words nearest the second mention come first) that meets some of
// those answers, but not all, joins the best path at its answer: the
// two-anchor schema graph is planned first, under Precision, and tracing
// intersects the branches.
//
// # Reading the KG
//
// The answer's type is checked against what the KG shows of a sample of
// the entities a path reaches: the property words of the relations that
// enter them (a language is what "in_language" points to) and the domain
// words of those that leave them ("people person" of
// "__people__person__gender"). The type noun must resemble them closely;
// "who" and "where" look for person- and place-like words, "when" for
// entities named as years or dates. Among paths that score alike, the one
// reaching fewer entities ranks first. Where the KG states no type, the
// reached entities' kinds are inferred as the constraint check infers them
// (constraint.Checker.Kind: WordNet's instances through the lexicon, a
// relation named for the kind, the entities beside them), and a best path
// that reaches none of the kind a type word asks for walks on, one or two
// hops, to a path that does ("in which country": the city's located_in).
//
// # A learnt prior
//
// Config.Learnt, when set, is a model trained from the KG alone (package
// train/selfsup: a pattern model on questions synthesized from the KG's
// paths). The 64 best aligned paths are scored by it too, and
// LearntWeight times its score is added: it knows how questions are built
// around this KG's paths, not the words people use for them.
//
// # Strategy
//
// Breadth when the best path reaches more than one entity, else Precision,
// as in package zeroshot.
//
// # Cost
//
// What depends on the KG alone is read once: each relation's words,
// their stems and vectors, in New, and, for an in-memory KG of up to 1M
// triples, every kind an entity may be found of (constraint.Checker.
// PossibleKinds), on the first question that asks for a kind; a question
// asking for a kind no entity may be ("which films" over MetaQA) judges
// no entity's kind. What depends on the KG and an entity alone (its edges'
// relations, the facts its kind verdicts read, a hub's expansion) is kept
// across questions. Per question, each content word is scored once
// against each relation around the entity. The beam is bounded by score:
// the last hop's paths are read as steps first (zeroshot.Extend), and the
// entities a path reaches are gathered only where its alignment, with the
// best type fit the KG allows (none for a kind no entity may be: "which
// films" over MetaQA) and no reach cost, still reaches the Beam-th best
// shorter path (the 64th with Config.Learnt): a path below it cannot
// rank, so the paths returned and their scores are those of scoring
// every path. Likewise a path's reached entities are judged for the kind
// asked only until the rest, all of that kind, could not lift it to the
// k-th best score.
package compose

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/projection/paraphrase"
	"github.com/stem-kgqa/stem/projection/zeroshot"
	"github.com/stem-kgqa/stem/schema"
)

// Name is the planner's name: --planner compose, and the Prior a pattern
// model trained from its KG alone names (package train/selfsup).
const Name = "compose"

// Config tunes the planner; zero fields take the defaults. The defaults
// were chosen on hand-written KGs and the benchmarks' dev splits, never on
// a test split.
type Config struct {
	// Beam is the number of candidate paths (B); 0 means
	// projection.DefaultBeam.
	Beam int
	// MaxHops is the longest path enumerated; 0 means 3.
	MaxHops int
	// FrontierCap and MaxPaths bound enumeration at hubs (see package
	// zeroshot); 0 means its defaults.
	FrontierCap, MaxPaths int
	// HopCost is subtracted per hop; 0 means DefaultHopCost.
	HopCost float32
	// Unused weighs the cost of a content word no hop uses; 0 means
	// DefaultUnused.
	Unused float32
	// Lexicon, when not nil, says which words name a relation's thing or
	// a kind of it ("wife" and "spouse", "sex" and "gender"), which the
	// encoder's cosine misses.
	Lexicon models.Lexicon
	// Learnt, when not nil, scores every enumerated path as well, from
	// what a model learnt of this KG (a pattern model trained on questions
	// synthesized from the KG alone, package train/selfsup);
	// LearntWeight times its score is added to the alignment's.
	Learnt       PathScorer
	LearntWeight float32
}

// PathScorer scores relation paths for a question: a learnt planner's
// reading, added to the alignment.
type PathScorer interface {
	ScorePaths(ctx context.Context, question string, mentions []string, paths [][]schema.Step) ([]float32, error)
}

// Defaults of Config.
const (
	DefaultHopCost = 0.35
	DefaultUnused  = 1.0
)

// Scoring constants, chosen with the defaults above.
const (
	// domainWeight discounts a match on the domain or type part of a
	// Freebase-style relation name ("people person" of
	// "__people__person__nationality").
	domainWeight = 0.6
	// relnessFloor is the similarity to a relation below which an unused
	// word costs nothing: words that resemble no relation are filler.
	relnessFloor = 0.2
	// chainCost is what a word of a possessive chain left unused costs
	// besides its resemblance to relations: "X 's kid 's nationality"
	// names two relations even when "kid" resembles none.
	chainCost = 0.45
	// typeTake scales the match of a type noun taken by the last hop
	// ("which nationality"): typeFit counts it too.
	typeTake = 0.5
	// typeWeight weighs how well the entities a path reaches fit the type
	// the question asks for (0 to 1).
	typeWeight = 0.6
	// typeFloor is the similarity below which a type word does not
	// match: only forms of one word and close synonyms fit.
	typeFloor = 0.6
	// typeSample is the number of reached entities whose edges describe a
	// path's answer type.
	typeSample = 8
	// nullGain is what a hop aligned to no word gains (before HopCost).
	nullGain = 0.0
	// shareBonus is what a path that walks a relation and straight back
	// gains when the question says "together", "same", "also", ...
	shareBonus = 0.5
	// nameFloor is the similarity at which a word names a relation
	// outright: a form of one of its words, or a close synonym. Two
	// possessive links run together only then ("the cause of death of
	// X"), not on a resemblance ("son" and "children").
	nameFloor = 0.8
	// backCost is what such a path loses when the question has no such
	// cue.
	backCost = 0.5
	// kindsMaxTriples is the largest KG whose possible kinds New reads
	// (tens of ms at MetaQA's 130,471 triples).
	kindsMaxTriples = 1 << 20
	// typeTopRelations is the most relations a question's type words are
	// scored against all at once, to bound the type fit.
	typeTopRelations = 64
	// learntTop is the number of best aligned paths Config.Learnt
	// rescores.
	learntTop = 64
	// reachTie is the weight of log(reach) subtracted from a path's score:
	// a tie-break in favour of paths that narrow.
	reachTie = 0.001
)

// Planner is the composing zero-shot planner over one KG. It implements
// projection.Planner and is safe for concurrent use.
type Planner struct {
	g   kg.Reader
	enc models.Encoder
	cfg Config
	// rels holds each relation's content words, parallel to relation ids.
	rels [][]relWord
	// relNames holds every word of a relation's name, so that a question
	// word the KG names outright is read as it stands (read's kept).
	relNames map[string]bool

	mu    sync.RWMutex
	words map[string][]float32 // unit vectors of single words
	// relKinds is each relation's kind word (constraint.RelationKinds),
	// read once per KG for the kind check.
	relKinds []string
	// kindCache keeps the inferred kinds of the entities paths reach
	// across questions: a verdict depends on the KG, the lexicon, the
	// entity and the kind alone, and a hub's neighbours are judged again
	// by every question that walks past them.
	kindCache memo[kindKey, kindVerdict]
	// kindFacts keeps what those verdicts read of each entity across
	// kinds ("film" and "movie" read the same siblings).
	kindFacts *constraint.KindCache
	// expansions keeps the hubs' expansions between questions: at a hub
	// they cost most of the planning, and they depend on the KG alone.
	expansions *zeroshot.Cache
	// instances is the lexicon's instance kinds behind a cache, or nil.
	instances constraint.Instances
	// sims keeps each question word's similarity to each relation word
	// (by relWord.id) across questions.
	sims simRows
	// nWords counts the distinct relation words (relWord.id).
	nWords int
	// static is set for a small KG that cannot grow (an in-memory one of
	// up to kindsMaxTriples triples): what depends on all of it may be
	// read once.
	static bool
	// possible returns every kind an entity of a static KG may be judged
	// of (constraint.Checker.PossibleKinds), read once on first use; nil
	// for any other KG, where every kind may be.
	possible func() map[string]bool
	// shown keeps each entity's edgeKeys, which depend on the KG alone,
	// for the type fit of the questions that reach it again.
	shown memo[int32, []relKey]
}

// relWord is one content word of a relation's name, with what New reads
// of it once per KG: its stem and its unit vector.
type relWord struct {
	word   string
	weight float32 // 1 for the property part, domainWeight for the domain part
	stem   string
	vec    []float32
	// id numbers the word among every relation's words: relations share
	// words ("people" of every "__people__person__..."), and a question
	// word is scored against each once.
	id int32
}

var _ projection.Planner = (*Planner)(nil)

// New returns a planner over g, encoding every relation word once.
func New(ctx context.Context, g kg.Reader, enc models.Encoder, cfg Config) (*Planner, error) {
	if g == nil || enc == nil {
		return nil, errors.New("compose: new planner: nil graph or encoder")
	}
	if cfg.Beam <= 0 {
		cfg.Beam = projection.DefaultBeam
	}
	if cfg.MaxHops <= 0 {
		cfg.MaxHops = zeroshot.DefaultMaxHops
	}
	if cfg.HopCost == 0 {
		cfg.HopCost = DefaultHopCost
	}
	if cfg.Unused == 0 {
		cfg.Unused = DefaultUnused
	}
	p := &Planner{g: g, enc: enc, cfg: cfg, rels: make([][]relWord, g.NumRelations()), words: map[string][]float32{}, relNames: map[string]bool{}, relKinds: constraint.RelationKinds(g), expansions: zeroshot.NewCache(0), instances: newInstances(cfg.Lexicon)}
	p.kindFacts = constraint.NewKindCache(constraint.Checker{Graph: g, Lexicon: p.instances, RelationKinds: p.relKinds}, kindCacheMax)
	if _, ok := g.(*kg.Graph); ok && g.NumTriples() <= kindsMaxTriples {
		// Read once per KG, so that a question asking for a kind no
		// entity is of ("which films", where no film is known as one)
		// does not bound its paths' scores as if every path might reach
		// one, nor judge the entities they reach; read on the first
		// question that asks for a kind, not here: tens of ms that a
		// KG whose questions ask none, or a server's start, need not
		// pay.
		// It reads the lexicon's kinds of every entity's name through
		// the planner's cache, where the kind verdicts of later
		// questions find them.
		p.static = true
		p.possible = sync.OnceValue(func() map[string]bool {
			return constraint.Checker{Graph: g, Lexicon: p.instances, RelationKinds: p.relKinds}.PossibleKinds()
		})
	}
	var all []string
	for r := range p.rels {
		p.rels[r] = relationWords(g, int32(r))
		for _, w := range p.rels[r] {
			all = append(all, w.word)
			p.relNames[w.word] = true
		}
	}
	if err := p.encodeWords(ctx, all); err != nil {
		return nil, fmt.Errorf("compose: encode relation words: %w", err)
	}
	ids := map[string]int32{}
	for _, ws := range p.rels {
		for i := range ws {
			ws[i].stem = stem(ws[i].word)
			ws[i].vec = p.words[ws[i].word]
			id, ok := ids[ws[i].word]
			if !ok {
				id = int32(len(ids))
				ids[ws[i].word] = id
			}
			ws[i].id = id
		}
	}
	p.nWords = len(ids)
	return p, nil
}

// names reports whether w is a word of some relation's name.
func (p *Planner) names(w string) bool { return p.relNames[w] }

// relationWords splits relation r's name into content words: for a name
// of several parts ("__people__person__nationality", "film.film.genre")
// the last part is the property and the others its domain.
func relationWords(g kg.Reader, r int32) []relWord {
	var out []relWord
	seen := map[string]bool{}
	addWords := func(text string, weight float32) {
		for _, w := range strings.Fields(strings.ToLower(text)) {
			if stopWords[w] || seen[w] {
				continue
			}
			seen[w] = true
			out = append(out, relWord{word: w, weight: weight})
		}
	}
	name := g.RelationName(r)
	if !kg.Labelled(g) {
		if parts := splitParts(name); len(parts) > 1 {
			addWords(kg.RelationText(parts[len(parts)-1]), 1)
			addWords(kg.RelationText(strings.Join(parts[:len(parts)-1], " ")), domainWeight)
			return out
		}
	}
	addWords(kg.RelationTextOf(g, r), 1)
	return out
}

// splitParts splits a relation name at Freebase's separators ("." and
// "__") and an IRI's last '/' or '#'.
func splitParts(name string) []string {
	if i := strings.LastIndexAny(name, "/#"); i >= 0 && strings.Contains(name, "://") {
		name = name[i+1:]
	}
	f := func(r rune) bool { return r == '.' }
	if strings.Contains(name, "__") {
		name = strings.ReplaceAll(name, "__", ".")
	}
	return strings.FieldsFunc(name, f)
}

// encodeWords encodes the words not cached yet.
func (p *Planner) encodeWords(ctx context.Context, ws []string) error {
	p.mu.RLock()
	var miss []string
	seen := map[string]bool{}
	for _, w := range ws {
		if _, ok := p.words[w]; !ok && !seen[w] {
			seen[w] = true
			miss = append(miss, w)
		}
	}
	p.mu.RUnlock()
	if len(miss) == 0 {
		return nil
	}
	d := p.enc.Dim()
	buf := make([]float32, len(miss)*d)
	if err := p.enc.Encode(ctx, miss, buf); err != nil {
		return err
	}
	p.mu.Lock()
	for i, w := range miss {
		p.words[w] = buf[i*d : (i+1)*d]
	}
	p.mu.Unlock()
	return nil
}

func (p *Planner) vec(w string) []float32 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.words[w]
}

// wordSim is how well question word w names relation word u: 1 for forms
// of one word, else the encoder's cosine or the lexicon's relatedness,
// whichever is higher.
func (p *Planner) wordSim(w, u string, vw []float32) float32 {
	return p.sim(w, u, vw, p.cfg.Lexicon)
}

// sim is wordSim with the lexicon given (nil: none).
func (p *Planner) sim(w, u string, vw []float32, lex models.Lexicon) float32 {
	if w == u || sameStem(w, u) {
		return 1
	}
	vu := p.vec(u)
	var dot float32
	for i, x := range vw {
		dot += x * vu[i]
	}
	if lex != nil {
		dot = max(dot, lex.Related(w, u))
	}
	return dot
}

// relSim is how well question word w names relation r: wordSim against
// each of r's words, with their stems and vectors read once per KG, and
// each word's figure kept in row (w's, by relWord.id) for the relations
// that share it.
func (p *Planner) relSim(w qword, r int32, row []atomic.Uint32) float32 {
	best := float32(0)
	for _, u := range p.rels[r] {
		b := row[u.id].Load()
		if b == unscored {
			b = math.Float32bits(p.relWordSim(w, u, p.cfg.Lexicon))
			row[u.id].Store(b)
		}
		if s := u.weight * math.Float32frombits(b); s > best {
			best = s
		}
	}
	return best
}

// unscored marks a relation word a simRows row has no figure for yet: a
// NaN relWordSim never returns.
const unscored = math.MaxUint32

// simRows keeps, for each question word met, its relWordSim against
// every relation word (a row indexed by relWord.id, unscored until
// read), across questions: the words of questions and the relations
// around hubs recur. Rows are filled concurrently, each cell with the
// one figure it can hold; they are kept up to simCells cells in all.
type simRows struct {
	mu    sync.RWMutex
	rows  map[string][]atomic.Uint32
	cells int
}

// simCells bounds the cells simRows keeps (4 bytes each).
const simCells = 1 << 23

// row returns word w's row of n cells, a new one when none is kept.
func (s *simRows) row(w string, n int) []atomic.Uint32 {
	s.mu.RLock()
	r, ok := s.rows[w]
	s.mu.RUnlock()
	if ok {
		return r
	}
	r = make([]atomic.Uint32, n)
	for i := range r {
		r[i].Store(unscored)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if kept, ok := s.rows[w]; ok {
		return kept
	}
	if s.cells+n <= simCells {
		if s.rows == nil {
			s.rows = map[string][]atomic.Uint32{}
		}
		s.rows[w] = r
		s.cells += n
	}
	return r
}

// qword is a question word with its stem and unit vector, read once per
// question.
type qword struct {
	word, stem string
	vec        []float32
}

// relWordSim is sim for a relation word, its stem and vector read once per
// KG: the same figure.
func (p *Planner) relWordSim(w qword, u relWord, lex models.Lexicon) float32 {
	if w.word == u.word || stemsMatch(w.word, u.word, w.stem, u.stem) {
		return 1
	}
	var dot float32
	for i, x := range w.vec {
		dot += x * u.vec[i]
	}
	if lex != nil {
		dot = max(dot, lex.Related(w.word, u.word))
	}
	return dot
}

// question is a question read for alignment.
type question struct {
	words []string // content words, nearest the mention first
	typ   int      // index in words of the type noun, -1 for none
	wh    string   // the wh-word, "" for none
	share bool     // the question says the answer shares a relation
	// chain marks the words of a possessive chain from the mention ("X 's
	// A 's B", "B of A of X"): each names a relation.
	chain []bool
	// seq holds each word's index among the content words in the
	// question's order, counting the mention as one: a run of words for
	// one hop stands side by side there ("release years", "place of
	// birth").
	seq []int
}

// read splits the masked question into content words ordered by their
// distance from the mention, its words first read for what they name
// (paraphrase.Rewrite: "a man or a woman" asks for a gender, a "grandmother" is a
// mother's mother) unless kept says the KG names the word in a relation
// (nil: none does).
func read(q string, mentions []string, kept func(string) bool) question {
	const mark = "qqentityqq"
	masked := strings.ToLower(linking.MaskWith(q, mentions, mark))
	var toks []string
	for _, sp := range linking.Words(masked) {
		toks = append(toks, masked[sp.Start:sp.End])
	}
	toks = paraphrase.Rewrite(toks, kept)
	at := slices.Index(toks, mark)
	var cws []cw
	out := question{typ: -1}
	typePos := -1
	content := func(t string) bool { return t != mark && !whWords[t] && !shareWords[t] && !stopWords[t] }
	for i, t := range toks {
		switch {
		case t == mark:
		case whWords[t]:
			if out.wh == "" {
				out.wh = t
				if t == "which" || t == "what" {
					j := i + 1
					for j < len(toks) && fillerAfterWh[toks[j]] {
						j++
					}
					if j < len(toks) && content(toks[j]) {
						typePos = j
					}
				}
			}
		case shareWords[t]:
			out.share = true
		case stopWords[t]:
		default:
			cws = append(cws, cw{w: t, pos: i})
		}
	}
	// Distances count content words. At equal distance the word after the
	// mention comes first ("X 's manager" before "the manager of"), except
	// after a passive "by X", whose verb comes first ("the movies written
	// by X starred who").
	// After "X 's", the possessive chain is walked first, whatever stands
	// before the mention ("the gender of X 's mother 's husband"); else
	// "of X" and a passive "by X" bind the word before them first ("where
	// was the founder of X born", "the movies written by X starred who").
	possessive := at >= 0 && at+1 < len(toks) && toks[at+1] == "s"
	// A participle between the mention and a noun ("the director of X
	// starred movies", "Nolan directed films") makes the mention's clause
	// a modifier of that noun, as "X 's movies" would: the participle is
	// walked first, and the noun, which names the entities it reaches
	// rather than a relation, is left out.
	modifier := at >= 0 && at+2 < len(toks) && participle(toks[at+1]) && content(toks[at+2])
	if modifier {
		possessive = true
		cws = slices.DeleteFunc(cws, func(c cw) bool { return c.pos == at+2 })
	}
	byBefore := !possessive && at > 0 && (toks[at-1] == "by" || toks[at-1] == "of")
	nb := countBefore(cws, at)
	for i := range cws {
		cws[i].seq = i
		if at >= 0 && cws[i].pos > at {
			cws[i].seq++
		}
	}
	for i := range cws {
		switch {
		case at < 0:
			cws[i].dist = len(cws) - i
		case cws[i].pos > at:
			cws[i].dist = 2 * (i - nb + 1)
			if byBefore {
				cws[i].dist++
			}
		default:
			cws[i].dist = 2 * (nb - i)
			if possessive {
				cws[i].dist += 2 * (len(cws) - nb)
			}
			if !byBefore {
				cws[i].dist++
			}
		}
	}
	// The possessive chains come before every other word: "X 's A" first,
	// then "B of X", then the rest ("where was the manager of X 's
	// manager born").
	chain := possessiveChain(toks, at)
	if modifier {
		chain[at+1] = true // a link like "X 's"
	}
	for i := range cws {
		if chain[cws[i].pos] {
			if cws[i].pos > at {
				cws[i].dist -= 4 * len(toks)
			} else {
				cws[i].dist -= 2 * len(toks)
			}
		}
	}
	slices.SortStableFunc(cws, func(a, b cw) int { return a.dist - b.dist })
	for i, c := range cws {
		out.words = append(out.words, c.w)
		out.chain = append(out.chain, chain[c.pos])
		out.seq = append(out.seq, c.seq)
		if c.pos == typePos {
			out.typ = i
		}
	}
	return out
}

// possessiveChain marks the words linked to the mention at position at by
// "'s" to its right ("X 's mother 's husband") and by "of" to its left
// ("the husband of the mother of X"), articles skipped.
func possessiveChain(toks []string, at int) map[int]bool {
	out := map[int]bool{}
	if at < 0 {
		return out
	}
	article := func(t string) bool { return t == "the" || t == "a" || t == "an" }
	for i := at + 1; i+1 < len(toks) && toks[i] == "s"; {
		j := i + 1
		for j < len(toks) && article(toks[j]) {
			j++
		}
		if j >= len(toks) || stopWords[toks[j]] || whWords[toks[j]] {
			break
		}
		out[j] = true
		i = j + 1
	}
	for i := at - 1; i > 0 && toks[i] == "of"; {
		j := i - 1
		for j >= 0 && article(toks[j]) {
			j--
		}
		if j < 0 || stopWords[toks[j]] || whWords[toks[j]] {
			break
		}
		out[j] = true
		i = j - 1
	}
	return out
}

// runs reports whether words a and b may be read as one run naming one
// relation ("release years", "cause of death"): they stand side by side
// in the question, with no other content word or the mention between
// them. Two links of a possessive chain ("the son of the kid of X") are
// read as one run only when the relation names the second word (see
// nameFloor), since each link names a relation of its own.
func (q question) runs(a, b int) bool {
	d := q.seq[a] - q.seq[b]
	return d == 1 || d == -1
}

// cw is a content word of a question: its text, its distance from the
// mention in content words (doubled, so that ties break by side) and its
// position among the question's words.
type cw struct {
	w    string
	dist int
	pos  int
	seq  int // index in question order, the mention counted as a word
}

// countBefore returns the number of content words before position at.
func countBefore(cws []cw, at int) int {
	n := 0
	for _, c := range cws {
		if c.pos < at {
			n++
		}
	}
	return n
}

// Prediction is the planner's ranked paths and strategy, as zeroshot's
// (both rank the paths leaving an anchor).
type Prediction = zeroshot.Prediction

// Predict ranks the relation paths leaving the entities (the first one the
// graph knows anchors them) by how well they align with the question.
func (p *Planner) Predict(ctx context.Context, q string, entities, mentions []string) (Prediction, error) {
	if len(linking.Words(q)) == 0 {
		return Prediction{}, errors.New("compose: empty question")
	}
	start, anchor, err := zeroshot.Anchor(p.g, entities)
	if err != nil {
		return Prediction{}, fmt.Errorf("compose: %w", err)
	}
	if len(mentions) == 0 {
		mentions = linking.Mentions(q, entities)
	}
	rq := read(q, mentions, p.names)
	if err := p.encodeWords(ctx, rq.words); err != nil {
		return Prediction{}, fmt.Errorf("compose: encode question words: %w", err)
	}
	walks, last, notes, err := p.walks(ctx, start)
	if err != nil {
		return Prediction{}, err
	}
	pending := last.Steps // the last hop's paths, their reach not gathered yet
	if len(walks)+len(pending) == 0 {
		return Prediction{}, fmt.Errorf("compose: entity %q has no edges in the KG", anchor)
	}
	// sims[i][l]: word i against each relation around the entity, by its
	// place in local (the order the paths first meet them).
	var local []int32
	slot := map[int32]int32{}
	hopsOf := func(steps []zeroshot.Step) []int32 {
		hs := make([]int32, len(steps))
		for j, s := range steps {
			l, ok := slot[s.Rel]
			if !ok {
				l = int32(len(local))
				slot[s.Rel] = l
				local = append(local, s.Rel)
			}
			hs[j] = l
		}
		return hs
	}
	hops := make([][]int32, len(walks), len(walks)+len(pending))
	for wi, w := range walks {
		hops[wi] = hopsOf(w.Steps)
	}
	pendingHops := make([][]int32, len(pending))
	for i, steps := range pending {
		pendingHops[i] = hopsOf(steps)
	}
	nw := len(rq.words)
	sims := make([][]float32, nw)
	named := make([][]bool, nw)
	cost := make([]float32, nw)
	for i, w := range rq.words {
		qw := qword{word: w, stem: stem(w), vec: p.vec(w)}
		row := p.sims.row(w, p.nWords)
		sims[i] = make([]float32, len(local))
		named[i] = make([]bool, len(local))
		best, mean := float32(0), float32(0)
		for l, r := range local {
			s := p.relSim(qw, r, row)
			sims[i][l] = s
			if s >= nameFloor {
				named[i][l] = true
			}
			best = max(best, s)
			mean += s
		}
		// A word is read against its own level: "films" resembles every
		// relation of a film KG a little, "directed" one of them much.
		mean /= float32(max(1, len(local)))
		for l := range sims[i] {
			sims[i][l] -= mean
		}
		if i != rq.typ {
			cost[i] = p.cfg.Unused * max(0, best-mean-relnessFloor)
			if rq.chain[i] {
				cost[i] += chainCost
			}
		}
	}
	al := &alignment{sims: sims, named: named, cost: cost}
	fit, typeTop := p.typeFitter(rq)
	rk := &ranker{p: p, kinds: p.kindFitter(q), fit: fit, k: p.cfg.Beam}
	rk.fitTop = max(typeTop, p.kindTop(rk.kinds.kind))
	if p.cfg.Learnt != nil && p.cfg.LearntWeight != 0 {
		rk.k = max(rk.k, learntTop)
	}
	for wi, w := range walks {
		rk.add(w, p.align(rq, al, w.Steps, hops[wi]))
	}
	if len(pending) > 0 {
		if last.Cut() {
			// A hub leaves more last-hop paths than are gathered: keep
			// those the question's words align with best, not those
			// reaching the fewest entities, which would drop "the
			// currency used of the nationality of X" for its hub's
			// rarer relations.
			n := len(pending)
			pending, pendingHops = narrow(last, pending, pendingHops, func(i int) float32 { return p.align(rq, al, pending[i], pendingHops[i]) })
			notes = append(notes, fmt.Sprintf("hub: kept the %d of %d %d-hop paths the question's words align with best", len(pending), n, len(pending[0])))
		}
		// The beam is bounded by score: a last-hop path whose alignment
		// with the best type fit and no reach cost still falls below the
		// k-th best shorter path cannot rank, so the entities it reaches
		// are never gathered.
		floor := rk.kth()
		var kept []float32
		lw, _ := last.Fill(func(i int) bool {
			a := p.align(rq, al, pending[i], pendingHops[i])
			if a+typeWeight*rk.fitTop < floor {
				return false
			}
			kept = append(kept, a)
			return true
		})
		for j, w := range lw {
			rk.add(w, kept[j])
		}
	}
	all := rk.top()
	if p.cfg.Learnt != nil && p.cfg.LearntWeight != 0 {
		// The learnt model reranks the best aligned paths: a hub's
		// thousand paths need not all be scored twice.
		top := all[:min(len(all), learntTop)]
		paths := make([][]schema.Step, len(top))
		for i, c := range top {
			paths[i] = c.Steps
		}
		learnt, err := p.cfg.Learnt.ScorePaths(ctx, q, mentions, paths)
		if err != nil {
			return Prediction{}, fmt.Errorf("compose: learnt scores: %w", err)
		}
		for i, l := range learnt {
			top[i].Score += p.cfg.LearntWeight * l
		}
		slices.SortStableFunc(top, byScore)
	}
	paths, note := rk.walkOn(all)
	if note != "" {
		notes = append(notes, note)
	}
	pred := Prediction{Anchor: anchor, Notes: notes, Paths: paths}
	if paths[0].Reach > 1 {
		pred.Strategy = schema.Breadth
	}
	return pred, nil
}

// walks returns the paths of up to MaxHops-1 hops from start, with their
// notes, and the last hop pending: its steps known, the entities its
// paths reach not gathered yet.
func (p *Planner) walks(ctx context.Context, start []int32) ([]zeroshot.Walk, *zeroshot.Pending, []string, error) {
	zc := zeroshot.Config{MaxHops: p.cfg.MaxHops - 1, FrontierCap: p.cfg.FrontierCap, MaxPaths: p.cfg.MaxPaths, Cache: p.expansions}
	level := []zeroshot.Walk{{Front: start, Reach: len(start)}}
	var walks []zeroshot.Walk
	var notes []string
	if zc.MaxHops > 0 {
		var err error
		if walks, notes, err = zeroshot.Walks(ctx, p.g, start, zc); err != nil {
			return nil, nil, nil, err
		}
		level = level[:0]
		for _, w := range walks {
			if len(w.Steps) == zc.MaxHops {
				level = append(level, w)
			}
		}
	}
	last, err := zeroshot.Extend(ctx, p.g, level, zc)
	if err != nil {
		return nil, nil, nil, err
	}
	return walks, last, notes, nil
}

// alignment is what align reads of a question's words against the
// relations around its entity: each word's similarity to each relation
// (by its place in the question's local relations), whether the word names
// it outright, and the word's cost when no hop uses it.
type alignment struct {
	sims  [][]float32
	named [][]bool
	cost  []float32
	// f and e are align's tables, reused from path to path.
	f, e [][]float32
}

// scratch returns align's tables for k hops and n words, grown as needed;
// align sets every cell it reads.
func (a *alignment) scratch(k, n int) (f, e [][]float32) {
	for len(a.f) <= k {
		a.f = append(a.f, nil)
		a.e = append(a.e, nil)
	}
	for j := 0; j <= k; j++ {
		if len(a.f[j]) < n+1 {
			a.f[j], a.e[j] = make([]float32, n+1), make([]float32, n+1)
		}
	}
	return a.f[:k+1], a.e[:k+1]
}

// align returns the best score of steps against the question's words: the
// sum over hops of the matched word's similarity to the hop's relation
// plus the unused-word cost that word no longer pays, less HopCost per
// hop (the constant total of unused costs left out). A hop takes one word,
// or a run of adjacent words that all resemble its relation ("release
// years"), or none; hops take words in distance order. A question that
// says the answer shares a relation ("together", "same") adds shareBonus
// to a path that walks a relation and straight back. hops holds each
// step's relation by its place in the question's local relations.
func (p *Planner) align(rq question, a *alignment, steps []zeroshot.Step, hops []int32) float32 {
	sims, named, cost := a.sims, a.named, a.cost
	k, n := len(steps), len(rq.words)
	neg := float32(math.Inf(-1))
	// f[j][i]: best score of hops 1..j within words[:i]; e[j][i]: the same
	// with hop j's last word i-1.
	f, e := a.scratch(k, n)
	for j := range f {
		for i := range f[j] {
			e[j][i] = neg
			if j > 0 {
				f[j][i] = neg
			}
		}
	}
	for j := 1; j <= k; j++ {
		r := hops[j-1]
		for i := 0; i <= n; i++ {
			best := f[j-1][i] + nullGain // hop j has no word
			// The type noun names the answer: only a last hop that
			// walks into it forward may take it as well.
			if i > 0 && (i-1 != rq.typ || j == k && !steps[j-1].Inv) {
				s := sims[i-1][r]
				if i-1 == rq.typ {
					s *= typeTake
				}
				take := f[j-1][i-1] + s + cost[i-1]
				if s > 0 && e[j][i-1] > neg && rq.runs(i-2, i-1) && (!rq.chain[i-2] || !rq.chain[i-1] || named[i-1][r]) {
					take = max(take, e[j][i-1]+cost[i-1]) // the run goes on
				}
				e[j][i] = take
				best = max(best, take)
			}
			if i > 0 {
				best = max(best, f[j][i-1]) // word i-1 unused
			}
			f[j][i] = best
		}
	}
	score := f[k][n] - p.cfg.HopCost*float32(k)
	for j := 1; j < k; j++ {
		if steps[j].Rel == steps[j-1].Rel && steps[j].Inv != steps[j-1].Inv {
			// Walking a relation and straight back asks for what shares
			// it with the entity: the question says so, or it is a
			// misreading of one relation's words as two hops ("the cause
			// of death", "release years").
			if rq.share {
				score += shareBonus
			} else {
				score -= backCost
			}
			break
		}
	}
	return score
}

// typeFitter returns how well a path's reached entities fit the answer
// type the question asks for, from 0 to 1: the type noun ("which
// languages") or the wh-word ("who" a person, "where" a place, "when" a
// date) against what the KG shows of the entities: the property words of
// the relations that enter them (a language is what "in_language" points
// to) and the domain words of those that leave them ("people person" of
// "__people__person__gender"). "when" asks for entities named as years or
// dates. top bounds every fit it returns: 1, or over a small KG that
// cannot grow, the best fit of any of its relations.
func (p *Planner) typeFitter(rq question) (fit func(front []int32) float32, top float32) {
	if !asksType(rq) {
		return func([]int32) float32 { return 0 }, 0
	}
	var want []string
	// The lexicon reads a type noun the question names ("which
	// languages"); the types a wh-word implies ("who", a person) are read
	// by the encoder alone: that a director or an author is a person is
	// no relation word's to say, and the lexicon would favour the
	// relations that do ("actors").
	lex := p.cfg.Lexicon
	switch {
	case rq.typ >= 0:
		want = []string{rq.words[rq.typ]}
	case rq.wh == "who":
		lex = nil
		want = []string{"person"}
	case rq.wh == "where":
		want = []string{"place", "location"}
		lex = nil
	case rq.wh == "when":
		return func(front []int32) float32 {
			n := min(len(front), typeSample)
			if n == 0 {
				return 0
			}
			dates := 0
			for _, e := range front[:n] {
				if looksLikeDate(p.g.EntityName(e)) {
					dates++
				}
			}
			return float32(dates) / float32(n)
		}, 1
	}
	// The words of want are encoded once per question; relations are
	// scored once each, lazily.
	vw := make([][]float32, len(want))
	for i, w := range want {
		vw[i] = p.vec(w)
	}
	type key = relKey
	fits := map[key]float32{}
	relFit := func(k key) float32 {
		if f, ok := fits[k]; ok {
			return f
		}
		best := float32(0)
		for _, u := range p.rels[k.rel] {
			// An entering relation names its tail by its property; a
			// leaving one its head by its domain.
			if (u.weight == 1) != k.in {
				continue
			}
			for i, w := range want {
				if vw[i] == nil {
					continue
				}
				best = max(best, p.sim(w, u.word, vw[i], lex))
			}
		}
		f := max(0, best-typeFloor) / (1 - typeFloor)
		fits[k] = f
		return f
	}
	// What an entity's edges show is read once per planner (p.shown): many
	// paths reach the same entities, question after question.
	var count []keyCount
	top = 1
	if p.static && p.g.NumRelations() <= typeTopRelations {
		// A fit is the share of the sampled entities some key touches
		// times its relFit: no key fits better than the best relation.
		top = 0
		for r := range int32(p.g.NumRelations()) {
			top = max(top, relFit(key{r, true}), relFit(key{r, false}))
		}
	}
	return func(front []int32) float32 {
		n := min(len(front), typeSample)
		if n == 0 {
			return 0
		}
		count = count[:0]
		for _, e := range front[:n] {
			ks := p.shown.get(e, func() []relKey { return p.edgeKeys(e) })
			for _, k := range ks {
				if i := slices.IndexFunc(count, func(c keyCount) bool { return c.k == k }); i >= 0 {
					count[i].n++
				} else {
					count = append(count, keyCount{k, 1})
				}
			}
		}
		best := float32(0)
		for _, c := range count {
			best = max(best, relFit(c.k)*float32(c.n)/float32(n))
		}
		return best
	}, top
}

// kindTop bounds what the kind check adds to a type fit for kind: 0 when
// the question asks for none, or for one no entity of the KG may be.
func (p *Planner) kindTop(kind string) float32 {
	if kind == "" || !p.mayBe(kind) {
		return 0
	}
	return 1
}

// mayBe reports whether some entity of the KG may be judged of kind:
// always, but over a static KG whose possible kinds lack it.
func (p *Planner) mayBe(kind string) bool {
	return p.possible == nil || p.possible()[kind]
}

// asksType reports whether the question asks for a type typeFitter reads
// (a type noun, who, where, when): where it does not, every path's type
// fit is 0.
func asksType(rq question) bool {
	return rq.typ >= 0 || rq.wh == "who" || rq.wh == "where" || rq.wh == "when"
}

// relKey is a relation entering an entity (in) or leaving it.
type relKey struct {
	rel int32
	in  bool
}

// keyCount counts the sampled entities a relKey touches.
type keyCount struct {
	k relKey
	n int
}

// edgeKeys returns the distinct relations entering and leaving e. Out and
// In are sorted by relation, so each relation's run is skipped over by
// binary search: a hub's thousands of edges cost a few lookups.
func (p *Planner) edgeKeys(e int32) []relKey {
	var out []relKey
	for _, in := range []bool{true, false} {
		ts := p.g.Out(e)
		if in {
			ts = p.g.In(e)
		}
		for i := 0; i < len(ts); {
			r := p.g.Triple(ts[i]).Rel
			out = append(out, relKey{r, in})
			i++
			if i < len(ts) && p.g.Triple(ts[i]).Rel == r {
				i += sort.Search(len(ts)-i, func(j int) bool { return p.g.Triple(ts[i+j]).Rel != r })
			}
		}
	}
	return out
}

// looksLikeDate reports whether an entity name is a year or a date:
// "1994", "1994-05-02", "May 2, 1994".
func looksLikeDate(name string) bool {
	digits, year := 0, false
	run := 0
	for _, r := range name {
		if r >= '0' && r <= '9' {
			digits++
			run++
			if run == 4 {
				year = true
			}
			continue
		}
		run = 0
	}
	return year && digits*2 >= len(strings.Join(strings.Fields(name), ""))/2
}

// Plan implements projection.Planner.
func (p *Planner) Plan(ctx context.Context, in projection.Input) (projection.Projection, error) {
	if len(in.Entities) == 0 {
		return projection.Projection{}, errors.New("compose: plan: the question has no linked entity to anchor the paths on")
	}
	pred, err := p.Predict(ctx, in.Question, in.Entities, in.Mentions)
	if err != nil {
		return projection.Projection{}, err
	}
	out := pred.Projection()
	if len(in.Linked) > 1 && len(pred.Paths) > 0 && pred.Paths[0].Reach > 1 {
		// A second thing the question names narrows the best path's
		// answers: the two-anchor graph is planned first.
		c, note, ok := p.conjunction(ctx, in, pred.Paths[0], pred.Anchor)
		if !ok {
			c, note, ok = p.cvtJoin(in, pred.Paths[0], pred.Anchor)
		}
		if ok {
			out.Candidates = append([]projection.Candidate{c}, out.Candidates...)
			out.Notes = append(out.Notes, note)
			// The intersection is the answer: not every candidate's.
			out.Strategy = schema.Precision
		}
	}
	return out, nil
}

// narrow keeps the last hop's MaxPaths best-aligned paths (score, higher
// first; ties in the order Walks returned them) in last, pending and
// hops alike, and returns pending and hops narrowed.
func narrow(last *zeroshot.Pending, pending [][]zeroshot.Step, hops [][]int32, score func(i int) float32) ([][]zeroshot.Step, [][]int32) {
	scores := make([]float32, len(pending))
	idx := make([]int, len(pending))
	for i := range pending {
		scores[i], idx[i] = score(i), i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	idx = idx[:min(len(idx), last.MaxPaths())]
	slices.Sort(idx)
	last.Narrow(idx)
	ps, hs := make([][]zeroshot.Step, len(idx)), make([][]int32, len(idx))
	for j, i := range idx {
		ps[j], hs[j] = pending[i], hops[i]
	}
	return ps, hs
}
