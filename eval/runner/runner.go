// Package runner runs the evaluation harness as the commands start it:
// stem eval over a dataset (with its resumable results log, or RoG's and
// GNN-RAG's files), stem compare's configurations side by side, stem
// train theta's sweep, stem bench serve's load test and stem data
// unanswerable's variant of a benchmark (WriteUnanswerable). Its settings
// structs (Dataset, Options, Export) are tagged (package settings), so
// the commands' flags, --config keys and results-log headers come from
// them; the commands hold flags and wiring only.
//
// It opens what a run needs through package assets and consumes eval,
// eval/rogfile, report, serve and serve/load; nothing below cmd/stem
// imports it.
package runner

import (
	"context"
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
)

// Dataset chooses the questions and the KG (stem eval, compare, bench
// serve, train theta).
type Dataset struct {
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

// NewDataset returns the dataset settings' defaults, with every KG
// backend's settings.
func NewDataset() Dataset { return Dataset{Backends: backends.Default().NewSettings()} }

// Source is the dataset's files.
func (d Dataset) Source() benchmark.Source {
	return benchmark.Source{Format: d.Format, Questions: d.Questions, KG: d.KG, QTypes: d.QType, GoldPaths: d.GoldPaths}
}

// Load loads the questions and opens the KG.
func (d Dataset) Load(ctx context.Context, log io.Writer) (*assets.Data, error) {
	return assets.LoadData(ctx, d.Source(), assets.DataOptions{AnswerableOnly: d.AnswerableOnly, IDs: d.IDs, Limit: d.Limit, Open: kg.OpenOptions{Settings: d.Backends}}, log)
}

// Open loads the questions, opens the KG and then the encoder and the
// KG's entity index.
func (d Dataset) Open(ctx context.Context, encS catalog.EncoderSettings, log io.Writer) (*assets.Data, *assets.Env, error) {
	data, err := d.Load(ctx, log)
	if err != nil {
		return nil, nil, err
	}
	env, err := assets.Open(ctx, assets.Config{KG: d.KG, Graph: data.KG, Encoder: encS, Log: log})
	return data, env, err
}

// FormatHelp lists the dataset formats for help text.
func FormatHelp() string {
	var b strings.Builder
	for _, f := range benchmark.Formats() {
		fmt.Fprintf(&b, "  %-12s %s\n", f.Name, f.Doc)
	}
	return b.String()
}

// Options say how a run goes and what it prints (stem eval, compare).
type Options struct {
	Workers     int    `flag:"workers" min:"1" max:"256" usage:"questions answered at once (the report does not depend on it, except latency and throughput)"`
	KeepGoing   bool   `flag:"keep-going" usage:"score a question whose retrieval fails as unanswered instead of stopping"`
	JSON        bool   `flag:"json" usage:"print one JSON object instead of a table"`
	PerQuestion bool   `flag:"per-question" usage:"with --json: include every question's result"`
	Out         string `flag:"out" placeholder:"FILE" usage:"append every question's result to FILE as one JSON line as soon as it is scored, in the form --out-format names (stem's log begins with a header line recording the configuration)"`
	Resume      bool   `flag:"resume" usage:"with --out: skip the questions FILE already holds and report over all of them (FILE's configuration must match)"`
	// Unanswerable is the manifest of an unanswerable variant (stem data
	// unanswerable), whose questions that lost their answer the report
	// scores apart.
	Unanswerable string `flag:"unanswerable" placeholder:"MANIFEST" usage:"the unanswerable.json of a variant stem data unanswerable wrote: report how many of the questions whose answers its KG lacks were abstained, and the Hits@1 of the others"`
}

// Export chooses what stem eval's --out holds: its own resumable results
// log, or RoG's and GNN-RAG's files (eval/rogfile).
type Export struct {
	OutFormat      string           `flag:"out-format" usage:"what --out holds: stem (the results log, resumable), rog (RoG's predictions.jsonl: id, question, prediction, ground_truth, input, for RoG's evaluate_results.py), paths (retrieval only: each question's evidence as JSON paths and as RoG's \"Reasoning Paths:\" prompt, for stem reason or a model of your own)"`
	PromptTemplate rogfile.Template `flag:"prompt-template" usage:"rog, paths: the prompt's wrapper, llama2 (RoG's llama2_predict.txt, as RoG-7B and GNN-RAG's files have it) or plain (general_prompt.txt, for a chat server)"`
}

// DefaultExport writes stem's own results log.
func DefaultExport() Export { return Export{OutFormat: "stem", PromptTemplate: rogfile.Llama2} }

// outFormats are --out-format's values.
var outFormats = []string{"stem", string(rogfile.FormatPredictions), string(rogfile.FormatPaths)}

// check refuses an unknown format and --resume of RoG's files.
func (x Export) check(o Options) error {
	if !slices.Contains(outFormats, x.OutFormat) {
		return fmt.Errorf("--out-format %q: want one of %s", x.OutFormat, strings.Join(outFormats, ", "))
	}
	if x.OutFormat != "stem" && o.Resume {
		return fmt.Errorf("--resume needs --out-format stem: RoG's files record no configuration to check a resumed run against")
	}
	return nil
}

// PipelineSettings is the pipeline's settings with every registered
// retrieval strategy's own (the peers' flags), as ask, eval, compare,
// serve and bench read them.
func PipelineSettings() plan.Settings {
	s := plan.DefaultSettings()
	s.Retrievers = peers.Retrievers().NewSettings()
	return s
}

// EvalSettings is stem eval's and compare's pipeline settings: the oracle
// planner by default.
func EvalSettings() plan.Settings {
	s := PipelineSettings()
	s.Planner = "oracle"
	// A benchmark scores every answer: abstention is measured when
	// asked for (--min-confidence P).
	s.MinConfidence = 0
	return s
}

// Header is the whole configuration a results log's header records: every
// setting of the structs given, with files as absolute paths so that a run
// resumed from another directory still matches. --limit is left out so
// that a run can be resumed with a larger one.
func Header(structs ...any) map[string]string {
	m := map[string]string{}
	for _, p := range structs {
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

// Eval answers d's questions with the pipeline s describes and scores them
// (stem eval), writing every result to o.Out as x says as it goes, and
// saying on log what it loaded, how long it took and what the KG's backend
// reports. A cancelled run returns the report of what it scored with the
// error.
func Eval(ctx context.Context, d Dataset, o Options, x Export, s plan.Settings, encS catalog.EncoderSettings, log io.Writer) (*eval.Report, error) {
	if err := d.Source().Check(); err != nil {
		return nil, err
	}
	if err := x.check(o); err != nil {
		return nil, err
	}
	if err := s.Check(peers.Retrievers()); err != nil {
		return nil, err
	}
	if o.Resume && o.Out == "" {
		return nil, fmt.Errorf("--resume needs --out FILE, the results log to continue")
	}
	if s.Planner == "oracle" && s.PlannerModel != "" {
		fmt.Fprintf(log, "--planner-model %s is not used: the planner is oracle (eval's default, the gold paths); add --planner pattern to plan with the model\n", s.PlannerModel)
	}
	if o.Out != "" {
		// Whether an existing log may be continued is eval.OpenLog's rule
		// (--resume); that it is none of the inputs is checked here.
		ins := append(append(append([]string{d.KG, d.GoldPaths, d.IDs, s.PlannerModel, string(s.GNN)}, d.Questions...), d.QType...), encS.Vectors)
		if err := atomicfile.CheckOutput("--out", o.Out, true, ins...); err != nil {
			return nil, err
		}
	}
	lost, err := lostIDs(o.Unanswerable)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	data, env, err := d.Open(ctx, encS, log)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	p, closeP, err := env.Pipeline(ctx, s)
	defer closeP()
	if err != nil {
		return nil, err
	}
	opts := eval.Options{Graph: data.Graph, KeepGoing: o.KeepGoing, PerQuestion: o.PerQuestion, Progress: log, Workers: o.Workers, Unanswerable: lost}
	var export *rogfile.Exporter
	if o.Out != "" && x.OutFormat != "stem" {
		f, err := rogfile.Create(o.Out, false)
		if err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
		defer f.Close()
		export = &rogfile.Exporter{File: f, Format: rogfile.Format(x.OutFormat), Template: x.PromptTemplate}
		opts.OnAnswer = export.OnAnswer
	} else if o.Out != "" {
		rlog, prior, err := eval.OpenLog(o.Out, Header(&d, &s, &encS), o.Resume)
		if err != nil {
			return nil, err
		}
		defer rlog.Close()
		if len(prior) > 0 {
			fmt.Fprintf(log, "resume: %d results already in %s\n", len(prior), o.Out)
		}
		opts.Done, opts.OnResult = prior, rlog.Write
	}
	loaded := time.Now()
	rep, err := eval.Run(ctx, data.Questions, eval.Pipeline{Pipeline: p}, opts)
	if rep == nil {
		return nil, err
	}
	// A cancelled run still shows what it scored; the error follows.
	if err != nil {
		fmt.Fprintf(log, "interrupted: the report covers the %d questions answered so far", rep.N)
		if o.Out != "" && x.OutFormat == "stem" {
			fmt.Fprintf(log, "; rerun with --out %s --resume to finish", o.Out)
		}
		fmt.Fprintln(log)
	}
	rep.Dropped = data.Dropped
	rep.Label(p)
	if export != nil {
		if cerr := export.File.Close(); cerr != nil {
			return nil, errors.Join(err, cerr)
		}
		fmt.Fprintf(log, "%s: %d rows (%s)\n", o.Out, export.File.Rows(), x.OutFormat)
		if export.Unparsed > 0 {
			fmt.Fprintf(log, "%s: %d chains left out of the paths: no reading splits them into steps\n", o.Out, export.Unparsed)
		}
	}
	fmt.Fprintf(log, "time %s (KG and models loaded in %s), peak memory %s\n",
		time.Since(start).Round(time.Millisecond), loaded.Sub(start).Round(time.Millisecond), PeakMemory())
	if line := kg.Report(data.KG, rep.N); line != "" && rep.N > 0 {
		fmt.Fprintln(log, line)
	}
	return rep, err
}
