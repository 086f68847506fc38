package chains

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/dataset"
)

// Reasons written in dataset.Item.Dropped.
const (
	DropNoEntity = "no question entity in the KG"
	DropNoAnswer = "no answer in the KG"
)

// DropUnreachable is the reason written for a question none of whose
// answers is within maxHops of a question entity.
func DropUnreachable(maxHops int) string {
	return fmt.Sprintf("no answer within %d hops", maxHops)
}

// Extractor turns benchmark questions into items. Like its Finder it is not
// safe for concurrent use.
type Extractor struct {
	g       *kg.Graph
	f       *Finder
	starts  []int32
	answers []int32
}

// NewExtractor returns an Extractor over g.
func NewExtractor(g *kg.Graph, opt Options) *Extractor {
	return &Extractor{g: g, f: NewFinder(g, opt)}
}

// Options returns the options the Extractor searches with.
func (x *Extractor) Options() Options { return x.f.Options() }

// Outcome is what extracting one question found, for a Summary.
type Outcome struct {
	// NoEntity: none of the question entities is a KG entity.
	NoEntity bool
	// Answers counts the question's distinct answers; Unreachable those
	// with no chain within MaxHops (not KG entities included), and
	// NotInKG those that are not KG entities.
	Answers, Unreachable, NotInKG int
	// AnswerIsEntity: some answer is a question entity (closed walks).
	AnswerIsEntity bool
	// Chains counts the chains kept; Found all shortest chains; Capped
	// those the cap left out; CappedAnswers the reachable answers left
	// without a chain by the cap.
	Chains        int
	Found, Capped int64
	CappedAnswers int
	// HasGold: the question carries a gold path; GoldFound: the chains
	// contain one (see Contains).
	HasGold, GoldFound bool
}

// Extract builds q's item: its shortest chains, T and T', the strategy and
// the hop count; an item without chains is returned with Dropped set. ID is
// q.ID and Source "chains:" + q.ID.
func (x *Extractor) Extract(q benchmark.Question) (dataset.Item, Outcome) {
	g := x.g
	it := dataset.Item{
		ID: q.ID, Source: "chains:" + q.ID, Question: q.Text,
		Entities: q.Entities, Answers: q.Answers,
		Strategy: dataset.StrategyFor(len(q.Answers)),
	}
	var o Outcome
	x.starts, x.answers = x.starts[:0], x.answers[:0]
	for _, e := range q.Entities {
		if id, ok := g.Entity(e); ok {
			x.starts = append(x.starts, id)
		}
	}
	seenAns := map[string]bool{}
	for _, a := range q.Answers {
		if seenAns[a] {
			continue
		}
		seenAns[a] = true
		o.Answers++
		id, ok := g.Entity(a)
		if !ok {
			o.NotInKG++
			continue
		}
		x.answers = append(x.answers, id)
	}
	for _, a := range x.answers {
		for _, s := range x.starts {
			if a == s {
				o.AnswerIsEntity = true
			}
		}
	}
	o.HasGold = hasGold(q)
	if len(x.starts) == 0 {
		o.NoEntity = true
		o.Unreachable = o.Answers
		it.Dropped = DropNoEntity
		return it, o
	}
	minHops := x.f.opt.MinHops
	if x.f.opt.QuestionHops {
		minHops = max(minHops, q.Hops)
	}
	res := x.f.FindMin(x.starts, x.answers, minHops)
	byName(g, res.Chains)
	o.Unreachable = o.NotInKG + len(res.Unreachable)
	o.Chains, o.Found, o.Capped, o.CappedAnswers = len(res.Chains), res.Found, res.Capped, res.CappedAnswers
	if len(res.Chains) == 0 {
		if len(x.answers) == 0 {
			it.Dropped = DropNoAnswer
		} else {
			it.Dropped = DropUnreachable(x.f.opt.MaxHops)
		}
		return it, o
	}
	ev := Mask(g, x.starts, res.Chains)
	o.GoldFound = o.HasGold && Contains(g, q.Gold, res.Chains, ev.Triples)
	// The schema graph and the Triple-GNN labels follow the question's
	// gold relation pattern when it has one and a chain walks it: other
	// shortest chains are coincidences ("directed by X" films that X also
	// wrote), noise in a planner's target.
	kept := res.Chains
	if o.GoldFound {
		kept = goldChains(g, q.Gold, res.Chains)
	}
	if len(kept) == 0 {
		kept = res.Chains
	}
	sch := Schema(g, x.starts, kept, x.f.opt.MaxPatterns)
	it.Triples, it.Masked, it.Placeholders, it.AnswerSlot, it.Hops = sch.Triples, sch.Masked, sch.Placeholders, sch.AnswerSlot, ev.Hops
	it.Evidence = ev.Triples
	it.SubgraphEntities = chainEntities(g, kept)
	return it, o
}

