package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/report"
	"github.com/urfave/cli/v2"
)

// presets are the paper's ablation tables as --config lists.
var presets = map[string][]string{
	// Table 7: the guidance biases.
	"table7": {"name=full", "name=no-entity-bias,no-entity-bias", "name=no-triple-bias,no-triple-bias", "name=no-bias,no-entity-bias,no-triple-bias"},
	// Table 11: adaptive selection against one selection rule for all.
	"table11": {"name=adaptive", "name=only-greedy,only-greedy", "name=only-threshold,only-threshold"},
}

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "run several configurations (planner, strategy, ablations) over one dataset and compare them side by side",
		Description: "Each --config is a comma-separated list of key[=value] with the names of stem eval's\n" +
			"flags: planner, planner-model, beam, strategy, no-entity-bias, no-triple-bias, only-greedy,\n" +
			"only-threshold, reuse, triple-text, max-branch, gnn, plus name (the row's label; default: the\n" +
			"list itself). A boolean key alone means true. Keys a configuration does not name keep the\n" +
			"value of the command's own flags, so `--planner pattern --preset table7` ablates the pattern\n" +
			"planner. --preset table7 runs the paper's Table 7 (full, no-entity-bias, no-triple-bias,\n" +
			"no-bias), --preset table11 its Table 11 (adaptive, only-greedy, only-threshold); presets\n" +
			"come before the --config rows.\n\n" +
			"Example:\n  stem compare --format pq --questions PQ-3H.test.txt --kg 3H-kb.txt --preset table11 \\\n" +
			"        --config 'name=breadth,strategy=breadth' --workers 2 --report out/pq3h",
		Flags: append(append(append(evalDataFlags(), evalSetupFlags()...),
			&cli.GenericFlag{Name: "config", Value: &configList{}, Usage: "a configuration, `KEY[=VALUE],...` (repeat the flag for more)"},
			&cli.StringFlag{Name: "preset", Usage: "add the configurations of the paper's table7 (guidance biases) or table11 (selection)"},
			&cli.StringFlag{Name: "report", Usage: "write report.md, report.json and SVG charts into `DIR`"},
			&cli.IntFlag{Name: "workers", Value: 1, Usage: "questions answered at once"},
			&cli.BoolFlag{Name: "keep-going", Usage: "score a question whose retrieval fails as unanswered instead of stopping"},
			&cli.BoolFlag{Name: "json", Usage: "print the comparison as one JSON object instead of a table"},
		), append(encoderFlags(), plannerFlags()...)...),
		Action: runCompare,
	}
}

// configList collects repeated --config values whole: cli's string slices
// would split them at the commas that separate a configuration's keys.
type configList []string

func (l *configList) Set(s string) error { *l = append(*l, s); return nil }
func (l *configList) String() string     { return strings.Join(*l, " ") }

// parseConfig applies a --config list to base.
func parseConfig(base evalSetup, spec string) (evalSetup, error) {
	s := base
	s.Name = spec
	for _, part := range splitList(spec) {
		key, val, hasVal := strings.Cut(part, "=")
		key = strings.TrimSpace(key)
		val = strings.TrimSpace(val)
		flag := func(dst *bool) error {
			if !hasVal {
				*dst = true
				return nil
			}
			b, err := strconv.ParseBool(val)
			if err != nil {
				return fmt.Errorf("config %q: %s=%q: want true or false", spec, key, val)
			}
			*dst = b
			return nil
		}
		str := func(dst *string) error {
			if !hasVal {
				return fmt.Errorf("config %q: %s needs a value (%s=...)", spec, key, key)
			}
			*dst = val
			return nil
		}
		num := func(dst *int) error {
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return fmt.Errorf("config %q: %s=%q: want a whole number", spec, key, val)
			}
			*dst = n
			return nil
		}
		var err error
		switch key {
		case "name":
			err = str(&s.Name)
		case "planner":
			err = str(&s.Planner)
		case "planner-model":
			err = str(&s.PlannerModel)
		case "strategy":
			err = str(&s.Strategy)
		case "reuse":
			err = str(&s.Reuse)
		case "triple-text":
			err = str(&s.TripleText)
		case "gnn":
			if err = str(&s.GNN); err == nil && (val == "off" || val == "none") {
				s.GNN = ""
			}
		case "lambda", "tau":
			dst := &s.Lambda
			if key == "tau" {
				dst = &s.Tau
			}
			f, perr := strconv.ParseFloat(val, 64)
			if perr != nil || f < 0 {
				err = fmt.Errorf("config %q: %s=%q: want a non-negative number", spec, key, val)
			} else {
				*dst = f
			}
		case "beam":
			err = num(&s.Beam)
		case "max-branch":
			err = num(&s.MaxBranch)
		case "no-entity-bias":
			err = flag(&s.NoEntityBias)
		case "no-triple-bias":
			err = flag(&s.NoTripleBias)
		case "only-greedy":
			err = flag(&s.OnlyGreedy)
		case "only-threshold":
			err = flag(&s.OnlyThreshold)
		case "gate-triple-bias":
			err = flag(&s.GateTripleBias)
		default:
			err = fmt.Errorf("config %q: unknown key %q (want name, planner, planner-model, beam, strategy, no-entity-bias, no-triple-bias, only-greedy, only-threshold, reuse, triple-text, max-branch, gnn, lambda, tau or gate-triple-bias)", spec, key)
		}
		if err != nil {
			return s, err
		}
	}
	if s.Name == "" {
		s.Name = "default"
	}
	if _, err := s.tracingConfig(); err != nil {
		return s, fmt.Errorf("config %q: %w", spec, err)
	}
	return s, nil
}

