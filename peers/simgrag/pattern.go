package simgrag

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/schema"
)

// StagePattern names the LLM's query-to-pattern step in Evidence.Timings.
const StagePattern = "simgrag-pattern"

// Defaults of the LLM mode's Config fields.
const (
	DefaultMaxParseRetries  = 2
	DefaultRetryTemperature = 0.7
)

// patternTemplate is the query-to-pattern prompt of section 4.1, the
// paper's table 16 (its KGQA prompt; table 17 is FactKG's), with
// {{QUERY}} where the question goes. Its instructions, note 3's format (a
// "triples" list) and closing lines are the table's, typographic quotes
// and ellipses written in ASCII. The table prints one example and elides
// the rest ("2. query: ... output: ..."), and its one is also the
// released code's first, so the ten examples are stem's own: laid out as
// the table's, as many as the released code's MetaQA prompt has, and of
// its kinds (1- to 3-hop MetaQA questions, UNKNOWN nodes, people linked
// through a film they share). The table's example is a model's reply in
// the tests.
//
//go:embed prompts/pattern.txt
var patternTemplate string

// RenderPattern returns the query-to-pattern prompt for question.
func RenderPattern(question string) string {
	return strings.Replace(patternTemplate, "{{QUERY}}", strings.TrimSpace(question), 1)
}

// patternFormat is what a retry reminds the model of: note 3's format.
const patternFormat = `{ "divided": [ "segment 1", ... ], "triples": [ ("head", "relation", "tail"), ... ] }`

var (
	// unknownRE reads the paper's marker for an unknown node or relation
	// (section 4.3): "UNKNOWN", an optional description, an optional id.
	unknownRE = regexp.MustCompile(`(?i)^unknown\b\s*(.*?)\s*(\d*)$`)
	// triplesKeyRE finds the "triples" key of table 16's format (or
	// "graph", which a model prompted as the released code prompts it
	// sends), quoted with either quote, so the "divided" list is not
	// read as triples.
	triplesKeyRE = regexp.MustCompile(`(?i)["'“‘](?:triples|graph)["'”’]\s*:`)
)

// isUnknown reports whether s is the paper's unknown marker.
func isUnknown(s string) bool { return unknownRE.MatchString(strings.TrimSpace(s)) }

// ParsePattern reads a query-to-pattern reply into a schema graph: the
// triples of its "triples" list (read by llmplan.ParseTriples, so the
// quoting, fences and prose models add are tolerated; a reply without the
// key is read whole), entity mentions kept as written, each distinct
// unknown node ("UNKNOWN film 1") an [ENTn] placeholder in order of first
// appearance, and unknown relations ("UNKNOWN relation 1") kept as
// written, which the search takes as any relation at distance 0 (section
// 4.3). The answer is the placeholder the question asks for (see
// answerSlot). A reply with no triple, a triple lacking a field, no
// unknown node, or a connected part of the pattern that names no entity
// (the search could not start there) is an error.
func ParsePattern(reply, question string) (schema.Graph, error) {
	body := reply
	if locs := triplesKeyRE.FindAllStringIndex(reply, -1); len(locs) > 0 {
		// The last key: a reasoning model may quote the format before
		// its answer.
		body = reply[locs[len(locs)-1][1]:]
	}
	ts, err := llmplan.ParseTriples(body)
	if err != nil {
		return schema.Graph{}, err
	}
	used := map[int]bool{}
	for _, t := range ts {
		for _, n := range [2]string{t.Head, t.Tail} {
			if schema.IsPlaceholder(n) {
				c := schema.CanonicalPlaceholder(n)
				if k, err := strconv.Atoi(c[4 : len(c)-1]); err == nil {
					used[k] = true
				}
			}
		}
	}
	var unknowns []unknown
	byKey := map[string]string{}
	next := 1
	node := func(s string) string {
		if schema.IsPlaceholder(s) {
			// A placeholder the model wrote itself is an unknown too.
			ph := schema.CanonicalPlaceholder(s)
			if _, ok := byKey[ph]; !ok {
				byKey[ph] = ph
				unknowns = append(unknowns, unknown{ph: ph})
			}
			return ph
		}
		m := unknownRE.FindStringSubmatch(strings.TrimSpace(s))
		if m == nil {
			return s
		}
		key := strings.ToLower(strings.Join(strings.Fields(s), " "))
		if ph, ok := byKey[key]; ok {
			return ph
		}
		for used[next] {
			next++
		}
		used[next] = true
		ph := "[ENT" + strconv.Itoa(next) + "]"
		byKey[key] = ph
		unknowns = append(unknowns, unknown{ph: ph, desc: strings.ToLower(m[1])})
		return ph
	}
	g := schema.Graph{Triples: make([]schema.Triple, len(ts))}
	for i, t := range ts {
		g.Triples[i] = schema.Triple{Head: node(t.Head), Rel: t.Rel, Tail: node(t.Tail)}
	}
	if len(unknowns) == 0 {
		return schema.Graph{}, fmt.Errorf("pattern %s has no UNKNOWN node to answer with", g)
	}
	g.Answer = answerSlot(unknowns, question)
	if err := g.Validate(); err != nil {
		return schema.Graph{}, err
	}
	if err := anchoredParts(g); err != nil {
		return schema.Graph{}, err
	}
	return g, nil
}

