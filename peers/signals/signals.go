// Package signals holds what the peer systems (the packages beside it
// under peers) share, so that no peer imports another and each stands on
// its own:
//
//   - Anchors places a question's entities in its KG, as every peer's
//     paper takes them: the pipeline's linked entities, else the KG
//     entities named exactly like a mention.
//   - Step, Trie and Build: a relation step with its direction and the
//     KG-Trie of every relation path within L hops of the anchors (GCR's
//     index, section 4.2; SimGRAG's stand-in chooses its pattern among
//     its paths).
//   - Similarity is the neutral stand-in for a peer's LLM, the same for
//     all four: the encoder's cosine of the question, its entity mentions
//     masked, and a candidate's relation words in order (GCR's decoded
//     path, DoG's chain, GraphRAFT's query, SimGRAG's pattern). It reads
//     nothing of STEM's planner or strategy.
//   - PlanPaths and PlanScore are the labelled planner-assisted mode: the
//     planner's candidate relation paths, a peer's score adding PlanWeight
//     times PlanScore. A peer reads them only when PlanWeight is above 0
//     (plan.Env.PlanWeight, --peer-plan-weight); at 0 it reports
//     UsesPlan false and the pipeline runs no planner for it.
//
// It imports the KG, the encoder seam and plan's request types, never a
// peer package (internal/layers checks it).
package signals

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/tracing"
)

// Anchors places the question entities of req in g: the request's
// anchors, or, with none, the entities whose normalised name equals a
// mention's (the peers' papers take the question's entities as given;
// similarity anchoring is tracing's and is not repeated here). It fills
// res.Anchors, notes anchors without edges and a question with none, and
// returns the anchors' ids in that order.
func Anchors(g kg.Reader, req plan.Request, res *tracing.Result) []int32 {
	n := int32(g.NumEntities())
	add := func(e int32, mention string) {
		if e < 0 || e >= n || slices.ContainsFunc(res.Anchors, func(a tracing.Anchor) bool { return a.Entity == e }) {
			return
		}
		name := g.EntityName(e)
		if mention == "" {
			mention = name
		}
		res.Anchors = append(res.Anchors, tracing.Anchor{Mention: mention, Entity: e, Name: name, Score: 1})
	}
	for i, e := range req.Anchors {
		m := ""
		if len(req.Mentions) == len(req.Anchors) {
			m = req.Mentions[i]
		}
		add(e, m)
	}
	if len(req.Anchors) == 0 {
		for _, m := range Mentions(req) {
			for _, e := range g.EntitiesByNorm(m) {
				add(e, m)
			}
		}
	}
	if len(res.Anchors) == 0 {
		res.Problems = append(res.Problems, "no question entity found in the KG")
	}
	out := make([]int32, 0, len(res.Anchors))
	for _, a := range res.Anchors {
		if g.Degree(a.Entity) == 0 {
			res.Problems = append(res.Problems, fmt.Sprintf("anchor %q (%s) has no neighbours", a.Mention, a.Name))
		}
		out = append(out, a.Entity)
	}
	return out
}

// Mentions returns the question's entity mentions: the request's, else
// the planner input's (the linker's spans).
func Mentions(req plan.Request) []string {
	if len(req.Mentions) > 0 {
		return req.Mentions
	}
	return req.Input.Mentions
}

// Words writes a relation path as its relations' words in order
// (kg.RelationTextOf), the text Similarity compares with the question.
// The direction is not in the words.
func Words(g kg.Reader, path []Step) string {
	parts := make([]string, len(path))
	for i, s := range path {
		parts[i] = kg.RelationTextOf(g, s.Rel)
	}
	return strings.Join(parts, " ")
}

// Mode labels how a peer runs, for stem compare's rows: "standalone" or
// "planner-assisted w=W", then what stands in for its LLM ("encoder", the
// Similarity stand-in, or "llm").
func Mode(planWeight float32, llm bool) string {
	scorer := "encoder"
	if llm {
		scorer = "llm"
	}
	if planWeight > 0 {
		return fmt.Sprintf("planner-assisted w=%g, %s", planWeight, scorer)
	}
	return "standalone, " + scorer
}

// TrainedMode is what Mode's label gains for a peer with a learnt
// scorer (Classifier): ", trained", else "".
func TrainedMode(trained bool) string {
	if trained {
		return ", trained"
	}
	return ""
}

// LLMFlag is a peer's switch of its LLM mode: the flag's name and
// whether it is on.
type LLMFlag struct {
	Name string
	On   bool
}

// Check is a peer's plan.SettingsChecker for its LLM flag: on without an
// LLM configured (llm false) is refused before any question.
func (f LLMFlag) Check(llm bool) error {
	if f.On && !llm {
		return fmt.Errorf("%s needs --llm-model NAME (and --llm-base-url of an OpenAI-compatible server)", f.Name)
	}
	return nil
}

// OpenChat opens the pipeline's LLM client for a peer's LLM mode, named
// by its flag in the error when there is none.
func OpenChat(env plan.Env, flag string) (*llm.Client, error) {
	if env.Chat == nil {
		return nil, fmt.Errorf("%s needs an LLM client (--llm-model)", flag)
	}
	c, err := env.Chat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return c, nil
}
