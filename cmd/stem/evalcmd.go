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

	"github.com/stem-kgqa/stem/assets"
	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/eval/rogfile"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/models/catalog"
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
	// Backends are the KG backends' settings (SPARQL's --kg-graph, ...).
	Backends kg.BackendSettings
}

func (d dataOptions) source() benchmark.Source {
	return benchmark.Source{Format: d.Format, Questions: d.Questions, KG: d.KG, QTypes: d.QType, GoldPaths: d.GoldPaths}
}

// newDataOptions returns the dataset flags' defaults, with every KG
// backend's settings.
func newDataOptions() dataOptions { return dataOptions{Backends: backends.Default().NewSettings()} }

// load loads the dataset d names and opens its KG.
func (d dataOptions) load(ctx context.Context, log io.Writer) (*assets.Data, error) {
	return assets.LoadData(ctx, d.source(), assets.DataOptions{AnswerableOnly: d.AnswerableOnly, IDs: d.IDs, Limit: d.Limit, Open: kg.OpenOptions{Settings: d.Backends}}, log)
}

// openEnv opens the encoder and the entity index of data's KG.
func (d dataOptions) openEnv(ctx context.Context, data *assets.Data, encS catalog.EncoderSettings, log io.Writer) (*assets.Env, error) {
	return assets.Open(ctx, assets.Config{KG: d.KG, Graph: data.KG, Encoder: encS, Log: log})
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
	d := newDataOptions()
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
			if !kg.IsPath(p) {
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
	data, err := d.load(ctx, log)
	if err != nil {
		return err
	}
	env, err := d.openEnv(ctx, data, encS, log)
	if err != nil {
		return err
	}
	defer env.Close()
	p, closeP, err := env.Pipeline(ctx, s)
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
	rep.Dropped = data.Dropped
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
	if r, ok := data.KG.(kg.Reporter); ok && rep.N > 0 {
		fmt.Fprintln(log, r.Report(rep.N))
	}
	if r.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return errors.Join(err, enc.Encode(rep))
	}
	return errors.Join(err, rep.WriteTable(w))
}

// splitList splits a comma-separated flag value, dropping empty parts.
var splitList = settings.SplitList
