package dog

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/peers/gcr"
	"github.com/stem-kgqa/stem/projection/linking"
)

// Query is what a Scorer sees of one question.
type Query struct {
	Question string
	// Mentions are the question's entity mentions, Anchors the KG
	// entities they were placed on.
	Mentions []string
	Anchors  []int32
	Graph    kg.Reader
	// Plans are the planner's candidate relation paths.
	Plans []gcr.PlanPath
}

// Scorer scores chains, higher better. Its errors need not name the
// question: Retrieve's do.
type Scorer interface {
	// Begin prepares the scoring of q's chains.
	Begin(ctx context.Context, q Query) (ScoreFunc, error)
}

// ScoreFunc scores the continuations of chain c by each of steps: next[i]
// is the score of c+steps[i] as a chain that goes on, end[i] as one that
// stops after steps[i]. Decoding calls it for a chain only after the
// call that scored the chain itself, which a scorer that extends c.Score
// relies on.
type ScoreFunc func(ctx context.Context, c Chain, steps []Step) (next, end []float32, err error)

// EncoderScorer is the no-LLM scorer: the cosine of the question, its
// mentions masked, and the chain's relation words in order, plus
// PlanWeight times gcr.PlanScore of the chain's relation path. Stopping
// costs nothing, so next and end agree.
type EncoderScorer struct {
	Encoder    models.Encoder
	PlanWeight float32
}

// Begin implements Scorer.
func (s EncoderScorer) Begin(ctx context.Context, q Query) (ScoreFunc, error) {
	dim := s.Encoder.Dim()
	qv := make([]float32, dim)
	if err := s.Encoder.Encode(ctx, []string{linking.Mask(q.Question, q.Mentions)}, qv); err != nil {
		return nil, fmt.Errorf("encode the question: %w", err)
	}
	// Chains with one relation sequence share a cosine, and a hub's
	// thousands of triples have few relations: each text is encoded once.
	cos := map[string]float32{}
	return func(ctx context.Context, c Chain, steps []Step) ([]float32, []float32, error) {
		prefix := make([]string, len(c.Steps))
		for i, st := range c.Steps {
			prefix[i] = kg.RelationTextOf(q.Graph, st.Token.Rel)
		}
		base := strings.Join(prefix, " ")
		texts := make([]string, len(steps))
		var fresh []string
		for i, st := range steps {
			texts[i] = strings.TrimSpace(base + " " + kg.RelationTextOf(q.Graph, st.Token.Rel))
			if _, ok := cos[texts[i]]; !ok {
				cos[texts[i]] = 0
				fresh = append(fresh, texts[i])
			}
		}
		if len(fresh) > 0 {
			vecs := make([]float32, len(fresh)*dim)
			if err := s.Encoder.Encode(ctx, fresh, vecs); err != nil {
				for _, t := range fresh {
					delete(cos, t)
				}
				return nil, nil, fmt.Errorf("encode %d chains: %w", len(fresh), err)
			}
			for i, t := range fresh {
				v := vecs[i*dim : (i+1)*dim]
				var dot float32
				for j, x := range qv {
					dot += x * v[j]
				}
				cos[t] = dot
			}
		}
		out := make([]float32, len(steps))
		toks := c.Tokens()
		path := make([]gcr.Token, len(toks)+1)
		copy(path, toks)
		for i, st := range steps {
			out[i] = cos[texts[i]]
			// Only a chain that is a path from an anchor can follow a
			// planned relation path.
			if toks != nil && (len(c.Steps) == 0 || st.From == c.Answer()) {
				path[len(toks)] = st.Token
				out[i] += s.PlanWeight * gcr.PlanScore(q.Plans, path)
			}
		}
		return out, out, nil
	}, nil
}

// LLMScorer is DoG's scorer (section 2.4): a triple's score is its
// log-probability given the prompt (Prompt) and the chain so far, a
// chain's the sum of its triples'. After each triple the model either
// concludes or writes another triple; a chain that stops there adds the
// log-probability of concluding (Conclude), one that goes on that of not
// concluding. Each continuation is one echoed completions call
// (llm.PromptScorer) over prompt, chain, step and conclusion, run
// concurrently up to the client's concurrency limit.
type LLMScorer struct {
	LLM llm.PromptScorer
	// ContextTriples caps the triples of the prompt's context.
	ContextTriples int
}

