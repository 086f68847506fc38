package llmplan

import (
	"strings"
	"text/template"

	"github.com/stem-kgqa/stem/schema"
)

// The prompt texts are the paper's (appendix G, figures 11-13 and 15),
// copied word for word; only the bracketed slots ([EXAMPLE_1] [EXAMPLE_2]
// ..., [Query], [Assertion_1, ...]) became template actions, and line breaks
// were put where the figures start a new requirement. The one addition is
// P2's optional list of KG relations ({{if .Relations}}), absent from the
// paper because its SAGB was fine-tuned on the KG instead.

// SGDAPrompt is P1, Schema-Aligned Question Decomposition (figure 11).
// Fields: Examples (formatted few-shot examples), Query.
const SGDAPrompt = `You are a multi-hop question decomposition expert specialized in knowledge graph-based question answering. Your task is to decompose an input multi-hop question into a sequence of single-hop assertions, and returns the answer strategy required to answer the query. The specific requirements are as follows:
1. Decomposition must be entity-centric. Each single-hop assertion should correspond to a pair of entities and describe the relationship between them.
2. Every single-hop assertion generated should contribute to answering the original multi-hop question.
3. For entity references—including the final answer or any intermediate answer entities—you must label them with [ENT1], [ENT2], etc., and ensure that:
· The same entity is consistently referred to with the same label across all single-hop assertions.
· Different entities are assigned distinct labels.
4. Answering Strategy: If you determine that the answer to the current question is exclusive and deterministic, please return the strategy “Precision”. If you assess that the question involves multiple distinct answers (including final or intermediate answers), please return the strategy “Breadth”. You must select your strategy strictly from “Precision” and “Breadth”.
Your response should be a single result consisting of the planned single-hop assertion (s) along with the strategy.
Your output format: (Assertion_1, Assertion_2, Assertion_3), Strategy)
Example:
{{.Examples}}
Input multi-hop question: {{.Query}}
Please now plan the decomposition for the given question. You must strictly follow the requirements above.`

// SAGBPrompt is P2, Schema Graph Construction (figure 12). Fields:
// Examples, Assertions (the formatted list), Relations (KG relation
// symbols to prefer; optional).
const SAGBPrompt = `You are an entity-relationship construction expert who has memorized a rich and professional knowledge graph-oriented semantic and logical structure. Based on your mastered graph structure data, you can construct appropriate entity-relationship triples for given single-hop assertions. Since these assertions are decomposed from a multi-hop query, you must fully consider their interdependencies when returning the triples. The specific requirements are as follows:
1. Based on the given assertions and combined with your understanding of knowledge graph data, you must generate structural triples that best match the meaning expressed. The entities and relationship descriptions in the triples must be consistent with the meaning of the assertions.
2. If an assertion contains an entity placeholder like [ENTX], you must copy it exactly as is when converting it into a triple. Do not alter the content of the placeholder. If there is no [ENTX] label in an assertion, generate the most relevant triple based on the described entities and relationship.
Your output format: [ (Entity_1, Relation_1, Entity_2), (Entity_2, Relation_2, Entity_3), ]
Example:
{{.Examples}}
{{if .Relations}}Relations of the knowledge graph that may match (use one of these symbols as the relation when it fits the meaning): {{.Relations}}
{{end}}Input single-hop assertions: {{.Assertions}}`

// GenerationPrompt is P3, the answer generation prompt (figure 13), kept
// here with the other prompts for the answer generator. Fields: Graph (the
// verbalised knowledge structure graph), Question.
const GenerationPrompt = `Based on the knowledge structure graph, please answer the given question. Please keep the answer as simple as possible and return all the possible answers as a list.
Knowledge Structure Graph: {{.Graph}}
Question: {{.Question}}
Answer: `

