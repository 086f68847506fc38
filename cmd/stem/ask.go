package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
	"github.com/urfave/cli/v2"
)

func askCommand() *cli.Command {
	return &cli.Command{
		Name:      "ask",
		Usage:     "answer a question with the KG evidence behind every answer",
		ArgsUsage: "QUESTION",
		Description: "Runs STEM's stages: entity linking, projection (schema graphs + strategy),\n" +
			"guidance (with --gnn), structure tracing and generation. Without --kg it answers over\n" +
			"the embedded demo KG with a pattern planner learnt from the demo questions.\n\n" +
			"--planner auto picks pattern when --planner-model is given, the demo planner on\n" +
			"the demo KG, and the zero-shot schema planner otherwise.\n\n" +
			"Examples:\n" +
			"  stem ask 'who directed inception ?'\n" +
			"  stem ask --explain --json 'in which country was the director of inception born ?'\n" +
			"  stem ask --kg metaqa.kg --planner-model metaqa.stempat 'what movies did [Tom Hanks] star in'",
		Flags: append(append([]cli.Flag{
			configFlag,
			&cli.StringFlag{Name: "kg", Usage: "KG file (any format `stem kg` reads); default: the embedded demo KG"},
			formatFlag,
			&cli.StringSliceFlag{Name: "entity", Usage: "the question's KG entity (repeatable); default: linked from the question"},
			&cli.StringFlag{Name: "planner", Value: "auto", Usage: "auto, pattern, schema or llm"},
			&cli.StringFlag{Name: "strategy", Value: "auto", Usage: "auto (the planner's choice), precision or breadth"},
			&cli.StringFlag{Name: "gnn", Usage: "Triple-GNN model (from `stem train gnn`) whose guidance graph biases tracing"},
			&cli.StringFlag{Name: "generator", Value: "structural", Usage: "structural (the entities bound to the answer slot) or llm (prompt P3 over the chains)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
			&cli.BoolFlag{Name: "explain", Usage: "also show the whole trace: plans, anchors, every matched triple with its T-Score and bias, the audit"},
			&cli.IntFlag{Name: "max-chains", Value: 20, Usage: "chains to print per answer in human output (0 = all)"},
		}, encoderFlags()...), plannerFlags()...),
		Before: applyConfig,
		Action: runAsk,
	}
}

func runAsk(c *cli.Context) error {
	ctx := c.Context
	question := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
	if question == "" {
		return fmt.Errorf("ask: give a QUESTION (see stem ask --help)")
	}
	cold := time.Now()
	var (
		g   *kg.Graph
		err error
	)
	kgPath := c.String("kg")
	if kgPath == "" {
		g, err = kg.ReadTSV(demo.KG(), demo.KGName)
	} else {
		g, err = loadKG(c, kgPath)
	}
	if err != nil {
		return err
	}
	enc, closeEnc, err := openEncoder(c, c.App.ErrWriter)
	if err != nil {
		return err
	}
	defer closeEnc()
	var ents *kgvec.Entities
	if kgPath == "" {
		ents, err = kgvec.Build(ctx, g, enc, nil)
	} else {
		ents, err = kgvec.LoadOrBuild(ctx, g, kgPath, enc, c.App.ErrWriter)
	}
	if err != nil {
		return err
	}
	planner, closePlanner, err := askPlanner(c, g, enc, kgPath == "")
	if err != nil {
		return err
	}
	defer closePlanner()
	p, err := plan.New(g, enc, ents, planner, tracing.DefaultConfig())
	if err != nil {
		return err
	}
	if path := c.String("gnn"); path != "" {
		gd, err := openGuider(path, g, enc)
		if err != nil {
			return err
		}
		p.Guider = gd
	}
	switch c.String("strategy") {
	case "auto":
	case "precision", "breadth":
		s, _ := schema.ParseStrategy(c.String("strategy"))
		p.Strategy = &s
	default:
		return fmt.Errorf("--strategy %q: want auto, precision or breadth", c.String("strategy"))
	}
	switch c.String("generator") {
	case "structural":
	case "llm":
		chat, err := openChat(c)
		if err != nil {
			return err
		}
		defer chat.Close()
		p.Generator = plan.LLM{Chat: chat}
	default:
		return fmt.Errorf("--generator %q: want structural or llm", c.String("generator"))
	}
	warm := time.Since(cold)
	tr, err := p.Ask(ctx, question, c.StringSlice("entity"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeAskJSON(c.App.Writer, g, tr, c.Bool("explain"))
	}
	writeAskText(c.App.Writer, g, tr, c.Bool("explain"), c.Int("max-chains"), warm)
	return nil
}

// askPlanner resolves --planner auto.
func askPlanner(c *cli.Context, g *kg.Graph, enc models.Encoder, isDemo bool) (projection.Planner, func() error, error) {
	name := c.String("planner")
	if name == "auto" {
		switch {
		case c.String("planner-model") != "":
			name = "pattern"
		case isDemo:
			p, err := demoPlanner(c.Context, g, enc, c.Int("beam"))
			return p, func() error { return nil }, err
		default:
			name = "schema"
		}
	}
	return openPlanner(c, name, g, enc)
}

// demoPlanner learns the pattern planner from the embedded demo questions:
// training is encoding 37 questions, a few milliseconds.
func demoPlanner(ctx context.Context, g *kg.Graph, enc models.Encoder, beam int) (projection.Planner, error) {
	qs, err := benchmark.ReadPathQuestion(ctx, bytes.NewReader(demo.Questions()), demo.QuestionsName)
	if err != nil {
		return nil, err
	}
	return trainPattern(ctx, g, enc, qs, beam)
}

// trainPattern learns a pattern planner in memory from questions with gold
// paths (as `stem train planner` does, without writing a model file).
func trainPattern(ctx context.Context, g *kg.Graph, enc models.Encoder, qs []benchmark.Question, beam int) (projection.Planner, error) {
	var exs []pattern.Example
	for _, q := range qs {
		ex := pattern.Example{Question: q.Text, Answers: len(q.Answers), Mentions: linking.Mentions(q.Text, q.Entities)}
		for _, gp := range q.Gold {
			ex.Paths = append(ex.Paths, gp.Steps)
		}
		exs = append(exs, ex)
	}
	m, err := pattern.Train(ctx, enc, exs, pattern.Options{})
	if err != nil {
		return nil, err
	}
	return pattern.New(m, enc, pattern.Config{Beam: beam, Graph: g})
}

func writeAskText(w io.Writer, g *kg.Graph, tr *plan.Trace, explain bool, maxChains int, warm time.Duration) {
	fmt.Fprintf(w, "Q: %s\n", tr.Question)
	if len(tr.Answers) == 0 {
		fmt.Fprintln(w, "no answer: the KG holds no evidence that matches the question's plan")
		for _, pr := range tr.Result.Problems {
			fmt.Fprintf(w, "  (%s)\n", pr)
		}
	}
	for i, a := range tr.Answers {
		flag := ""
		if !a.Supported {
			flag = "  [UNSUPPORTED: no evidence in the KG names it]"
		}
		fmt.Fprintf(w, "%d. %s%s\n", i+1, a.Name, flag)
		chains := a.Chains
		if maxChains > 0 && len(chains) > maxChains {
			chains = chains[:maxChains]
		}
		for _, ch := range chains {
			fmt.Fprintf(w, "     %s\n", ch)
		}
		if len(chains) < len(a.Chains) {
			fmt.Fprintf(w, "     ... %d more chains\n", len(a.Chains)-len(chains))
		}
	}
	if explain {
		writeExplain(w, g, tr)
	}
	fmt.Fprintf(w, "timings: start-up %s", warm.Round(time.Millisecond))
	for _, s := range []string{plan.StageLink, plan.StagePlan, plan.StageGuide, plan.StageTrace, plan.StageGenerate} {
		if d, ok := tr.Timings[s]; ok {
			fmt.Fprintf(w, ", %s %s", s, time.Duration(d).Round(time.Microsecond))
		}
	}
	fmt.Fprintln(w)
}

func writeExplain(w io.Writer, g *kg.Graph, tr *plan.Trace) {
	fmt.Fprintf(w, "\nentities:\n")
	for _, l := range tr.Links {
		fmt.Fprintf(w, "  %q -> %s (%s, %.3f)\n", l.Mention, l.Entity, l.Method, l.Score)
	}
	fmt.Fprintf(w, "plan (strategy %s):\n", tr.Strategy)
	for i, cand := range tr.Plan.Candidates {
		fmt.Fprintf(w, "  [%d] %.3f  %s\n", i, cand.Score, cand.Graph)
		for _, a := range cand.Assertions {
			fmt.Fprintf(w, "        %s\n", a)
		}
	}
	for _, n := range tr.Plan.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	res := tr.Result
	fmt.Fprintf(w, "anchors:\n")
	for _, a := range res.Anchors {
		fmt.Fprintf(w, "  %q -> %s (%.3f)\n", a.Mention, a.Name, a.Score)
	}
	if len(tr.Guidance) > 0 {
		sort.Strings(tr.Guidance)
		fmt.Fprintf(w, "guidance entities: %s\n", strings.Join(tr.Guidance, ", "))
	}
	fmt.Fprintf(w, "matched triples:\n")
	for _, m := range res.Evidence {
		t := g.Triple(m.Triple)
		fmt.Fprintf(w, "  graph %d edge %d  T %.3f (bias %.2f)  S %.3f  (%s, %s, %s)\n", m.Graph, m.SchemaTriple, m.TScore, m.Bias, m.Cum,
			g.EntityName(t.Head), g.RelationName(t.Rel), g.EntityName(t.Tail))
	}
	fmt.Fprintf(w, "audit: %d evidence triples and %d answers checked against the KG, %d unbacked\n", len(res.Evidence), len(res.Answers), res.Unbacked)
	for _, p := range res.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	fmt.Fprintln(w)
}

// askJSON is `stem ask --json`'s output; the trace fields appear with
// --explain.
type askJSON struct {
	Question string                   `json:"question"`
	Answers  []plan.Answer            `json:"answers"`
	Chains   []string                 `json:"chains"`
	Timings  map[string]plan.Duration `json:"timings_ms"`
	Explain  *explainJSON             `json:"explain,omitempty"`
}

type explainJSON struct {
	Entities []linking.Link      `json:"entities"`
	Plan     projection.Plan     `json:"plan"`
	Schema   []string            `json:"schema_graphs"`
	Strategy string              `json:"strategy"`
	Anchors  []tracing.Anchor    `json:"anchors"`
	Guidance []string            `json:"guidance_entities,omitempty"`
	Matched  []matchedTripleJSON `json:"matched_triples"`
	Audit    auditJSON           `json:"audit"`
	Problems []string            `json:"problems,omitempty"`
}

type matchedTripleJSON struct {
	Graph        int       `json:"graph"`
	SchemaTriple int       `json:"schema_triple"`
	Triple       [3]string `json:"triple"`
	TScore       float32   `json:"t_score"`
	Bias         float32   `json:"bias"`
	Cumulative   float32   `json:"cumulative"`
}

type auditJSON struct {
	Evidence int `json:"evidence_triples"`
	Answers  int `json:"answers"`
	Unbacked int `json:"unbacked"`
}

func writeAskJSON(w io.Writer, g *kg.Graph, tr *plan.Trace, explain bool) error {
	out := askJSON{Question: tr.Question, Answers: tr.Answers, Chains: tr.Chains, Timings: tr.Timings}
	if out.Answers == nil {
		out.Answers = []plan.Answer{}
	}
	if explain {
		res := tr.Result
		ex := &explainJSON{Entities: tr.Links, Plan: tr.Plan, Strategy: tr.Strategy, Anchors: res.Anchors, Guidance: tr.Guidance,
			Audit: auditJSON{Evidence: len(res.Evidence), Answers: len(res.Answers), Unbacked: res.Unbacked}, Problems: res.Problems}
		for _, gr := range tr.Plan.Graphs() {
			ex.Schema = append(ex.Schema, gr.String())
		}
		for _, m := range res.Evidence {
			t := g.Triple(m.Triple)
			ex.Matched = append(ex.Matched, matchedTripleJSON{Graph: m.Graph, SchemaTriple: m.SchemaTriple,
				Triple: [3]string{g.EntityName(t.Head), g.RelationName(t.Rel), g.EntityName(t.Tail)}, TScore: m.TScore, Bias: m.Bias, Cumulative: m.Cum})
		}
		out.Explain = ex
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(out)
}
