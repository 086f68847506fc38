package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/stem-kgqa/stem/assets"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/peers"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/report"
	"github.com/stem-kgqa/stem/settings"
)

// Presets are the paper's ablation tables as --config lists.
var Presets = map[string][]string{
	// Table 7: the guidance biases.
	"table7": {"name=full", "name=no-entity-bias,no-entity-bias", "name=no-triple-bias,no-triple-bias", "name=no-bias,no-entity-bias,no-triple-bias"},
	// Table 11: adaptive selection against one selection rule for all.
	"table11": {"name=adaptive", "name=only-greedy,only-greedy", "name=only-threshold,only-threshold"},
}

// CompareOptions are stem compare's own settings.
type CompareOptions struct {
	Preset string `flag:"preset" usage:"add the configurations of the paper's table7 (guidance biases) or table11 (selection)"`
	// Strategies adds one configuration per retrieval strategy, so the
	// peers run beside STEM with one flag.
	Strategies []string `flag:"strategies" placeholder:"NAME,..." usage:"add a configuration per retrieval strategy NAME (e.g. stem,gcr), each with the command's own settings"`
	Report     string   `flag:"report" placeholder:"DIR" usage:"write report.md, report.json and SVG charts into DIR"`
}

// Setup is one configuration of a comparison and the text that named it:
// the pipeline's settings and the KG backends'.
type Setup struct {
	Name, Spec string
	Settings   plan.Settings
	KG         kg.BackendSettings
}

// Setups resolves --preset and --config into configurations over
// base and the KG backends' settings kgBase, and checks every one of them.
func Setups(base plan.Settings, kgBase kg.BackendSettings, preset string, configs []string) ([]Setup, error) {
	var specs []string
	if preset != "" {
		list, ok := Presets[preset]
		if !ok {
			return nil, fmt.Errorf("--preset %q: want table7 or table11", preset)
		}
		if preset == "table7" && base.GNN == "" {
			return nil, fmt.Errorf("--preset table7 ablates the guidance graph's biases, which need --gnn MODEL: without a Triple-GNN its four rows would be identical")
		}
		specs = append(specs, list...)
	}
	specs = append(specs, configs...)
	if len(specs) == 0 {
		return nil, fmt.Errorf("stem compare needs configurations: --strategies NAME,..., --config KEY[=VALUE],... (repeated) or --preset table7|table11")
	}
	reg := peers.Retrievers()
	var out []Setup
	seen := map[string]bool{}
	for _, spec := range specs {
		s := base.Clone()
		ks := struct{ KG kg.BackendSettings }{kgBase.Clone()}
		fields, err := settings.Fields(&s)
		if err != nil {
			return nil, err
		}
		kgFields, err := settings.Fields(&ks)
		if err != nil {
			return nil, err
		}
		fields = append(fields, kgFields...)
		name, err := settings.ApplySpec(fields, spec)
		if err != nil {
			return nil, err
		}
		if name == "" {
			name = spec
		}
		name = peerLabel(name, s.Retriever, fields)
		if err := s.Check(reg); err != nil {
			return nil, fmt.Errorf("config %q: %w", spec, err)
		}
		if seen[name] {
			return nil, fmt.Errorf("two configurations are named %q: give each a distinct name=", name)
		}
		seen[name] = true
		out = append(out, Setup{Name: name, Spec: spec, Settings: s, KG: ks.KG})
	}
	return out, nil
}

// Compare runs every setup over d's questions and prints the comparison to
// w (a table, or one JSON object with o.JSON), and into o.Report's folder
// when set; cmdline is the command line the report records.
func Compare(ctx context.Context, w, log io.Writer, cmdline string, setups []Setup, d Dataset, r Options, o CompareOptions, encS catalog.EncoderSettings) error {
	lost, err := lostIDs(r.Unanswerable)
	if err != nil {
		return err
	}
	data, env, err := d.Open(ctx, encS, log)
	if err != nil {
		return err
	}
	defer env.Close()
	cmp := &report.Comparison{
		Command: cmdline,
		Dataset: fmt.Sprintf("%s: %s (%d questions)", d.Format, strings.Join(d.Questions, ","), len(data.Questions)),
	}
	var runErr error
	for i, cc := range setups {
		fmt.Fprintf(log, "config %d/%d: %s\n", i+1, len(setups), cc.Name)
		rep, err := compared{d: d, data: data, env: env, encS: encS, r: r, log: log, lost: lost}.run(ctx, cc)
		if rep != nil {
			rep.Dropped = data.Dropped
			cmp.Entries = append(cmp.Entries, report.Entry{Name: RowName(cc.Name, cc.Settings.Retriever, rep), Spec: cc.Spec, Report: rep})
		}
		if err != nil {
			if rep == nil || ctx.Err() == nil {
				return fmt.Errorf("config %s: %w", cc.Name, err)
			}
			// Cancelled: report what was done, then fail.
			runErr = fmt.Errorf("config %s: %w", cc.Name, err)
			break
		}
	}
	// The agreement needs every question's result; the report keeps only
	// the agreement, not 5 x 14,000 results, unless --json --per-question
	// asks for them (scripts/webqsp-folds pools two held-out halves'
	// rows question by question).
	cmp.Agreement = report.Agree(cmp.Entries)
	cmp.Notes = paperNotes(d, setups)
	if !r.JSON || !r.PerQuestion {
		for _, e := range cmp.Entries {
			e.Report.Questions = nil
		}
	}
	// The table is printed first: a report folder that fails late (a full
	// disk) must not cost the user the results.
	outErr := cmp.Print(w, r.JSON)
	if o.Report != "" {
		if err := report.WriteDir(o.Report, cmp); err != nil {
			return errors.Join(runErr, outErr, fmt.Errorf("the table above was not saved: %w", err))
		}
		fmt.Fprintf(log, "report written to %s\n", o.Report)
	}
	return errors.Join(runErr, outErr)
}

