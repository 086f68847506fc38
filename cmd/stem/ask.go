package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/sparql"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/peers"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/tripgnn"
	"github.com/urfave/cli/v2"
)

// askOptions are stem ask's own settings, beside the pipeline's.
type askOptions struct {
	KG        string    `flag:"kg" placeholder:"FILE|URL" usage:"KG FILE (any format 'stem kg' reads) or SPARQL endpoint URL (http://host:8890/sparql); default: the embedded demo KG"`
	KGFormat  kg.Format `flag:"format" usage:"KG file format: auto, tsv (head<TAB>rel<TAB>tail), pipe (head|rel|tail), nt (N-Triples), snapshot"`
	Entities  []string  `flag:"entity" placeholder:"NAME" usage:"the question's KG entities by NAME, comma-separated; default: linked from the question"`
	JSON      bool      `flag:"json" usage:"print one JSON object"`
	Explain   bool      `flag:"explain" usage:"also show the whole trace: plans, anchors, every matched triple with its T-Score and bias, the audit"`
	MaxChains int       `flag:"max-chains" min:"0" usage:"chains to print per answer in human output (0 = all)"`
	Sparql    sparql.Settings
}

func askCommand() *cli.Command {
	o := askOptions{KGFormat: kg.FormatAuto, MaxChains: 20, Sparql: sparql.DefaultSettings()}
	s := pipelineSettings()
	enc := catalog.DefaultEncoderSettings()
	return &cli.Command{
		Name:      "ask",
		Usage:     "answer a question with the KG evidence behind every answer",
		ArgsUsage: "QUESTION",
		Description: "Runs STEM's stages: entity linking, projection (schema graphs + strategy),\n" +
			"retrieval (--retriever; STEM's is guidance with --gnn, then structure tracing) and\n" +
			"generation. Without --kg it answers over the embedded demo KG with a pattern planner\n" +
			"learnt from the demo questions.\n\n" +
			"--planner auto picks pattern when --planner-model is given, the demo planner on\n" +
			"the demo KG, and otherwise the zero-shot compose planner, which needs no training:\n" +
			"it aligns the question's relation words, nearest the entity first, to a relation path\n" +
			"of your KG (see README, \"Planning without an LLM\").\n\n" +
			"Examples:\n" +
			"  stem ask 'who directed inception ?'\n" +
			"  stem ask --explain --json 'in which country was the director of inception born ?'\n" +
			"  stem ask --kg metaqa.kg --planner-model metaqa.stempat 'what movies did [Tom Hanks] star in'\n" +
			"  stem ask --kg http://localhost:8890/sparql --entity m.0jcx 'where was [m.0jcx] born ?'",
		Flags:  append(append(append([]cli.Flag{configFlag}, flagsOf(&o)...), flagsOf(&s)...), flagsOf(&enc)...),
		Before: bindWithConfig(&o, &s, &enc),
		Action: func(c *cli.Context) error {
			question := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if question == "" {
				return fmt.Errorf("ask: give a QUESTION (see stem ask --help)")
			}
			return runAsk(c.Context, c.App.Writer, c.App.ErrWriter, question, o, s, enc)
		},
	}
}

func runAsk(ctx context.Context, w, log io.Writer, question string, o askOptions, s plan.Settings, encS catalog.EncoderSettings) error {
	if err := s.Check(peers.Retrievers()); err != nil {
		return err
	}
	cold := time.Now()
	l, err := loadAssets(ctx, kgSource{Path: o.KG, Format: o.KGFormat, Sparql: o.Sparql}, s.Beam, encS, log)
	if err != nil {
		return err
	}
	defer l.close()
	entities, err := resolveAll(l.graph, o.Entities)
	if gerr := l.err(); gerr != nil {
		err = gerr // the lookup failed, which is not "no such entity"
	}
	if err != nil {
		return err
	}
	if err := answer(ctx, w, question, entities, o, s, l.assets, cold); err != nil {
		return err
	}
	return l.err()
}

// kgSource names the KG a command answers over.
type kgSource struct {
	// Path is a KG file, a SPARQL endpoint URL, or "" for the embedded
	// demo KG.
	Path   string
	Format kg.Format
	Sparql sparql.Settings
}

// assets are what ask and serve load once: the KG, the encoder, and the
// pipeline's assets over them.
type assets struct {
	graph  kg.Reader
	assets plan.Assets
	// search finds entities by free text: the entity index in memory,
	// names and the text index at an endpoint.
	search func(ctx context.Context, query string, k int) ([]kgvec.Hit, error)
	// err reports a failed lookup at an endpoint (nil in memory).
	err   func() error
	close func() error
}

