package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/eval/rogfile"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/sparql"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/peers"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/settings"
	"github.com/urfave/cli/v2"
)

// dataOptions choose the questions and KG (stem eval, stem compare).
type dataOptions struct {
	Format         string   `flag:"format" usage:"dataset format: pq, metaqa, webqsp-mini, rog"`
	Questions      []string `flag:"questions" placeholder:"FILES" usage:"question FILES, comma-separated"`
	KG             string   `flag:"kg" placeholder:"FILE|URL" usage:"the shared KG FILE (pq, metaqa; for webqsp-mini and rog one KG every question is asked of instead of its own, see stem data union), or a SPARQL endpoint URL serving it"`
	QType          []string `flag:"qtype" placeholder:"FILES" usage:"metaqa: the question-type FILES, one per --questions file"`
	GoldPaths      string   `flag:"gold-paths" placeholder:"FILE" usage:"webqsp-mini, rog: FILE rog_paths_*.jsonl with each question's gold relation paths"`
	AnswerableOnly bool     `flag:"answerable-only" usage:"metaqa: keep questions whose answers all lie within the question's hop count of the topic entity"`
	IDs            string   `flag:"ids" placeholder:"FILE" usage:"keep only the questions whose ids FILE lists, one per line (see 'stem data split')"`
	Limit          int      `flag:"limit" min:"0" usage:"score only the first N questions (0 = all)"`
	Sparql         sparql.Settings
}

func (d dataOptions) source() benchmark.Source {
	return benchmark.Source{Format: d.Format, Questions: d.Questions, KG: d.KG, QTypes: d.QType, GoldPaths: d.GoldPaths}
}

// runOptions say how a run goes and what it prints (stem eval, compare).
type runOptions struct {
	Workers     int    `flag:"workers" min:"1" max:"256" usage:"questions answered at once (the report does not depend on it, except latency and throughput)"`
	KeepGoing   bool   `flag:"keep-going" usage:"score a question whose retrieval fails as unanswered instead of stopping"`
	JSON        bool   `flag:"json" usage:"print one JSON object instead of a table"`
	PerQuestion bool   `flag:"per-question" usage:"with --json: include every question's result"`
	Out         string `flag:"out" placeholder:"FILE" usage:"append every question's result to FILE as one JSON line as soon as it is scored, in the form --out-format names (stem's log begins with a header line recording the configuration)"`
	Resume      bool   `flag:"resume" usage:"with --out: skip the questions FILE already holds and report over all of them (FILE's configuration must match)"`
}

// exportOptions choose what stem eval's --out holds: its own resumable
// results log, or RoG's and GNN-RAG's files (eval/rogfile).
type exportOptions struct {
	OutFormat      string           `flag:"out-format" usage:"what --out holds: stem (the results log, resumable), rog (RoG's predictions.jsonl: id, question, prediction, ground_truth, input, for RoG's evaluate_results.py), paths (retrieval only: each question's evidence as JSON paths and as RoG's \"Reasoning Paths:\" prompt, for stem reason or a model of your own)"`
	PromptTemplate rogfile.Template `flag:"prompt-template" usage:"rog, paths: the prompt's wrapper, llama2 (RoG's llama2_predict.txt, as RoG-7B and GNN-RAG's files have it) or plain (general_prompt.txt, for a chat server)"`
}

// outFormats are --out-format's values.
var outFormats = []string{"stem", string(rogfile.FormatPredictions), string(rogfile.FormatPaths)}

// check refuses an unknown format and --resume of RoG's files.
func (x exportOptions) check(r runOptions) error {
	if !slices.Contains(outFormats, x.OutFormat) {
		return fmt.Errorf("--out-format %q: want one of %s", x.OutFormat, strings.Join(outFormats, ", "))
	}
	if x.OutFormat != "stem" && r.Resume {
		return fmt.Errorf("--resume needs --out-format stem: RoG's files record no configuration to check a resumed run against")
	}
	return nil
}

// pipelineSettings is the pipeline's settings with every registered
// retrieval strategy's own (the peers' flags), as ask, eval, compare,
// serve and bench read them.
func pipelineSettings() plan.Settings {
	s := plan.DefaultSettings()
	s.Retrievers = peers.Retrievers().NewSettings()
	return s
}

// evalSettings is stem eval's and compare's pipeline settings: the oracle
// planner by default.
func evalSettings() plan.Settings {
	s := pipelineSettings()
	s.Planner = "oracle"
	return s
}

