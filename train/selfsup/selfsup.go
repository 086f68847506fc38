// Package selfsup trains a planner for a KG from the KG alone: no
// training questions, no LLM. It is `stem train planner --from-kg`.
//
// # Paths that cover the schema
//
// Start entities are sampled per relation, not per edge: for every
// relation, PerRelation of its triples are drawn uniformly, and their
// heads and tails become starts, so a relation with ten edges is walked
// from as often as one with a hundred thousand, and a hub's many edges do
// not crowd out the rest. From each start every relation path of up to
// MaxHops hops is enumerated, each relation walked either way (package
// zeroshot's walk, which caps the entities expanded at a hub); a path is
// kept with up to PerPath starts, its instances. An instance whose path
// reaches more than MaxAnswers entities is left out (a question whose
// answer is half the KG is not one people ask); a path with none left is
// not learnt. Every answer the path reaches counts, so the strategy label
// (Breadth for more than one) is the KG's.
//
// # Questions
//
// Each instance is written as Phrasings distinct questions from the words
// of its relations (package synth's reading of a relation name as a noun,
// "nationality", or a passive verb, "directed by"): every step may be an
// "of" phrase, a possessive, a relative clause, read forward or backward,
// and the question's frame varies ("what is", "who", "which ones", a
// statement with the wh-word last). No dataset's phrasing is written in.
//
// # The zero-shot prior
//
// The questions teach the model the KG's paths and how questions are
// built around them (how many relation words, in which order, on which
// side of the entity), not the words people use for a relation, which no
// template built from relation names can know. So the model does not plan
// alone: it is a pattern model (package projection/pattern) whose Prior
// names the compose planner, which enumerates the paths from the question's
// entity and aligns the question's words to them; the model's score of
// each path, times Prior.Weight, is added to the alignment's (see
// plan.Settings and compose.Config.Learnt).
package selfsup

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	prog "github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/projection/compose"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/projection/zeroshot"
	"github.com/stem-kgqa/stem/schema"
)

// Options shape the synthesized questions and the model; zero fields take
// the defaults.
type Options struct {
	// MaxHops is the longest path; 0 means zeroshot.DefaultMaxHops, the
	// longest the compose planner enumerates.
	MaxHops int
	// PerRelation is the number of triples drawn per relation, whose ends
	// are starts; 0 means DefaultPerRelation.
	PerRelation int
	// PerPath is the most instances (starts) kept per relation path; 0
	// means DefaultPerPath.
	PerPath int
	// Phrasings is the number of distinct questions written per instance;
	// 0 means DefaultPhrasings.
	Phrasings int
	// MaxAnswers leaves out instances whose path reaches more entities; 0
	// means DefaultMaxAnswers.
	MaxAnswers int
	// Seed makes the sampling and the phrasing repeatable.
	Seed uint64
	// Pattern are the pattern model's training options. Its path
	// classifier is left out unless Pattern.Epochs asks for it: trained
	// on synthesized questions it learns their templates' wording, and its
	// peaked probabilities overrule the alignment where the wording
	// differs; the neighbours' vote carries what the questions teach.
	Pattern pattern.Options
	// Lexicon, when not nil, supplies other nouns for the relations
	// (models.Lexicon.Narrower): half the time a relation's noun is
	// written as one of them, so that the questions say "son" and "kid"
	// for "children" as people do.
	Lexicon models.Lexicon
	// PriorWeight is the weight of the model's scores beside the compose
	// planner's (pattern.Prior.Weight); 0 means DefaultPriorWeight.
	PriorWeight float32
}

// Defaults of Options.
const (
	DefaultPerRelation = 16
	DefaultPerPath     = 4
	DefaultPhrasings   = 3
	DefaultMaxAnswers  = 100
	DefaultPriorWeight = 0.1
)

func (o Options) withDefaults() Options {
	if o.MaxHops <= 0 {
		o.MaxHops = zeroshot.DefaultMaxHops
	}
	if o.PerRelation <= 0 {
		o.PerRelation = DefaultPerRelation
	}
	if o.PerPath <= 0 {
		o.PerPath = DefaultPerPath
	}
	if o.Phrasings <= 0 {
		o.Phrasings = DefaultPhrasings
	}
	if o.MaxAnswers <= 0 {
		o.MaxAnswers = DefaultMaxAnswers
	}
	if o.PriorWeight == 0 {
		o.PriorWeight = DefaultPriorWeight
	}
	if o.Pattern.Epochs == 0 {
		o.Pattern.Epochs = -1
	}
	return o
}

// Example is one synthesized training question.
type Example struct {
	// Question names its entity by Mention.
	Question string
	Mention  string
	// Path is the relation path from the entity to the answers.
	Path []schema.Step
	// Answers is the number of entities Path reaches from the entity.
	Answers int
}

// Stats say what synthesis did.
type Stats struct {
	// Relations is the number of relations with a triple; Starts the
	// number of distinct start entities walked from.
	Relations, Starts int
	// Paths is the number of distinct relation paths kept, Instances
	// their instances and Examples the questions written.
	Paths, Instances, Examples int
	// TooManyAnswers counts the instances left out for reaching more than
	// MaxAnswers entities.
	TooManyAnswers int
}

