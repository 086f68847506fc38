package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/settings"
	"github.com/urfave/cli/v2"
)

// rawValue is a settings flag's value as typed: parsing waits for bind, so
// that every setting is checked in one place, with one error style, before
// any work starts. A list setting given more than once (--entity A
// --entity B) keeps every value.
type rawValue struct {
	def  string
	list []string
}

func (v *rawValue) Set(s string) error { v.list = append(v.list, s); return nil }
func (v *rawValue) String() string {
	if len(v.list) > 0 {
		return v.list[len(v.list)-1]
	}
	return v.def
}

// flagsOf returns one flag per setting of the struct ptr points to, with
// the struct's values as defaults; bind reads them back into it. A struct
// that does not describe itself is a programming error that every test
// building the app finds, so it panics.
func flagsOf(ptr any) []cli.Flag {
	fields, err := settings.Fields(ptr)
	if err != nil {
		panic(err)
	}
	out := make([]cli.Flag, 0, len(fields))
	for _, f := range fields {
		if f.IsBool() {
			b, _ := strconv.ParseBool(f.String())
			out = append(out, &cli.BoolFlag{Name: f.Name, Usage: f.Usage, Category: f.Category, Value: b})
			continue
		}
		usage := f.Usage
		if p := f.Placeholder; p != "" {
			// cli shows the first back-quoted word of a usage as the
			// value's placeholder (--gnn MODEL).
			if strings.Contains(usage, p) {
				usage = strings.Replace(usage, p, "`"+p+"`", 1)
			} else {
				usage = "`" + p + "`: " + usage
			}
		}
		// TakesFile lets shell completion offer file names for the value
		// (fish's script is generated from it).
		takesFile := strings.Contains(f.Placeholder, "FILE") || strings.Contains(f.Placeholder, "DIR") || f.Placeholder == "MODEL"
		out = append(out, &cli.GenericFlag{Name: f.Name, Usage: usage, Category: f.Category, Value: &rawValue{def: f.String()}, TakesFile: takesFile})
	}
	return out
}

// configFlag names a JSON file of settings, so a whole pipeline
// configuration (planner, encoder, tracing parameters, LLM server) can be
// kept in one file and shared. Keys are flag names; flags given on the
// command line win over the file.
var configFlag = &cli.StringFlag{
	Name:  "config",
	Usage: `JSON file of settings, e.g. {"planner": "pattern", "planner-model": "pq.stempat", "beam": 4}; command-line flags win`,
}

// forceFlag lets a command replace an output file that exists; without it
// an existing output is refused (atomicfile.CheckOutput), and an output
// that is one of the command's inputs is refused always.
var forceFlag = &cli.BoolFlag{Name: "force", Usage: "replace --out when it exists (an --out that is one of the inputs is refused all the same)"}

// inputs lists the files named by c's flags, comma-separated lists split,
// for the check that an output is none of them.
func inputs(c *cli.Context, flags ...string) []string {
	var out []string
	for _, f := range flags {
		out = append(out, splitList(c.String(f))...)
	}
	return out
}

// bind returns a Before hook that reads the command line into the structs
// the command's flags were made from. A value a setting cannot take is an
// error naming the flag and what it wants.
func bind(ptrs ...any) cli.BeforeFunc {
	return func(c *cli.Context) error { return readFlags(c, ptrs...) }
}

// bindWithConfig is bind followed by the --config file, for the settings
// the command line did not give.
func bindWithConfig(ptrs ...any) cli.BeforeFunc {
	return func(c *cli.Context) error {
		if err := readFlags(c, ptrs...); err != nil {
			return err
		}
		path := c.String("config")
		if path == "" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("config: %w", err)
		}
		fields, err := fieldsOf(ptrs...)
		if err != nil {
			return err
		}
		return settings.DecodeJSON(fields, data, "config "+path, c.IsSet)
	}
}

// setFromFlag sets f from its flag when the command line gave it.
func setFromFlag(c *cli.Context, f settings.Field) error {
	if !c.IsSet(f.Name) {
		return nil
	}
	if f.IsBool() {
		return f.Set(strconv.FormatBool(c.Bool(f.Name)))
	}
	raw, ok := c.Generic(f.Name).(*rawValue)
	if !ok {
		return f.Set(c.String(f.Name))
	}
	for i, s := range raw.list {
		set := f.Set
		if i > 0 {
			set = f.Append
		}
		if err := set(s); err != nil {
			return fmt.Errorf("--%w", err)
		}
	}
	return nil
}

// readFlags reads c's flags into the settings structs ptrs point to.
func readFlags(c *cli.Context, ptrs ...any) error {
	fields, err := fieldsOf(ptrs...)
	if err != nil {
		return err
	}
	for _, f := range fields {
		if err := setFromFlag(c, f); err != nil {
			return err
		}
	}
	return nil
}

// fieldsOf lists the settings of every struct ptrs point to.
func fieldsOf(ptrs ...any) ([]settings.Field, error) {
	var out []settings.Field
	for _, p := range ptrs {
		fs, err := settings.Fields(p)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

// guard returns a Before hook that refuses, before any work, a number
// flag below its minimum in min, and any float flag that is not finite
// (--lr NaN).
func guard(min map[string]float64) cli.BeforeFunc {
	return func(c *cli.Context) error {
		for _, f := range c.Command.Flags {
			name := f.Names()[0]
			switch f.(type) {
			case *cli.Float64Flag:
				v := c.Float64(name)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("--%s %v: want a finite number", name, v)
				}
				if m, ok := min[name]; ok && v < m {
					return fmt.Errorf("--%s %v: want a number of at least %g", name, v, m)
				}
			case *cli.IntFlag:
				if m, ok := min[name]; ok && float64(c.Int(name)) < m {
					return fmt.Errorf("--%s %d: want a whole number of at least %g", name, c.Int(name), m)
				}
			}
		}
		return nil
	}
}

// before runs hooks in order, stopping at the first error.
func before(hooks ...cli.BeforeFunc) cli.BeforeFunc {
	return func(c *cli.Context) error {
		for _, h := range hooks {
			if err := h(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// kgFlags are the KG backends' settings (SPARQL's --kg-graph, --sparql-*
// and the rest), for a command that takes a KG and no pipeline.
type kgFlags struct {
	Backends kg.BackendSettings
}

// open opens the KG spec names with the backend settings the flags set;
// a file is read in the format named format ("auto" detects it).
func (k kgFlags) open(ctx context.Context, spec, format string) (kg.Reader, error) {
	f, err := kg.ParseFormat(format)
	if err != nil {
		return nil, err
	}
	return backends.Default().Open(ctx, spec, kg.OpenOptions{Format: f, Settings: k.Backends})
}
