package synth

import (
	"strings"
	"text/template"

	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/dataset"
)

// P6Prompt is the paper's Query & Assertions Generation based on
// Sampled-Graph prompt (figure 16), word for word; the bracketed slots
// ([EXAMPLE_1] ..., [Triple_1, ...], [ENTX]) became template actions and
// line breaks were put where the figure starts a new requirement. Fields:
// Examples, Triples (the formatted masked triples), Answer (the answer
// placeholder).
const P6Prompt = `Please construct appropriate declarative sentences for each given triple based on the provided triple list. The requirements are as follows:
1. The format of each given triple is (“entity1”, “relation”, “entity2”). You need to generate a suitable declarative sentence based on the meanings of entity1 and entity2 and the relationship between them.
2. If an entity is in the label format such as [ENTX], the corresponding entity in the generated sentence should also be written in the same label format. If multiple triples contain the same label, you must ensure consistency in the generated sentences and avoid modifying the label content arbitrarily.
3. The number of sentences you return must match the number of triples in the given list, and they should correspond one-to-one.
After constructing the declarative sentences, proceed to generate a multi-hop question based on them. You must adhere to the following requirements:
1. Given the specific placeholder [ENTX] designated as the answer entity, your generated question must target [ENTX] as its final answer.
2. If the sentences contain multiple distinct placeholders, treat all placeholders other than the target [ENTX] as intermediate answers. You must integrate them into the multi-hop question as modifiers, relative clauses, or nested constraints.
3. The generated multi-hop question must be constructed such that answering it requires referencing all the provided declarative sentences.
4. If you determine that the declarative sentences cannot yield an unambiguous multi-hop question that strictly relies on every sentence, simply output: “No Solution”.
Your output format: [(Sentence_1, Sentence_2, ...), Multi-Hop Question]
Example:
{{.Examples}}
Given Triple List: {{.Triples}}
Answer Entity: {{.Answer}}`

// P6Example is one few-shot demonstration of P6.
type P6Example struct {
	// Triples are masked triples (head, relation, tail).
	Triples [][3]string
	// Answer is the answer placeholder.
	Answer string
	// Sentences and Question are the expected reply, or NoSolution.
	Sentences  []string
	Question   string
	NoSolution bool
}

// DefaultP6Examples are the fixed demonstrations P6 shows: a two-hop
// chain, a reversed one-hop edge with several answers, and a subgraph that
// admits no unambiguous question. They are written for this package, not
// taken from any benchmark.
var DefaultP6Examples = []P6Example{
	{
		Triples:   [][3]string{{"Marie_Curie", "spouse", "[ENT1]"}, {"[ENT1]", "place_of_birth", "[ENT2]"}},
		Answer:    "[ENT2]",
		Sentences: []string{"Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."},
		Question:  "Where was the husband of Marie_Curie born?",
	},
	{
		Triples:   [][3]string{{"[ENT1]", "directed_by", "Sofia_Coppola"}},
		Answer:    "[ENT1]",
		Sentences: []string{"[ENT1] was directed by Sofia_Coppola."},
		Question:  "Which films did Sofia_Coppola direct?",
	},
	{
		Triples:    [][3]string{{"Ada_Lovelace", "gender", "[ENT1]"}, {"[ENT2]", "gender", "[ENT1]"}},
		Answer:     "[ENT2]",
		NoSolution: true,
	},
}

// FormatP6 writes a P6 reply in the prompt's output format:
// [("sentence 1", "sentence 2"), "question"]. ParseP6 reads it back.
func FormatP6(sentences []string, question string) string {
	var b strings.Builder
	b.WriteString("[(")
	for i, s := range sentences {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(s))
	}
	b.WriteString("), ")
	b.WriteString(quote(question))
	b.WriteString("]")
	return b.String()
}

// quote writes s double-quoted, escaping what the parser unescapes.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// formatTriples writes masked triples as the list P6 shows.
func formatTriples(ts [][3]string) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = "(" + quote(t[0]) + ", " + quote(t[1]) + ", " + quote(t[2]) + ")"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

var p6Tmpl = template.Must(template.New("P6").Parse(P6Prompt))

func render(t *template.Template, data any) string {
	var b strings.Builder
	// The data are plain strings: execution cannot fail.
	if err := t.Execute(&b, data); err != nil {
		return ""
	}
	return b.String()
}

// RenderP6 fills P6 for masked triples and their answer placeholder.
func RenderP6(masked [][3]string, answer string, exs []P6Example) string {
	var b strings.Builder
	for i, e := range exs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Given Triple List: " + formatTriples(e.Triples) + "\n")
		b.WriteString("Answer Entity: " + e.Answer + "\n")
		if e.NoSolution {
			b.WriteString("Output: No Solution")
		} else {
			b.WriteString("Output: " + FormatP6(e.Sentences, e.Question))
		}
	}
	ex := b.String()
	if ex == "" {
		ex = "(none)"
	}
	return render(p6Tmpl, struct{ Examples, Triples, Answer string }{ex, formatTriples(masked), answer})
}

// DefaultP5Examples are the fixed demonstrations shown with P5 (the
// paper's strategy prompt, figure 15, which llmplan holds).
var DefaultP5Examples = []llmplan.Example{
	{Question: "Where was the husband of Marie_Curie born?", Assertions: []string{"Marie_Curie is married to [ENT1].", "[ENT1] was born in [ENT2]."}},
	{Question: "Which films did Sofia_Coppola direct?", Assertions: []string{"[ENT1] was directed by Sofia_Coppola."}, Strategy: schema.Breadth},
	{Question: "Which languages are spoken in the country where Lake_Titicaca lies?", Assertions: []string{"Lake_Titicaca is located in [ENT1].", "[ENT2] is spoken in [ENT1]."}, Strategy: schema.Breadth},
}

// RenderP5 fills P5 (llmplan.StrategyPrompt) for a question and its
// assertions, as llmplan's planner renders it.
func RenderP5(question string, assertions []string, exs []llmplan.Example) string {
	return llmplan.RenderStrategy(question, assertions, exs)
}

// strategyName writes a strategy as the prompts do.
func strategyName(s schema.Strategy) string {
	if s == schema.Breadth {
		return dataset.Breadth
	}
	return dataset.Precision
}
