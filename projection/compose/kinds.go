package compose

import (
	"slices"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// kindFitter reads the kind a question's type word asks for ("in which
// country": country) against the kinds of the entities a path reaches,
// as the constraint check infers them where the KG states no type
// (constraint.Checker.Kind: the relation names leading to an entity,
// WordNet's instances of its name through the lexicon, the entities
// beside it). Verdicts are kept for the question, since walks share
// entities.
type kindFitter struct {
	kind  string
	check constraint.Checker
	seen  map[int32]kindVerdict
}

type kindVerdict struct {
	v     constraint.Verdict
	why   string
	typed bool // the KG states e's type
}

// kindFitter returns the fitter for question q: one that fits nothing when
// q states no type.
func (p *Planner) kindFitter(q string) *kindFitter {
	k := &kindFitter{seen: map[int32]kindVerdict{}}
	for _, c := range constraint.Detect(q) {
		if c.Kind == constraint.Type {
			k.kind = c.Value
		}
	}
	inst, _ := p.cfg.Lexicon.(constraint.Instances)
	k.check = constraint.Checker{Graph: p.g, Lexicon: inst}
	return k
}

// verdict judges entity e, once.
func (k *kindFitter) verdict(e int32) kindVerdict {
	if v, ok := k.seen[e]; ok {
		return v
	}
	v, why := k.check.Kind(e, k.kind)
	k.seen[e] = kindVerdict{v, why, len(kg.TypesOf(k.check.Graph, e)) > 0}
	return k.seen[e]
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
