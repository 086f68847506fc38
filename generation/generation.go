// Package generation is STEM's last stage (paper section 3.6): it turns the
// traced evidence into answers, each with the reasoning chains that support
// it. Structural answers with the entities bound to the answer placeholder,
// with no LLM; LLM answers with prompt P3 over the reasoning chains and
// checks every answer against the evidence, flagging the unsupported ones
// instead of dropping or trusting them. Count answers a "how many"
// question with the number of answers, first, supported by their chains.
package generation

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/samber/lo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/tracing"
)

// Answer is one answer to a question with the reasoning chains that
// support it. Supported is false only for an LLM answer that no evidence
// entity matches: it is returned flagged, never silently.
type Answer struct {
	Name      string   `json:"answer"`
	Entity    string   `json:"entity,omitempty"` // the KG entity it names, when supported
	Score     float32  `json:"score"`
	Supported bool     `json:"supported"`
	Chains    []string `json:"chains"`
}

// Generator turns the traced evidence into answers: names, scores, and the
// evidence entity each one names (Entity, Supported). Supporting chains are
// attached afterwards by Support, for the callers that show them.
type Generator interface {
	Generate(ctx context.Context, question string, g kg.Reader, res *tracing.Result) ([]Answer, error)
}

// Structural answers with the entities bound to the answer placeholder, in
// tracing's order: no LLM, and every answer is a KG entity by construction.
//
// A Freebase CVT (a mediator named by its machine id, kg.IsFreebaseID) is
// left out when a named entity answers too: it is how an answer is
// reached, not one a reader can use, and listing it only costs precision
// (WebQSP-mini F1 61.49 -> 61.91, 83 questions had one). With no named
// answer the CVTs stay, so a question never loses its only evidence.
type Structural struct{}

// Generate implements Generator.
func (Structural) Generate(_ context.Context, _ string, _ kg.Reader, res *tracing.Result) ([]Answer, error) {
	named := false
	for _, a := range res.Answers {
		if !kg.IsFreebaseID(a.Name) {
			named = true
			break
		}
	}
	out := make([]Answer, 0, len(res.Answers))
	for _, a := range res.Answers {
		if named && kg.IsFreebaseID(a.Name) {
			continue
		}
		out = append(out, Answer{Name: a.Name, Entity: a.Name, Score: a.Score, Supported: true})
	}
	return out, nil
}

// Support attaches to every answer that names an evidence entity the
// reasoning chains through that entity, each cut after it: the part of a
// chain that leads to the answer is its support, what the walk found beyond
// it is not. An answer that tracing bound keeps only the chains of the
// schema graph that bound it best: evidence comes from the plan that
// produced the answer, not from another candidate that happened to reach
// it too. It is a separate step because only readers need it; scoring
// needs the answers alone.
func Support(answers []Answer, g kg.Reader, res *tracing.Result) {
	names := make([]string, 0, len(answers))
	for _, a := range answers {
		if a.Entity != "" {
			names = append(names, a.Entity)
		}
	}
	support := supportIndex(res.Chains, names)
	graphOf := make(map[string]int, len(res.Answers))
	for _, a := range res.Answers {
		graphOf[a.Name] = a.Graph
	}
	// The relations each schema graph matched, by name.
	rels := map[int]map[string]bool{}
	for _, m := range res.Evidence {
		if rels[m.Graph] == nil {
			rels[m.Graph] = map[string]bool{}
		}
		rels[m.Graph][g.RelationName(g.Triple(m.Triple).Rel)] = true
	}
	for i, a := range answers {
		if a.Entity == "" {
			continue
		}
		chains := support[a.Entity]
		if gi, ok := graphOf[a.Entity]; ok && len(res.Evidence) > 0 {
			own := slices.DeleteFunc(slices.Clone(chains), func(c string) bool { return !chainWithin(c, rels[gi]) })
			if len(own) > 0 {
				chains = own
			}
		}
		answers[i].Chains = chains
	}
}

// howManyRE finds a question that asks for a count.
var howManyRE = regexp.MustCompile(`(?i)\bhow\s+many\b`)

// Count answers a "how many" question with the number of answers, first,
// named by the number ("3"), its support the counted answers' chains; the
// counted answers follow it, so that a reader sees what was counted (and
// a benchmark that lists them, as WebQSP's "how many languages do they
// speak in spain" does, still finds them). It leaves answers as they are
// when the question asks no count, when there are none, and when one of
// them is a number: the KG states the count itself then ("how many people
// live in lyon": a population), and counting its literals would be wrong.
func Count(question string, answers []Answer) []Answer {
	if len(answers) == 0 || !howManyRE.MatchString(question) {
		return answers
	}
	n := Answer{Name: strconv.Itoa(len(answers)), Supported: true}
	seen := map[string]bool{}
	for _, a := range answers {
		if _, err := strconv.ParseFloat(kg.Normalize(a.Name), 64); err == nil {
			return answers
		}
		n.Score = max(n.Score, a.Score)
		for _, c := range a.Chains {
			if !seen[c] {
				seen[c] = true
				n.Chains = append(n.Chains, c)
			}
		}
	}
	return append([]Answer{n}, answers...)
}

// chainWithin reports whether every relation of chain is in rels.
func chainWithin(chain string, rels map[string]bool) bool {
	rest := chain
	for i := 0; ; i++ {
		k := arrow(rest)
		part := rest
		if k >= 0 {
			part = rest[:k]
		}
		if i%2 == 1 && !rels[part] {
			return false
		}
		if k < 0 {
			return true
		}
		rest = rest[k+4:]
	}
}

