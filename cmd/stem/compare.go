package main

import (
	"strings"

	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/report"
	"github.com/urfave/cli/v2"
)

func compareCommand() *cli.Command {
	d := runner.NewDataset()
	var o runner.CompareOptions
	r := runner.Options{Workers: 1}
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
			"command's own settings. The peers (simgrag, gcr, dog, graphraft) are not their papers'\n" +
			"systems: each runs its paper's algorithm with one encoder stand-in where the paper has an\n" +
			"LLM (or the LLM itself with --simgrag-llm, --gcr-llm, --dog-llm, --graphraft-llm), and\n" +
			"by default stands alone: no planner, no strategy of STEM's. --gcr-model and\n" +
			"--graphraft-model (from 'stem train peer') are the trained stand-ins of the two peers\n" +
			"whose papers fine-tune a model; --peer-plan-weight 1 is the planner-assisted mode.\n" +
			"A --strategies row is named for what ran: 'gcr (stand-in)', 'gcr (stand-in, trained)',\n" +
			"'gcr (llm)', 'stem (trained: pattern)', 'stem (zero-shot: compose)'; the mode column\n" +
			"says the same. Under the table, the figures the peers' papers report on this benchmark\n" +
			"(their own runs with their LLMs, with the table they come from). Columns: hits@1, mrr and\n" +
			"hit@5 rank the answer list; hit, f1, precision and recall read it as a set, so they\n" +
			"depend on its length (answers/q).\n\n" +
			"Examples:\n  stem compare --format pq --questions PQ-3H.test.txt --kg 3H-kb.txt --preset table11 \\\n" +
			"        --config 'name=breadth,strategy=breadth' --workers 2 --report out/pq3h\n" +
			"  stem compare --format pq --questions PQ-2H.test.txt --kg 2H-kb.txt --planner oracle --strategies stem,gcr",
		Flags: append(append(append(append(append(flagsOf(&d),
			&cli.GenericFlag{Name: "config", Value: configs, Usage: "a configuration, `KEY[=VALUE],...` (repeat the flag for more)"}),
			flagsOf(&o)...), flagsOf(&r)...), flagsOf(&s)...), flagsOf(&enc)...),
		Before: bind(&o, &d, &r, &s, &enc),
		Action: func(c *cli.Context) error {
			setups, err := runner.Setups(s, d.Backends, o.Preset, append(strategyConfigs(o.Strategies), *configs...))
			if err != nil {
				return err
			}
			if err := d.Source().Check(); err != nil {
				return err
			}
			if err := report.CheckDir(o.Report); err != nil {
				return err
			}
			return runner.Compare(c.Context, c.App.Writer, c.App.ErrWriter, commandLine(c), setups, d, r, o, enc)
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
