package sft

import (
	"strings"
	"text/template"

	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/schema"
)

// AssertionPrompt is P4, Path-based Assertions Generation (figure 14),
// copied word for word; as with llmplan's prompts, only the bracketed slots
// ([EXAMPLE_1] ..., [Query], [Triple_1, ...]) became template actions and
// line breaks were put where the figure starts a new requirement. Fields:
// Examples (formatted few-shot examples), Query, Triples (the masked
// triples as llmplan.FormatTriples writes them).
const AssertionPrompt = `Please construct appropriate declarative assertions for each given triple based on the provided logical triple list and original query. The requirements are as follows:
1. The format of each given triple is (“entity1”, “relation”, “entity2”). You need to generate a suitable declarative assertion based on the meanings of entity1 and entity2 and the relationship between them.
2. If an entity is in the label format such as [ENTX], the corresponding entity in the generated sentence should also be written in the same label format. If multiple triples contain the same label, for example, all are [ENT1], you must ensure consistency in the generated assertions and avoid modifying the label content arbitrarily.
3. The number of assertions you return must match the number of triples in the given list, and they should correspond one-to-one.
4. The assertions you generate must serve as important evidence for answering the given original query, meaning that answering the query requires referencing these assertions.
Your output format: [ Assertion_1, Assertion_2, ]
Example:
{{.Examples}}
Original Query: {{.Query}}
Given Triple List: {{.Triples}}`

// assertTmpl is parsed once and never modified afterwards. P1 and P2 are
// rendered by llmplan itself, so the exported prompts are the planner's.
var assertTmpl = template.Must(template.New("P4").Parse(AssertionPrompt))

// noExamples is what llmplan puts in a prompt's example block when it has
// no examples to show.
const noExamples = "(none)"

func render(t *template.Template, data any) string {
	var b strings.Builder
	// The data are plain strings, so execution cannot fail.
	if err := t.Execute(&b, data); err != nil {
		return ""
	}
	return b.String()
}

// AssertExample is one few-shot demonstration for P4: a question, its
// masked triples and one assertion per triple.
type AssertExample struct {
	Question   string
	Triples    [][3]string
	Assertions []string
}

// DefaultAssertExamples returns the three demonstrations P4 shows unless
// configured otherwise: the paper's two training examples (figures 9 and
// 10) and a MetaQA-style chain through a shared placeholder. A new slice
// is returned on every call.
func DefaultAssertExamples() []AssertExample {
	return []AssertExample{
		{
			Question:   "In which country is Kagoshima Prefecture located?",
			Triples:    [][3]string{{"Kagoshima Prefecture", "location.location.containedby", "[ENT1]"}},
			Assertions: []string{"Kagoshima Prefecture is contained by [ENT1]."},
		},
		{
			Question: "Which city in Aomori Prefecture was affected by the 2011 Tohoku earthquake?",
			Triples: [][3]string{
				{"[ENT1]", "location.location.containedby", "Aomori Prefecture"},
				{"[ENT1]", "location.location.events", "2011 Tōhoku earthquake and tsunami"},
			},
			Assertions: []string{"[ENT1] is contained by Aomori Prefecture.", "[ENT1] experienced the event of the 2011 Tōhoku earthquake and tsunami."},
		},
		{
			Question: "what are the languages spoken in the films directed by Joel Zwick",
			Triples: [][3]string{
				{"[ENT1]", "directed_by", "Joel Zwick"},
				{"[ENT1]", "in_language", "[ENT2]"},
			},
			Assertions: []string{"[ENT1] is a film directed by Joel Zwick.", "[ENT1] is in the [ENT2] language."},
		},
	}
}

// FormatTriples writes masked triples as llmplan.FormatTriples does (one
// quoted tuple a line inside a list), the form P2 asks the SAGB to write.
func FormatTriples(ts [][3]string) string { return llmplan.FormatTriples(schemaTriples(ts)) }

func schemaTriples(ts [][3]string) []schema.Triple {
	out := make([]schema.Triple, len(ts))
	for i, t := range ts {
		out[i] = schema.Triple{Head: t[0], Rel: t[1], Tail: t[2]}
	}
	return out
}

// FormatAssertions writes assertions as the list P2 and P5 show them and
// P4 asks for: ["a1", "a2"]. ParseAssertions reads it back unchanged.
func FormatAssertions(as []string) string { return llmplan.FormatAssertions(as) }

// RenderAssertionPrompt fills P4 with the examples, the question and its
// masked triples. With no examples the example block reads "(none)", as
// llmplan's prompts do.
func RenderAssertionPrompt(question string, masked [][3]string, exs []AssertExample) string {
	var b strings.Builder
	for i, e := range exs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Original Query: " + e.Question + "\n")
		b.WriteString("Given Triple List: " + FormatTriples(e.Triples) + "\n")
		b.WriteString("Output: " + FormatAssertions(e.Assertions))
	}
	ex := b.String()
	if ex == "" {
		ex = noExamples
	}
	return render(assertTmpl, struct{ Examples, Query, Triples string }{ex, strings.TrimSpace(question), FormatTriples(masked)})
}

// SGDAPrompt renders P1 for a question exactly as the llm planner does at
// inference when it has no few-shot examples: the SGDA training input.
func SGDAPrompt(question string) string {
	return llmplan.RenderSGDA(strings.TrimSpace(question), nil)
}

// SAGBPrompt renders P2 for assertions exactly as the llm planner does at
// inference with no few-shot examples and no relation hints: the SAGB
// training input.
func SAGBPrompt(assertions []string) string {
	return llmplan.RenderSAGB(assertions, nil, nil)
}