// StrategyPrompt is P5, Response Strategy Generation (figure 15), asked
// when no SGDA reply named a strategy. Fields: Examples, Question,
// Assertions.
const StrategyPrompt = `Please determine the appropriate retrieval strategy for the given question when used for multi-hop retrieval-augmented generation in a knowledge graph context. There are two available strategies: “Precision” and “Breadth”, described as follows:
1. “Precision” is primarily used for answering questions that have a exclusive and deterministic answer, such as “In which year was Edison born?” Questions of this type typically have only one correct answer, and contradictions may arise if more than two answers are provided.
2. “Breadth” is mainly used for answering questions involving multiple distinct answers, such as “What country is Russia close to?”, this type of question requires retrieving all qualifying answers to ensure comprehensive answer recall.
3. You will be given a list of assertions representing the decomposed declarative statements derived from the given question. These assertions constitute the multi-hop logical decomposition of the question. You may reference them to get more in-depth guidance.
Please remember, your response should contain only the word “Precision” or “Breadth”, with no additional explanatory content!
Example:
{{.Examples}}
Question: {{.Question}}
Assertions: {{.Assertions}}`

// The templates are parsed once; they are never modified afterwards.
var (
	sgdaTmpl     = template.Must(template.New("P1").Parse(SGDAPrompt))
	sagbTmpl     = template.Must(template.New("P2").Parse(SAGBPrompt))
	strategyTmpl = template.Must(template.New("P5").Parse(StrategyPrompt))
	genTmpl      = template.Must(template.New("P3").Parse(GenerationPrompt))
)

func render(t *template.Template, data any) string {
	var b strings.Builder
	// The data are plain strings, so execution cannot fail.
	if err := t.Execute(&b, data); err != nil {
		return ""
	}
	return b.String()
}

// RenderGeneration fills P3 with a verbalised graph and a question.
func RenderGeneration(graph, question string) string {
	return render(genTmpl, struct{ Graph, Question string }{graph, question})
}

// noExamples stands in for the example block when the pool is empty.
const noExamples = "(none)"

// FormatAssertions writes assertions as the list P2 and P5 show them:
// ["a1", "a2"], quoted as the parsers read them back.
func FormatAssertions(as []string) string {
	q := make([]string, len(as))
	for i, a := range as {
		q[i] = quote(a)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func strategyName(s schema.Strategy) string {
	if s == schema.Breadth {
		return "Breadth"
	}
	return "Precision"
}

// RenderSGDA renders P1 for question with the chosen examples, as the
// planner sends it (nil examples: the block reads "(none)").
func RenderSGDA(question string, exs []Example) string {
	var b strings.Builder
	for i, e := range exs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Input multi-hop question: " + e.Question + "\n")
		b.WriteString("Output: " + FormatDecomposition(Decomposition{Assertions: e.Assertions, Strategy: e.Strategy, HasStrategy: true}))
	}
	ex := b.String()
	if ex == "" {
		ex = noExamples
	}
	return render(sgdaTmpl, struct{ Examples, Query string }{ex, question})
}

// RenderSAGB renders P2 for assertions with the chosen examples and
// relation hints, as the planner sends it.
func RenderSAGB(assertions []string, exs []Example, relations []string) string {
	var b strings.Builder
	for i, e := range exs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Input single-hop assertions: " + FormatAssertions(e.Assertions) + "\n")
		b.WriteString("Output: " + FormatTriples(e.Triples))
	}
	ex := b.String()
	if ex == "" {
		ex = noExamples
	}
	return render(sagbTmpl, struct{ Examples, Assertions, Relations string }{ex, FormatAssertions(assertions), strings.Join(relations, ", ")})
}

// RenderStrategy renders P5 for a question and its assertions, as the
// planner sends it.
func RenderStrategy(question string, assertions []string, exs []Example) string {
	var b strings.Builder
	for i, e := range exs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Question: " + e.Question + "\nAssertions: " + FormatAssertions(e.Assertions) + "\n")
		b.WriteString("Strategy: " + strategyName(e.Strategy))
	}
	ex := b.String()
	if ex == "" {
		ex = noExamples
	}
	return render(strategyTmpl, struct{ Examples, Question, Assertions string }{ex, question, FormatAssertions(assertions)})
}