// loadAssets opens src, the encoder and the entity index. Over a SPARQL
// endpoint nothing of the KG is loaded up front: each question's graph is
// fetched around its entities.
func loadAssets(ctx context.Context, src kgSource, beam int, encS catalog.EncoderSettings, log io.Writer) (*assets, error) {
	var (
		g      *kg.Graph
		remote *sparql.Graph
		err    error
	)
	switch {
	case sparql.IsEndpoint(src.Path):
		remote, err = openEndpoint(ctx, src.Path, src.Sparql)
	case src.Path == "":
		g, err = kg.ReadTSV(demo.KG(), demo.KGName)
	default:
		g, err = kg.Load(ctx, src.Path, src.Format)
	}
	if err != nil {
		return nil, err
	}
	enc, closeEnc, err := catalog.OpenEncoder(ctx, encS, log)
	if err != nil {
		return nil, err
	}
	lex, err := catalog.OpenLexicon(ctx, encS, log)
	if err != nil {
		closeEnc()
		return nil, err
	}
	l := &assets{err: func() error { return nil }, close: closeEnc}
	if remote != nil {
		l.graph, l.err = remote, remote.Err
		l.assets = plan.Assets{Graph: remote, Encoder: enc, Lexicon: lex, Retrievers: peers.Retrievers()}
		l.search = func(ctx context.Context, q string, k int) ([]kgvec.Hit, error) {
			hits, err := linking.Search(ctx, remote, enc, q, k)
			out := make([]kgvec.Hit, len(hits))
			for i, h := range hits {
				out[i] = kgvec.Hit{Name: h.Entity, Score: h.Score}
			}
			return out, err
		}
		return l, nil
	}
	l.graph = g
	l.assets = plan.Assets{Graph: g, Encoder: enc, Lexicon: lex, OpenGuider: guiderOpener(enc), Retrievers: peers.Retrievers()}
	if src.Path == "" {
		l.assets.Entities, err = kgvec.Build(ctx, g, enc, nil)
		if err == nil {
			l.assets.AutoPlanner, err = demoPlanner(ctx, g, enc, beam)
		}
	} else {
		var closeEnts func() error
		l.assets.Entities, closeEnts, err = entityIndex(ctx, g, src.Path, enc, encS, log)
		if err == nil {
			l.close = func() error { return errors.Join(closeEnts(), closeEnc()) }
		}
	}
	if err != nil {
		closeEnc()
		return nil, err
	}
	l.search = l.assets.Entities.Nearest
	return l, nil
}

// openEndpoint opens a SPARQL KG and checks that it answers, so a wrong
// URL is reported before any work.
func openEndpoint(ctx context.Context, url string, s sparql.Settings) (*sparql.Graph, error) {
	g, err := sparql.Open(s.Config(url))
	if err != nil {
		return nil, err
	}
	if err := g.Ping(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// resolveAll maps --entity names to KG names (plan.Resolve).
func resolveAll(g kg.Reader, names []string) ([]string, error) {
	out := make([]string, len(names))
	for i, e := range names {
		var err error
		if out[i], err = plan.Resolve(g, e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// answer opens the pipeline over a and prints its answer to question.
func answer(ctx context.Context, w io.Writer, question string, entities []string, o askOptions, s plan.Settings, a plan.Assets, cold time.Time) error {
	var err error
	if s.Planner == "llm" && s.Examples != "" {
		if a.Examples, err = llmExamples(ctx, s.ExampleSettings); err != nil {
			return err
		}
	}
	p, closeP, err := plan.Open(ctx, s, a)
	defer closeP()
	if err != nil {
		return err
	}
	startup := time.Since(cold)
	r, err := p.Answer(ctx, plan.Query{Question: question, Entities: entities})
	if errors.Is(err, plan.ErrNoEntity) {
		return fmt.Errorf("%w (name it with --entity)", err)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		e.SetEscapeHTML(false)
		return e.Encode(r.View(o.Explain))
	}
	r.WriteText(w, o.Explain, o.MaxChains, startup)
	return nil
}

// demoPlanner learns the pattern planner from the embedded demo questions:
// training is encoding 37 questions, a few milliseconds.
func demoPlanner(ctx context.Context, g *kg.Graph, enc models.Encoder, beam int) (*pattern.Planner, error) {
	qs, err := benchmark.ReadPathQuestion(ctx, bytes.NewReader(demo.Questions()), demo.QuestionsName)
	if err != nil {
		return nil, err
	}
	return pattern.FromQuestions(ctx, g, enc, qs, beam)
}

// guiderOpener returns the function that loads a Triple-GNN model trained
// with enc and guides tracing with it, over the shared KG or each
// question's own graph.
func guiderOpener(enc models.Encoder) func(string) (plan.Guider, error) {
	return func(path string) (plan.Guider, error) {
		m, err := tripgnn.Load(path, enc.Name(), enc.Dim())
		if err != nil {
			return nil, err
		}
		return plan.NewGNNGuider(m, enc, tripgnn.SubgraphOptions{})
	}
}
