package simgrag

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// StageAnswer names the LLM's answer step in Evidence.Timings.
const StageAnswer = "simgrag-answer"

// standInPattern is the no-LLM pattern graph (package doc): among the
// relation paths of up to Hops steps from each question entity, the one
// whose relation words the question is most similar to (ties: the
// shorter, then the earlier entity, then the trie's order), written as a
// chain from the entity's mention through UNKNOWN nodes ([ENTn]) to the
// last, which is the answer. ok is false, with a problem saying why, when
// no entity has a path.
func (r *Retriever) standInPattern(ctx context.Context, g kg.Reader, req plan.Request, res *tracing.Result) (schema.Graph, bool, error) {
	scratch := &tracing.Result{}
	anchors := signals.Anchors(g, req, scratch)
	if len(anchors) == 0 {
		res.Problems = append(res.Problems, "no question entity to write a pattern graph from")
		return schema.Graph{}, false, nil
	}
	sim, err := signals.NewSimilarity(ctx, r.enc, req.Question, signals.Mentions(req))
	if err != nil {
		return schema.Graph{}, false, err
	}
	var (
		best      []signals.Step
		bestScore float32
		mention   string
		found     bool
	)
	for i, a := range anchors {
		t, err := signals.Build(ctx, g, []int32{a}, r.cfg.Hops, signals.Limits{MaxReach: standInReach, MaxNodes: standInNodes})
		if err != nil {
			return schema.Graph{}, false, err
		}
		if t.Capped {
			res.Problems = append(res.Problems, fmt.Sprintf("stand-in pattern: the relation paths of %s were cut at %d", g.EntityName(a), standInNodes))
		}
		texts := make([]string, len(t.Nodes)-1)
		for n := 1; n < len(t.Nodes); n++ {
			texts[n-1] = signals.Words(g, t.Path(int32(n)))
		}
		cos, err := sim.Scores(ctx, texts)
		if err != nil {
			return schema.Graph{}, false, err
		}
		for n := 1; n < len(t.Nodes); n++ {
			s := cos[n-1]
			path := t.Path(int32(n))
			if !found || s > bestScore || (s == bestScore && len(path) < len(best)) {
				best, bestScore, found = path, s, true
				mention = scratch.Anchors[i].Mention
			}
		}
	}
	if !found {
		res.Problems = append(res.Problems, "no relation path from the question entities to write a pattern graph from")
		return schema.Graph{}, false, nil
	}
	steps := make([]schema.Step, len(best))
	for i, s := range best {
		steps[i] = schema.Step{Rel: g.RelationName(s.Rel)}
		if s.Inverse {
			steps[i].Dir = schema.Inverse
		}
	}
	return schema.PathGraph(mention, steps), true, nil
}

// Bounds of the stand-in's path enumeration: entities per path and paths
// per question entity.
const (
	standInReach = 2000
	standInNodes = 20000
)

// answerTemplate is the verbalized subgraph-augmented generation prompt
// of section 4.4, the paper's table 18, with {{QUERY}} and
// {{RETRIEVED SUBGRAPHS}} where they go. Its instructions and closing
// lines are the table's. The table prints one example and elides the rest ("2. query:
// ... evidences: ... output: ..."; stem answers every example with
// "answer:", as the printed one does), and its one is also the released
// code's, so the twelve examples are stem's own: laid out as the table's,
// as many as the released code's MetaQA prompt has, and of its kinds
// (graphs that answer and graphs that do not, one to three of them, a
// brief reason that names no bridging entity, then the answers).
//
//go:embed prompts/answer.txt
var answerTemplate string

// RenderAnswer returns the answer prompt for question over the k
// subgraphs, each a list of (head, relation, tail) names, laid out as
// table 18 prints its evidences: a "graph [i]" entry per subgraph, one
// double-quoted triple a line.
func RenderAnswer(question string, graphs [][][3]string) string {
	var b strings.Builder
	b.WriteString("{\n")
	for j, tr := range graphs {
		fmt.Fprintf(&b, "\"graph [%d]\": [\n", j+1)
		for _, t := range tr {
			fmt.Fprintf(&b, "(%s, %s, %s),\n", strconv.Quote(t[0]), strconv.Quote(t[1]), strconv.Quote(t[2]))
		}
		b.WriteString("]")
		if j < len(graphs)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}")
	return strings.NewReplacer("{{QUERY}}", strings.TrimSpace(question), "{{RETRIEVED SUBGRAPHS}}", b.String()).Replace(answerTemplate)
}

// answer is the LLM's answer step: it reads the kept subgraphs and names
// the answers; those that are entities of the subgraphs, other than the
// question's own (the known nodes of the best subgraph), are kept, in the
// order it names them. A reply naming none leaves the subgraphs' answer nodes,
// with a problem saying so.
func (r *Retriever) answer(ctx context.Context, g kg.Reader, question string, kept []found, res *tracing.Result) error {
	graphs := make([][][3]string, len(kept))
	var ents []int32
	seen := map[int32]bool{}
	for v, e := range kept[0].sub.Nodes {
		if kept[0].pat.known[v] {
			seen[e] = true // the question's own entities, as the best subgraph maps them
		}
	}
	for i, f := range kept {
		for _, id := range f.sub.Triples {
			t := g.Triple(id)
			graphs[i] = append(graphs[i], [3]string{g.EntityName(t.Head), g.RelationName(t.Rel), g.EntityName(t.Tail)})
			for _, e := range []int32{t.Head, t.Tail} {
				if !seen[e] {
					seen[e] = true
					ents = append(ents, e)
				}
			}
		}
	}
	reply, err := r.cfg.Chat.Chat(ctx, llm.Request{Messages: []llm.Message{llm.User(RenderAnswer(question, graphs))}, Temperature: r.cfg.Temperature, MaxTokens: r.cfg.MaxTokens})
	if err != nil {
		return fmt.Errorf("answer request: %w", err)
	}
	if len(reply.Choices) == 0 {
		return errors.New("answer request: no reply")
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = g.EntityName(e)
	}
	named := signals.Named(reply.Choices[0], names)
	if len(named) == 0 {
		res.Problems = append(res.Problems, "the model's answer names no entity of the subgraphs; their answer nodes stand")
		return nil
	}
	res.Answers = res.Answers[:0]
	for _, i := range named {
		res.Answers = append(res.Answers, tracing.Answer{Entity: ents[i], Name: names[i], Score: 1})
	}
	res.Unbacked = tracing.Audit(g, res)
	return nil
}