func evalCommand() *cli.Command {
	d := dataOptions{Sparql: sparql.DefaultSettings()}
	r := runOptions{Workers: 1}
	x := exportOptions{OutFormat: "stem", PromptTemplate: rogfile.Llama2}
	s := evalSettings()
	enc := catalog.DefaultEncoderSettings()
	return &cli.Command{
		Name:  "eval",
		Usage: "answer a benchmark's questions and score them as the peer systems do (Hit, Hits@1, F1, coverage, latency)",
		Description: "Formats:\n" + formatHelp() + "\n" +
			"Planner oracle builds the schema graphs from each question's gold path, so the run\n" +
			"measures retrieval alone. --strategy auto picks Breadth for questions with more than\n" +
			"one gold answer, else Precision (the paper's labelling rule).\n\n" +
			"--out FILE --out-format rog writes RoG's predictions.jsonl, which RoG's and GNN-RAG's\n" +
			"evaluate_results.py score as stem does; --out-format paths writes the retrieval alone,\n" +
			"each question's evidence as the \"Reasoning Paths:\" prompt RoG feeds its LLM, for\n" +
			"stem reason or a reasoning model of your own.\n\n" +
			"Examples:\n  stem eval --format pq --questions ../shared/data/pathquestion/splits/PQ-2H.test.txt \\\n" +
			"            --kg ../shared/data/pathquestion/2H-kb.txt --json\n" +
			"  stem eval --format pq --questions PQ-2H.test.txt --kg 2H-kb.txt --out predictions.jsonl --out-format rog",
		Flags:  append(append(append(append(append([]cli.Flag{configFlag}, flagsOf(&d)...), flagsOf(&r)...), flagsOf(&x)...), flagsOf(&s)...), flagsOf(&enc)...),
		Before: bindWithConfig(&d, &r, &x, &s, &enc),
		Action: func(c *cli.Context) error {
			return runEval(c.Context, c.App.Writer, c.App.ErrWriter, d, r, x, s, enc)
		},
	}
}

// formatHelp lists the dataset formats for help text.
func formatHelp() string {
	var b strings.Builder
	for _, f := range benchmark.Formats() {
		fmt.Fprintf(&b, "  %-12s %s\n", f.Name, f.Doc)
	}
	return b.String()
}

// evalData is a loaded dataset and how many questions a filter dropped.
type evalData struct {
	*benchmark.Dataset
	dropped int
	remote  *sparql.Graph // the KG, when --kg is a SPARQL endpoint
}

// reader is the shared KG the questions are answered over, nil when each
// brings its own.
func (d *evalData) reader() kg.Reader {
	if d.remote != nil {
		return d.remote
	}
	return kg.Of(d.Graph)
}

// loadEvalData loads the dataset d names.
func loadEvalData(ctx context.Context, d dataOptions, log io.Writer) (*evalData, error) {
	if d.AnswerableOnly && d.Format != "metaqa" && d.Format != "pq" {
		return nil, fmt.Errorf("--answerable-only needs a shared KG (--format metaqa or pq)")
	}
	ds, err := benchmark.Load(ctx, d.source())
	if err != nil {
		return nil, err
	}
	out := &evalData{Dataset: ds}
	if sparql.IsEndpoint(d.KG) {
		if d.AnswerableOnly {
			return nil, fmt.Errorf("--answerable-only needs the KG in memory, not a SPARQL endpoint")
		}
		if out.remote, err = openEndpoint(ctx, d.KG, d.Sparql); err != nil {
			return nil, err
		}
	}
	if d.AnswerableOnly {
		if ds.Questions, out.dropped, err = benchmark.Answerable(ctx, ds.Graph, ds.Questions); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "answerable-only: kept %d questions, dropped %d whose answers are not all within reach\n", len(ds.Questions), out.dropped)
	}
	if ds.Questions, err = keepIDs(ds.Questions, d.IDs, log); err != nil {
		return nil, err
	}
	if d.Limit > 0 && d.Limit < len(ds.Questions) {
		ds.Questions = ds.Questions[:d.Limit]
	}
	if len(ds.Questions) == 0 {
		return nil, fmt.Errorf("no questions to evaluate in %s", strings.Join(d.Questions, ","))
	}
	return out, nil
}