// LLM answers with prompt P3 over the reasoning chains and links every
// answer back to the evidence: an answer matches an evidence entity when one
// contains the other after the peers' normalisation (eval.Normalize).
type LLM struct {
	Chat llm.Chatter
	// MaxChains caps the chains put in the prompt (0 = 200).
	MaxChains int
}

// Generate implements Generator.
func (l LLM) Generate(ctx context.Context, question string, g kg.Reader, res *tracing.Result) ([]Answer, error) {
	chains := res.Chains
	limit := l.MaxChains
	if limit <= 0 {
		limit = 200
	}
	if len(chains) > limit {
		chains = chains[:limit]
	}
	prompt := llmplan.RenderGeneration(strings.Join(chains, "\n"), question)
	reply, err := l.Chat.Chat(ctx, llm.Request{Messages: []llm.Message{llm.User(prompt)}, Temperature: 0})
	if err != nil {
		return nil, err
	}
	if len(reply.Choices) == 0 {
		return nil, fmt.Errorf("the LLM returned no choice")
	}
	names := ParseAnswerList(reply.Choices[0])
	// Evidence entities, with their normalised names, to back the answers.
	type ent struct{ name, norm string }
	var evidence []ent
	seen := map[int32]bool{}
	for _, m := range res.Evidence {
		t := g.Triple(m.Triple)
		for _, e := range [2]int32{t.Head, t.Tail} {
			if !seen[e] {
				seen[e] = true
				evidence = append(evidence, ent{g.EntityName(e), kg.Normalize(g.EntityName(e))})
			}
		}
	}
	out := make([]Answer, 0, len(names))
	for _, n := range names {
		a := Answer{Name: n}
		nn := kg.Normalize(n)
		for _, e := range evidence {
			if nn != "" && e.norm != "" && (strings.Contains(e.norm, nn) || strings.Contains(nn, e.norm)) {
				a.Entity, a.Supported = e.name, true
				break
			}
		}
		out = append(out, a)
	}
	return out, nil
}

var listItem = regexp.MustCompile(`^\s*(?:[-*•]|\d+[.)])\s*`)

// ParseAnswerList reads an LLM's answer list: a JSON array, a Python-style
// list, one answer per line (bullets and numbers stripped) or a single
// comma-separated line. Empty items and a leading "Answer:" are dropped.
func ParseAnswerList(reply string) []string {
	s := strings.TrimSpace(reply)
	if i := strings.Index(strings.ToLower(s), "answer:"); i >= 0 && i < 20 {
		s = strings.TrimSpace(s[i+len("answer:"):])
	}
	var arr []string
	if strings.HasPrefix(s, "[") {
		if json.Unmarshal([]byte(s), &arr) == nil {
			return clean(arr)
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
		for _, p := range strings.Split(inner, ",") {
			arr = append(arr, strings.Trim(strings.TrimSpace(p), `"'`))
		}
		return clean(arr)
	}
	lines := strings.Split(s, "\n")
	if len(lines) == 1 {
		return clean(strings.Split(s, ","))
	}
	for _, l := range lines {
		arr = append(arr, listItem.ReplaceAllString(l, ""))
	}
	return clean(arr)
}

func clean(xs []string) []string {
	return lo.Uniq(lo.FilterMap(xs, func(x string, _ int) (string, bool) {
		x = strings.Trim(strings.TrimSpace(x), `"'.`)
		return x, x != ""
	}))
}

// supportIndex returns, for each of names, the chains in which it is one
// of the entities, each cut after it (its support: what the walk found
// beyond it is not), duplicates the cut creates dropped, for all names at once, in one pass over
// the chains that allocates only for the cuts it keeps, so that answering
// with many answers over hundreds of chains costs less than tracing them.
// Names and cuts are few per question, so they are looked up by scanning;
// a name with many cuts gets a set.
func supportIndex(chains []string, names []string) map[string][]string {
	const small = 16
	idx := make(map[string][]string, len(names))
	var want map[string]bool // for many names
	names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "" })
	if len(names) > small {
		want = make(map[string]bool, len(names))
		for _, n := range names {
			want[n] = true
		}
	}
	sets := map[string]map[string]bool{} // cuts of names with many
	var done []string                    // entities of the current chain already cut
	for _, c := range chains {
		done = done[:0]
		eachEntity(c, func(name string, end int) {
			if want != nil && !want[name] || want == nil && !slices.Contains(names, name) || slices.Contains(done, name) {
				return
			}
			done = append(done, name)
			cut, have := c[:end], idx[name]
			if set := sets[name]; set != nil {
				if set[cut] {
					return
				}
				set[cut] = true
			} else if slices.Contains(have, cut) {
				return
			} else if len(have) == small {
				set := make(map[string]bool, 2*small)
				for _, h := range have {
					set[h] = true
				}
				set[cut] = true
				sets[name] = set
			}
			idx[name] = append(have, cut)
		})
	}
	return idx
}

// eachEntity calls fn with each entity of a chain "A -> r -> B <- s <- C"
// (A, B and C) and the byte offset just after it, in order.
func eachEntity(chain string, fn func(name string, end int)) {
	off := 0
	rest := chain
	for i := 0; ; i++ {
		k := arrow(rest)
		if k < 0 {
			if i%2 == 0 {
				fn(rest, off+len(rest))
			}
			return
		}
		if i%2 == 0 {
			fn(rest[:k], off+k)
		}
		off += k + 4
		rest = rest[k+4:]
	}
}

// arrow returns the index of the first " -> " or " <- " in s, or -1.
func arrow(s string) int {
	for j := 0; ; j++ {
		k := strings.IndexByte(s[j:], ' ')
		if k < 0 || j+k+4 > len(s) {
			return -1
		}
		j += k
		if a := s[j+1 : j+4]; a == "-> " || a == "<- " {
			return j
		}
	}
}