// Conclude is how a chain ends in the paper's answers, after its last
// triple.
const Conclude = " Therefore, the answer is"

// Prompt is DoG's prompt (the paper's table 6, its three examples) for
// question over the linearised context triples, up to the first step.
func Prompt(question string, context []string) string {
	return promptHead + strings.Join(context, " | ") + " ] Question: " + question + " Answer: Let’s break down the steps to find the answer to the question."
}

// promptHead is table 6 up to its fourth example's context, verbatim
// (its second example is headed "Example 1" there too).
const promptHead = "You are a helpful assistant that can analyse the knowledge graphs in the contexts and then answer the questions based on the knowledge graphs. The answers should give the grounded reasoning chains and think step by step, and the reasoning chains should be logically complete but have as fewer steps as possible. Do not include information irrelvant to the question. *Example 1:** Context: [ Bahamas -> location.country.first_level_divisions -> Grand Cay | Grand Bahama -> location.location.containedby -> Bahamas | Bahamas -> location.location.contains -> Grand Cay | Bahamas -> location.location.contains -> Grand Bahama | Grand Cay -> location.location.containedby -> Bahamas | Bahamas -> location.country.first_level_divisions -> East Grand Bahama | Bahamas -> location.country.first_level_divisions -> West Grand Bahama | Grand Bahama -> location.location.contains -> Grand Bahama International Airport | Bahamas -> location.location.contains -> East Grand Bahama | Bahamas -> location.location.contains -> West Grand Bahama | East Grand Bahama -> location.location.containedby -> Bahamas | Bahamas -> location.location.contains -> Grand Bahama International Airport | Grand Bahama -> location.location.people_born_here -> Hubert Ingraham | Grand Cay -> location.administrative_division.first_level_division_of -> Bahamas | Bahamas -> location.country.administrative_divisions -> Cat Island, Bahamas | Bahamas -> location.country.administrative_divisions -> Long Island | West Grand Bahama -> location.location.containedby -> Bahamas | Bahamas -> location.country.capital -> Nassau | Bahamas -> location.country.administrative_divisions -> Inagua | Bahamas -> location.country.administrative_divisions -> Exuma | Grand Bahama International Airport -> location.location.containedby -> Bahamas | Grand Bahama -> location.location.people_born_here -> Juan Lewis | Grand Bahama -> location.location.contains -> West End Airport ] Question: What country is the grand bahama island in? Answer: Let’s break down the steps to find the answer to the question. 1. < Grand Bahama -> location.location.containedby -> Bahamas > This tells us Grand Bahama is located in Bahamas. Grand Bahama is in Bahamas. Therefore, the answer is * Bahamas. *Example 1:** Context: [ William Shakespeare -> people.person.profession -> Playwright | William Shakespeare -> people.person.profession -> Poet | William Shakespeare -> base.kwebbase.kwtopic.has_sentences -> By the time these works were published in 1609, Shakespeare was an acknowledged master of drama and an established country gentleman. | William Shakespeare -> people.person.profession -> Actor | William Shakespeare -> people.person.profession -> Author | William Shakespeare -> people.person.profession -> Lyricist | In the 21 years between 1592 and 1613, Shakespeare produced more than 30 plays. -> base.kwebbase.kwsentence.previous_sentence -> Above all, his humanity spanned all classes and circumstances ] Question: What did William Shakespeare do for a living? Answer: Let’s break down the steps to find the answer to the question. 1. < William Shakespeare -> people.person.profession -> Playwright > This tells us William Shakespeare is was playwright. 2. < William Shakespeare -> people.person.profession -> Poet > This tells us William Shakespeare was a poet. William Shakespeare was a playwright, and poet. Therefore, the answer is * playwright, and * poet. *Example 3:** Context: [ Carlton the Bear -> sports.mascot.team -> Toronto Maple Leafs | Toronto Maple Leafs -> sports.sports_team.team_mascot -> Carlton the Bear | Carlton the Bear -> common.topic.notable_types -> Mascot | Mascot -> type.type.properties -> Team | Toronto Maple Leafs -> sports.sports_team.previously_known_as -> Toronto St. Patricks | Team -> type.property.master_property -> Team Mascot | Toronto Maple Leafs -> sports.sports_team.previously_known_as -> Toronto Arenas | m.0crt465 -> sports.sports_league_participation.team -> Toronto Maple Leafs | Toronto St. Patricks -> sports.defunct_sports_team.later_known_as -> Toronto Maple Leafs | Toronto Maple Leafs -> sports.sports_team.sport -> Ice Hockey | Toronto St. Patricks -> sports.sports_team.sport -> Ice Hockey | Toronto Arenas -> sports.defunct_sports_team.later_known_as -> Toronto Maple Leafs | Toronto -> sports.sports_team_location.teams -> Toronto Maple Leafs | Toronto Maple Leafs -> sports.sports_team.location -> Toronto ] Question: What is the sport played by the team with a mascot known as Carlton the Bear? Answer: Let’s break down the steps to find the answer to the question. 1. < Carlton the Bear -> sports.mascot.team -> Toronto Maple Leafs > This tells us Carlton the Bear is the mascot of the team Toronto Maple Leafs. 2. < Toronto Maple Leafs -> sports.sports_team.sport -> Ice Hockey > This tells us Toronto Maple Leafs plays Ice Hockey. Carlton the Bear is the mascot of the team Toronto Maple Leafs which plays Ice Hockey. Therefore, the answer is * Ice Hockey. *Example 4:** Context: [ "

