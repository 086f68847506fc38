package compose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/zeroshot"
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

// walkOnFit is the share of a path's reached entities that must be of the
// asked kind for the path to be taken as reaching it.
const walkOnFit = 0.5

// walkOn lets the best path walk on to the kind the question asks for:
// when the best of all (sorted, best first) reaches no entity of that
// kind, by the KG's relation words (relFit) or by the inferred kinds, and
// a path that walks one or two more hops from its end does ("in which
// country is the company that X works for": the company's based_in, the
// city's located_in), the shortest such path, best scored, is moved
// first with a score just above it. It returns a note for --explain, ""
// when nothing moved.
func (k *kindFitter) walkOn(all []projection.ScoredPath, walks []zeroshot.Walk, walkOf map[string]int, relFit func([]int32) float32) string {
	if k.kind == "" || len(all) == 0 {
		return ""
	}
	best := walks[walkOf[fmt.Sprint(all[0].Steps)]]
	if k.fit(best.Front) >= walkOnFit || relFit(best.Front) >= walkOnFit {
		return ""
	}
	at := -1
	for i, sp := range all[1:] {
		w := walks[walkOf[fmt.Sprint(sp.Steps)]]
		extra := len(w.Steps) - len(best.Steps)
		if extra < 1 || extra > 2 || !slices.Equal(w.Steps[:len(best.Steps)], best.Steps) || k.fit(w.Front) < walkOnFit {
			continue
		}
		if n := len(best.Steps); n > 0 && w.Steps[n].Rel == best.Steps[n-1].Rel && w.Steps[n].Inv != best.Steps[n-1].Inv {
			continue // straight back to where the path came from
		}
		if at < 0 || len(w.Steps) < len(all[at].Steps) {
			at = i + 1
		}
	}
	if at < 0 {
		return ""
	}
	moved := all[at]
	w := walks[walkOf[fmt.Sprint(moved.Steps)]]
	why := ""
	for _, e := range w.Front[:min(len(w.Front), typeSample)] {
		if v := k.verdict(e); v.v == constraint.Holds {
			why = v.why
			break
		}
	}
	moved.Score = all[0].Score + reachTie
	copy(all[1:at+1], all[:at])
	all[0] = moved
	var rels []string
	for _, s := range moved.Steps[len(best.Steps):] {
		rels = append(rels, stepName(s))
	}
	return fmt.Sprintf("type %q: the best path reaches none; walked on by %s to reach one (%s)", k.kind, strings.Join(rels, ", "), why)
}

// stepName is a step's relation as --explain writes it, "^" before one
// walked backwards.
func stepName(s schema.Step) string {
	if s.Dir != schema.Forward {
		return "^" + s.Rel
	}
	return s.Rel
}