// evalConfig is the whole configuration a results log's header records:
// every setting, with files as absolute paths so that a run resumed from
// another directory still matches. --limit is left out so that a run can
// be resumed with a larger one.
func evalConfig(d dataOptions, s plan.Settings, enc catalog.EncoderSettings) map[string]string {
	m := map[string]string{}
	for _, p := range []any{&d, &s, &enc} {
		fields, _ := settings.Fields(p)
		for k, v := range settings.Values(fields) {
			m[k] = v
		}
	}
	delete(m, "limit")
	for _, k := range []string{"questions", "kg", "qtype", "gold-paths", "ids", "vectors", "model-dir", "planner-model", "gnn", "llm-examples"} {
		var parts []string
		for _, p := range strings.Split(m[k], ",") {
			if p == "" {
				continue
			}
			if sparql.IsEndpoint(p) {
				// A URL is the same wherever the run is resumed.
			} else if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
			parts = append(parts, p)
		}
		m[k] = strings.Join(parts, ",")
	}
	return m
}

// entityIndex returns the entity index of g (loaded from kgPath): in the
// Qdrant server encS names, or from the cache directory, built there the
// first time. On a KG of millions of entities it is deferred to the first
// search that needs it. close releases it; it is never nil.
func entityIndex(ctx context.Context, g *kg.Graph, kgPath string, enc models.Encoder, encS catalog.EncoderSettings, log io.Writer) (ents *kgvec.Entities, close func() error, err error) {
	var closers []func() error
	close = func() error {
		var first error
		for _, c := range closers {
			if err := c(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	open := func(ctx context.Context) (*kgvec.Entities, error) {
		if encS.VectorStore != "" {
			e, c, err := kgvec.OpenQdrant(ctx, g, kgPath, enc, encS.VectorStore, log)
			if err == nil {
				closers = append(closers, c)
			}
			return e, err
		}
		dir, err := wordvec.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		return kgvec.LoadOrBuildWith(ctx, g, kgPath, dir, enc, kgvec.Options{Kind: kgvec.Kind(encS.EntityIndex)}, log)
	}
	if n := g.NumEntities(); n >= kgvec.DeferThreshold {
		fmt.Fprintf(log, "entity index: deferred: the %d entities are encoded only if a mention matches no name exactly\n", n)
		return kgvec.Deferred(g, enc, open), close, nil
	}
	ents, err = open(ctx)
	return ents, close, err
}

// evalEnv is what every configuration over one dataset shares: the
// encoder and the KG's entity vectors.
type evalEnv struct {
	enc   models.Encoder
	lex   models.Lexicon
	ents  *kgvec.Entities
	close func() error
}

// openEvalEnv opens the encoder and embeds d's KG (kgPath names its file).
func openEvalEnv(ctx context.Context, d *evalData, kgPath string, encS catalog.EncoderSettings, log io.Writer) (*evalEnv, error) {
	enc, closeEnc, err := catalog.OpenEncoder(ctx, encS, log)
	if err != nil {
		return nil, err
	}
	lex, err := catalog.OpenLexicon(ctx, encS, log)
	if err != nil {
		closeEnc()
		return nil, err
	}
	env := &evalEnv{enc: enc, lex: lex, close: closeEnc}
	if d.Graph != nil {
		ents, closeEnts, err := entityIndex(ctx, d.Graph, kgPath, enc, encS, log)
		if err != nil {
			closeEnc()
			return nil, err
		}
		env.ents = ents
		env.close = func() error { return errors.Join(closeEnts(), closeEnc()) }
	}
	return env, nil
}

// openPipeline builds the pipeline s describes over d.
func openPipeline(ctx context.Context, s plan.Settings, d *evalData, env *evalEnv) (*plan.Pipeline, func() error, error) {
	a := plan.Assets{Graph: d.reader(), Entities: env.ents, Encoder: env.enc, Lexicon: env.lex, OpenGuider: guiderOpener(env.enc), Retrievers: peers.Retrievers()}
	if s.Planner == "llm" && s.Examples != "" {
		var err error
		if a.Examples, err = llmExamples(ctx, s.ExampleSettings); err != nil {
			return nil, func() error { return nil }, err
		}
	}
	return plan.Open(ctx, s, a)
}

func runEval(ctx context.Context, w, log io.Writer, d dataOptions, r runOptions, x exportOptions, s plan.Settings, encS catalog.EncoderSettings) error {
	if err := d.source().Check(); err != nil {
		return err
	}
	if err := x.check(r); err != nil {
		return err
	}
	if err := s.Check(peers.Retrievers()); err != nil {
		return err
	}
	if r.Resume && r.Out == "" {
		return fmt.Errorf("--resume needs --out FILE, the results log to continue")
	}
	if r.Out != "" {
		// Whether an existing log may be continued is eval.OpenLog's rule
		// (--resume); that it is none of the inputs is checked here.
		ins := append(append(append([]string{d.KG, d.GoldPaths, d.IDs, s.PlannerModel, string(s.GNN)}, d.Questions...), d.QType...), encS.Vectors)
		if err := atomicfile.CheckOutput("--out", r.Out, true, ins...); err != nil {
			return err
		}
	}
	start := time.Now()
	data, err := loadEvalData(ctx, d, log)
	if err != nil {
		return err
	}
	env, err := openEvalEnv(ctx, data, d.KG, encS, log)
	if err != nil {
		return err
	}
	defer env.close()
	p, closeP, err := openPipeline(ctx, s, data, env)
	defer closeP()
	if err != nil {
		return err
	}
	opts := eval.Options{Graph: data.Graph, KeepGoing: r.KeepGoing, PerQuestion: r.PerQuestion, Progress: log, Workers: r.Workers}
	var export *rogfile.Exporter
	if r.Out != "" && x.OutFormat != "stem" {
		f, err := rogfile.Create(r.Out, false)
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		defer f.Close()
		export = &rogfile.Exporter{File: f, Format: rogfile.Format(x.OutFormat), Template: x.PromptTemplate}
		opts.OnAnswer = export.OnAnswer
	} else if r.Out != "" {
		rlog, prior, err := eval.OpenLog(r.Out, evalConfig(d, s, encS), r.Resume)
		if err != nil {
			return err
		}
		defer rlog.Close()
		if len(prior) > 0 {
			fmt.Fprintf(log, "resume: %d results already in %s\n", len(prior), r.Out)
		}
		opts.Done, opts.OnResult = prior, rlog.Write
	}
	loaded := time.Now()
	rep, err := eval.Run(ctx, data.Questions, eval.Pipeline{Pipeline: p}, opts)
	if rep == nil {
		return err
	}
	// A cancelled run still shows what it scored; the error follows.
	if err != nil {
		fmt.Fprintf(log, "interrupted: the report covers the %d questions answered so far", rep.N)
		if r.Out != "" && x.OutFormat == "stem" {
			fmt.Fprintf(log, "; rerun with --out %s --resume to finish", r.Out)
		}
		fmt.Fprintln(log)
	}
	rep.Dropped = data.dropped
	if export != nil {
		if cerr := export.File.Close(); cerr != nil {
			return errors.Join(err, cerr)
		}
		fmt.Fprintf(log, "%s: %d rows (%s)\n", r.Out, export.File.Rows(), x.OutFormat)
		if export.Unparsed > 0 {
			fmt.Fprintf(log, "%s: %d chains left out of the paths: no reading splits them into steps\n", r.Out, export.Unparsed)
		}
	}
	fmt.Fprintf(log, "time %s (KG and models loaded in %s), peak memory %s\n",
		time.Since(start).Round(time.Millisecond), loaded.Sub(start).Round(time.Millisecond), peakMemory())
	if data.remote != nil && rep.N > 0 {
		st := data.remote.Stats()
		fmt.Fprintf(log, "sparql: %d queries to %s, %.1f per question; %d hub entities capped at --sparql-max-degree\n",
			st.Queries, data.remote.Endpoint(), float64(st.Queries)/float64(rep.N), st.Capped)
	}
	if r.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return errors.Join(err, enc.Encode(rep))
	}
	return errors.Join(err, rep.WriteTable(w))
}

// keepIDs keeps the questions whose ids the file at path lists (all of
// them when path is ""), saying on log how many it kept.
func keepIDs(qs []benchmark.Question, path string, log io.Writer) ([]benchmark.Question, error) {
	if path == "" {
		return qs, nil
	}
	ids, err := benchmark.ReadIDs(path)
	if err != nil {
		return nil, fmt.Errorf("--ids: %w", err)
	}
	kept, err := benchmark.KeepIDs(qs, ids, path)
	if err != nil {
		return nil, fmt.Errorf("--ids: %w", err)
	}
	fmt.Fprintf(log, "ids: kept the %d of %d questions %s lists\n", len(kept), len(qs), path)
	return kept, nil
}

// splitList splits a comma-separated flag value, dropping empty parts.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