func hasGold(q benchmark.Question) bool {
	for _, gp := range q.Gold {
		if len(gp.Steps) > 0 {
			return true
		}
	}
	return false
}

// Contains reports whether chains contain one of the gold paths. A gold
// path that names its entities (PathQuestion) is contained when all its
// triples are in triples (T); one that gives relations only (a MetaQA
// qtype) is contained when some chain leaving the path's start (any start
// when it has none) walks the same relations in the same directions.
func Contains(g *kg.Graph, gold []schema.GoldPath, chains []Chain, triples [][3]string) bool {
	var inT map[[3]string]bool
	for _, gp := range gold {
		if len(gp.Steps) == 0 {
			continue
		}
		if ts := gp.Triples(); ts != nil {
			if inT == nil {
				inT = make(map[[3]string]bool, len(triples))
				for _, t := range triples {
					inT[t] = true
				}
			}
			all := true
			for _, t := range ts {
				if !inT[t] {
					all = false
					break
				}
			}
			if all {
				return true
			}
			continue
		}
		for _, c := range chains {
			if Matches(g, c, gp) {
				return true
			}
		}
	}
	return false
}

// Matches reports whether chain c walks gold path gp's relations in its
// directions (an Either step matches both; a self-loop step matches
// Forward and Inverse), leaving gp.Start when it names one.
func Matches(g *kg.Graph, c Chain, gp schema.GoldPath) bool {
	if c.Len() != len(gp.Steps) {
		return false
	}
	if gp.Start != "" && g.EntityName(c.Start()) != gp.Start {
		return false
	}
	for i, s := range gp.Steps {
		tr := g.Triple(c.Triples[i])
		if g.RelationName(tr.Rel) != s.Rel {
			return false
		}
		if tr.Head == tr.Tail || s.Dir == schema.Either {
			continue
		}
		if c.Forward(g, i) != (s.Dir == schema.Forward) {
			return false
		}
	}
	return true
}

// Summary adds up the outcomes of a run. Shares are percentages of N, as
// `stem eval --json` reports its scores.
type Summary struct {
	// N counts the questions.
	N int `json:"n"`
	// WithChain counts the questions with at least one chain (usable
	// items).
	WithChain int `json:"with_chain"`
	// GoldPathShare is the percentage of N whose chains contain a gold
	// path (Contains); GoldPath counts them and WithGold counts the
	// questions that carry a gold path at all.
	GoldPathShare float64 `json:"gold_path_share"`
	GoldPath      int     `json:"gold_path"`
	WithGold      int     `json:"with_gold"`
	// Unreachable counts the questions dropped because none of their
	// answers is within MaxHops; Partial the kept questions with some
	// answer out of reach; UnreachableAnswers the answers out of reach
	// over all questions (NotInKG of them are not KG entities).
	Unreachable        int `json:"unreachable"`
	Partial            int `json:"partial"`
	UnreachableAnswers int `json:"unreachable_answers"`
	NotInKG            int `json:"answers_not_in_kg"`
	// NoEntity counts the questions dropped because no question entity
	// is in the KG.
	NoEntity int `json:"no_entity"`
	// AnswerIsEntity counts the questions with an answer that is a
	// question entity (answered by closed walks).
	AnswerIsEntity int `json:"answer_is_entity"`
	// Capped counts the questions with chains left out by MaxPaths;
	// CappedChains the chains left out; CappedAnswers the reachable
	// answers left with no chain.
	Capped        int   `json:"capped"`
	CappedChains  int64 `json:"capped_chains"`
	CappedAnswers int   `json:"capped_answers"`
	// Chains counts the chains kept.
	Chains int64 `json:"chains"`
	// Hops counts usable items by hop count (the longest chain);
	// Strategies counts usable items by strategy.
	Hops       map[string]int `json:"hops"`
	Strategies map[string]int `json:"strategies"`
	MaxHops    int            `json:"max_hops"`
	MaxPaths   int            `json:"max_paths"`
}

