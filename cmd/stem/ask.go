package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/assets"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/peers"
	"github.com/stem-kgqa/stem/plan"
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
	Backends  kg.BackendSettings
}

func askCommand() *cli.Command {
	o := askOptions{KGFormat: kg.FormatAuto, MaxChains: 20, Backends: backends.Default().NewSettings()}
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
			"of your KG (see docs/planning.md).\n\n" +
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
			return ask{question: question, o: o, s: s, encS: enc}.run(c.Context, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// ask is one stem ask: the question, the command's options and the
// settings it answers with.
type ask struct {
	question string
	o        askOptions
	s        plan.Settings
	encS     catalog.EncoderSettings
}

// run opens what the question is answered over and prints its answer to
// w; progress goes to log.
func (a ask) run(ctx context.Context, w, log io.Writer) error {
	o, s, encS := a.o, a.s, a.encS
	if err := s.Check(peers.Retrievers()); err != nil {
		return err
	}
	cold := time.Now()
	env, err := assets.Open(ctx, assets.Config{KG: o.KG, Demo: true, Beam: s.Beam.Value(), Open: kg.OpenOptions{Format: o.KGFormat, Settings: o.Backends}, Encoder: encS, Log: log})
	if err != nil {
		return err
	}
	defer env.Close()
	entities, err := plan.ResolveAll(env.Graph, o.Entities)
	if gerr := env.Err(); gerr != nil {
		err = gerr // the lookup failed, which is not "no such entity"
	}
	if err != nil {
		return err
	}
	if err := a.answer(ctx, w, env, plan.Query{Question: a.question, Entities: entities}, cold); err != nil {
		return err
	}
	return env.Err()
}

// answer opens the pipeline over env and prints its answer to q; cold is
// when the command started, for the startup time it reports.
func (a ask) answer(ctx context.Context, w io.Writer, env *assets.Env, q plan.Query, cold time.Time) error {
	o := a.o
	p, closeP, err := env.Pipeline(ctx, a.s)
	defer closeP()
	if err != nil {
		return err
	}
	startup := time.Since(cold)
	r, err := p.Answer(ctx, q)
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