// instance is a start entity of a path and the number of entities the
// path reaches from it.
type instance struct {
	start int32
	reach int
}

// Synthesize writes training questions for g's relation paths (see the
// package comment). progress, when not nil, receives a bar over the
// starts.
func Synthesize(ctx context.Context, g kg.Reader, o Options, progress io.Writer) ([]Example, Stats, error) {
	o = o.withDefaults()
	if g == nil || g.NumTriples() == 0 {
		return nil, Stats{}, errors.New("selfsup: the KG has no triples")
	}
	var st Stats
	starts := sampleStarts(g, o, &st)
	var bar *prog.Bar
	if progress != nil {
		bar = prog.New(progress, "walk paths", int64(len(starts)))
	}
	defer bar.Finish()
	inst := map[string][]instance{}
	steps := map[string][]schema.Step{}
	for _, s := range starts {
		walks, _, err := zeroshot.Walks(ctx, g, []int32{s}, zeroshot.Config{MaxHops: o.MaxHops})
		if err != nil {
			return nil, Stats{}, fmt.Errorf("selfsup: walk from %q: %w", g.EntityName(s), err)
		}
		bar.Add(1)
		for _, w := range walks {
			ss := zeroshot.SchemaSteps(g, w.Steps)
			k := key(ss)
			if len(inst[k]) >= o.PerPath {
				continue
			}
			if w.Reach > o.MaxAnswers {
				st.TooManyAnswers++
				continue
			}
			if _, ok := steps[k]; !ok {
				steps[k] = ss
			}
			inst[k] = append(inst[k], instance{start: s, reach: w.Reach})
		}
	}
	keys := make([]string, 0, len(inst))
	for k := range inst {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	alts := map[string][]string{}
	if o.Lexicon != nil {
		for _, ss := range steps {
			for _, s := range ss {
				n := formOf(s.Rel).noun
				if _, done := alts[n]; !done && n != "" && !strings.Contains(n, " ") {
					alts[n] = o.Lexicon.Narrower(n)
				}
			}
		}
	}
	var out []Example
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return nil, Stats{}, err
		}
		h := fnv.New64a()
		h.Write([]byte(k))
		ph := phraser{rng: rand.New(rand.NewPCG(o.Seed, h.Sum64())), alts: alts}
		for _, in := range inst[k] {
			name := g.EntityName(in.start)
			for _, q := range ph.phrasings(name, steps[k], o.Phrasings) {
				out = append(out, Example{Question: q, Mention: name, Path: steps[k], Answers: in.reach})
			}
			st.Instances++
		}
	}
	st.Paths, st.Examples = len(keys), len(out)
	if len(out) == 0 {
		return nil, st, fmt.Errorf("selfsup: no relation path of the KG reaches at most %d entities", o.MaxAnswers)
	}
	return out, st, nil
}

// sampleStarts draws PerRelation triples per relation, uniformly
// (reservoir sampling over the triples in id order), and returns their
// distinct heads and tails in an order drawn from Seed.
func sampleStarts(g kg.Reader, o Options, st *Stats) []int32 {
	rng := rand.New(rand.NewPCG(o.Seed, 0x5e1f))
	res := make([][]int32, g.NumRelations())
	seen := make([]int, g.NumRelations())
	for t := range int32(g.NumTriples()) {
		r := g.Triple(t).Rel
		seen[r]++
		if len(res[r]) < o.PerRelation {
			res[r] = append(res[r], t)
		} else if j := rng.IntN(seen[r]); j < o.PerRelation {
			res[r][j] = t
		}
	}
	have := map[int32]bool{}
	var starts []int32
	for r, ts := range res {
		if seen[r] > 0 {
			st.Relations++
		}
		for _, t := range ts {
			tr := g.Triple(t)
			for _, e := range []int32{tr.Head, tr.Tail} {
				if !have[e] {
					have[e] = true
					starts = append(starts, e)
				}
			}
		}
	}
	rng.Shuffle(len(starts), func(i, j int) { starts[i], starts[j] = starts[j], starts[i] })
	st.Starts = len(starts)
	return starts
}

// key identifies a path with its directions.
func key(ss []schema.Step) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.Rel)
		b.WriteByte(byte('0' + s.Dir))
		b.WriteByte(0)
	}
	return b.String()
}

// Train synthesizes questions for g and trains a pattern model on them
// under enc, with the compose planner as its prior (see the package
// comment). progress, when not nil, receives a bar over the starts.
func Train(ctx context.Context, g kg.Reader, enc models.Encoder, o Options, progress io.Writer) (*pattern.Model, Stats, error) {
	o = o.withDefaults()
	exs, st, err := Synthesize(ctx, g, o, progress)
	if err != nil {
		return nil, st, err
	}
	pexs := make([]pattern.Example, len(exs))
	for i, ex := range exs {
		pexs[i] = pattern.Example{Question: ex.Question, Mentions: []string{ex.Mention}, Paths: [][]schema.Step{ex.Path}, Answers: ex.Answers}
	}
	m, err := pattern.Train(ctx, enc, pexs, o.Pattern)
	if err != nil {
		return nil, st, fmt.Errorf("selfsup: %w", err)
	}
	m.SetPrior(pattern.Prior{Planner: compose.Name, Weight: o.PriorWeight})
	return m, st, nil
}
