package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/stem-kgqa/stem/assets"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/peers"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/report"
	"github.com/stem-kgqa/stem/settings"
	"github.com/urfave/cli/v2"
)

// presets are the paper's ablation tables as --config lists.
var presets = map[string][]string{
	// Table 7: the guidance biases.
	"table7": {"name=full", "name=no-entity-bias,no-entity-bias", "name=no-triple-bias,no-triple-bias", "name=no-bias,no-entity-bias,no-triple-bias"},
	// Table 11: adaptive selection against one selection rule for all.
	"table11": {"name=adaptive", "name=only-greedy,only-greedy", "name=only-threshold,only-threshold"},
}

// compareOptions are stem compare's own settings.
type compareOptions struct {
	Preset string `flag:"preset" usage:"add the configurations of the paper's table7 (guidance biases) or table11 (selection)"`
	// Strategies adds one configuration per retrieval strategy, so the
	// peers run beside STEM with one flag.
	Strategies []string `flag:"strategies" placeholder:"NAME,..." usage:"add a configuration per retrieval strategy NAME (e.g. stem,gcr), each with the command's own settings"`
	Report     string   `flag:"report" placeholder:"DIR" usage:"write report.md, report.json and SVG charts into DIR"`
}

func compareCommand() *cli.Command {
	d := newDataOptions()
	var o compareOptions
	r := runOptions{Workers: 1}
	s := evalSettings()
	enc := catalog.DefaultEncoderSettings()
	configs := &configList{}
	return &cli.Command{
		Name:  "compare",
		Usage: "run several configurations (planner, strategy, ablations) over one dataset and compare them side by side",
		Description: "Each --config is a comma-separated list of key[=value] with the names of stem eval's\n" +
			"pipeline flags (planner, planner-model, beam, strategy, retriever, gnn, no-entity-bias,\n" +
			"no-triple-bias, only-greedy, only-threshold, reuse, triple-text, max-branch, theta, ...),\n" +
			"plus name (the row's label; default: the list itself). A boolean key alone means true.\n" +
			"Keys a configuration does not name keep the value of the command's own flags, so\n" +
			"`--planner pattern --preset table7` ablates the pattern planner. --preset table7 runs the\n" +
			"paper's Table 7 (full, no-entity-bias, no-triple-bias, no-bias; it needs --gnn), --preset\n" +
			"table11 its Table 11 (adaptive, only-greedy, only-threshold); presets come before the\n" +
			"--config rows. Every configuration is checked before the first question is answered.\n\n" +
			"--strategies stem,gcr adds one row per retrieval strategy (see --retriever), each with the\n" +
			"command's own settings. The peers (simgrag, gcr, dog, graphraft) stand alone by default, as\n" +
			"their papers run them: no planner, no strategy of STEM's; --peer-plan-weight 1 (or a\n" +
			"configuration's peer-plan-weight=1) is their planner-assisted mode. The mode column says\n" +
			"which ran.\n\n" +
			"Examples:\n  stem compare --format pq --questions PQ-3H.test.txt --kg 3H-kb.txt --preset table11 \\\n" +
			"        --config 'name=breadth,strategy=breadth' --workers 2 --report out/pq3h\n" +
			"  stem compare --format pq --questions PQ-2H.test.txt --kg 2H-kb.txt --planner oracle --strategies stem,gcr",
		Flags: append(append(append(append(append(flagsOf(&d),
			&cli.GenericFlag{Name: "config", Value: configs, Usage: "a configuration, `KEY[=VALUE],...` (repeat the flag for more)"}),
			flagsOf(&o)...), flagsOf(&r)...), flagsOf(&s)...), flagsOf(&enc)...),
		Before: bind(&o, &d, &r, &s, &enc),
		Action: func(c *cli.Context) error {
			setups, err := compareSetups(s, d.Backends, o.Preset, append(strategyConfigs(o.Strategies), *configs...))
			if err != nil {
				return err
			}
			if err := d.source().Check(); err != nil {
				return err
			}
			if err := checkReportDir(o.Report); err != nil {
				return err
			}
			return runCompare(c.Context, c.App.Writer, c.App.ErrWriter, commandLine(c), setups, d, r, o, enc)
		},
	}
}

// strategyConfigs turns --strategies into configurations named by their
// strategy.
func strategyConfigs(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "name=" + n + ",retriever=" + n
	}
	return out
}

// configList collects repeated --config values whole: cli's string slices
// would split them at the commas that separate a configuration's keys.
type configList []string

func (l *configList) Set(s string) error { *l = append(*l, s); return nil }
func (l *configList) String() string     { return strings.Join(*l, " ") }

// compareConfig is one configuration of a comparison and the text that
// named it: the pipeline's settings and the KG backends'.
type compareConfig struct {
	name, spec string
	settings   plan.Settings
	kg         kg.BackendSettings
}