// compareConfig is one configuration of a comparison and the text that
// named it.
type compareConfig struct {
	spec  string
	setup evalSetup
}

// compareSetups resolves --preset and --config into configurations.
func compareSetups(c *cli.Context) ([]compareConfig, error) {
	var specs []string
	if p := c.String("preset"); p != "" {
		list, ok := presets[p]
		if !ok {
			return nil, fmt.Errorf("--preset %q: want table7 or table11", p)
		}
		specs = append(specs, list...)
	}
	if l, ok := c.Generic("config").(*configList); ok {
		specs = append(specs, *l...)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("stem compare needs configurations: --config KEY[=VALUE],... (repeated) or --preset table7|table11")
	}
	base := setupFromFlags(c)
	var setups []compareConfig
	seen := map[string]bool{}
	for _, spec := range specs {
		s, err := parseConfig(base, spec)
		if err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("two configurations are named %q: give each a distinct name=", s.Name)
		}
		seen[s.Name] = true
		setups = append(setups, compareConfig{spec: spec, setup: s})
	}
	return setups, nil
}

func runCompare(c *cli.Context) error {
	setups, err := compareSetups(c)
	if err != nil {
		return err
	}
	d, err := loadEvalData(c)
	if err != nil {
		return err
	}
	env, err := openEvalEnv(c, d)
	if err != nil {
		return err
	}
	defer env.close()
	cmp := &report.Comparison{
		Command: commandLine(c),
		Dataset: fmt.Sprintf("%s: %s (%d questions)", c.String("format"), c.String("questions"), len(d.qs)),
	}
	var runErr error
	for i, cc := range setups {
		s := cc.setup
		fmt.Fprintf(c.App.ErrWriter, "config %d/%d: %s\n", i+1, len(setups), s.Name)
		rep, err := runSetup(c, s, d, env)
		if rep != nil {
			rep.Dropped = d.dropped
			cmp.Entries = append(cmp.Entries, report.Entry{Name: s.Name, Spec: cc.spec, Report: rep})
		}
		if err != nil {
			if rep == nil || c.Context.Err() == nil {
				return fmt.Errorf("config %s: %w", s.Name, err)
			}
			// Cancelled: report what was done, then fail.
			runErr = fmt.Errorf("config %s: %w", s.Name, err)
			break
		}
	}
	if dir := c.String("report"); dir != "" {
		if err := report.WriteDir(dir, cmp); err != nil {
			return errors.Join(runErr, err)
		}
		fmt.Fprintf(c.App.ErrWriter, "report written to %s\n", dir)
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return errors.Join(runErr, enc.Encode(cmp))
	}
	return errors.Join(runErr, report.WriteTable(c.App.Writer, cmp.Entries))
}

// runSetup builds s's planner and retriever and runs them over d.
func runSetup(c *cli.Context, s evalSetup, d *evalData, env *evalEnv) (*eval.Report, error) {
	planner, ret, closePlanner, err := s.build(c, d, env)
	defer closePlanner()
	if err != nil {
		return nil, err
	}
	return eval.Run(c.Context, d.qs, planner, ret, eval.Options{
		Graph:     d.g,
		KeepGoing: c.Bool("keep-going"),
		Progress:  c.App.ErrWriter,
		Workers:   c.Int("workers"),
	})
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
			if l, ok := v.Value.(*configList); ok {
				for _, spec := range *l {
					parts = append(parts, "--"+name, shellQuote(spec))
				}
			}
		default:
			parts = append(parts, "--"+name, shellQuote(fmt.Sprint(c.Value(name))))
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