// TripleText writes KG triple id as the paper's steps write a triple,
// head to tail whichever way the chain walked it.
func TripleText(g kg.Reader, id int32) string {
	t := g.Triple(id)
	return g.EntityName(t.Head) + " -> " + g.RelationName(t.Rel) + " -> " + g.EntityName(t.Tail)
}

// stepText writes step i (from 0) of a chain.
func stepText(g kg.Reader, i int, s Step) string {
	return " " + strconv.Itoa(i+1) + ". < " + TripleText(g, s.Triple) + " >"
}

// context returns the prompt's context: the anchors' triples, the
// query-centric subgraph the paper starts from, at most limit of them.
func contextTriples(g kg.Reader, anchors []int32, limit int) []string {
	var out []string
	for _, a := range anchors {
		for _, ids := range [][]int32{g.Out(a), g.In(a)} {
			for _, id := range ids {
				if len(out) >= limit {
					return out
				}
				out = append(out, TripleText(g, id))
			}
		}
	}
	return out
}

// minLogprob bounds log(1 - P(conclude)) when the model is certain to
// conclude, so a chain's score stays finite.
const minLogprob = -50

// Begin implements Scorer.
func (s LLMScorer) Begin(ctx context.Context, q Query) (ScoreFunc, error) {
	if s.LLM == nil {
		return nil, errors.New("LLM scorer without a language model")
	}
	limit := s.ContextTriples
	if limit <= 0 {
		limit = DefaultConfig().ContextTriples
	}
	head := Prompt(q.Question, contextTriples(q.Graph, q.Anchors, limit))
	return func(ctx context.Context, c Chain, steps []Step) ([]float32, []float32, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var b strings.Builder
		b.WriteString(head)
		for i, st := range c.Steps {
			b.WriteString(stepText(q.Graph, i, st))
		}
		prefix := b.String()
		next, end := make([]float32, len(steps)), make([]float32, len(steps))
		errs := make([]error, len(steps))
		var wg sync.WaitGroup
		for i, st := range steps {
			wg.Go(func() {
				step := prefix + stepText(q.Graph, len(c.Steps), st)
				l, err := s.LLM.PromptLogprobs(ctx, step+Conclude)
				if err != nil {
					errs[i] = err
					cancel()
					return
				}
				triple := c.Score + float32(l.Sum(len(prefix), len(step)))
				stop := l.Sum(len(step), len(step)+len(Conclude))
				next[i] = triple + float32(max(minLogprob, math.Log(-math.Expm1(stop))))
				end[i] = triple + float32(stop)
			})
		}
		wg.Wait()
		if err := llm.RootFailure(errs); err != nil {
			return nil, nil, fmt.Errorf("score %d triples: %w", len(steps), err)
		}
		return next, end, nil
	}, nil
}