// compared is what every setup of a comparison runs over: the dataset
// and its loaded questions, the environment opened for them, the encoder
// settings, the run options and the log.
type compared struct {
	d    Dataset
	data *assets.Data
	env  *assets.Env
	encS catalog.EncoderSettings
	r    Options
	log  io.Writer
	// lost are the ids of the questions r.Unanswerable's variant lacks
	// the answers of.
	lost map[string]bool
}

// run builds cc's pipeline and runs it over the questions, in the shared
// environment, or in one of its own when cc sets the KG backend's
// settings otherwise.
func (c compared) run(ctx context.Context, cc Setup) (*eval.Report, error) {
	d, data, env, encS, r, log := c.d, c.data, c.env, c.encS, c.r, c.log
	if assets.SettingsDiffer(d.KG, d.Backends, cc.KG) {
		g, err := assets.OpenKG(ctx, d.KG, kg.OpenOptions{Settings: cc.KG})
		if err != nil {
			return nil, err
		}
		if env, err = assets.Open(ctx, assets.Config{KG: d.KG, Graph: g, Encoder: encS, Log: log}); err != nil {
			return nil, err
		}
		defer env.Close()
	}
	p, closeP, err := env.Pipeline(ctx, cc.Settings)
	defer closeP()
	if err != nil {
		return nil, err
	}
	rep, err := eval.Run(ctx, data.Questions, eval.Pipeline{Pipeline: p}, eval.Options{
		Graph: data.Graph, KeepGoing: r.KeepGoing, Progress: log, Workers: r.Workers, PerQuestion: true, Unanswerable: c.lost,
	})
	if rep != nil {
		rep.Label(p)
	}
	return rep, err
}

// peerLabel names a peer's row for what runs, when the row is named by
// its strategy (as --strategies names them, or name=gcr): "gcr
// (stand-in)", "gcr (stand-in, trained)" with --gcr-model, "gcr (llm)"
// with --gcr-llm, read off the peer's own settings among fields; so that
// no row passes for its paper's system. A row named otherwise keeps its
// name.
func peerLabel(name, retriever string, fields []settings.Field) string {
	if name != retriever || retriever == plan.DefaultStrategy {
		return name
	}
	if f, ok := settings.Lookup(fields, retriever+"-llm"); ok && f.String() == "true" {
		return name + " (llm)"
	}
	if f, ok := settings.Lookup(fields, retriever+"-model"); ok && f.String() != "" {
		return name + " (stand-in, trained)"
	}
	return name + " (stand-in)"
}

// RowName labels STEM's row when it is named by its strategy ("stem")
// with what its planner learnt from, read off the report: "stem
// (trained: pattern)" for the planner learnt from the training
// questions, "stem (zero-shot: compose)" for one that learnt from none,
// "stem (oracle plans: upper bound)", "stem (trained pattern and
// zero-shot compose)" for both merged. Any other row keeps its name.
func RowName(name, retriever string, rep *eval.Report) string {
	if name != retriever || retriever != plan.DefaultStrategy || rep == nil {
		return name
	}
	switch rep.Planner {
	case "":
		return name
	case "pattern":
		return name + " (trained: pattern)"
	case "both":
		return name + " (trained pattern and zero-shot compose)"
	case "oracle":
		return name + " (oracle plans: upper bound)"
	case "llm":
		return name + " (llm planner)"
	default:
		return name + " (zero-shot: " + rep.Planner + ")"
	}
}

// paperNotes are the peers' papers' own figures on the dataset compared
// (peers.Reported), one line each, for the peers the setups run.
func paperNotes(d Dataset, setups []Setup) []string {
	bench := peers.BenchmarkOf(d.Format, d.Questions)
	var out []string
	seen := map[string]bool{}
	for _, cc := range setups {
		if seen[cc.Settings.Retriever] {
			continue
		}
		seen[cc.Settings.Retriever] = true
		for _, f := range peers.Reported(cc.Settings.Retriever, bench) {
			out = append(out, f.String())
		}
	}
	return out
}
