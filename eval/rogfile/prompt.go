package rogfile

import (
	"errors"
	"fmt"
	"strings"
)

// Instruction is RoG's instruction for a short-answer question with
// reasoning paths (PromptBuilder.SAQ_RULE_INSTRUCTION), the one GNN-RAG's
// released predictions were made with.
const Instruction = "Based on the reasoning paths, please answer the given question. Please keep the answer as simple as possible and return all the possible answers as a list."

// Template is how the instruction and input are wrapped: RoG's prompt
// files.
type Template string

const (
	// Llama2 is prompts/llama2_predict.txt, "[INST] <<SYS>>\n<</SYS>>\n
	// {instruction}\n\n{input} [/INST]": what RoG's scripts feed RoG-7B
	// and what GNN-RAG's released files hold. For a text-generation
	// pipeline that applies no template of its own.
	Llama2 Template = "llama2"
	// Plain is prompts/general_prompt.txt, "{instruction}\n\n{input}": for
	// a chat server, which applies the model's own template.
	Plain Template = "plain"
)

// Templates lists the templates, the default first.
var Templates = []Template{Llama2, Plain}

// UnmarshalText accepts a template's name, so a settings field of type
// Template checks its own value.
func (t *Template) UnmarshalText(b []byte) error {
	for _, c := range Templates {
		if string(b) == string(c) {
			*t = c
			return nil
		}
	}
	return fmt.Errorf("prompt template %q: want llama2 or plain", b)
}

const (
	llama2Open  = "[INST] <<SYS>>\n<</SYS>>\n"
	llama2Close = " [/INST]"
)

// Prompt is the prompt RoG's PromptBuilder.process_input builds for a
// short-answer question with reasoning paths: the instruction, then
// "Reasoning Paths:" and one path per line, a blank line, "Question:" and
// the question with a "?" added when it does not end in one, wrapped by
// t. No path gives the empty block RoG writes then.
func Prompt(question string, paths []Path, t Template) string {
	if !strings.HasSuffix(question, "?") {
		question += "?"
	}
	lines := make([]string, len(paths))
	for i, p := range paths {
		lines[i] = p.Text()
	}
	input := "Reasoning Paths:\n" + strings.Join(lines, "\n") + "\n\n" + "Question:\n" + question
	if t == Plain {
		return Instruction + "\n\n" + input
	}
	return llama2Open + Instruction + "\n\n" + input + llama2Close
}

// ChatPrompt is the user message for a chat server given a prompt of
// either template: a Llama2 wrapper is taken off, since the server
// applies the model's own chat template.
func ChatPrompt(prompt string) string {
	if strings.HasPrefix(prompt, llama2Open) && strings.HasSuffix(prompt, llama2Close) {
		return prompt[len(llama2Open) : len(prompt)-len(llama2Close)]
	}
	return prompt
}

// Step is one edge of a path as walked, From -> Relation -> To. Forward
// is false when the KG triple points the other way, (To, Relation, From).
type Step struct {
	From, Relation, To string
	Forward            bool
}

// Triple is the step's KG triple (head, relation, tail).
func (s Step) Triple() [3]string {
	if s.Forward {
		return [3]string{s.From, s.Relation, s.To}
	}
	return [3]string{s.To, s.Relation, s.From}
}

// Path is a reasoning path: steps, each starting where the one before
// ended.
type Path []Step

// Text is the path as RoG's path_to_string writes it: "A -> r -> B -> s
// -> C", in walking order whatever the triples' direction.
func (p Path) Text() string {
	if len(p) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(p[0].From)
	for _, s := range p {
		b.WriteString(" -> ")
		b.WriteString(s.Relation)
		b.WriteString(" -> ")
		b.WriteString(s.To)
	}
	return b.String()
}

// Triples are the path's KG triples in walking order.
func (p Path) Triples() [][3]string {
	out := make([][3]string, len(p))
	for i, s := range p {
		out[i] = s.Triple()
	}
	return out
}

// The arrows of stem's chains: an edge walked along its triple, and
// against it.
const (
	arrowForward  = " -> "
	arrowBackward = " <- "
)

// errNoParse marks a chain that no reading splits into steps.
var errNoParse = errors.New("not a chain of A -> rel -> B or A <- rel <- B steps")

// ParseChain reads one of stem's reasoning chains ("A -> rel -> B <- rel2
// <- C", as tracing and the peer retrievers write them) into its steps.
// Names may themselves hold an arrow, so several readings can exist: with
// evidence (the triples the chain was drawn from) the reading whose every
// step is an evidence triple in the chain's direction is chosen; without
// it, the first reading that splits the whole chain, trying the shortest
// names first. A chain no reading fits is an error.
func ParseChain(chain string, evidence map[[3]string]bool) (Path, error) {
	type cut struct {
		at      int
		forward bool
	}
	var cuts []cut
	for i := 0; i+len(arrowForward) <= len(chain); i++ {
		switch chain[i : i+len(arrowForward)] {
		case arrowForward:
			cuts = append(cuts, cut{i, true})
		case arrowBackward:
			cuts = append(cuts, cut{i, false})
		}
	}
	var path Path
	// walk reads the rest of the chain from entity from, which ends at
	// cuts[k].at; it reports whether the chain reads to its end.
	var walk func(from string, k int) bool
	walk = func(from string, k int) bool {
		c := cuts[k]
		relStart := c.at + len(arrowForward)
		for j := k + 1; j < len(cuts); j++ {
			r := cuts[j]
			if r.forward != c.forward || r.at < relStart {
				continue
			}
			rel := chain[relStart:r.at]
			toStart := r.at + len(arrowForward)
			// The next entity ends at a later cut, or at the end.
			ends := []int{}
			for m := j + 1; m < len(cuts); m++ {
				if cuts[m].at >= toStart {
					ends = append(ends, m)
				}
			}
			ends = append(ends, -1)
			for _, m := range ends {
				end := len(chain)
				if m >= 0 {
					end = cuts[m].at
				}
				to := chain[toStart:end]
				if from == "" || rel == "" || to == "" {
					continue
				}
				st := Step{From: from, Relation: rel, To: to, Forward: c.forward}
				if evidence != nil && !evidence[st.Triple()] {
					continue
				}
				path = append(path, st)
				if m < 0 || walk(to, m) {
					return true
				}
				path = path[:len(path)-1]
			}
		}
		return false
	}
	for k := range cuts {
		if walk(chain[:cuts[k].at], k) {
			return path, nil
		}
	}
	return nil, fmt.Errorf("chain %q: %w", chain, errNoParse)
}