// compareSetups resolves --preset and --config into configurations over
// base and the KG backends' settings kgBase, and checks every one of them.
func compareSetups(base plan.Settings, kgBase kg.BackendSettings, preset string, configs []string) ([]compareConfig, error) {
	var specs []string
	if preset != "" {
		list, ok := presets[preset]
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
	var out []compareConfig
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
		if err := s.Check(reg); err != nil {
			return nil, fmt.Errorf("config %q: %w", spec, err)
		}
		if seen[name] {
			return nil, fmt.Errorf("two configurations are named %q: give each a distinct name=", name)
		}
		seen[name] = true
		out = append(out, compareConfig{name: name, spec: spec, settings: s, kg: ks.KG})
	}
	return out, nil
}

func runCompare(ctx context.Context, w, log io.Writer, cmdline string, setups []compareConfig, d dataOptions, r runOptions, o compareOptions, encS catalog.EncoderSettings) error {
	data, err := d.load(ctx, log)
	if err != nil {
		return err
	}
	env, err := d.openEnv(ctx, data, encS, log)
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
		fmt.Fprintf(log, "config %d/%d: %s\n", i+1, len(setups), cc.name)
		rep, err := runSetup(ctx, cc, d, data, env, encS, r, log)
		if rep != nil {
			rep.Dropped = data.Dropped
			cmp.Entries = append(cmp.Entries, report.Entry{Name: cc.name, Spec: cc.spec, Report: rep})
		}
		if err != nil {
			if rep == nil || ctx.Err() == nil {
				return fmt.Errorf("config %s: %w", cc.name, err)
			}
			// Cancelled: report what was done, then fail.
			runErr = fmt.Errorf("config %s: %w", cc.name, err)
			break
		}
	}
	// The agreement needs every question's result; the report keeps only
	// the agreement, not 5 x 14,000 results.
	cmp.Agreement = report.Agree(cmp.Entries)
	for _, e := range cmp.Entries {
		e.Report.Questions = nil
	}
	// The table is printed first: a report folder that fails late (a full
	// disk) must not cost the user the results.
	var outErr error
	if r.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		outErr = enc.Encode(cmp)
	} else {
		outErr = report.WriteTable(w, cmp.Entries)
	}
	if o.Report != "" {
		if err := report.WriteDir(o.Report, cmp); err != nil {
			return errors.Join(runErr, outErr, fmt.Errorf("the table above was not saved: %w", err))
		}
		fmt.Fprintf(log, "report written to %s\n", o.Report)
	}
	return errors.Join(runErr, outErr)
}

// checkReportDir makes sure the --report folder can be written before any
// configuration runs.
func checkReportDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--report %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".stem-write-check-*")
	if err != nil {
		return fmt.Errorf("--report %s: the folder cannot be written: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// runSetup builds cc's pipeline and runs it over data, in env, or in an
// environment of its own when cc sets the KG backend's settings otherwise.
func runSetup(ctx context.Context, cc compareConfig, d dataOptions, data *assets.Data, env *assets.Env, encS catalog.EncoderSettings, r runOptions, log io.Writer) (*eval.Report, error) {
	if assets.SettingsDiffer(d.KG, d.Backends, cc.kg) {
		g, err := assets.OpenKG(ctx, d.KG, kg.OpenOptions{Settings: cc.kg})
		if err != nil {
			return nil, err
		}
		if env, err = assets.Open(ctx, assets.Config{KG: d.KG, Graph: g, Encoder: encS, Log: log}); err != nil {
			return nil, err
		}
		defer env.Close()
	}
	p, closeP, err := env.Pipeline(ctx, cc.settings)
	defer closeP()
	if err != nil {
		return nil, err
	}
	rep, err := eval.Run(ctx, data.Questions, eval.Pipeline{Pipeline: p}, eval.Options{
		Graph: data.Graph, KeepGoing: r.KeepGoing, Progress: log, Workers: r.Workers, PerQuestion: true,
	})
	if rep != nil {
		rep.Mode = p.Mode
	}
	return rep, err
}

// commandLine rebuilds the command line from the flags that were set, so
// the report says how to reproduce it (cli keeps no copy of the raw
// arguments).
func commandLine(c *cli.Context) string {
	parts := []string{"stem", c.Command.Name}
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if !c.IsSet(name) {
			continue
		}
		switch v := f.(type) {
		case *cli.BoolFlag:
			parts = append(parts, "--"+name)
		case *cli.GenericFlag:
			var vals []string
			switch g := v.Value.(type) {
			case *configList:
				vals = *g
			case *rawValue:
				vals = g.list
			}
			for _, val := range vals {
				parts = append(parts, "--"+name, shellQuote(val))
			}
		default:
			parts = append(parts, "--"+name, shellQuote(c.String(name)))
		}
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+-@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
