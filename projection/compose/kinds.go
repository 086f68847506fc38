package compose

import (
	"slices"
	"sync"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/schema"
)

// kindFitter reads the kind a question's type word asks for ("in which
// country": country) against the kinds of the entities a path reaches,
// as the constraint check infers them where the KG states no type
// (constraint.Checker.Kind: the relation names leading to an entity,
// WordNet's instances of its name through the lexicon, the entities
// beside it). Verdicts are kept for the question, since walks share
// entities, and in the planner's kindCache, since questions do.
type kindFitter struct {
	kind  string
	check constraint.Checker
	seen  map[int32]kindVerdict
	cache *memo[kindKey, kindVerdict]
	// facts keeps what the verdicts read of each entity, whatever the
	// kind: a miss in cache reads the KG only for entities no question
	// has judged yet.
	facts *constraint.KindCache
}

// kindKey is an entity judged against a kind.
type kindKey struct {
	e    int32
	kind string
}

// kindCacheMax bounds the verdicts a planner keeps (a few tens of MB).
const kindCacheMax = 1 << 18

type kindVerdict struct {
	v     constraint.Verdict
	typed bool // the KG states e's type
}

// kindFitter returns the fitter for question q: one that fits nothing when
// q states no type.
func (p *Planner) kindFitter(q string) *kindFitter {
	k := &kindFitter{seen: map[int32]kindVerdict{}, cache: &p.kindCache, facts: p.kindFacts}
	for _, c := range constraint.Detect(q) {
		if c.Kind == constraint.Type {
			k.kind = c.Value
		}
	}
	if k.kind != "" && !p.mayBe(k.kind) {
		// No entity is of it ("which films" over MetaQA): every fit is
		// 0, and no path walks on to one, so none is judged.
		k.kind = ""
	}
	k.check = constraint.Checker{Graph: p.g, Lexicon: p.instances, RelationKinds: p.relKinds}
	return k
}

// verdict judges entity e, once.
func (k *kindFitter) verdict(e int32) kindVerdict {
	if v, ok := k.seen[e]; ok {
		return v
	}
	key := kindKey{e, k.kind}
	kv := k.cache.get(key, func() kindVerdict {
		return kindVerdict{k.facts.Kind(e, k.kind), k.facts.Typed(e)}
	})
	k.seen[e] = kv
	return kv
}

// fit is the share of a sample of front that is of the kind asked for;
// where the KG types any of the sample, by the KG's types alone, as
// constraint.Checker.Kinds judges.
func (k *kindFitter) fit(front []int32) float32 {
	n := min(len(front), typeSample)
	if k.kind == "" || n == 0 {
		return 0
	}
	typed := slices.ContainsFunc(front[:n], func(e int32) bool { return k.verdict(e).typed })
	held := 0
	for _, e := range front[:n] {
		if v := k.verdict(e); v.v == constraint.Holds && (v.typed || !typed) {
			held++
		}
	}
	return float32(held) / float32(n)
}

// stepName is a step's relation as --explain writes it, "^" before one
// walked backwards.
func stepName(s schema.Step) string {
	if s.Dir != schema.Forward {
		return "^" + s.Rel
	}
	return s.Rel
}

// memo keeps values by key, up to kindCacheMax of them, for a planner's
// figures that depend on the KG and the question's words alone. It is
// safe for concurrent use.
type memo[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// get returns the value kept for k, computing and keeping it on a miss.
func (c *memo[K, V]) get(k K, compute func() V) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = compute()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[K]V{}
	}
	if len(c.m) < kindCacheMax {
		c.m[k] = v
	}
	return v
}

// instanceCache keeps a lexicon's InstanceKinds by name: a kind check
// reads the names of an entity's siblings, and the same hubs' neighbours
// are read by question after question, whatever kind each asks for. The
// lists are the lexicon's, shared: read them only.
type instanceCache struct {
	inner constraint.Instances
	memo  memo[string, [][]string]
}

// newInstances returns lex's instances behind a cache, or nil when lex
// has none.
func newInstances(lex any) constraint.Instances {
	inst, ok := lex.(constraint.Instances)
	if !ok || inst == nil {
		return nil
	}
	return &instanceCache{inner: inst}
}

// InstanceKinds implements constraint.Instances.
func (c *instanceCache) InstanceKinds(name string) [][]string {
	return c.memo.get(name, func() [][]string { return c.inner.InstanceKinds(name) })
}