// NewSummary returns an empty summary of a run with opt.
func NewSummary(opt Options) *Summary {
	opt = opt.WithDefaults()
	return &Summary{Hops: map[string]int{}, Strategies: map[string]int{}, MaxHops: opt.MaxHops, MaxPaths: opt.MaxPaths}
}

// Add counts one question's item and outcome.
func (s *Summary) Add(it *dataset.Item, o Outcome) {
	s.N++
	if o.HasGold {
		s.WithGold++
	}
	if o.GoldFound {
		s.GoldPath++
	}
	s.GoldPathShare = 100 * float64(s.GoldPath) / float64(s.N)
	s.UnreachableAnswers += o.Unreachable
	s.NotInKG += o.NotInKG
	if o.AnswerIsEntity {
		s.AnswerIsEntity++
	}
	if o.Capped > 0 {
		s.Capped++
	}
	s.CappedChains += o.Capped
	s.CappedAnswers += o.CappedAnswers
	s.Chains += int64(o.Chains)
	switch {
	case o.NoEntity:
		s.NoEntity++
	case o.Chains == 0:
		s.Unreachable++
	}
	if !it.Usable() {
		return
	}
	s.WithChain++
	if o.Unreachable > 0 {
		s.Partial++
	}
	s.Hops[strconv.Itoa(it.Hops)]++
	s.Strategies[it.Strategy]++
}

// goldChains returns the chains that walk one of the gold paths'
// relation patterns.
func goldChains(g *kg.Graph, gold []schema.GoldPath, chains []Chain) []Chain {
	var out []Chain
	for _, c := range chains {
		for _, gp := range gold {
			if len(gp.Steps) > 0 && Matches(g, c, gp) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// chainEntities returns the names of the entities the chains walk,
// sorted, each once: the Triple-GNN labels of an item.
func chainEntities(g *kg.Graph, chains []Chain) []string {
	var out []string
	for _, c := range chains {
		for _, e := range c.Entities {
			out = append(out, g.EntityName(e))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// byName orders each answer's chains (a run of chains ending at the same
// entity) by the names they walk. The finder meets them in triple-id order,
// which is the backend's numbering: a KG read from a file and the same KG
// fetched from a SPARQL endpoint must give the same item, down to which of
// several equally short patterns becomes its schema graph.
func byName(g *kg.Graph, cs []Chain) {
	key := func(c Chain) string {
		var b strings.Builder
		for i, t := range c.Triples {
			tr := g.Triple(t)
			b.WriteString(g.EntityName(c.Entities[i]))
			b.WriteByte(0)
			b.WriteString(g.RelationName(tr.Rel))
			b.WriteByte(0)
		}
		b.WriteString(g.EntityName(c.Entities[len(c.Entities)-1]))
		return b.String()
	}
	for lo := 0; lo < len(cs); {
		hi := lo + 1
		end := cs[lo].Entities[len(cs[lo].Entities)-1]
		for hi < len(cs) && cs[hi].Entities[len(cs[hi].Entities)-1] == end {
			hi++
		}
		// An answer has at most MaxPaths chains: keys are cheap to rebuild.
		slices.SortStableFunc(cs[lo:hi], func(a, b Chain) int { return strings.Compare(key(a), key(b)) })
		lo = hi
	}
}