// unknown is one unknown node of a pattern: its placeholder and the
// description the model gave it ("film" of "UNKNOWN film 1").
type unknown struct {
	ph, desc string
}

// whRE finds what a question asks for: a wh-word and up to two words
// after it ("which films", "what type of film").
var (
	whRE    = regexp.MustCompile(`(?i)\b(?:which|what|whose|whom|who|where|when|how\s+many)\b((?:\W+\w+){1,3})`)
	nonWord = regexp.MustCompile(`\W+`)
)

// answerSlot picks the unknown node the question asks for. The paper has
// no answer node (its generation step reads the answer off the retrieved
// subgraphs); its example marks what the question asks for by the
// unknown's description ("which films" is "UNKNOWN film 1") and writes it
// last, after the bridging unknowns it is reached through. So an unknown
// whose description follows a wh-word in the question is the answer (the
// last such one), and otherwise the unknown introduced last.
func answerSlot(us []unknown, question string) string {
	var asked []string
	for _, m := range whRE.FindAllStringSubmatch(question, -1) {
		asked = append(asked, strings.Fields(strings.ToLower(nonWord.ReplaceAllString(m[1], " ")))...)
	}
	best := ""
	for _, u := range us {
		d := strings.Fields(u.desc)
		if len(d) == 0 {
			continue
		}
		head := d[len(d)-1] // "film" of "UNKNOWN romance film"
		for _, w := range asked {
			if w == head || strings.TrimSuffix(w, "s") == head || strings.TrimSuffix(w, "es") == head {
				best = u.ph
			}
		}
	}
	if best != "" {
		return best
	}
	return us[len(us)-1].ph
}

// anchoredParts reports a connected part of g with no entity mention: the
// search starts each part at a mention, so such a part cannot be matched.
func anchoredParts(g schema.Graph) error {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if p, ok := parent[x]; ok && p != x {
			r := find(p)
			parent[x] = r
			return r
		}
		parent[x] = x
		return x
	}
	for _, t := range g.Triples {
		parent[find(t.Head)] = find(t.Tail)
	}
	known := map[string]bool{}
	for n := range parent {
		if !schema.IsPlaceholder(n) {
			known[find(n)] = true
		}
	}
	for _, t := range g.Triples {
		if !known[find(t.Head)] {
			return fmt.Errorf("pattern %s: triple %s is in a part that names no entity", g, t)
		}
	}
	return nil
}

// askPattern asks r's model for the question's pattern graph, retrying an
// unreadable or unusable reply up to MaxParseRetries times at the retry
// temperature and the next seed, showing the model its reply and what was
// wrong (as llmplan does). ok is false when no reply gave a pattern; the
// problems say why. Only a failed request is an error.
func (r *Retriever) askPattern(ctx context.Context, question string) (g schema.Graph, ok bool, probs []string, err error) {
	if strings.TrimSpace(question) == "" {
		return schema.Graph{}, false, []string{"no question to ask the model for a pattern graph"}, nil
	}
	prompt := RenderPattern(question)
	var (
		lastBad string
		lastErr error
	)
	tries := r.cfg.MaxParseRetries + 1
	for attempt := range tries {
		seed := r.cfg.Seed + int64(attempt)
		req := llm.Request{Messages: []llm.Message{llm.User(prompt)}, Temperature: r.cfg.Temperature, MaxTokens: r.cfg.MaxTokens, Seed: &seed}
		if attempt > 0 {
			req.Messages = []llm.Message{
				llm.User(prompt),
				llm.Assistant(lastBad),
				llm.User("Your reply could not be used (" + lastErr.Error() + "). Reply again with only the result, strictly in the format: " + patternFormat),
			}
			req.Temperature = r.cfg.RetryTemperature
		}
		reply, err := r.cfg.Chat.Chat(ctx, req)
		if err != nil {
			return schema.Graph{}, false, probs, fmt.Errorf("pattern request (attempt %d): %w", attempt+1, err)
		}
		if len(reply.Choices) == 0 {
			lastBad, lastErr = "", errors.New("no reply")
		} else if g, err := ParsePattern(reply.Choices[0], question); err != nil {
			lastBad, lastErr = reply.Choices[0], err
		} else {
			return g, true, probs, nil
		}
		probs = append(probs, fmt.Sprintf("pattern reply unusable (attempt %d of %d): %v", attempt+1, tries, lastErr))
	}
	probs = append(probs, fmt.Sprintf("no pattern graph: the model gave no usable pattern in %d attempts", tries))
	return schema.Graph{}, false, probs, nil
}
